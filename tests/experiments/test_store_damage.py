"""Damage and resources named in one line: a store's bytes, rows and disk (issue 48, item 3)."""

from __future__ import annotations

import sqlite3
import time

import pytest
from _exp_helpers import write_spec
from typer.testing import CliRunner

from otfair_lab.cli import app
from otfair_lab.experiments import load_spec, open_store, run_sweep
from otfair_lab.experiments._spec import RunConfig
from otfair_lab.experiments._store import ResultStore, check_out_dir
from otfair_lab.experiments._store_files import StoreError, StoreFullError, store_error
from otfair_lab.experiments._sweep_result import DISK_FULL, SweepInterrupted

MARK = "q" * 200  # a run's panel text, found in the file to damage it


def _store(out, rows=20):
    out.mkdir(parents=True, exist_ok=True)
    with ResultStore(out / "results.sqlite") as store:
        for seed in range(rows):
            config = RunConfig(dataset="synthetic", method="unfair", seed=seed, strength=0.1)
            result = {"accuracy": 0.75 + seed / 1000, "dp_gap": 0.1, "note": MARK}
            now = time.time()
            record = {"status": "ok", "result": result, "started_at": now, "finished_at": now}
            store.write(config, record, sweep="t")
    return out / "results.sqlite"


def _report(out):
    result = CliRunner().invoke(app, ["report", str(out)])
    lines = result.output.strip().splitlines()
    return result.exit_code, lines, result


def test_garbage_bytes_in_a_value_are_named_by_the_check_and_the_report(tmp_path):
    db = _store(tmp_path / "out")
    data = bytearray(db.read_bytes())
    at = data.index(MARK.encode(), len(data) // 2)  # a row in a data page
    data[at : at + 64] = b"\xff" * 64  # not UTF-8: SQLite's own checks pass it
    db.write_bytes(bytes(data))
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
    conn.close()
    with pytest.raises(StoreError, match="is not a readable result store .*UTF-8"):
        check_out_dir(tmp_path / "out")  # what a sweep checks first: no "already done"
    code, lines, result = _report(tmp_path / "out")
    assert code == 2 and len(lines) == 1, result.output
    assert "not a readable result store" in lines[0] and "Traceback" not in result.output


def test_a_panel_that_does_not_match_its_columns_is_named(tmp_path):
    db = _store(tmp_path / "out")
    conn = sqlite3.connect(db)
    with conn:  # one digit of one stored panel edited
        conn.execute("UPDATE runs SET metrics = replace(metrics, '0.755', '0.756') WHERE seed = 5")
    conn.close()
    with pytest.raises(StoreError, match=r"panel's accuracy 0\.756 is not its accuracy column"):
        check_out_dir(tmp_path / "out")
    code, lines, _ = _report(tmp_path / "out")
    assert code == 2 and len(lines) == 1 and "accuracy" in lines[0]


def test_an_empty_store_file_is_one_line(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "results.sqlite").write_bytes(b"")
    code, lines, result = _report(tmp_path / "out")
    assert code == 2 and len(lines) == 1, result.output
    assert "no such table: runs" in lines[0] and "Traceback" not in result.output


def test_a_full_disk_is_named_as_such_not_as_damage(tmp_path):
    error = store_error(
        tmp_path / "results.sqlite", sqlite3.OperationalError("database or disk is full")
    )
    assert isinstance(error, StoreFullError)
    assert "is full" in str(error) and "backup" not in str(error) and "damaged" in str(error)
    error = store_error(tmp_path / "results.sqlite", OSError(28, "No space left on device"))
    assert isinstance(error, StoreFullError)
    assert not isinstance(
        store_error(tmp_path, sqlite3.DatabaseError("malformed")), StoreFullError
    )


def test_a_disk_filling_up_mid_sweep_stops_it_like_an_interruption(
    plugin_path, tmp_path, monkeypatch
):
    spec = load_spec(write_spec(tmp_path / "s.toml", seeds=2))  # 8 runs
    written = []
    original = ResultStore.write.__wrapped__  # the method under the error guard

    def filling(store, config, record, **kwargs):
        if len(written) == 3:  # SQLite's own "database or disk is full" from now on
            pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
            store._conn.execute(f"PRAGMA max_page_count = {pages}")
            record = {**record, "result": {**(record.get("result") or {}), "pad": "x" * 50000}}
        original(store, config, record, **kwargs)
        written.append(config.key())

    from otfair_lab.experiments import _store

    monkeypatch.setattr(ResultStore, "write", _store._guarded(filling))
    with pytest.raises(SweepInterrupted) as stopped:
        run_sweep(spec, tmp_path / "out", progress=False, stack=False)
    summary = stopped.value.summary
    assert summary.interrupted == DISK_FULL and "is full" in summary.reason
    assert summary.ok + summary.failed == 3 and len(summary.abandoned) >= 1
    assert summary.ok + summary.failed + len(summary.abandoned) + summary.not_started == 8
    monkeypatch.undo()
    with open_store(tmp_path / "out") as store:
        assert store.finished_keys() == set(written)  # what was kept, nothing half written
    again = run_sweep(spec, tmp_path / "out", progress=False)  # resumable
    assert again.skipped == 3 and again.ok + again.failed == 5


def test_the_cli_says_a_full_disk_stop_in_one_line_and_exits_2(capsys):
    import typer

    from otfair_lab.cli.sweep import _interrupted
    from otfair_lab.experiments._sweep_result import SweepSummary

    summary = SweepSummary(
        total=8, skipped=0, ok=3, failed=0, store_path=None, wall_time_s=1.0,  # type: ignore[arg-type]
        interrupted=DISK_FULL, abandoned=("dummy-lr 0.1 seed 1 on synthetic",), not_started=4,
        reason="the disk holding /x is full (disk is full; 0.0 MiB free); free some space",
    )  # fmt: skip
    with pytest.raises(typer.Exit) as exited:
        _interrupted(summary)
    assert exited.value.exit_code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "stopped by a full disk: 3 runs finished and stored" in lines[0]
    assert "4 not started" in lines[0] and "the disk holding /x is full" in lines[0]
