"""Hand a sweep's pending work items to a backend and store what comes back.

:func:`otfair_lab.experiments._runner.run_sweep` checks the request, claims the store and
builds two things once: the :class:`SweepJob` (what the user asked for: the backend, its
workers, pilots, warm-up, stacking, progress, the ``on_plan`` callback) and the
:class:`~otfair_lab.experiments._plan.SweepPlan` (what is stored and what is left). It
hands both down to :func:`dispatch`, whose :class:`_Dispatch` runs the stages in order:
pilots and the plan's estimate, the backend, the submit/wait loop, and what a stop
keeps. Nothing here calls back into the runner.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from typing import Any

from otfair_lab.experiments._backend_choice import Backend, _open_backend
from otfair_lab.experiments._backends import (
    ClusterLostError,
    StopRun,
    StopSignals,
    warm_up_configs,
)
from otfair_lab.experiments._backends import warm_up as warm_up_fits
from otfair_lab.experiments._execute import single_thread
from otfair_lab.experiments._pilots import pilot_item, start_up_configs, time_worker_start
from otfair_lab.experiments._plan import (
    Pilot,
    Progress,
    SweepPlan,
    estimate_items,
    longest_first,
)
from otfair_lab.experiments._spec import RunConfig
from otfair_lab.experiments._stacking import (
    WorkItem,
    configs_of,
    item_records,
    stack_groups,
)
from otfair_lab.experiments._store import ResultStore, timing_group
from otfair_lab.experiments._store_files import StoreFullError
from otfair_lab.experiments._sweep_result import DISK_FULL, LOST_CLUSTER, future_record

__all__ = ["WORKER_RETRIES", "SweepJob", "SweepOutcome", "dispatch"]

#: The plan's basis when no pilot runs: a one-run sweep (it trains once), or --no-pilot.
_NO_PILOT = "not estimated ahead: {what} (--pilot times a pilot first)"

#: How many times a run whose worker died is queued again before it is stored as failed.
WORKER_RETRIES = 2


@dataclass(frozen=True)
class SweepJob:
    """How a sweep runs its pending work, as asked: fixed before the first stage.

    Built once by :func:`~otfair_lab.experiments._runner.run_sweep` from its arguments and
    the spec (its name and plugins); the parameters of that function say what each
    field means. ``versions`` is the provenance written with every row.
    """

    name: str
    plugins: tuple[str, ...]
    profile: str
    versions: dict[str, Any]
    backend: Backend = "local"
    workers: int = 1
    scheduler: str | None = None
    connect_timeout: float = 5.0
    progress: bool = True
    progress_interval: float = 60.0
    stack: bool = True
    pilot: bool | None = None
    warm_up: bool = False
    on_plan: Callable[[SweepPlan], None] | None = None

    def wants_pilots(self, items: int) -> bool:
        """Whether pilots time the untimed groups of ``items`` pending work items."""
        return items > 1 if self.pilot is None else self.pilot


@dataclass
class SweepOutcome:
    """What a dispatch did: runs stored ok and failed, abandoned, not started, why it halted."""

    ok: int = 0
    failed: int = 0
    abandoned: list[RunConfig] = field(default_factory=list)
    not_started: int = 0
    halted: str = ""  # why the sweep stopped like on a signal (a full disk, a lost cluster)
    halt_label: str = ""  # SweepSummary.interrupted of that stop
    # line -> fits that gave it (a stacked group of strengths is one fit: its warnings,
    # caught once for the group, are counted once, not once per strength)
    warnings: Counter[str] = field(default_factory=Counter)


def dispatch(
    job: SweepJob,
    plan: SweepPlan,
    store: ResultStore,
    todo: Sequence[RunConfig],
    stop: StopSignals,
) -> SweepOutcome:
    """Run ``todo`` on ``job``'s backend, writing each record to ``store``.

    With ``job.on_plan``, pilots time the groups without stored timings first (in this
    process) and ``on_plan`` gets the estimate before the backend starts. A stacked
    group some of whose runs fail has those runs fitted again alone, so that one
    strength's error never fails the others.
    """
    run = _Dispatch(job, plan, store, list(todo), stop)
    run.run()
    return run.outcome


class _Dispatch:
    """The state of one dispatch: the queue, the futures in flight, the outcome."""

    def __init__(
        self,
        job: SweepJob,
        plan: SweepPlan,
        store: ResultStore,
        todo: list[RunConfig],
        stop: StopSignals,
    ) -> None:
        self.job, self.plan, self.store, self.todo, self.stop = job, plan, store, todo, stop
        self.timings = store.mean_wall_times()
        self.queue: deque[WorkItem] = deque(stack_groups(todo) if job.stack else todo)
        self.inflight: dict[Any, WorkItem] = {}
        self.retried: Counter[str] = Counter()
        self.pilots: dict[tuple[Any, ...], Pilot] = {}
        self.warmups = warm_up_configs(todo) if job.warm_up else []
        self.bar = Progress(job.progress, len(todo), job.name, interval=job.progress_interval)
        self.outcome = SweepOutcome()
        self.backend: Any = None

    # -- storing -----------------------------------------------------------------------

    def write(self, config: RunConfig, record: dict[str, Any], *, first: bool = True) -> None:
        """Store one run's record and count it (its warnings only for an item's ``first``)."""
        job, outcome = self.job, self.outcome
        self.store.write(
            config, record, sweep=job.name, versions=job.versions, profile=job.profile
        )
        if first:
            outcome.warnings.update(record.get("warnings") or ())
        failed = record["status"] != "ok"
        outcome.failed += failed
        outcome.ok += not failed
        self.bar.advance(failed)

    def write_item(self, item: WorkItem, records: Sequence[dict[str, Any]]) -> None:
        """Store a work item's records; queue the failed runs of a stacked group alone."""
        runs = configs_of(item)
        failed = [c for c, r in zip(runs, records, strict=True) if r["status"] != "ok"]
        alone = len(runs) > 1 and failed and len(failed) < len(runs)
        for k, (config, record) in enumerate(zip(runs, records, strict=True)):
            if not (alone and record["status"] != "ok"):
                try:
                    self.write(config, record, first=k == 0)
                except StoreFullError:  # this run and the item's next ones are not stored
                    self.outcome.abandoned.extend(runs[k:])
                    raise
        if alone:  # fit the failed strengths alone: another's error must not fail them
            self.queue.extendleft(reversed(failed))

    # -- pilots and the plan -----------------------------------------------------------

    def worker_start(self) -> float:
        """One pool worker's start-up (measured), when the work goes to a process pool."""
        job = self.job
        if job.backend != "local" or job.workers <= 1 or not self.queue:
            return 0.0
        return time_worker_start(job.plugins, start_up_configs(self.todo), self.stop)

    def untimed_groups(self) -> dict[tuple[Any, ...], WorkItem]:
        """Return the first queued item of each timing group without stored timings."""
        groups: dict[tuple[Any, ...], WorkItem] = {}
        for item in self.queue:
            group = timing_group(configs_of(item)[0])
            if group not in self.timings and group not in groups:
                groups[group] = item
        return groups

    def run_pilots(self, groups: dict[tuple[Any, ...], WorkItem]) -> None:
        """Time one item of each group (a warm process first); a lower bound after each."""
        job, queue = self.job, self.queue
        assert job.on_plan is not None  # pilots run only for a plan
        single_thread()
        with self.stop.interruptible():  # a one-time cost of this process is not a run's
            warm_up_fits(self.warmups or warm_up_configs(self.todo))
        for group, item in groups.items():
            measured, records = pilot_item(item, job.plugins, self.stop)
            self.pilots[group] = measured
            if records is not None:
                queue.remove(item)
                self.write_item(item, records)
            timed = [configs_of(i) for i in queue if timing_group(configs_of(i)[0]) in self.pilots]
            bound, basis = estimate_items(timed, {}, self.pilots, job.workers)
            job.on_plan(replace(self.plan, estimate_s=bound, basis=basis, partial=True))

    def pilots_and_plan(self) -> bool:
        """Run the pilots and call ``on_plan``; return whether this process is warm."""
        on_plan = self.job.on_plan
        if on_plan is None:
            return False
        groups = self.untimed_groups()
        if groups and not self.job.wants_pilots(len(self.queue)):
            what = "one run, timed as it runs" if len(self.queue) == 1 else "timed as they run"
            on_plan(replace(self.plan, basis=_NO_PILOT.format(what=what)))
            return False
        if groups:
            on_plan(self.plan)  # "timing ..." before the pilots
            self.run_pilots(groups)
        startup = self.worker_start()
        seconds, basis = estimate_items(
            [configs_of(i) for i in self.queue],
            self.timings,
            self.pilots,
            self.job.workers,
            startup_s=startup,
        )
        if not self.queue:  # the pilot fits were the whole sweep
            basis = "nothing left: the pilot fits ran every run"
        on_plan(replace(self.plan, estimate_s=seconds, basis=basis))
        return bool(groups)

    def longest_first(self) -> None:
        """Order the queue longest first (stored timings, pilots): no long tail on one worker."""
        items = list(self.queue)
        order = longest_first([configs_of(i) for i in items], self.timings, self.pilots)
        self.queue.clear()
        self.queue.extend(items[i] for i in order)

    # -- the backend ---------------------------------------------------------------------

    def open_backend(self, warm: bool = False) -> None:
        """Open the backend asked for (a process the pilots warmed needs no warm-up)."""
        job = self.job
        if warm and job.backend == "local" and job.workers == 1:
            self.warmups = []  # the pilots warmed this process up
        self.backend = _open_backend(
            job.backend,
            job.workers,
            job.scheduler,
            job.plugins,
            self.warmups,
            self.stop,
            job.connect_timeout,
        )

    def start(self, stack: ExitStack) -> None:
        """Pilots, plan and order, then the backend (a cluster's before any pilot)."""
        if self.job.backend == "cluster":  # an unreachable scheduler fails before any pilot
            self.open_backend()
        warm = self.pilots_and_plan()
        self.longest_first()
        stack.enter_context(self.bar)
        if self.queue and self.backend is None:
            self.open_backend(warm)

    def loop(self) -> None:
        """Submit within the backend's window and store each finished item, until done."""
        be, queue, inflight, stop = self.backend, self.queue, self.inflight, self.stop
        while be is not None and (queue or inflight) and stop.signum is None:
            while queue and len(inflight) < be.window and stop.signum is None:
                item = queue.popleft()
                try:
                    inflight[be.submit(item)] = item
                except StopRun:
                    self.outcome.abandoned.extend(configs_of(item))
            for fut in be.wait(list(inflight), 0.5):
                item = inflight.pop(fut)
                records = item_records(fut.result, item, future_record)
                key = configs_of(item)[0].key()
                if records[0].get("worker_failure") and self.retried[key] < WORKER_RETRIES:
                    self.retried[key] += 1  # a dead worker is not the runs' result
                    queue.appendleft(item)
                    continue
                self.write_item(item, records)

    def keep_finished(self) -> None:
        """After a stop: store what finished in flight, abandon the rest, count the queue."""
        outcome = self.outcome
        for fut, item in self.inflight.items():
            finished = item_records(fut.result, item, future_record) if fut.done() else None
            for k, config in enumerate(configs_of(item)):
                if finished is None or finished[k].get("worker_failure") or outcome.halted:
                    outcome.abandoned.append(config)
                    continue
                try:
                    self.write(config, finished[k], first=k == 0)
                except StoreFullError as exc:
                    outcome.halted, outcome.halt_label = str(exc), DISK_FULL
                    outcome.abandoned.append(config)
        outcome.not_started = sum(len(configs_of(item)) for item in self.queue)

    def run(self) -> None:
        """Run the stages in order; a full disk or a lost cluster stops it like a signal."""
        outcome = self.outcome
        with ExitStack() as stack:
            try:
                if self.todo:
                    self.start(stack)
                self.loop()
            except StopRun:
                pass
            except (StoreFullError, ClusterLostError) as exc:  # a stop, as on a signal
                outcome.halted = str(exc)
                full = isinstance(exc, StoreFullError)
                outcome.halt_label = DISK_FULL if full else LOST_CLUSTER
            except BaseException:
                if self.backend is not None:
                    self.backend.close(abandon=True)
                raise
            if self.stop.signum is None and not outcome.halted:
                if self.backend is not None:
                    self.backend.close(abandon=False)
                return
            self.keep_finished()
            if self.backend is not None:
                self.backend.close(abandon=True)
