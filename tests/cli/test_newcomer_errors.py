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
