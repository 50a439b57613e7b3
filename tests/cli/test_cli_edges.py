"""Quiet and exact at the edges (issue 48, item 7): a finished sweep resumes without
importing torch or fitting a probe; a binary runs archive is one ``error:`` line.

The resume's speed comes from doing no work (nothing to check, nothing to fit); what is
asserted is that absence (torch and scikit-learn stay out of ``sys.modules``), not a
wall time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from otfair_lab.cli import app

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

SPEC = """seeds = [0, 1]
epochs = 1
max_train_rows = 60
[[datasets]]
name = "synthetic"
options = {n_samples = 200}
[[methods]]
name = "unfair"
"""


def _cli(tmp_path: Path, *argv: str) -> tuple[subprocess.CompletedProcess[str], list[str], list]:
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    proc = subprocess.run(
        [sys.executable, "-c", _WRAPPER, *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=ROOT,
    )
    stderr, _, tail = proc.stderr.rpartition("@@heavy ")
    return proc, [ln for ln in stderr.splitlines() if ln.strip()], json.loads(tail)


def test_a_finished_sweep_resumes_without_torch(tmp_path):
    (tmp_path / "s.toml").write_text(SPEC)
    args = ["sweep", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o"), "--no-progress"]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "0 already done, 2 ok" in first.stdout
    proc, _, heavy = _cli(tmp_path, *args)
    assert proc.returncode == 0, proc.stderr
    assert "2 runs (profile full): 2 already done, 0 ok, 0 failed" in proc.stdout
    assert heavy == [], f"a no-op resume imported {heavy}"


@pytest.mark.parametrize("verify", [False, True], ids=["no-run", "verify"])
def test_a_binary_archive_is_one_line(tmp_path, verify):
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "seed-0.jsonl").write_bytes(b'{"key": "a"}\n' + bytes(range(128, 256)) * 4)
    extra = ["--verify", "1"] if verify else ["--no-run", "--out", str(tmp_path / "o")]
    proc, lines, _ = _cli(tmp_path, "reproduce", "otf", "--runs", str(runs), *extra)
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert "seed-0.jsonl, line 2: not text" in lines[0]
