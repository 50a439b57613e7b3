"""The sweep runner: execute a spec's runs on local processes or a Dask cluster.

The parent process owns the :class:`ResultStore` and is its only writer. Workers run
the one run executor (:mod:`otfair_lab.experiments._execute`), which never raises: a
failing run comes back as an ``error`` record with its traceback, is written like any
other run, and the sweep goes on.

The backends, ``local`` (in process or a process pool) and ``cluster`` (Dask), are
described in ``otfair_lab.experiments._backend_choice``, which opens the one asked for.

Both backends run a work item, a single run or a stacked group, through one executor
(:func:`otfair_lab.experiments._execute.execute_item`; a single run is a group of one).
With ``warm_up=True`` (opt-in) every worker first fits a throwaway tiny model of each
method, so that ``fit_time_s`` leaves out one-time costs. Pilot fits
(:mod:`otfair_lab.experiments._pilots`) time each timing group for the plan's estimate
(``on_plan``) when more than one work item is pending, or when asked (``pilot=True``):
a one-run sweep trains once; before a local pool starts, one worker's start-up is
timed for the estimate too. ``on_plan`` is called with the ``SweepPlan`` first without an
estimate when pilots must time some group, then with a lower bound (``partial=True``)
after each pilot, and with the estimate before the workers start; it may raise to stop
the sweep (only the pilots of methods without an epoch budget are then stored). Without
``on_plan`` no pilot is fitted. SIGINT/SIGTERM stop the sweep promptly (see
:mod:`otfair_lab.experiments._backends`). :mod:`otfair_lab.experiments._dispatch` runs the
stages.

Work items are submitted longest first (:func:`otfair_lab.experiments._plan.longest_first`:
their estimates from the store's timings and the pilots), so that a pool does not end
with one worker on a long fit while the others idle; results do not depend on the order
(each run seeds its own split and model).

A dying worker (OOM killer, segfault) breaks the whole process pool, failing every run
in flight. Such a worker failure is not a run's result: the run is queued again (on a
fresh pool) up to :data:`WORKER_RETRIES` times before it is stored as an error.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from otfair_lab.experiments._backend_choice import Backend, _check_arguments
from otfair_lab.experiments._backends import (
    CONNECT_TIMEOUT_S,
    SchedulerUnreachableError,
    StopSignals,
)
from otfair_lab.experiments._claim import (
    StoreConflictError,
    claim_store,
    source_versions,
)
from otfair_lab.experiments._dispatch import WORKER_RETRIES, SweepJob, SweepOutcome, dispatch
from otfair_lab.experiments._execute import execute_run
from otfair_lab.experiments._out_lock import OutDirBusyError, lock_out_dir, refuse_if_busy
from otfair_lab.experiments._plan import SweepPlan
from otfair_lab.experiments._plugins import import_plugins
from otfair_lab.experiments._preflight import RequestError, check_request
from otfair_lab.experiments._spec import FULL_PROFILE, RunConfig, SweepSpec
from otfair_lab.experiments._store import (
    STORE_FILENAME,
    ResultStore,
    StoreError,
    check_out_dir,
    open_store,
)
from otfair_lab.experiments._sweep_result import (
    SweepInterrupted,
    SweepSummary,
    run_label,
)

__all__ = [
    "CONNECT_TIMEOUT_S",
    "OutDirBusyError",
    "RequestError",
    "SchedulerUnreachableError",
    "StoreError",
    "StoreConflictError",
    "SweepInterrupted",
    "WORKER_RETRIES",
    "SweepSummary",
    "execute_run",
    "run_sweep",
]


def pending_runs(
    configs: Iterable[RunConfig], store: ResultStore, *, retry_failed: bool = False
) -> list[RunConfig]:
    """Return the runs of ``configs`` without a row in ``store`` (or with an error row)."""
    done = store.finished_keys(include_errors=not retry_failed)
    seen: set[str] = set()
    out = []
    for config in configs:
        key = config.key()
        if key not in done and key not in seen:
            seen.add(key)
            out.append(config)
    return out


def _pending_before(
    configs: Sequence[RunConfig], out_dir: str | Path, retry_failed: bool
) -> list[RunConfig]:
    """Return the runs of ``configs`` not stored in ``out_dir`` yet (read only)."""
    path = Path(out_dir) / STORE_FILENAME
    if not path.is_file() or path.stat().st_size == 0:
        return list(configs)
    with ResultStore(path, read_only=True) as store:
        return pending_runs(configs, store, retry_failed=retry_failed)


def run_sweep(
    spec: SweepSpec,
    out_dir: str | Path,
    *,
    profile: str = FULL_PROFILE,
    workers: int = 1,
    backend: Backend = "local",
    scheduler: str | None = None,
    retry_failed: bool = False,
    progress: bool = True,
    merge: bool = False,
    on_plan: Callable[[SweepPlan], None] | None = None,
    progress_interval: float = 60.0,
    connect_timeout: float = CONNECT_TIMEOUT_S,
    stack: bool = True,
    pilot: bool | None = None,
    warm_up: bool = False,
) -> SweepSummary:
    """Run every pending run of ``spec`` and store each result as it finishes.

    Parameters
    ----------
    spec : SweepSpec
        The validated sweep (:func:`load_spec`).
    out_dir : str or Path
        Output directory; the store is ``out_dir/results.sqlite``.
    profile : str, default="full"
        Profile of the spec to run (``"quick"``...); recorded with each row.
    workers : int, default=1
        Number of worker processes (``1`` runs in this process for the local backend).
    backend, scheduler, connect_timeout : {"local", "cluster"}, str or None, float
        Local processes (the default) or Dask distributed (``_backend_choice``), at an
        existing scheduler's address (``cluster`` only; waited for ``connect_timeout``
        seconds, default 5) or on a local cluster.
    retry_failed : bool, default=False
        Run again the runs stored with an error (finished ones are always skipped).
    progress, progress_interval : bool, float; default True, 60.0
        Progress (runs, failures, ETA): a bar on a terminal, else a line every interval s.
    merge : bool, default=False
        Allow a store that holds another sweep's results (``claim_store``).
    on_plan : callable, optional
        Called with the ``SweepPlan`` before the work starts (see the module docstring:
        pilots, lower bounds, the estimate); it may raise to stop the sweep.
    stack : bool, default=True
        Fit runs that differ only in strength as one stacked run each (each still a row).
    pilot : bool or None, default=None
        Time a pilot of each untimed timing group first (only with ``on_plan``; ``None``:
        when more than one work item is pending).
    warm_up : bool, default=False
        Fit a throwaway tiny model of each method in every worker before its first run.

    Returns
    -------
    SweepSummary

    Raises
    ------
    RequestError, StoreError, StoreConflictError, OutDirBusyError, SchedulerUnreachableError
        Before anything is trained: a setting a run would reject (``check_request``); an
        ``out_dir`` that is a file or a damaged store, holds another sweep (without
        ``merge``) or is busy (``_out_lock``); a scheduler that does not answer in time.
    SweepInterrupted
        After SIGINT or SIGTERM, a full disk or a lost cluster; ``.summary`` says what
        was stored and what abandoned (``.summary.reason`` names a full disk).
    """
    _check_arguments(workers, backend, scheduler)
    started = time.perf_counter()
    configs = spec.runs(profile)
    job = SweepJob(
        name=spec.name, plugins=tuple(spec.plugins), profile=profile, versions=source_versions(),
        backend=backend, workers=workers, scheduler=scheduler, connect_timeout=connect_timeout,
        progress=progress, progress_interval=progress_interval, stack=stack, pilot=pilot,
        warm_up=warm_up, on_plan=on_plan,
    )  # fmt: skip
    import_plugins(job.plugins)
    _check_request(configs, out_dir, retry_failed)
    summary = _run_locked(job, spec, configs, out_dir, merge, retry_failed, started)
    if summary.interrupted is not None:
        raise SweepInterrupted(summary)
    return summary


def _check_request(configs: Sequence[RunConfig], out_dir: str | Path, retry_failed: bool) -> None:
    """Refuse, before anything is stored, an ``out_dir`` or a setting a run would reject.

    Read only: a file or a damaged store is left as it is; a sweep running on
    ``out_dir`` is refused before any check. The estimator probes (throwaway fits) run
    only for several runs (a one-run sweep trains once); a finished sweep checks nothing
    (and imports no torch): it only says so.
    """
    check_out_dir(out_dir)
    refuse_if_busy(out_dir)
    pending = _pending_before(configs, out_dir, retry_failed)
    if pending:
        check_request(pending, probe=len(pending) > 1)


def _run_locked(
    job: SweepJob,
    spec: SweepSpec,
    configs: Sequence[RunConfig],
    out_dir: str | Path,
    merge: bool,
    retry_failed: bool,
    started: float,
) -> SweepSummary:
    """Claim the store of ``out_dir`` (one sweep at a time) and dispatch the pending runs."""
    with lock_out_dir(out_dir), open_store(out_dir) as store:
        plan, todo = _claim(store, spec, job, configs, merge, retry_failed, started)
        with StopSignals() as stop:
            outcome = dispatch(job, plan, store, todo, stop)
        return _summary(store, configs, len(todo), outcome, stop.name, started, job.profile)


def _claim(
    store: ResultStore,
    spec: SweepSpec,
    job: SweepJob,
    configs: Sequence[RunConfig],
    merge: bool,
    retry_failed: bool,
    started: float,
) -> tuple[SweepPlan, list[RunConfig]]:
    """Claim ``store`` for ``spec``'s profile; return the plan and the runs left to do."""
    info = claim_store(store, spec, job.profile, merge=merge)
    todo = pending_runs(configs, store, retry_failed=retry_failed)
    plan = SweepPlan(
        name=job.name,
        profile=job.profile,
        smoke=bool(info["smoke"]),
        total=len(configs),
        stored=len(configs) - len(todo),
        todo=len(todo),
        workers=job.workers,
        profiles=tuple(spec.profile_names()),
        started=started,
    )
    return plan, todo


def _summary(
    store: ResultStore,
    configs: Sequence[RunConfig],
    todo: int,
    outcome: SweepOutcome,
    signal_name: str | None,
    started: float,
    profile: str,
) -> SweepSummary:
    """Return the sweep's summary: what this call did (``outcome``) and what the store holds."""
    ok, failed, errors = store.outcomes({c.key() for c in configs})
    other_ok, other_failed = store.count("ok") - ok, store.count("error") - failed
    return SweepSummary(
        total=len(configs),
        skipped=len(configs) - todo,
        ok=outcome.ok,
        failed=outcome.failed,
        store_path=store.path,
        wall_time_s=time.perf_counter() - started,
        stored_ok=ok,
        stored_failed=failed,
        errors=tuple(errors.most_common()),
        profile=profile,
        interrupted=signal_name or outcome.halt_label or None,
        reason=outcome.halted,
        warnings=tuple(outcome.warnings.most_common()),
        abandoned=tuple(run_label(c) for c in outcome.abandoned),
        not_started=outcome.not_started,
        other_ok=other_ok,
        other_failed=other_failed,
    )
