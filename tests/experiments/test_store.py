import sqlite3

import pandas as pd
import pytest

from otfair_lab.experiments import ResultStore, RunConfig, open_store


def _record(acc, status="ok"):
    res = {"accuracy": acc, "dp_gap": 0.1, "baseline": {"accuracy": 0.5}, "fit_time_s": 1.0}
    return {
        "status": status,
        "result": res if status == "ok" else None,
        "error": None if status == "ok" else "RuntimeError: x",
        "traceback": None,
        "started_at": 10.0,
        "finished_at": 12.5,
        "host": "h",
    }


def test_write_read_and_csv_roundtrip(tmp_path):
    cfg = RunConfig(
        dataset="adult", method="otf", seed=1, strength=0.3, notion="dp", dataset_label="adult-sex"
    )
    with open_store(tmp_path) as store:
        store.write(cfg, _record(0.8), sweep="s", versions={"otfair_version": "1"})
        assert store.finished_keys() == {cfg.key()}
        frame = store.to_frame()
        path = store.export_csv(tmp_path / "r.csv")
    row = frame.iloc[0]
    assert (row["dataset"], row["dataset_name"], row["method"], row["seed"]) == (
        "adult-sex",
        "adult",
        "otf",
        1,
    )
    assert row["accuracy"] == 0.8 and row["baseline.accuracy"] == 0.5
    assert row["wall_time_s"] == pytest.approx(2.5)
    csv = pd.read_csv(path)
    assert csv.loc[0, "accuracy"] == 0.8 and csv.loc[0, "baseline.accuracy"] == 0.5


def test_one_row_per_key_and_wal(tmp_path):
    cfg = RunConfig(dataset="adult", method="otf", seed=0)
    with open_store(tmp_path) as store:
        store.write(cfg, _record(0.0, status="error"))
        store.write(cfg, _record(0.7))
        assert store.count() == 1 and store.count("ok") == 1
        assert store.finished_keys(include_errors=False) == {cfg.key()}
    with sqlite3.connect(tmp_path / "results.sqlite") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT attempts FROM runs").fetchone()[0] == 2


def test_bad_status_and_directory(tmp_path):
    with open_store(tmp_path) as store, pytest.raises(ValueError, match="status"):
        store.write(RunConfig(dataset="a", method="b", seed=0), {"status": "done"})
    with pytest.raises(ValueError, match="`path`"):
        ResultStore(tmp_path)


def test_outcomes_count_stored_errors_by_message(tmp_path):
    a, b, c = (RunConfig(dataset="adult", method="otf", seed=s) for s in range(3))
    with open_store(tmp_path) as store:
        store.write(a, _record(0.7))
        store.write(b, _record(0.0, status="error"))
        store.write(c, {**_record(0.0, status="error"), "error": "ValueError: y\nmore"})
        ok, failed, errors = store.outcomes({a.key(), b.key(), c.key(), "unknown"})
        assert (ok, failed) == (1, 2)
        assert errors == {"RuntimeError: x": 1, "ValueError: y": 1}
        assert store.outcomes({a.key()})[:2] == (1, 0)


def test_profile_column_and_migration_of_an_old_store(tmp_path):
    db = tmp_path / "results.sqlite"
    with sqlite3.connect(db) as conn:  # a store written before the `profile` column
        conn.execute("CREATE TABLE runs (key TEXT PRIMARY KEY, status TEXT)")
    cfg = RunConfig(dataset="adult", method="otf", seed=0)
    with open_store(tmp_path) as store:
        columns = {r[1] for r in store._conn.execute("PRAGMA table_info(runs)")}
        assert "profile" in columns
    (tmp_path / "results.sqlite").unlink()
    with open_store(tmp_path) as store:
        store.write(cfg, _record(0.7), profile="quick")
        assert store.rows()[0]["profile"] == "quick"
        assert store.mean_wall_times() == {("adult", "otf", None, None, "cpu"): (2.5, 1)}


def test_stored_timings_are_grouped_by_device(tmp_path):
    """A GPU sweep is not estimated from CPU timings (issue 26), nor the reverse."""
    from otfair_lab.experiments._store import timing_group

    cpu = RunConfig(dataset="adult", method="otf", seed=0)
    gpu = RunConfig(dataset="adult", method="otf", seed=1, device="cuda")
    assert timing_group(cpu) != timing_group(gpu)
    with open_store(tmp_path) as store:
        store.write(cpu, _record(0.7))
        assert timing_group(cpu) in store.mean_wall_times()
        assert timing_group(gpu) not in store.mean_wall_times()
