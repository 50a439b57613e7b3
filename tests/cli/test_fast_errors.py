"""A user error is answered before torch or scikit-learn is imported.

Each case runs the real CLI in a fresh interpreter whose exit hook reports which heavy
modules were imported; the command must fail with one ``error:`` line, exit code 2, and
neither torch nor sklearn in ``sys.modules``. (The import-free path is what makes the
answer fast; no wall time is asserted.) The static name table that makes this possible
is kept equal to the full registries here too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_WRAPPER = """
import atexit, json, sys
def _report():
    heavy = sorted(m for m in ("torch", "sklearn") if m in sys.modules)
    sys.stderr.write("\\n@@heavy " + json.dumps(heavy) + "\\n")
atexit.register(_report)
sys.argv = ["otfair", *sys.argv[1:]]
from otfair_lab.cli import main
main()
"""

SPEC_BAD_DATASET = '[[datasets]]\nname = "nosuch"\n[[methods]]\nname = "otf"\n'
SPEC_BAD_METHOD = '[[datasets]]\nname = "adult"\n[[methods]]\nname = "nosuch"\n'
SPEC_BAD_NOTION = '[[datasets]]\nname = "adult"\n[[methods]]\nname = "ftm"\nnotions = ["eo"]\n'
SPEC_BAD_EPOCHS = 'epochs = -2\n[[datasets]]\nname = "german"\n[[methods]]\nname = "unfair"\n'
SPEC_BAD_PROFILE_EPOCHS = (
    '[[datasets]]\nname = "german"\n[[methods]]\nname = "unfair"\n[profiles.quick]\nepochs = 0\n'
)
SPEC_BAD_DATA_OPTION = (
    '[[datasets]]\nname = "german"\noptions = {nosuch = 1}\n[[methods]]\nname = "unfair"\n'
)
SPEC_BAD_DATA_CHOICE = (
    '[[datasets]]\nname = "german"\noptions = {sensitive = "height"}\n[[methods]]\nname = "otf"\n'
)
SPEC_BAD_DEVICE = 'device = "tpu"\n[[datasets]]\nname = "german"\n[[methods]]\nname = "unfair"\n'
SPEC_ABSURD_EPOCHS = (
    'epochs = 100000\nseeds = [0, 1, 2]\n[[datasets]]\nname = "adult"\n'
    '[[methods]]\nname = "laftr"\n'
)
SPECS = {
    "absurd": SPEC_ABSURD_EPOCHS,
    "d": SPEC_BAD_DATASET,
    "m": SPEC_BAD_METHOD,
    "n": SPEC_BAD_NOTION,
    "ep": SPEC_BAD_EPOCHS,
    "pep": SPEC_BAD_PROFILE_EPOCHS,
    "dopt": SPEC_BAD_DATA_OPTION,
    "dch": SPEC_BAD_DATA_CHOICE,
    "dev": SPEC_BAD_DEVICE,
}
GERMAN = ["fit", "--dataset", "german", "--method"]

CASES = [
    ("unknown-method", ["fit", "--dataset", "adult", "--method", "nosuch"], "nosuch"),
    ("unknown-dataset", ["fit", "--dataset", "nosuch", "--method", "otf"], "nosuch"),
    ("bad-notion", ["fit", "--dataset", "adult", "--method", "otf", "--notion", "xx"], "xx"),
    ("bad-option", ["fit", "--dataset", "adult", "--method", "otf", "-o", "bogus=1"], "bogus"),
    # values: the constraints the name table describes, in the estimator's words
    (
        "bad-epochs",
        ["fit", "--dataset", "adult", "--method", "otf", "--epochs", "0"],
        "The 'epochs' parameter of FairClassifier must be an int in the range [1, inf)",
    ),
    (
        "bad-option-value",
        ["fit", "--dataset", "adult", "--method", "otf", "-o", "lr=-1"],
        "The 'lr' parameter of FairClassifier",
    ),
    (
        "bad-penalty-setting",
        ["fit", "--dataset", "adult", "--method", "ftm", "-o", "group_batch_size=0"],
        "The 'group_batch_size' parameter of FTM",
    ),
    (
        "strength-unused",
        ["fit", "--dataset", "adult", "--method", "unfair", "--strength", "2"],
        "strength",
    ),
    ("missing-config", ["sweep", "{tmp}/missing.toml", "--out", "{tmp}/o"], "missing.toml"),
    ("spec-bad-dataset", ["sweep", "{tmp}/d.toml", "--out", "{tmp}/o"], "nosuch"),
    ("spec-bad-method", ["sweep", "{tmp}/m.toml", "--out", "{tmp}/o"], "nosuch"),
    ("spec-bad-notion", ["sweep", "{tmp}/n.toml", "--out", "{tmp}/o"], "eo"),
    (
        "scheduler-refused",
        [
            "sweep",
            "configs/otf.toml",
            "--out",
            "{tmp}/o",
            "--backend",
            "cluster",
            "--scheduler",
            "tcp://127.0.0.1:1",
        ],
        "tcp://127.0.0.1:1",
    ),
    (
        "scheduler-malformed",
        [
            "sweep",
            "configs/otf.toml",
            "--out",
            "{tmp}/o",
            "--backend",
            "cluster",
            "--scheduler",
            "x",
        ],
        "scheduler",
    ),
    # run values, names of data options, metrics and method/option combinations (issue 48)
    ("test-size", [*GERMAN, "unfair", "--test-size", "1.5"], "--test-size"),
    ("test-size-zero", [*GERMAN, "unfair", "--test-size", "0"], "`test_size` must lie in"),
    ("device-tpu", [*GERMAN, "unfair", "--device", "tpu"], "'tpu' (--device)"),
    ("device-cuda-x", [*GERMAN, "unfair", "--device", "cuda:x"], "'cuda:x' (--device)"),
    ("max-train-rows", [*GERMAN, "unfair", "--max-train-rows", "0"], "--max-train-rows"),
    ("negative-seed", [*GERMAN, "unfair", "--seed", "-1"], "`seed` must be >= 0; got -1"),
    ("data-option-name", [*GERMAN, "unfair", "-d", "nosuch=1"], "['nosuch']"),
    ("data-option-choice", [*GERMAN, "unfair", "-d", "sensitive=height"], "'height'"),
    (
        "budget-metric",
        [*GERMAN, "otf", "--max-violation", "0.02", "--metric", "nosuch"],
        "'nosuch' is not a classification violation measure",
    ),
    (
        "budget-metric-of-other-task",
        [*GERMAN, "otf", "--max-violation", "0.02", "--metric", "error_gap"],
        "(--metric)",
    ),
    (
        "budget-untunable",
        [*GERMAN, "unfair", "--max-violation", "0.02"],
        "'unfair' has none to tune",
    ),
    ("budget-no-strength-param", [*GERMAN, "ot-repair", "--max-violation", "0.02"], "'ot-repair'"),
    # laftr's mini-batches of 64 over adult's 36,000 training rows: hours by arithmetic
    (
        "absurd-epochs",
        ["fit", "--dataset", "adult", "--method", "laftr", "--epochs", "100000"],
        "by arithmetic alone",
    ),  # fmt: skip
    ("spec-epochs", ["sweep", "{tmp}/ep.toml", "--out", "{tmp}/o"], "'epochs'"),
    (
        "spec-absurd-epochs",
        ["sweep", "{tmp}/absurd.toml", "--out", "{tmp}/o"],
        "this sweep's epochs would take at least",
    ),
    ("spec-profile-epochs", ["sweep", "{tmp}/pep.toml", "--out", "{tmp}/o"], "profiles.quick"),
    ("spec-data-option", ["sweep", "{tmp}/dopt.toml", "--out", "{tmp}/o"], "['nosuch']"),
    ("spec-data-choice", ["sweep", "{tmp}/dch.toml", "--out", "{tmp}/o"], "'height'"),
    ("spec-device", ["sweep", "{tmp}/dev.toml", "--out", "{tmp}/o"], "'tpu'"),
    (
        "sweep-device",
        ["sweep", "configs/otf.toml", "--out", "{tmp}/o", "--device", "tpu"],
        "'tpu' (--device)",
    ),
    (
        "reproduce-device",
        ["reproduce", "otf", "--out", "{tmp}/o", "--device", "tpu"],
        "'tpu' (--device)",
    ),
    ("reproduce-profile", ["reproduce", "otf", "--out", "{tmp}/o", "--profile", "x"], "'x'"),
    (
        "reproduce-spec-epochs",
        ["reproduce", "otf", "--out", "{tmp}/o", "--config", "{tmp}/ep.toml"],
        "config key 'epochs'",
    ),
    ("datasets-describe", ["datasets", "describe", "nosuch"], "nosuch"),
    ("datasets-fetch", ["datasets", "fetch", "nosuch"], "nosuch"),
    ("methods-describe", ["methods", "describe", "nosuch"], "nosuch"),
    ("reproduce-paper", ["reproduce", "nosuch"], "nosuch"),
    (
        "audit-missing-csv",
        ["audit", "{tmp}/no.csv", "--label", "y", "--score", "s", "--sensitive", "a"],
        "no.csv",
    ),
    ("report-nothing", ["report", "{tmp}"], "no sweep results"),
]


@pytest.mark.parametrize(("argv", "needle"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_user_error_answers_without_torch(argv, needle, tmp_path):
    for stem, text in SPECS.items():
        (tmp_path / f"{stem}.toml").write_text(text)
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    proc = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *[a.format(tmp=tmp_path) for a in argv]],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=ROOT,
    )
    stderr, _, tail = proc.stderr.rpartition("@@heavy ")
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("error:"), proc.stderr
    assert needle in lines[0]
    assert json.loads(tail) == [], f"imported before the error: {tail.strip()}"


def test_name_table_equals_the_registries():
    from otfair_lab.experiments import _names

    # rendered in a fresh interpreter: other tests of this worker register toy methods
    code = (
        "import json; from otfair_lab.experiments import _names; "
        "print(json.dumps(_names.render()))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=600
    ).stdout
    assert json.loads(_names._TABLE.read_text()) == json.loads(out), (
        "rewrite the table: python -m otfair_lab.experiments._names"
    )


def test_plugin_method_is_known_to_the_name_checks():
    from otfair_lab.experiments import _names
    from otfair_lab.experiments.methods import MethodSpec, get_method, register_method
    from otfair_lab.experiments.methods._spec import _REGISTRY

    base = get_method("unfair")
    spec = MethodSpec(name="_plugin_for_names", task="classification", build=base.build)
    register_method(spec)
    try:
        assert _names.method_names("_plugin_for_names").task == "classification"
        assert "_plugin_for_names" in _names.unknown_method_message("x")
    finally:
        _REGISTRY.pop("_plugin_for_names")
    with pytest.raises(ValueError, match="Unknown method 'nosuch'"):
        _names.method_names("nosuch")


def test_python_dash_m_otfair_is_the_cli():
    proc = subprocess.run(
        [sys.executable, "-m", "otfair_lab", "fit", "--dataset", "adult", "--method", "nosuch"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 2 and lines == [lines[0]] and "Unknown method 'nosuch'" in lines[0]
