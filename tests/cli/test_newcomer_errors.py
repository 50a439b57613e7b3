"""Issue 16: every bad input a newcomer may type ends in one ``error:`` line, exit code 2.

Runs the real console script in a subprocess (no typer test runner), so import-time
and entry-point behaviour are covered too.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

OTFAIR = str(Path(sys.executable).with_name("otfair"))
REAL_DATA = os.environ.get(
    "OTFAIR_DATA_DIR", str(Path(__file__).resolve().parents[3] / "shared" / "datasets")
)

# (id, argv, needs_real_data)
CASES = [
    ("unknown-dataset", ["datasets", "describe", "nosuchdata"], False),
    ("unknown-method", ["fit", "--dataset", "adult", "--method", "nosuch"], False),
    ("missing-config", ["sweep", "{tmp}/nope.toml", "--out", "{tmp}/o"], False),
    ("malformed-toml", ["sweep", "{tmp}/bad.toml", "--out", "{tmp}/o"], False),
    (
        "audit-missing-csv",
        ["audit", "{tmp}/nope.csv", "--label", "y", "--sensitive", "s", "--score", "score"],
        False,
    ),
    (
        "audit-max-cat",
        [
            "audit",
            "{tmp}/p.csv",
            "--label",
            "y",
            "--sensitive",
            "s",
            "--score",
            "score",
            "--max-categories",
            "-3",
        ],
        False,
    ),
    ("report-empty-dir", ["report", "{tmp}/empty"], False),
    ("describe-empty-datadir", ["datasets", "describe", "adult"], "empty"),
    ("fit-unset-datadir", ["fit", "--dataset", "adult", "--method", "unfair-mlp"], "unset"),
    ("workers-0", ["sweep", "configs/otf.toml", "--out", "{tmp}/o", "--workers", "0"], True),
    ("opt-lr-abc", ["fit", "--dataset", "adult", "--method", "ftm", "-o", "lr=abc"], True),
    ("opt-nonsense", ["fit", "--dataset", "adult", "--method", "ftm", "-o", "nonsense=1"], True),
    # methods that wrap another estimator check their options up front too (issue 15)
    *[
        (f"opt-nonsense-{m}", ["fit", "--dataset", "german", "--method", m, "-o", "bogus=1"], True)
        for m in ("ot-repair", "fair-pca", "wb-postprocess", "wb-regression")
    ],
    (
        "opt-type-fair-pca",
        ["fit", "--dataset", "german", "--method", "fair-pca", "-o", "n_components=abc"],
        True,
    ),
    (
        "ftm-domains",
        [
            "fit",
            "--dataset",
            "adult",
            "--method",
            "ftm",
            "--source-domain",
            "us",
            "--target-domain",
            "non_us",
        ],
        True,
    ),
    (
        "strength-unused",
        ["fit", "--dataset", "adult", "--method", "unfair-mlp", "--strength", "5"],
        True,
    ),
    (
        "ftm-joint-eo",
        ["fit", "--dataset", "adult", "--method", "ftm-joint", "--notion", "eo"],
        True,
    ),
    (
        "eopp-unsupported",
        ["fit", "--dataset", "adult", "--method", "ftm", "--notion", "eopp"],
        True,
    ),
    (
        "cluster-bad-scheduler",
        [
            "sweep",
            "configs/otf.toml",
            "--out",
            "{tmp}/o",
            "--backend",
            "cluster",
            "--scheduler",
            "tcp://127.0.0.1:1",
            "--yes",
        ],
        True,
    ),
    (
        "audit-missing-column",
        ["audit", "{tmp}/p.csv", "--label", "y", "--sensitive", "s", "--score", "nocol"],
        False,
    ),
    # --epochs for a method that does not train in epochs (was ignored in silence)
    *[
        (
            f"epochs-unused-{m}",
            ["fit", "--dataset", "german", "--method", m, "--epochs", "5"],
            True,
        )
        for m in ("fair-pca", "reduction", "cod")
    ],
    # a layer width below 1 (was a torch traceback for -1, a constant model for 0)
    *[
        (
            f"hidden-{w}",
            [
                "fit",
                "--dataset",
                "german",
                "--method",
                "gapreg",
                "--epochs",
                "1",
                "-o",
                f"hidden=[{w}]",
            ],
            True,
        )
        for w in ("-1", "0")
    ],
    # AdapFair's options are checked before its base classifier trains
    *[
        (
            f"adapfair-{opt}",
            ["fit", "--dataset", "german", "--method", "adapfair", "-o", opt],
            True,
        )
        for opt in ("base_epochs=0", "base_epochs=-1", "n_blocks=0", "sinkhorn_eps=-1")
    ],
    # --no-run reports from stored runs: a missing archive or an empty store is an error
    (
        "reproduce-missing-runs",
        ["reproduce", "otf", "--no-run", "--runs", "{tmp}/nope", "--out", "{tmp}/o"],
        False,
    ),
    ("reproduce-empty-store", ["reproduce", "otf", "--no-run", "--out", "{tmp}/o"], False),
    (
        "audit-a-directory",
        ["audit", "{tmp}/empty", "--label", "y", "--sensitive", "s", "--score", "score"],
        False,
    ),
    ("sweep-a-directory", ["sweep", "{tmp}/empty", "--out", "{tmp}/o"], False),
    (
        "cluster-malformed-scheduler",
        [
            "sweep",
            "configs/otf.toml",
            "--out",
            "{tmp}/o",
            "--backend",
            "cluster",
            "--scheduler",
            "notanaddress",
        ],
        False,
    ),  # fmt: skip
    (
        "test-size-with-predefined-split",
        [
            "fit",
            "--dataset",
            "adult",
            "--method",
            "unfair",
            "-d",
            "split=predefined",
            "--test-size",
            "0.5",
        ],
        True,
    ),  # fmt: skip
    (
        "audit-threshold-in-regression",
        [
            "audit",
            "{tmp}/p.csv",
            "--label",
            "y",
            "--sensitive",
            "s",
            "--score",
            "score",
            "--task",
            "regression",
            "--threshold",
            "0.3",
        ],
        False,
    ),  # fmt: skip
    # mistakes click catches itself: one line too, not click's boxed usage message
    ("misspelled-command", ["fitt"], False),
    ("unknown-flag", ["fit", "--dataset", "german", "--bogus"], False),
    ("missing-option", ["fit"], False),
    ("ill-typed-value", ["fit", "--dataset", "german", "--epochs", "abc"], False),
    (
        "out-of-range-value",
        ["sweep", "x.toml", "--out", "{tmp}/o", "--confirm-above", "-1"],
        False,
    ),
]


@pytest.mark.parametrize(("argv", "data"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_gives_one_error_line(argv, data, tmp_path):
    (tmp_path / "bad.toml").write_text("[run\nx = ")
    (tmp_path / "p.csv").write_text("y,s,score\n1,0,0.9\n0,1,0.2\n1,1,0.6\n0,0,0.4\n")
    (tmp_path / "empty").mkdir()
    env = dict(os.environ)
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    if data == "empty":
        env["OTFAIR_DATA_DIR"] = str(tmp_path / "empty")
    elif data == "unset":
        env.pop("OTFAIR_DATA_DIR", None)
    else:
        env["OTFAIR_DATA_DIR"] = REAL_DATA
    args = [a.format(tmp=tmp_path) for a in argv]
    proc = subprocess.run(
        [OTFAIR, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        cwd=Path(__file__).resolve().parents[2],
    )
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert "Traceback" not in proc.stdout + proc.stderr
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert len(lines) == 1 and lines[0].startswith("error:"), proc.stderr


# ---------------------------------------------------------------- issue 28: whole request
#: (id, spec TOML, extra argv, data): every value a run would reject is one error line,
#: exit code 2, before anything is stored or trained.
_SYNTHETIC = '[[datasets]]\nname = "synthetic"\n'
_GERMAN = '[[datasets]]\nname = "german"\n'
SPEC_CASES = [
    (
        "negative-strength",
        _SYNTHETIC + '[[methods]]\nname = "otf"\nstrengths = [-1.0, 1.0]\n',
        [],
        "strengths[0]': The 'strength' parameter of FairClassifier must be a float in the "
        "range [0.0, inf). Got -1.0 instead.",
        True,
    ),
    (
        "otf-alpha-3",
        _SYNTHETIC + '[[methods]]\nname = "otf"\nstrengths = [0.5, 3.0]\n',
        [],
        "alpha in [0, 1)",
        True,
    ),
    (
        "sensitive-height",
        '[[datasets]]\nname = "german"\noptions = { sensitive = "height" }\n'
        '[[methods]]\nname = "unfair"\n',
        [],
        "`sensitive` must be one of",
        True,
    ),
    (
        "option-lr-abc",
        _SYNTHETIC + '[[methods]]\nname = "ftm"\noptions = { lr = "abc" }\n',
        [],
        "The 'lr' parameter of FairClassifier must be a float",
        True,
    ),
    (
        "device-tpu",
        _SYNTHETIC + '[[methods]]\nname = "unfair"\n',
        ["--device", "tpu"],
        "`device` must be cpu, cuda, cuda:N, mps or auto; got 'tpu' (--device)",
        True,
    ),
    (
        "missing-data",
        _GERMAN + '[[methods]]\nname = "unfair"\n',
        [],
        "otfair datasets fetch german",
        "empty",
    ),
]


def _run(argv, tmp_path, data=True):
    env = dict(os.environ)
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    if data == "empty":
        (tmp_path / "empty").mkdir(exist_ok=True)
        env["OTFAIR_DATA_DIR"] = str(tmp_path / "empty")
    else:
        env["OTFAIR_DATA_DIR"] = REAL_DATA
    proc = subprocess.run(
        [OTFAIR, *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],
    )
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert "Traceback" not in proc.stdout + proc.stderr
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert len(lines) == 1 and lines[0].startswith("error:"), proc.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("spec", "extra", "expected", "data"),
    [c[1:] for c in SPEC_CASES],
    ids=[c[0] for c in SPEC_CASES],
)
def test_bad_sweep_request_is_one_line_and_stores_nothing(spec, extra, expected, data, tmp_path):
    config = tmp_path / "s.toml"
    config.write_text(spec)
    out = tmp_path / "o"
    line = _run(["sweep", str(config), "--out", str(out), "--no-progress", *extra], tmp_path, data)
    assert expected in line
    assert not out.exists()  # nothing stored (not even an empty store)


def test_cuda_without_cuda_is_one_line(tmp_path):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("CUDA is available here")
    config = tmp_path / "s.toml"
    config.write_text(_SYNTHETIC + '[[methods]]\nname = "unfair"\n')
    line = _run(["sweep", str(config), "--out", str(tmp_path / "o"), "--device", "cuda"], tmp_path)
    assert "CUDA" in line and not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["sweep", "configs/otf.toml", "--profile", "quick", "--out", "{out}"],
        ["demo", "--out", "{out}"],
        ["reproduce", "otf", "--out", "{out}"],
    ],
    ids=["sweep", "demo", "reproduce"],
)
def test_out_naming_an_existing_file_is_one_line(argv, tmp_path):
    out = tmp_path / "taken.txt"
    out.write_text("mine\n")
    line = _run([a.format(out=out) for a in argv], tmp_path)
    assert str(out) in line and "existing file" in line
    assert out.read_text() == "mine\n"  # untouched


@pytest.mark.parametrize(
    "argv",
    [
        ["sweep", "configs/otf.toml", "--profile", "quick", "--out", "{below}"],
        ["demo", "--out", "{below}"],
        ["reproduce", "otf", "--out", "{below}"],
        ["reproduce", "otf", "--out", "{fresh}", "--report-dir", "{below}"],
        ["datasets", "fetch", "german", "--data-home", "{below}"],
    ],
    ids=["sweep", "demo", "reproduce", "reproduce-report-dir", "datasets-fetch"],
)
def test_out_below_a_file_is_one_line_before_any_run(argv, tmp_path):
    # `--out results.txt/x` cannot become a directory: refused before any training, with
    # the option named, instead of a NotADirectoryError traceback from the store
    taken = tmp_path / "taken.txt"
    taken.write_text("mine\n")
    below, fresh = taken / "x", tmp_path / "fresh"
    line = _run([a.format(below=below, fresh=fresh) for a in argv], tmp_path)
    assert str(below) in line and "cannot be created" in line and "not a directory" in line
    assert line.split()[1] in ("--out", "--report-dir", "--data-home")
    assert taken.read_text() == "mine\n" and not fresh.exists()


def _truncated_store(directory: Path) -> bytes:
    from otfair_lab.experiments._store import ResultStore

    directory.mkdir()
    path = directory / "results.sqlite"
    with ResultStore(path) as store:
        for i in range(200):
            store.set_meta(f"k{i}", "x" * 500)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path.read_bytes()


@pytest.mark.parametrize(
    "argv",
    [["report", "{out}"], ["sweep", "configs/otf.toml", "--profile", "quick", "--out", "{out}"]],
    ids=["report", "sweep"],
)
def test_a_truncated_store_is_named_with_the_fix(argv, tmp_path):
    out = tmp_path / "o"
    before = _truncated_store(out)
    line = _run([a.format(out=out) for a in argv], tmp_path)
    assert str(out / "results.sqlite") in line and "Move it aside" in line
    assert (out / "results.sqlite").read_bytes() == before  # nothing overwritten
    assert sorted(p.name for p in out.iterdir()) == ["results.sqlite"]  # nothing added


def test_a_binary_config_is_named(tmp_path):
    garbage = tmp_path / "garbage.csv"
    garbage.write_bytes(bytes(range(256)) * 4)
    line = _run(["sweep", str(garbage), "--out", str(tmp_path / "o")], tmp_path)
    assert str(garbage) in line and not (tmp_path / "o").exists()


def test_reproduce_no_run_with_a_mistyped_archive_creates_nothing(tmp_path):
    proc = subprocess.run(
        [OTFAIR, "reproduce", "otf", "--no-run", "--runs", str(tmp_path / "nope"), "--out",
         str(tmp_path / "o")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2 and "nope" in proc.stderr
    assert not (tmp_path / "nope").exists() and not (tmp_path / "o").exists()


@pytest.mark.parametrize("argv", [[], ["datasets"]], ids=["otfair", "otfair-datasets"])
def test_a_group_without_a_subcommand_prints_its_help(argv):
    proc = subprocess.run([OTFAIR, *argv], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    assert "Usage: otfair" in proc.stdout + proc.stderr and "Traceback" not in proc.stderr


def test_a_click_error_names_the_help_of_its_command():
    proc = subprocess.run([OTFAIR, "fitt"], capture_output=True, text=True, timeout=60)
    assert proc.stderr.strip() == (
        "error: No such command 'fitt'. Did you mean 'fit'? (see `otfair --help`)"
    )
