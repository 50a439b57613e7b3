"""The sweep runner: execute a spec's runs on local processes or a Dask cluster.

The parent process owns the :class:`ResultStore` and is its only writer. Workers run
the one run executor (:mod:`otfair.experiments._execute`), which never raises: a
failing run comes back as an ``error`` record with its traceback, is written like any
other run, and the sweep goes on.

The backends, ``local`` (in process or a process pool) and ``cluster`` (Dask), are
described in ``otfair.experiments._backend_choice``, which opens the one asked for.

Both backends run a work item, a single run or a stacked group, through one executor
(:func:`otfair.experiments._execute.execute_item`; a single run is a group of one).
With ``warm_up=True`` (opt-in) every worker first fits a throwaway tiny model of each
method, so that ``fit_time_s`` leaves out one-time costs. Pilot fits
(:mod:`otfair.experiments._pilots`) time each timing group for the plan's estimate
(``on_plan``) when more than one work item is pending, or when asked (``pilot=True``):
a one-run sweep trains once; before a local pool starts, one worker's start-up is
timed for the estimate too. SIGINT/SIGTERM stop the sweep promptly (see
:mod:`otfair.experiments._backends`).

Work items are submitted longest first (:func:`otfair.experiments._plan.longest_first`:
their estimates from the store's timings and the pilots), so that a pool does not end
with one worker on a long fit while the others idle; results do not depend on the order
(each run seeds its own split and model).

A dying worker (OOM killer, segfault) breaks the whole process pool, failing every run
in flight. Such a worker failure is not a run's result: the run is queued again (on a
fresh pool) up to :data:`WORKER_RETRIES` times before it is stored as an error.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from otfair.experiments._backend_choice import Backend, _check_arguments, _open_backend
from otfair.experiments._backends import (
    CONNECT_TIMEOUT_S,
    ClusterLostError,
    SchedulerUnreachableError,
    StopRun,
    StopSignals,
    warm_up_configs,
)
from otfair.experiments._backends import warm_up as warm_up_fits
from otfair.experiments._claim import (
    StoreConflictError,
    claim_store,
    record_profile,
    source_versions,
)
from otfair.experiments._execute import execute_run, single_thread
from otfair.experiments._out_lock import OutDirBusyError, lock_out_dir, refuse_if_busy
from otfair.experiments._pilots import pilot_item, start_up_configs, time_worker_start
from otfair.experiments._plan import (
    Pilot,
    Progress,
    SweepPlan,
    estimate_items,
    longest_first,
)
from otfair.experiments._plugins import import_plugins
from otfair.experiments._preflight import RequestError, check_request
from otfair.experiments._spec import FULL_PROFILE, RunConfig, SweepSpec
from otfair.experiments._stacking import (
    WorkItem,
    configs_of,
    item_records,
    stack_groups,
)
from otfair.experiments._store import (
    STORE_FILENAME,
    ResultStore,
    StoreError,
    check_out_dir,
    open_store,
    timing_group,
)
from otfair.experiments._store_files import StoreFullError
from otfair.experiments._sweep_result import (
    DISK_FULL,
    LOST_CLUSTER,
    SweepInterrupted,
    SweepSummary,
    future_record,
    run_label,
)

#: The plan's basis when no pilot times a one-run sweep (it trains once).
_NO_PILOT = "not estimated ahead: one run, timed as it runs (--pilot times a pilot first)"

#: How many times a run whose worker died is queued again before it is stored as failed.
WORKER_RETRIES = 2

__all__ = [
    "CONNECT_TIMEOUT_S",
    "OutDirBusyError",
    "RequestError",
    "SchedulerUnreachableError",
    "StoreError",
    "StoreConflictError",
    "SweepInterrupted",
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


@dataclass
class _Outcome:
    ok: int = 0
    failed: int = 0
    abandoned: list[RunConfig] = field(default_factory=list)
    not_started: int = 0
    halted: str = ""  # why the sweep stopped like on a signal (a full disk, a lost cluster)
    halt_label: str = ""  # SweepSummary.interrupted of that stop
    warnings: Counter[str] = field(default_factory=Counter)  # line -> runs that gave it


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
    backend : {"local", "cluster"}, default="local"
        Local processes or Dask distributed (see ``otfair.experiments._backend_choice``).
    scheduler : str, optional
        Address of an existing Dask scheduler (cluster backend only).
    retry_failed : bool, default=False
        Run again the runs stored with an error (finished ones are always skipped).
    progress : bool, default=True
        Show progress (runs done/total, failures, ETA): a bar on a terminal, else a line
        on stderr every ``progress_interval`` seconds.
    merge : bool, default=False
        Allow a store that holds another sweep's results (``claim_store``).
    on_plan : callable, optional
        Called with the ``SweepPlan`` before the work starts: first without an
        estimate when pilots must time some method x dataset group (see
        ``_plan``), then with a lower bound (``partial=True``) after each pilot, and
        with the estimate before the workers start. It may raise to stop the sweep
        (only the pilots of methods without an epoch budget are then stored). Without
        ``on_plan`` no pilot is fitted.
    progress_interval : float, default=60.0
        Seconds between two progress lines when stderr is not a terminal.
    connect_timeout : float, default=5.0
        Seconds to wait for ``scheduler``.
    stack : bool, default=True
        Fit the pending runs that differ only in strength (methods built on
        FairClassifier, CENet or WassersteinNet) as one stacked training run each
        (``_stacking``); every run
        is still stored as its own row. ``False`` fits each run separately.
    pilot : bool or None, default=None
        Time a pilot of each timing group without stored timings before the workers
        start (see ``_plan``; only with ``on_plan``). ``None``: only when more than
        one work item is pending, so that a one-run sweep trains once (its estimate then
        comes from stored timings, or is not given).
    warm_up : bool, default=False
        Fit a throwaway tiny model of each method in every worker before its first
        timed run, so that ``fit_time_s`` leaves out one-time costs (lazy imports,
        allocator set-up: about 2 s per process).

    Returns
    -------
    SweepSummary

    Raises
    ------
    RequestError
        Before anything is stored or trained, for the first setting a run would reject
        (device, method options and strengths, notions, dataset options, missing data
        files; ``otfair.experiments._preflight.check_request``; a one-run sweep
        fits no probe: its run reports the estimator's own errors).
    StoreError
        If ``out_dir`` is an existing file or holds a damaged store (left untouched).
    SweepInterrupted
        After SIGINT or SIGTERM, or when the store's disk is full: running runs are
        abandoned (workers killed, nothing half written), finished ones are stored;
        ``.summary`` says which (and ``.summary.reason`` names the full disk).
    StoreConflictError
        If ``out_dir`` holds another sweep and ``merge`` is false.
    OutDirBusyError
        If another sweep is running on ``out_dir`` (``_out_lock``).
    SchedulerUnreachableError
        If ``scheduler`` does not answer within ``connect_timeout`` seconds.
    """
    _check_arguments(workers, backend, scheduler)
    start = time.perf_counter()
    configs = spec.runs(profile)
    import_plugins(spec.plugins)
    check_out_dir(out_dir)  # read only: a file or a damaged store is left as it is
    refuse_if_busy(out_dir)  # a sweep running on out_dir: refused before any check
    # every value a pending run would reject, before anything is stored; the estimator
    # probes (throwaway fits) only for several runs: a one-run sweep trains once; a
    # finished sweep checks nothing (and imports no torch): it only says so
    pending = _pending_before(configs, out_dir, retry_failed)
    if pending:
        check_request(pending, probe=len(pending) > 1)
    with lock_out_dir(out_dir), open_store(out_dir) as store:  # one sweep per out_dir
        claim_store(store, spec, merge=merge)
        info = record_profile(store, spec, profile)
        todo = pending_runs(configs, store, retry_failed=retry_failed)
        timings = store.mean_wall_times()
        plan = SweepPlan(
            name=spec.name,
            profile=profile,
            smoke=bool(info["smoke"]),
            total=len(configs),
            stored=len(configs) - len(todo),
            todo=len(todo),
            workers=workers,
            profiles=tuple(spec.profile_names()),
            started=start,
        )
        versions = source_versions()
        outcome = _Outcome()
        with StopSignals() as stop:
            _execute(
                todo,
                store,
                spec,
                plan,
                timings,
                stop,
                outcome,
                versions=versions,
                on_plan=on_plan,
                backend_args=(backend, workers, scheduler, connect_timeout),
                progress=(progress, progress_interval),
                profile=profile,
                stack=stack,
                pilot=pilot,
                warm_up=warm_up,
            )
        ok, failed, errors = store.outcomes({c.key() for c in configs})
        other_ok, other_failed = store.count("ok") - ok, store.count("error") - failed
        summary = SweepSummary(
            total=len(configs),
            skipped=len(configs) - len(todo),
            ok=outcome.ok,
            failed=outcome.failed,
            store_path=store.path,
            wall_time_s=time.perf_counter() - start,
            stored_ok=ok,
            stored_failed=failed,
            errors=tuple(errors.most_common()),
            profile=profile,
            interrupted=stop.name or outcome.halt_label or None,
            reason=outcome.halted,
            warnings=tuple(outcome.warnings.most_common()),
            abandoned=tuple(run_label(c) for c in outcome.abandoned),
            not_started=outcome.not_started,
            other_ok=other_ok,
            other_failed=other_failed,
        )
    if summary.interrupted is not None:
        raise SweepInterrupted(summary)
    return summary


def _execute(
    todo: list[RunConfig],
    store: ResultStore,
    spec: SweepSpec,
    plan: SweepPlan,
    timings: dict[tuple[Any, ...], tuple[float, int]],
    stop: StopSignals,
    outcome: _Outcome,
    *,
    versions: dict[str, Any],
    on_plan: Callable[[SweepPlan], None] | None,
    backend_args: tuple[Backend, int, str | None, float],
    progress: tuple[bool, float],
    profile: str,
    stack: bool = True,
    pilot: bool | None = None,
    warm_up: bool = False,
) -> None:
    """Run ``todo`` on the backend, writing each record; fills ``outcome``.

    With ``on_plan``, pilots time the groups without stored timings first (in this
    process) and ``on_plan`` gets the estimate before the backend starts. A stacked
    group some of whose runs fail has those runs fitted again alone, so that one
    strength's error never fails the others.
    """
    kind, workers, scheduler, connect_timeout = backend_args
    queue: deque[WorkItem] = deque(stack_groups(todo) if stack else todo)
    inflight: dict[Any, WorkItem] = {}
    retried: Counter[str] = Counter()
    bar = Progress(progress[0], len(todo), spec.name, interval=progress[1])

    def write(config: RunConfig, record: dict[str, Any]) -> None:
        store.write(config, record, sweep=spec.name, versions=versions, profile=profile)
        outcome.warnings.update(record.get("warnings") or ())
        failed = record["status"] != "ok"
        outcome.failed += failed
        outcome.ok += not failed
        bar.advance(failed)

    def write_item(item: WorkItem, records: Sequence[dict[str, Any]]) -> None:
        runs = configs_of(item)
        failed = [c for c, r in zip(runs, records, strict=True) if r["status"] != "ok"]
        alone = len(runs) > 1 and failed and len(failed) < len(runs)
        for k, (config, record) in enumerate(zip(runs, records, strict=True)):
            if not (alone and record["status"] != "ok"):
                try:
                    write(config, record)
                except StoreFullError:  # this run and the item's next ones are not stored
                    outcome.abandoned.extend(runs[k:])
                    raise
        if alone:  # fit the failed strengths alone: another's error must not fail them
            queue.extendleft(reversed(failed))

    pilots: dict[tuple[Any, ...], Pilot] = {}
    warmups = warm_up_configs(todo) if warm_up else []

    def worker_start() -> float:
        """One pool worker's start-up (measured), when the work goes to a process pool."""
        if kind != "local" or workers <= 1 or not queue:
            return 0.0
        return time_worker_start(spec.plugins, start_up_configs(todo), stop)

    def pilots_and_plan() -> bool:
        """Run the pilots and call ``on_plan``; return whether this process is warm."""
        if on_plan is None:
            return False
        groups: dict[tuple[Any, ...], WorkItem] = {}
        for item in queue:
            group = timing_group(configs_of(item)[0])
            if group not in timings and group not in groups:
                groups[group] = item
        if groups and not (len(queue) > 1 if pilot is None else pilot):
            on_plan(replace(plan, basis=_NO_PILOT))  # trains once: no estimate ahead
            return False
        if not groups:
            startup = worker_start()
            seconds, basis = estimate_items(
                [configs_of(i) for i in queue], timings, {}, workers, startup_s=startup
            )
            on_plan(replace(plan, estimate_s=seconds, basis=basis))
            return False
        on_plan(plan)  # "timing ..." before the pilots
        single_thread()
        with stop.interruptible():  # a one-time cost of this process is not a run's
            warm_up_fits(warmups or warm_up_configs(todo))
        for group, item in groups.items():
            measured, records = pilot_item(item, spec.plugins, stop)
            pilots[group] = measured
            if records is not None:
                queue.remove(item)
                write_item(item, records)
            timed = [configs_of(i) for i in queue if timing_group(configs_of(i)[0]) in pilots]
            bound, basis = estimate_items(timed, {}, pilots, workers)
            on_plan(replace(plan, estimate_s=bound, basis=basis, partial=True))
        startup = worker_start()
        seconds, basis = estimate_items(
            [configs_of(i) for i in queue], timings, pilots, workers, startup_s=startup
        )
        if not queue:  # the pilot fits were the whole sweep
            basis = "nothing left: the pilot fits ran every run"
        on_plan(replace(plan, estimate_s=seconds, basis=basis))
        return True

    with ExitStack() as stack_:
        be = None
        try:
            if todo:
                if kind == "cluster":  # an unreachable scheduler fails before any pilot
                    be = _open_backend(
                        kind, workers, scheduler, spec.plugins, warmups, stop,
                        connect_timeout,
                    )  # fmt: skip
                warm = pilots_and_plan()
                # the longest items first (stored timings, pilots): no long tail on one worker
                items = list(queue)
                order = longest_first([configs_of(i) for i in items], timings, pilots)
                queue.clear()
                queue.extend(items[i] for i in order)
                stack_.enter_context(bar)
                if queue and be is None:
                    if warm and kind == "local" and workers == 1:
                        warmups = []  # the pilots warmed this process up
                    be = _open_backend(
                        kind, workers, scheduler, spec.plugins, warmups, stop, connect_timeout
                    )
            while be is not None and (queue or inflight) and stop.signum is None:
                while queue and len(inflight) < be.window and stop.signum is None:
                    item = queue.popleft()
                    try:
                        inflight[be.submit(item)] = item
                    except StopRun:
                        outcome.abandoned.extend(configs_of(item))
                for fut in be.wait(list(inflight), 0.5):
                    item = inflight.pop(fut)
                    records = item_records(fut.result, item, future_record)
                    key = configs_of(item)[0].key()
                    if records[0].get("worker_failure") and retried[key] < WORKER_RETRIES:
                        retried[key] += 1  # a dead worker is not the runs' result
                        queue.appendleft(item)
                        continue
                    write_item(item, records)
        except StopRun:
            pass
        except (StoreFullError, ClusterLostError) as exc:  # a stop, as on a signal
            outcome.halted = str(exc)
            outcome.halt_label = DISK_FULL if isinstance(exc, StoreFullError) else LOST_CLUSTER
        except BaseException:
            if be is not None:
                be.close(abandon=True)
            raise
        if stop.signum is None and not outcome.halted:
            if be is not None:
                be.close(abandon=False)
            return
        for fut, item in inflight.items():  # keep what finished, abandon the rest
            finished = item_records(fut.result, item, future_record) if fut.done() else None
            for k, config in enumerate(configs_of(item)):
                if finished is None or finished[k].get("worker_failure") or outcome.halted:
                    outcome.abandoned.append(config)
                    continue
                try:
                    write(config, finished[k])
                except StoreFullError as exc:
                    outcome.halted, outcome.halt_label = str(exc), DISK_FULL
                    outcome.abandoned.append(config)
        outcome.not_started = sum(len(configs_of(item)) for item in queue)
        if be is not None:
            be.close(abandon=True)
