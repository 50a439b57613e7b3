"""``otfair fit --max-violation``: FairnessCV on the command line, and its bad values."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from otfair.estimators._budget_rule import select_strength
from otfair_lab.cli import app

OTFAIR = str(Path(sys.executable).with_name("otfair"))
ROOT = Path(__file__).resolve().parents[2]
FIT = ["fit", "--dataset", "adult", "--method", "otf"]


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--max-violation", "-0.1"], "finite number >= 0"),
        (["--max-violation", "nan"], "finite number >= 0"),
        (["--max-violation", "inf"], "finite number >= 0"),
        (["--max-violation", "abc"], "--max-violation"),
        (["--max-violation", "1.5", "--metric", "dp_gap"], "exceeds 1"),
        (["--max-violation", "0.02", "--strength", "0.1"], "exclude each other"),
        (["--max-violation", "0.02", "--cv", "1"], "--cv"),
        (["--cv", "3"], "with --max-violation only"),
    ],
)
def test_bad_budget_is_one_line_and_exit_2(extra, needle, tmp_path):
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    proc = subprocess.run(
        [OTFAIR, *FIT, *extra], capture_output=True, text=True, env=env, timeout=120, cwd=ROOT
    )
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert len(lines) == 1 and lines[0].startswith("error:") and needle in lines[0], lines


def test_bad_budget_is_refused_before_torch_is_imported():
    code = (
        "import sys\n"
        "from otfair_lab.cli import main\n"
        f"sys.argv = ['otfair', *{FIT!r}, '--max-violation', 'nan']\n"
        "try:\n    main()\n"
        "finally:\n    print('torch' in sys.modules, 'sklearn' in sys.modules)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert proc.returncode == 2 and "finite number" in proc.stderr
    assert proc.stdout.split() == ["False", "False"]


def _fit(*args: str):
    return CliRunner().invoke(app, ["fit", "--dataset", "synthetic", *args])


def test_fit_with_a_budget_reports_the_chosen_strength():
    res = _fit(
        "--method", "gapreg", "--max-violation", "0.1", "--cv", "3", "--epochs", "10",
        "--max-train-rows", "600", "-o", "batch_size=100", "--json",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    out = json.loads(res.output[res.output.index("{") :])
    path = out["path"]
    assert out["cv_strength"] == path["strength"][select_strength(path, 0.1)]
    # the refit kept: the folds' choice, or a larger strength where its refit was over the
    # budget on its own training rows (FairnessCV's check_refit)
    index = path["strength"].index(out["strength"])
    assert out["strength"] >= out["cv_strength"]
    assert out["train_violation"] <= 0.1
    assert out["cv_violation"] == pytest.approx(path["test_violation"][index])
    assert out["cv_violation"] <= 0.1 and out["cv"] == 3 and out["metric"] == "dp_gap"
    assert out["test_violation"] == pytest.approx(out["dp_gap"])  # the panel's own gap


def test_fit_with_a_budget_refuses_a_method_without_a_strength():
    res = _fit("--method", "reduction", "--max-violation", "0.05", "--max-train-rows", "300")
    assert res.exit_code == 2
    assert "FairnessCV" in res.output and "'reduction' has none to tune" in res.output
