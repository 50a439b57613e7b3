import io
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from _exp_helpers import write_spec

from otfair_lab.experiments import load_spec, open_store, run_sweep
from otfair_lab.experiments._plan import Progress


def _ok_rows(out):
    with open_store(out) as store:
        return store.rows()


def test_raising_run_is_recorded_and_sweep_continues(plugin_path, tmp_path):
    spec = load_spec(write_spec(tmp_path / "s.toml"))
    summary = run_sweep(spec, tmp_path / "out", progress=False)
    assert (summary.total, summary.ok, summary.failed) == (8, 6, 2)
    rows = _ok_rows(tmp_path / "out")
    errors = [r for r in rows if r["status"] == "error"]
    assert {r["method"] for r in errors} == {"dummy-raise"}
    assert all("dummy-raise always fails" in r["error"] for r in errors)
    assert all("Traceback" in r["traceback"] for r in errors)
    ok = [r for r in rows if r["status"] == "ok"]
    assert all(
        0.0 <= r["accuracy"] <= 1.0 and r["metrics"]["accuracy"] == r["accuracy"] for r in ok
    )
    assert all(r["otfair_version"] and r["fit_time_s"] > 0 for r in ok)


def test_rerun_skips_finished_and_retry_failed(plugin_path, tmp_path):
    spec = load_spec(write_spec(tmp_path / "s.toml"))
    run_sweep(spec, tmp_path / "out", profile="quick", progress=False)
    before = {r["key"]: r["finished_at"] for r in _ok_rows(tmp_path / "out")}
    again = run_sweep(spec, tmp_path / "out", profile="quick", progress=False)
    assert (again.skipped, again.ok, again.failed) == (3, 0, 0)
    assert (again.stored_ok, again.stored_failed) == (2, 1)  # the rerun counts stored ones
    assert again.errors == (("RuntimeError: dummy-raise always fails", 1),)
    assert {r["key"]: r["finished_at"] for r in _ok_rows(tmp_path / "out")} == before
    retry = run_sweep(spec, tmp_path / "out", profile="quick", retry_failed=True, progress=False)
    assert (retry.skipped, retry.failed) == (2, 1)
    rows = _ok_rows(tmp_path / "out")
    assert len(rows) == 3
    assert [r["attempts"] for r in rows if r["status"] == "error"] == [2]


def _frame(out):
    with open_store(out) as store:
        df = store.to_frame()
    cols = ["key", "dataset", "method", "strength", "seed", "accuracy", "auc", "dp_gap", "wdp"]
    return df[cols].sort_values("key").reset_index(drop=True)


def test_process_pool_and_dask_cluster_give_the_same_rows(plugin_path, tmp_path):
    spec = load_spec(write_spec(tmp_path / "s.toml", seeds=1))
    for out, kwargs in [
        ("inline", {}),
        ("pool", {"workers": 2}),
        ("dask", {"workers": 2, "backend": "cluster"}),
    ]:
        summary = run_sweep(spec, tmp_path / out, progress=False, **kwargs)
        assert (summary.ok, summary.failed) == (3, 1), (out, summary.errors)  # say why
    inline = _frame(tmp_path / "inline")
    assert len(inline) == 3
    pd.testing.assert_frame_equal(inline, _frame(tmp_path / "pool"))
    pd.testing.assert_frame_equal(inline, _frame(tmp_path / "dask"))


def test_a_dead_worker_fails_no_run(plugin_path, tmp_path):
    # the run at strength 0.1 kills its worker once (like the OOM killer): the pool breaks,
    # every run in flight fails with BrokenProcessPool; they are run again, not stored failed
    crashes = tmp_path / "crashes"
    crashes.mkdir()
    options = f'crash_dir = "{crashes}", crash_strength = 0.1, crash_times = 1'
    spec = load_spec(write_spec(tmp_path / "s.toml", seeds=1, options=options))
    summary = run_sweep(spec, tmp_path / "pool", workers=2, progress=False)
    assert len(list(crashes.iterdir())) == 1
    assert (summary.ok, summary.failed) == (3, 1), summary.errors  # dummy-raise fails
    rows = _ok_rows(tmp_path / "pool")
    assert len(rows) == 4 and all(r["attempts"] == 1 for r in rows)
    assert not any("worker failure" in (r["error"] or "") for r in rows)


def test_a_run_that_always_kills_its_worker_is_stored_failed(plugin_path, tmp_path):
    from otfair_lab.experiments._runner import WORKER_RETRIES

    crashes = tmp_path / "crashes"
    crashes.mkdir()
    body = '[profiles.one]\nseeds = [0]\nmethods = ["dummy-lr"]\nmax_strengths = 1'
    (run,) = load_spec(write_spec(tmp_path / "s.toml", body, seeds=1)).runs("one")
    options = f'crash_dir = "{crashes}", crash_strength = {run.strength}, crash_times = 99'
    spec = load_spec(write_spec(tmp_path / "s.toml", body, seeds=1, options=options))
    summary = run_sweep(spec, tmp_path / "pool", profile="one", workers=2, progress=False)
    assert len(list(crashes.iterdir())) == WORKER_RETRIES + 1  # tried, then stored
    assert (summary.ok, summary.failed) == (0, 1)
    assert summary.errors[0][0].startswith("worker failure: BrokenProcessPool")


def _count_ok(db):
    if not db.exists():
        return 0
    with sqlite3.connect(db) as conn:
        try:
            return conn.execute("SELECT COUNT(*) FROM runs WHERE status='ok'").fetchone()[0]
        except sqlite3.DatabaseError:  # the file is being created by the sweep
            return 0


def _sweep_cmd(config, out, *extra):
    return [
        sys.executable,
        "-c",
        "from otfair_lab.cli import main; main()",
        "sweep",
        str(config),
        "--out",
        str(out),
        "--no-progress",
        *extra,
    ]


def test_resume_after_sigkill(plugin_path, tmp_path):
    config = write_spec(tmp_path / "s.toml", seeds=3, sleep=0.4)  # 12 runs, 9 slow ok ones
    out = tmp_path / "out"
    proc = subprocess.Popen(
        _sweep_cmd(config, out),
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    db = out / "results.sqlite"
    deadline = time.time() + 120
    while _count_ok(db) < 3 and time.time() < deadline:
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = {r["key"]: (r["finished_at"], r["accuracy"]) for r in _ok_rows(out)}
    assert 3 <= len(finished) < 12, "the kill must land mid-sweep"
    summary = run_sweep(load_spec(config), out, progress=False)
    assert summary.skipped == len(_ok_rows(out)) - summary.ok - summary.failed
    rows = _ok_rows(out)
    assert len(rows) == 12 and len({r["key"] for r in rows}) == 12
    after = {r["key"]: (r["finished_at"], r["accuracy"]) for r in rows}
    assert all(after[k] == v for k, v in finished.items())  # finished rows untouched


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"workers": 0}, "`workers`"),
        ({"backend": "ray"}, "`backend`"),
        ({"scheduler": "tcp://x:1"}, "`scheduler`"),
    ],
)
def test_bad_runner_arguments(plugin_path, tmp_path, kwargs, match):
    spec = load_spec(write_spec(tmp_path / "s.toml"))
    with pytest.raises(ValueError, match=match):
        run_sweep(spec, tmp_path / "out", progress=False, **kwargs)


def test_every_failure_is_counted_with_its_message(plugin_path, tmp_path):
    spec = load_spec(write_spec(tmp_path / "s.toml", '[profiles.bad]\nmethods = ["dummy-raise"]'))
    first = run_sweep(spec, tmp_path / "out", profile="bad", progress=False)
    assert (first.ok, first.failed, first.stored_failed) == (0, 2, 2)
    assert first.errors == (("RuntimeError: dummy-raise always fails", 2),)
    again = run_sweep(spec, tmp_path / "out", profile="bad", progress=False)
    assert (again.skipped, again.failed, again.stored_ok, again.stored_failed) == (2, 0, 0, 2)


def test_first_run_of_each_worker_is_not_an_outlier(plugin_path, tmp_path):
    # `cold_start` makes the first fit of every process sleep 1 s, like a lazy import; the
    # other fits (LogisticRegression on 400 rows) take milliseconds. The warm-up (opt-in)
    # absorbs it.
    config = write_spec(tmp_path / "s.toml", seeds=2, options="cold_start = 1.0")
    spec = load_spec(config)
    run_sweep(spec, tmp_path / "inline", profile="quick", progress=False, warm_up=True)
    run_sweep(spec, tmp_path / "pool", profile="quick", workers=2, progress=False, warm_up=True)
    for out in ("inline", "pool"):
        times = [r["fit_time_s"] for r in _ok_rows(tmp_path / out) if r["status"] == "ok"]
        assert len(times) == 2 and max(times) < 1.0, (out, times)


def _group_alive(pgid):
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(stat.parent.name))
    return alive


@pytest.mark.parametrize(
    ("workers", "signum", "to_group"),
    [(2, signal.SIGINT, True), (2, signal.SIGTERM, False), (1, signal.SIGINT, True)],
    ids=["pool-sigint-group", "pool-sigterm-parent", "inline-sigint-group"],
)
def test_signal_stops_promptly_without_orphans(plugin_path, tmp_path, workers, signum, to_group):
    out = tmp_path / "out"
    # A first sweep stores 3 rows (and timings, so the second one starts every worker at once).
    fast = load_spec(write_spec(tmp_path / "fast.toml", seeds=3))
    run_sweep(fast, out, profile="quick", progress=False)
    before = _ok_rows(out)
    # The same sweep with 30-s fits: 9 new dummy-lr runs (other options, other keys) and
    # 2 dummy-raise ones (seeds 1, 2).
    marks = tmp_path / "marks"
    marks.mkdir()
    config = write_spec(tmp_path / "s.toml", seeds=3, sleep=30.0, options=f'mark_dir = "{marks}"')
    cmd = _sweep_cmd(config, out, "--workers", str(workers), "--yes")
    proc = subprocess.Popen(
        cmd, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.time() + 120
    while len(list(marks.iterdir())) < workers and time.time() < deadline:  # runs in flight
        time.sleep(0.1)
    time.sleep(0.3)
    if to_group:
        os.killpg(proc.pid, signum)
    else:
        os.kill(proc.pid, signum)
    _, stderr = proc.communicate(timeout=25)  # a run takes 30 s: it must be abandoned
    assert proc.returncode == 128 + signum, stderr
    assert f"interrupted by {signal.Signals(signum).name}" in stderr
    said = [ln for ln in stderr.splitlines() if ln.startswith("interrupted by")]
    assert len(said) == 1 and said[0].count("dummy-lr") == workers, stderr  # one line
    assert "Traceback" not in stderr
    deadline = time.time() + 10
    while _group_alive(proc.pid) and time.time() < deadline:
        time.sleep(0.1)
    assert not _group_alive(proc.pid), "worker processes survived the sweep"
    after = _ok_rows(out)
    assert all(row in after for row in before)  # finished rows kept as they were
    new = [row for row in after if row not in before]  # dummy-raise fails at once: stored
    assert all(row["method"] == "dummy-raise" for row in new)  # abandoned runs: no row


_SLOW_START = """
import os, sys, time
if "--multiprocessing-fork" in sys.argv:  # a spawned worker, still starting up
    open(os.path.join(os.environ["OTFAIR_TEST_MARKS"], str(os.getpid())), "w").close()
    time.sleep(4)
"""


def test_ctrl_c_during_worker_start_up_is_one_line(plugin_path, tmp_path):
    # workers that take 4 s to start (a sitecustomize sleeping in each spawned process):
    # SIGINT to the whole group reaches them before worker_init ignores it
    out = tmp_path / "out"
    fast = load_spec(write_spec(tmp_path / "fast.toml", seeds=3))
    run_sweep(fast, out, profile="quick", progress=False)  # timings: no pilots next time
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_SLOW_START)
    marks = tmp_path / "marks"
    marks.mkdir()
    config = write_spec(tmp_path / "s.toml", seeds=3, sleep=30.0)
    env = dict(os.environ, OTFAIR_TEST_MARKS=str(marks))
    env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")])
    proc = subprocess.Popen(
        _sweep_cmd(config, out, "--workers", "2", "--yes", "--no-progress"),
        start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=env,
    )  # fmt: skip
    deadline = time.time() + 120
    while len(list(marks.iterdir())) < 2 and time.time() < deadline:  # workers starting
        time.sleep(0.05)
    assert len(list(marks.iterdir())) >= 2, "the workers never started"
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    said = [ln for ln in stderr.splitlines() if ln.startswith("interrupted by SIGINT")]
    assert len(said) == 1, stderr


def test_plan_profile_and_config_are_recorded(plugin_path, tmp_path):
    spec = load_spec(write_spec(tmp_path / "s.toml", 'smoke = true\ndescription = "Smoke."\n'))
    plans = []
    run_sweep(spec, tmp_path / "out", profile="quick", progress=False, on_plan=plans.append)
    final = [p for p in plans if not p.partial]
    assert [p.estimate_s is None for p in final] == [True, False]  # pilots, then estimate
    assert (final[1].total, final[1].todo, final[1].smoke) == (3, 3, True)
    assert final[1].estimate_s >= 0 and "pilot fits of" in final[1].basis
    assert "(smoke test)" in final[1].describe()
    with open_store(tmp_path / "out") as store:
        assert store.get_meta("profiles") == {"quick": {"smoke": True, "description": "Smoke."}}
        assert store.get_meta("last_profile") == "quick"
        assert store.get_meta("config") == spec.identity()
        assert {r["profile"] for r in store.rows()} == {"quick"}


def test_progress_lines_without_a_terminal():
    stream = io.StringIO()
    with Progress(True, 3, "s", interval=0.0, stream=stream) as advance:
        for failed in (False, True, False):
            advance(failed)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 3 and lines[0].startswith("s: 1/3 runs (0 failed), ")
    assert "ETA" in lines[1] and lines[2].startswith("s: 3/3 runs (1 failed)")
    stream = io.StringIO()
    with Progress(True, 3, "s", interval=3600.0, stream=stream) as advance:
        for _ in range(3):
            advance(False)
    assert stream.getvalue().count("\n") == 1  # only the last line


@pytest.mark.parametrize("workers", [1, 2])
def test_a_one_run_sweep_trains_once(plugin_path, tmp_path, workers):
    # fits on the sweep's data leave a mark (the preflight probe fits 64 synthetic rows,
    # below the dummy's 100-row mark threshold): no warm-up, no pilot by default
    marks = tmp_path / "marks"
    marks.mkdir()
    one = '\n[profiles.one]\nseeds = [0]\nmax_strengths = 1\nmethods = ["dummy-lr"]\n'
    spec = load_spec(write_spec(tmp_path / "s.toml", one, options=f'mark_dir = "{marks}"'))
    plans = []
    summary = run_sweep(
        spec, tmp_path / "out", profile="one", workers=workers, progress=False,
        on_plan=plans.append,
    )  # fmt: skip
    assert summary.ok == 1
    assert len(list(marks.iterdir())) == 1
    assert plans and plans[-1].estimate_s is None and "one run" in plans[-1].basis
    # asked for, the pilot and the warm-up fit again (the pilot is the real item here)
    again = tmp_path / "marks2"
    again.mkdir()
    spec = load_spec(write_spec(tmp_path / "t.toml", one, options=f'mark_dir = "{again}"'))
    run_sweep(spec, tmp_path / "out2", profile="one", progress=False, on_plan=plans.append,
              pilot=True, warm_up=True)  # fmt: skip
    assert plans[-1].estimate_s is not None


def test_a_one_run_sweep_calls_fit_once_and_stores_the_run_alone(tmp_path, monkeypatch):
    """Every fit in this process is counted: no probe, warm-up or pilot unless asked."""
    from otfair.estimators import FairClassifier

    fits = []
    original = FairClassifier.fit

    def counted(self, X, *args, **kwargs):
        fits.append(len(X))
        return original(self, X, *args, **kwargs)

    monkeypatch.setattr(FairClassifier, "fit", counted)
    text = {
        "name": "one",
        "datasets": [{"name": "synthetic"}],
        "methods": [{"name": "gapreg", "strengths": [1.0], "options": {"batch_size": 100}}],
        "epochs": 1,
        "max_train_rows": 200,
    }
    from otfair_lab.experiments import parse_spec

    plans = []
    summary = run_sweep(
        parse_spec(text), tmp_path / "out", workers=1, progress=False, on_plan=plans.append
    )
    assert summary.ok == 1 and fits == [200]  # the run's own fit, on its 200 rows
    assert plans[-1].estimate_s is None
    (row,) = _ok_rows(tmp_path / "out")
    assert row["metrics"]["stacked_k"] == 1 and "stacked_runs" not in row["metrics"]
    assert row["started_at"] < row["finished_at"] and row["metrics"]["fit_time_s"] > 0
    # asked for, the warm-up and the pilot fit too (the pilot is the real 1-epoch run)
    fits.clear()
    run_sweep(parse_spec({**text, "name": "two"}), tmp_path / "out2", progress=False,
              on_plan=plans.append, pilot=True, warm_up=True)  # fmt: skip
    assert len(fits) == 2 and fits[-1] == 200
