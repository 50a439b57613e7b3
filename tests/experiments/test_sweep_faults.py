"""A sweep under faults: no process outlives a killed sweep; one sweep per --out."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _exp_helpers import write_spec

from otfair_lab.experiments import load_spec, run_sweep


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
        "--yes",
        *extra,
    ]


def _group_alive(pgid: int) -> list[int]:
    """Live (not zombie) processes of the process group ``pgid`` (psutil, else /proc)."""
    try:
        import psutil
    except ImportError:  # pragma: no cover - psutil is a dev dependency
        psutil = None
    if psutil is not None:
        alive = []
        for proc in psutil.process_iter(["pid"]):
            try:
                if os.getpgid(proc.pid) == pgid and proc.status() != psutil.STATUS_ZOMBIE:
                    alive.append(proc.pid)
            except (OSError, psutil.Error):
                continue
        return alive
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(stat.parent.name))
    return alive


def _start_slow_sweep(tmp_path: Path, workers: int) -> tuple[subprocess.Popen, Path, Path]:
    """A sweep of 30-s fits on ``workers`` workers, returned once its runs are in flight."""
    out = tmp_path / "out"
    fast = load_spec(write_spec(tmp_path / "fast.toml", seeds=3))
    run_sweep(fast, out, profile="quick", progress=False)  # timings: no pilots next time
    marks = tmp_path / "marks"
    marks.mkdir()
    config = write_spec(tmp_path / "s.toml", seeds=3, sleep=30.0, options=f'mark_dir = "{marks}"')
    proc = subprocess.Popen(
        _sweep_cmd(config, out, "--workers", str(workers)),
        start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.time() + 120
    while len(list(marks.iterdir())) < workers and time.time() < deadline:  # runs in flight
        time.sleep(0.1)
    assert len(list(marks.iterdir())) >= workers, "the runs never started"
    return proc, config, out


def test_sigkilled_sweep_leaves_no_process_and_no_open_output(plugin_path, tmp_path):
    proc, _, _ = _start_slow_sweep(tmp_path, workers=2)
    assert len(_group_alive(proc.pid)) >= 3  # the parent, two workers (and the tracker)
    os.kill(proc.pid, signal.SIGKILL)  # the parent alone: it cannot stop its workers
    # stdout and stderr reach end of file once every process holding them is gone
    proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    deadline = time.time() + 15
    while _group_alive(proc.pid) and time.time() < deadline:
        time.sleep(0.1)
    assert not _group_alive(proc.pid), "worker processes outlived their killed sweep"


def test_second_sweep_on_the_same_out_is_refused_while_the_first_runs(
    plugin_path, tmp_path, monkeypatch
):
    from otfair_lab.experiments import _runner
    from otfair_lab.experiments._out_lock import OutDirBusyError

    proc, config, out = _start_slow_sweep(tmp_path, workers=1)
    try:
        second = subprocess.run(
            _sweep_cmd(config, out), capture_output=True, text=True, timeout=120
        )
        checked = []  # refused before the request checks (probe fits) of the pending runs
        monkeypatch.setattr(_runner, "check_request", lambda *a, **k: checked.append(a))
        with pytest.raises(OutDirBusyError, match=f"pid {proc.pid} "):
            run_sweep(load_spec(config), out, progress=False)
        assert checked == []
        monkeypatch.undo()
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # a dead holder: the OS releases its lock
        proc.communicate(timeout=30)
    assert second.returncode == 2, second.stderr
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1 and "in use by a running sweep" in lines[0], second.stderr
    assert f"pid {proc.pid} " in lines[0] and "started 20" in lines[0]
    assert "Traceback" not in second.stderr
    # the killed sweep's lock file is still there, naming a dead pid: it is taken over
    assert str(proc.pid) in (out / "sweep.lock").read_text()
    fast = load_spec(tmp_path / "fast.toml")
    summary = run_sweep(fast, out, profile="quick", progress=False)
    assert summary.skipped == 3
    assert str(os.getpid()) in (out / "sweep.lock").read_text()


@pytest.mark.parametrize("workers", [1, 2])
def test_each_distinct_warning_is_said_once_with_its_count(plugin_path, tmp_path, workers):
    import warnings

    from typer.testing import CliRunner

    from otfair_lab.cli import app

    config = write_spec(tmp_path / "s.toml", seeds=2, options="warn = true")  # 6 warning runs
    argv = ["sweep", str(config), "--out", str(tmp_path / "out"), "--no-progress", "--yes"]
    with warnings.catch_warnings():
        warnings.simplefilter("default")  # as outside the tests (where warnings are errors)
        result = CliRunner().invoke(app, [*argv, "--workers", str(workers), "--no-stack"])
    said = [ln for ln in result.output.splitlines() if "dummy-lr: a small group" in ln]
    assert said == ["  6 x UserWarning: dummy-lr: a small group"], result.output
    assert "1 distinct warning (fits that gave it):" in result.output


def test_a_finished_sweep_resumes_without_checking_or_probing(plugin_path, tmp_path, monkeypatch):
    # a finished sweep has nothing to run: no request check (torch, throwaway probe fits)
    spec = load_spec(write_spec(tmp_path / "s.toml"))
    run_sweep(spec, tmp_path / "out", profile="quick", progress=False)
    from otfair_lab.experiments import _runner

    checked = []
    monkeypatch.setattr(_runner, "check_request", lambda *a, **k: checked.append(a))
    again = run_sweep(spec, tmp_path / "out", profile="quick", progress=False)
    assert (again.skipped, again.ok, again.failed, checked) == (3, 0, 0, [])
    run_sweep(spec, tmp_path / "out", profile="full", progress=False)  # 5 runs pending
    assert [len(a[0]) for a in checked] == [5]  # only the pending runs are checked


def test_a_lost_dask_scheduler_stops_the_sweep_like_an_interruption(
    plugin_path, tmp_path, monkeypatch
):
    from otfair_lab.experiments import _dispatch
    from otfair_lab.experiments._backends import ClusterLostError, InlineBackend
    from otfair_lab.experiments._sweep_result import LOST_CLUSTER, SweepInterrupted

    class Losing(InlineBackend):  # the third wait finds the scheduler gone
        waits = 0

        def wait(self, futures, timeout):
            Losing.waits += 1
            if Losing.waits == 3:
                raise ClusterLostError("lost the Dask scheduler tcp://x:1 (the client is closed)")
            return super().wait(futures, timeout)

    spec = load_spec(write_spec(tmp_path / "s.toml", seeds=2))  # 8 runs
    monkeypatch.setattr(
        _dispatch,
        "_open_backend",
        lambda kind, w, s, plugins, warmups, stop, t: Losing(plugins, warmups, stop),
    )
    with pytest.raises(SweepInterrupted) as stopped:
        run_sweep(spec, tmp_path / "out", progress=False, stack=False)
    summary = stopped.value.summary
    assert summary.interrupted == LOST_CLUSTER and "tcp://x:1" in summary.reason
    assert summary.ok + summary.failed == 2 and len(summary.abandoned) == 1
    assert summary.not_started == 5
    monkeypatch.undo()
    again = run_sweep(spec, tmp_path / "out", progress=False)  # resumable
    assert again.skipped == 2 and again.ok + again.failed == 6


def test_a_dask_cluster_without_workers_is_said_once_after_a_bounded_wait(capsys):
    from otfair_lab.experiments._backends import NO_WORKERS_WARN_S, ClusterLostError, DaskBackend

    class Client:  # the parts of distributed.Client that the check reads
        status = "running"
        workers: dict = {}

        def scheduler_info(self):
            return {"workers": self.workers}

    backend = object.__new__(DaskBackend)
    backend._client, backend._address = Client(), "tcp://head:8786"
    backend._no_workers_since, backend._warned = None, False
    backend.check_cluster(now=100.0)
    backend.check_cluster(now=100.0 + NO_WORKERS_WARN_S - 1)
    assert capsys.readouterr().err == ""  # not yet
    backend.check_cluster(now=100.0 + NO_WORKERS_WARN_S)
    backend.check_cluster(now=100.0 + 2 * NO_WORKERS_WARN_S)
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "tcp://head:8786 has had no worker for 60 s" in lines[0]
    backend._client.workers = {"w": {}}
    backend.check_cluster(now=1000.0)  # a worker joined: the clock starts again
    assert backend._no_workers_since is None
    backend._client.status = "closed"
    with pytest.raises(ClusterLostError, match="lost the Dask scheduler tcp://head:8786"):
        backend.check_cluster()


def test_a_stacked_groups_warnings_count_once_not_once_per_strength(tmp_path):
    """A stacked group is one fit: its warnings (caught once) count once. Crediting every
    strength with every other's said "2 x ... strength=0.5" for a warning of one run."""
    import re
    import warnings

    from typer.testing import CliRunner

    from otfair_lab.cli import app

    config = tmp_path / "s.toml"
    config.write_text(
        'name = "stacked"\nseeds = 1\nmax_train_rows = 300\nepochs = 1\n'
        '[[datasets]]\nname = "synthetic"\n'
        '[[methods]]\nname = "otf"\nstrengths = [0.5, 0.9]\n'
    )
    argv = ["sweep", str(config), "--out", str(tmp_path / "out"), "--no-progress", "--yes"]
    with warnings.catch_warnings():
        warnings.simplefilter("default")  # as outside the tests (where warnings are errors)
        result = CliRunner().invoke(app, [*argv, "--workers", "1", "--no-pilot"])
    assert result.exit_code == 0, result.output
    counts = [int(m.group(1)) for m in re.finditer(r"^  (\d+) x ", result.output, re.M)]
    assert counts and all(c == 1 for c in counts), result.output  # one fit of two strengths
