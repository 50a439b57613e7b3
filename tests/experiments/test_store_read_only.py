"""A store is read without being written: ``otfair report`` works on a read-only store.

Running as root makes ``chmod`` ineffective, so the read-only directory is simulated
there (the module's ``os.access`` answers "not writable" for it); as another user the
directory is really made read-only.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from contextlib import contextmanager

import pytest
from typer.testing import CliRunner

from otfair_lab.cli import app
from otfair_lab.experiments import ResultStore, _store_files
from otfair_lab.experiments._spec import RunConfig


def _write_store(directory):
    directory.mkdir()
    with ResultStore(directory / "results.sqlite") as store:
        for strength in (0.1, 1.0):
            config = RunConfig(dataset="synthetic", method="otf", seed=0, strength=strength)
            result = {
                "dataset": "synthetic",
                "method": "otf",
                "task": "classification",
                "strength": strength,
                "notion": "dp",
                "seed": 0,
                "accuracy": 0.8,
                "auc": 0.8,
                "dp_gap": 0.1 * strength,
                "fit_time_s": 1.0,
            }
            store.write(
                config, {"status": "ok", "result": result, "started_at": 0, "finished_at": 1}
            )
    return directory


@contextmanager
def _read_only(directory, monkeypatch):
    """Make ``directory`` read-only (really, or simulated when running as root)."""
    if os.geteuid() != 0:
        mode = directory.stat().st_mode
        directory.chmod(stat.S_IRUSR | stat.S_IXUSR)
        try:
            yield
        finally:
            directory.chmod(mode)
        return
    real = os.access
    target = str(directory.resolve())

    def access(path, mode, *args, **kwargs):
        resolved = os.path.realpath(path)
        if mode & os.W_OK and (resolved == target or os.path.dirname(resolved) == target):
            return False
        return real(path, mode, *args, **kwargs)

    monkeypatch.setattr(_store_files.os, "access", access)
    yield


def test_read_only_open_writes_nothing(tmp_path):
    out = _write_store(tmp_path / "out")
    before = sorted(p.name for p in out.iterdir())
    with ResultStore(out / "results.sqlite", read_only=True) as store:
        assert store.count("ok") == 2
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            store.set_meta("x", 1)
    assert sorted(p.name for p in out.iterdir()) == before  # no -wal / -shm left behind


def test_report_of_a_store_in_a_read_only_directory(tmp_path, monkeypatch):
    out = _write_store(tmp_path / "out")
    with _read_only(out, monkeypatch):
        refused = CliRunner().invoke(app, ["report", str(out)])
        assert refused.exit_code == 2
        assert "read-only" in refused.stderr and "--out" in refused.stderr
        assert "damaged" not in refused.stderr and "backup" not in refused.stderr
        done = CliRunner().invoke(app, ["report", str(out), "--out", str(tmp_path / "rep")])
        assert done.exit_code == 0, done.output
    assert (tmp_path / "rep" / "index.md").is_file()
    assert not (out / "report").exists()
