"""README.md stays true: its Python snippets run in order, .gitignore hides run outputs
but not committed reports. (Its links, and the docs pages', are checked by
tests/docs/test_links.py.)"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"

_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)


def code_blocks(text: str, language: str) -> list[str]:
    """The fenced blocks of ``language`` in ``text``, in order."""
    return [body for lang, body in _FENCE.findall(text) if lang == language]


def test_helpers_on_a_hand_made_page():
    page = (
        "See [a](docs/a.md#x).\n"
        "```python\nx = 1\n```\n```bash\nls\n```\n```python\ny = x + 1\n```\n"
        "```text\nz\n```\n"
    )
    assert code_blocks(page, "python") == ["x = 1\n", "y = x + 1\n"]
    assert code_blocks(page, "text") == ["z\n"]


def test_readme_keeps_the_ci_commands():
    # .ci/run and the quick start run exactly these; changing one silently breaks CI
    text = README.read_text(encoding="utf-8")
    bash = code_blocks(text, "bash")
    assert (
        "python3 -m venv .venv && . .venv/bin/activate && pip install torch==2.13.0 && "
        'pip install -e ".[dev]" && otfair demo --out otfair-demo\n'
    ) in bash
    assert ". .venv/bin/activate && python -m pytest -n 2\n" in bash


@pytest.mark.slow
def test_readme_python_snippets_run_in_order(tmp_path, monkeypatch):
    assert os.environ.get("OTFAIR_DATA_DIR"), "tests/conftest.py sets OTFAIR_DATA_DIR"
    blocks = code_blocks(README.read_text(encoding="utf-8"), "python")
    assert len(blocks) >= 5
    monkeypatch.chdir(tmp_path)  # nothing a snippet writes lands in the checkout
    namespace: dict = {"__name__": "__readme__"}
    for i, block in enumerate(blocks, 1):
        try:
            exec(compile(block, f"README.md python block {i}", "exec"), namespace)
        except Exception as exc:  # name the block in the failure
            raise AssertionError(f"README.md python block {i} failed:\n{block}") from exc
    # the chained snippets end with real objects, not placeholders
    assert 0.0 <= namespace["rep"].summary["dp_gap"] <= 1.0
    assert namespace["proba"].ndim == 1


def test_readme_regression_block_builds_and_fits_both_nets(monkeypatch, capsys):
    """The accuracy-parity block (WassersteinNet and CENet from ``paper_settings``) runs.

    Issue 47: the block once passed WassersteinNet's ``clip`` to CENet (a TypeError).
    Here with one epoch (the slow test above runs it with the paper's 100).
    """
    assert os.environ.get("OTFAIR_DATA_DIR"), "tests/conftest.py sets OTFAIR_DATA_DIR"
    from otfair_lab.experiments import methods

    (block,) = [b for b in code_blocks(README.read_text(encoding="utf-8"), "python")
                if "CENet" in b]  # fmt: skip
    settings = methods.paper_settings

    def one_epoch(*args, **kwargs):
        return {**settings(*args, **kwargs), "epochs": 1}

    monkeypatch.setattr(methods, "paper_settings", one_epoch)
    namespace: dict = {"__name__": "__readme__"}
    exec(compile(block, "README.md regression block", "exec"), namespace)
    printed = capsys.readouterr().out.split("\n")
    assert [line.split()[0] for line in printed if line] == ["WassersteinNet", "CENet"]
    assert (
        type(namespace["est"]).__name__ == "CENet" and "clip" not in namespace["est"].get_params()
    )
    audit = namespace["audit"]
    assert audit["error_gap"] == pytest.approx(abs(audit["mse_0"] - audit["mse_1"]))


@pytest.mark.skipif(
    shutil.which("git") is None or not (REPO / ".git").exists(), reason="needs a git checkout"
)
@pytest.mark.parametrize(
    ("path", "ignored"),
    [
        ("results/x.csv", True),
        ("runs/ftm/results.sqlite", True),
        ("otfair-demo/report/index.md", True),
        ("docs/results/ftm_one_split/index.md", False),
        ("docs/reproduction/otf/results/table.csv", False),
        ("docs/reproduction/otf/runs/x.md", False),
    ],
)
def test_gitignore_hides_run_outputs_not_reports(path, ignored):
    res = subprocess.run(["git", "check-ignore", "-q", "--no-index", path], cwd=REPO, check=False)
    assert res.returncode == (0 if ignored else 1), path


# --------------------------------------------------------------------------------------
# Every `otfair ...` line of the README's and docs/*.md's shell blocks runs (issue 28)
# --------------------------------------------------------------------------------------
DOC_PAGES = [README, *sorted((REPO / "docs").glob("*.md"))]
_SHELL = ("bash", "sh", "shell", "console")
_OPTIONAL = re.compile(r"\s*\[([^\[\]]*)\]")

#: Lines not run (each is parsed by the CLI instead, so its options stay valid), with why.
SKIP = {
    # long runs: the quick profiles are run by tests/experiments/test_configs.py
    "otfair sweep configs/ftm.toml --out runs/ftm-quick --profile quick --workers 2": "35-50 s",
    "otfair sweep configs/otf.toml --out runs/otf --profile quick --workers 2": "35-50 s",
    "otfair sweep configs/ftm.toml --out runs/ftm --workers 2 --yes": "the full grid, ~3 h",
    "otfair sweep configs/otf.toml --out runs/otf --workers 2 --yes": "the full grid, 8-12 h",
    "otfair sweep configs/otf.toml --out runs/otf --retry-failed": "reruns the full grid",
    "otfair reproduce accuracy_parity --profile one_split --out runs/ap --workers 2": "28 min",
    # need what a test machine has not: a Dask cluster, the network
    "otfair sweep configs/ftm.toml --out runs/ftm --backend cluster --scheduler tcp://host:8786": (
        "needs a Dask scheduler"
    ),
    "otfair sweep configs/otf.toml --out runs/otf --backend cluster --workers 4": "needs dask",
    "otfair sweep configs/otf.toml --out runs/otf --backend cluster --scheduler tcp://head:8786": (
        "needs a Dask scheduler"
    ),
    "otfair datasets fetch adult german | --all [--data-home DIR] [--force]": "downloads",
}


def cli_lines(text: str) -> list[str]:
    """The ``otfair ...`` command lines of ``text``'s shell blocks (comments dropped,
    ``\\`` continuations joined, a leading ``$ `` prompt removed)."""
    out = []
    for lang, body in _FENCE.findall(text):
        if lang not in _SHELL:
            continue
        joined = re.sub(r"\s*\\\n\s*", " ", body)
        for line in joined.splitlines():
            line = line.strip().removeprefix("$ ")
            if line.startswith("otfair "):
                out.append(re.sub(r"\s+#.*$", "", line).strip())
    return out


def base_form(line: str) -> str:
    """A synopsis line without its optional ``[...]`` parts (the command as run)."""
    return " ".join(_OPTIONAL.sub("", line).split())


def full_form(line: str) -> str:
    """A synopsis line with every optional part (first of ``a|b``; ``...`` dropped)."""
    return " ".join(
        _OPTIONAL.sub(lambda m: " " + re.sub(r"(\S+)\|\S+", r"\1", m.group(1)), line)
        .replace("...", "")
        .split()
    )


def with_budget(argv: list[str]) -> list[str]:
    """``otfair fit`` lines run with 1 epoch on at most 500 training rows (the command,
    its checks, data loading and output are the doc's; only the training is shortened).

    A budget line (``--max-violation``) trains 30 epochs of batches of 100 rows on at
    most 1,000 rows: FairnessCV refuses, in words, strengths whose under-trained models
    are below the best constant predictor, one epoch of the paper's 1024-row batches is
    one step, and on 500 rows the refit of README's logistic line was over its budget on
    its own rows (a warning, which the tests' filter makes an error).
    """
    if argv[:1] != ["fit"]:
        return argv
    out = list(argv)
    budget = "--max-violation" in out
    epochs = "30" if budget else "1"
    if budget:
        out += ["-o", "batch_size=100"]
    if "--epochs" in out:
        out[out.index("--epochs") + 1] = epochs
    else:
        out += ["--epochs", epochs]
    return [*out, "--max-train-rows", "1000" if budget else "500"]


def _parse_only(argv: list[str]) -> None:
    """Parse ``otfair ARGV`` down to its command, without running it."""
    import typer

    from otfair_lab.cli import app

    cmd = typer.main.get_command(app)
    try:
        ctx = cmd.make_context("otfair", list(argv), resilient_parsing=False)
    except typer.Exit as stop:  # an eager option (--version) answers while parsing
        assert stop.exit_code == 0, argv
        return
    while hasattr(cmd, "resolve_command"):
        protected = getattr(ctx, "_protected_args", None) or getattr(ctx, "protected_args", [])
        rest = [*protected, *ctx.args]
        name, cmd, rest = cmd.resolve_command(ctx, rest)
        ctx = cmd.make_context(name, rest, parent=ctx)


def test_cli_line_helpers_on_a_hand_made_page():
    page = (
        "```bash\notfair fit --dataset a --epochs 20  # note\n$ otfair audit f.csv \\\n"
        "    --label y [--task classification|regression] [--json]\nls\n```\n"
        "```python\notfair = 1\n```\n"
    )
    lines = cli_lines(page)
    assert lines == [
        "otfair fit --dataset a --epochs 20",
        "otfair audit f.csv --label y [--task classification|regression] [--json]",
    ]
    assert base_form(lines[1]) == "otfair audit f.csv --label y"
    assert full_form(lines[1]) == "otfair audit f.csv --label y --task classification --json"
    assert with_budget(["fit", "--epochs", "20"]) == [
        "fit",
        "--epochs",
        "1",
        *["--max-train-rows", "500"],
    ]


def _doc_lines() -> list[tuple[str, str]]:
    return [(page.name, line) for page in DOC_PAGES for line in cli_lines(page.read_text("utf-8"))]


def test_docs_have_cli_lines_and_the_skip_list_is_current():
    lines = {line for _, line in _doc_lines()}
    assert len(lines) >= 20
    assert not set(SKIP) - lines, f"SKIP names lines no page has: {set(SKIP) - lines}"


@pytest.mark.parametrize(("page", "line"), [(p, x) for p, x in _doc_lines() if x in SKIP])
def test_skipped_doc_cli_lines_parse(page, line):
    argv = shlex.split(full_form(line).replace(" | ", " "))[1:]
    _parse_only(argv)


@pytest.fixture
def doc_cwd(tmp_path, monkeypatch):
    """A working directory holding what the doc lines name: configs/, preds.csv, a store."""
    import numpy as np
    import pandas as pd

    (tmp_path / "configs").symlink_to(REPO / "configs")
    rng = np.random.default_rng(0)
    n = 300
    y = rng.integers(0, 2, n)
    pd.DataFrame(
        {
            "y": y,
            "proba": 1 / (1 + np.exp(-(y - 0.5 + rng.normal(size=n)))),
            "yhat": y + rng.normal(scale=0.3, size=n),
            "sex": rng.choice(["female", "male"], n),
            "race": rng.choice(["a", "b"], n),
            "age": rng.normal(40, 10, n),
        }
    ).to_csv(tmp_path / "preds.csv", index=False)
    from otfair_lab.experiments import load_spec, run_sweep

    spec = tmp_path / "tiny.toml"
    spec.write_text(
        'name = "tiny"\nseeds = 1\nepochs = 1\nmax_train_rows = 200\n[[datasets]]\n'
        'name = "synthetic"\n[[methods]]\nname = "gapreg"\nstrengths = [1.0]\n'
    )
    run_sweep(load_spec(spec), tmp_path / "runs" / "ftm-quick", progress=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.slow
@pytest.mark.parametrize(("page", "line"), [(p, x) for p, x in _doc_lines() if x not in SKIP])
def test_doc_cli_lines_run(page, line, doc_cwd):
    from typer.testing import CliRunner

    from otfair_lab.cli import app

    _parse_only(shlex.split(full_form(line))[1:])  # every optional part is a valid option
    argv = with_budget(shlex.split(base_form(line))[1:])
    res = CliRunner().invoke(app, argv)
    assert res.exit_code == 0, f"{page}: `{line}` ran as {argv}:\n{res.output}"
    assert "Traceback" not in res.output
