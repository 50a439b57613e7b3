"""A sweep's plan (runs, estimated time) and its progress display.

The estimate times each timing group of the plan (dataset and method labels, epochs,
subsample, device: :func:`timing_group`), not one run for all: runs of a group that finished in
the store before (e.g. in a ``one_split`` profile) give their mean wall time; for the
others the runner fits one *pilot* of the group's first work item (a run, or a stacked
group of runs fitted as one) in the parent process before the workers start
(:func:`otfair_lab.experiments._pilots.pilot_item`):

- a method without an ``epochs`` budget (or one trained for a single epoch) is piloted
  with the real item, whose records are stored (no work is lost);
- otherwise the item is fitted for 2 epochs, then for 1 (when it trains more than 2),
  each on a split that no run of the sweep uses (so that both pay what each run pays
  once for its own split, e.g. FTM's matching), in a process warmed up by a tiny fit of
  each method first (a one-time cost of the process is not a cost of each run): the
  difference is the cost of an epoch, the rest of the 1-epoch fit the fixed cost of a
  run, and the non-fit part of the wall time (loading, split, prediction, audits) is
  kept as measured. A run of ``E`` epochs is estimated at
  ``other + fixed + E * per_epoch`` (:meth:`Pilot.estimate`), never below the pilot
  and never above ``E`` times the 1-epoch fit.

A stacked group counts as one fit (its K runs share it), scaled by K only when its size
differs from the pilot's. The sum is spread over ``min(workers, cores, items)`` workers
at :data:`PARALLEL_EFFICIENCY` each beyond the first (a worker pool does not scale
perfectly on shared cores), and is never below the longest item. A process pool first
starts its workers: ``min(workers, items)`` of them, at the same time on the usable
cores, each paying the start-up measured once by the runner before the estimate (a
fresh process, its imports, a tiny fit per method and per dataset:
:func:`otfair_lab.experiments._pilots.time_worker_start`), which adds
``startup * max(1, started / cores)`` (:func:`pool_start_seconds`).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO, cast

from otfair_lab.experiments._spec import RunConfig
from otfair_lab.experiments._store import timing_group


@dataclass(frozen=True)
class SweepPlan:
    """What a sweep is about to do; passed to ``run_sweep(on_plan=...)``.

    ``estimate_s`` is ``None`` while the first run is being timed (``on_plan`` is then
    called a second time with the estimate); ``basis`` says where the estimate comes from;
    ``profiles`` are the spec's profiles. ``partial`` marks a lower bound given while
    the pilots still run (``estimate_s`` is then "at least"), so that a caller can stop
    a sweep that is already known to be too long.
    """

    name: str
    profile: str
    smoke: bool
    total: int
    stored: int
    todo: int
    workers: int
    estimate_s: float | None = None
    basis: str = ""
    profiles: tuple[str, ...] = ()
    partial: bool = False
    #: ``time.perf_counter()`` when the sweep began: :meth:`describe` adds what was spent
    #: since (checks, pilots, a worker's timed start-up) to the estimate of what follows,
    #: so that the printed estimate is of the whole command
    started: float | None = None

    def spent_s(self) -> float:
        """Seconds since the sweep began (0 when ``started`` is not known)."""
        import time

        return 0.0 if self.started is None else max(0.0, time.perf_counter() - self.started)

    def describe(self) -> str:
        """One line: ``sweep 'otf', profile full: 1400 runs, 0 stored, 1400 to run ...``."""
        kind = " (smoke test)" if self.smoke else ""
        text = (
            f"sweep {self.name!r}, profile {self.profile}{kind}: {self.total} runs, "
            f"{self.stored} already stored, {self.todo} to run on {self.workers} worker"
            f"{'s' if self.workers != 1 else ''}"
        )
        if self.todo == 0:
            return text
        if self.estimate_s is None:
            return f"{text}; " + (
                self.basis or "timing a pilot of each method x dataset group to estimate the total"
            )
        if self.partial:
            return f"{text}; estimated at least {format_duration(self.estimate_s)} ({self.basis})"
        spent = self.spent_s()
        low, high = (spent + self.estimate_s * f for f in ESTIMATE_RANGE)
        included = (
            f"; {format_duration(spent)} already spent on checks, pilots and start-up, "
            f"included; {format_duration(self.estimate_s)} to go"
            if self.started is not None
            else ""
        )
        return (
            f"{text}; estimated {format_duration(spent + self.estimate_s)} (likely "
            f"{format_duration(low)} to {format_duration(high)}; {self.basis}{included})"
        )


def format_duration(seconds: float) -> str:
    """``under 1 s``, ``42 s``, ``12.5 min`` or ``3.4 h`` (never ``0 s``)."""
    if seconds < 1:
        return "under 1 s"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


#: The range stated with a sweep's estimate, as factors of it (the target: a held-out
#: sweep's wall time within 2x of its estimate); ``benchmarks/sweep_estimates.py``
#: measures it (``docs/measurements/sweep_estimates.md``).
ESTIMATE_RANGE = (0.5, 2.0)

#: Speed of each worker beyond the first, relative to one worker alone (process start-up,
#: memory bandwidth and cores shared with other work: a pool never scales perfectly).
PARALLEL_EFFICIENCY = 0.75

#: Epochs of the two pilot fits of a run that trains more.
PILOT_EPOCHS = (2, 1)


def epoch_seconds(fit_long: float, fit_short: float) -> float | None:
    """Cost of one epoch from the :data:`PILOT_EPOCHS` fits; ``None`` when unmeasured.

    A difference that is not positive (the two fits' noise exceeds an epoch, as with a
    few hundred rows) measures nothing: ``None`` makes :meth:`Pilot.estimate` charge the
    whole 1-epoch fit per epoch (an upper bound) instead of no cost per epoch at all.
    """
    diff = fit_long - fit_short
    return diff / (PILOT_EPOCHS[0] - PILOT_EPOCHS[1]) if diff > 0 else None


def usable_cores() -> int:
    """Cores this process may run on (its affinity mask where the platform has one)."""
    import os

    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return max(1, os.cpu_count() or 1)


def load_factor() -> tuple[float, str]:
    """How much slower one single-threaded run goes now than alone, and the words.

    With a load average ``L`` (runnable processes, the last minute) on ``C`` usable
    cores, one more single-threaded process gets about ``C / (L + 1)`` of a core when
    ``L + 1 > C``: the factor is ``max(1, (L + 1) / C)``. Used to scale timings
    measured elsewhere (an archive's wall times), not pilots, which are measured under
    the current load. ``(1.0, "")`` where the platform has no load average.
    """
    import os

    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # pragma: no cover - Windows
        return 1.0, ""
    cores = usable_cores()
    factor = max(1.0, (load + 1.0) / cores)
    if factor == 1.0:
        return 1.0, ""
    return factor, f", x{factor:.1f} for the load average {load:.1f} on {cores} cores"


def effective_workers(workers: int, items: int, cores: int | None = None) -> float:
    """Throughput of ``workers`` on ``items`` work items, in units of one worker."""
    n = max(1, min(workers, items, usable_cores() if cores is None else cores))
    return 1.0 + PARALLEL_EFFICIENCY * (n - 1)


def pool_start_seconds(
    startup_s: float, workers: int, items: int, cores: int | None = None
) -> float:
    """Wall seconds a pool of ``workers`` takes to start the workers ``items`` need.

    ``min(workers, items)`` workers start at once, each costing ``startup_s`` (one
    worker's start-up, measured alone), sharing the usable cores:
    ``startup_s * max(1, started / cores)``. Zero for one worker (it runs in this process).
    """
    started = min(workers, items)
    if workers <= 1 or started < 1 or startup_s <= 0:
        return 0.0
    cores = usable_cores() if cores is None else cores
    return startup_s * max(1.0, started / max(1, cores))


def run_epochs_of(config: RunConfig) -> int | None:
    """Epochs the run trains (its own or the method's default); ``None``: no epoch budget.

    Read from the ``epochs`` parameter of the estimator the registry builds for the run
    (not fitted); ``None`` also when it cannot be built (the run reports that).
    """
    from otfair_lab.experiments.methods import get_method

    try:
        est = get_method(config.method).build(
            config.strength,
            notion=config.notion,
            random_state=0,
            epochs=config.epochs,
            device="cpu",
            dataset=config.dataset,
            **dict(config.method_options),
        )
        epochs = est.get_params(deep=False).get("epochs")
    except Exception:  # noqa: BLE001 - the run itself reports a broken setting
        return None
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
        return None
    return epochs


@dataclass(frozen=True)
class Pilot:
    """The timing of one pilot of a timing group (see the module docstring).

    ``runs`` is the pilot item's number of runs (K of a stacked group); ``wall_s`` and
    ``fit_s`` are its wall and fit seconds (the 1-epoch fit for a scaled pilot);
    ``epochs`` the epochs of the group's runs (``None``: the pilot was the real item);
    ``epoch_s`` the cost of one epoch (from the 2- and 1-epoch fits); ``spent_s`` what the
    pilots took.
    """

    runs: int
    wall_s: float
    fit_s: float = 0.0
    epochs: int | None = None
    epoch_s: float | None = None
    spent_s: float = 0.0

    @classmethod
    def measured(
        cls,
        runs: int,
        fits: Sequence[Sequence[Mapping[str, Any]]],
        epochs: int | None,
        spent_s: float,
    ) -> Pilot:
        """Return the pilot that the records of its fits measure (see the module docstring).

        ``fits``: the records of the real item (``epochs`` is ``None``), or of the
        :data:`PILOT_EPOCHS` fits of a group whose runs train ``epochs`` epochs (the
        2-epoch fit only for a longer run, the 1-epoch fit last).
        """
        wall, fit = record_seconds(fits[-1])
        if epochs is None:
            return cls(runs, wall, fit, spent_s=spent_s)
        epoch_s = epoch_seconds(record_seconds(fits[0])[1], fit) if len(fits) > 1 else None
        return cls(runs, wall, fit, epochs, epoch_s, spent_s=spent_s)

    def estimate(self, runs: int) -> float:
        """Estimated wall seconds of an item of the group with ``runs`` runs."""
        scale = runs / max(1, self.runs)
        if self.epochs is None:
            return self.wall_s * scale
        other = max(0.0, self.wall_s - self.fit_s)
        linear = self.fit_s * self.epochs  # every second of the 1-epoch fit per epoch
        if self.epoch_s is None:
            fit = linear
        else:
            fixed = max(0.0, self.fit_s - self.epoch_s)
            fit = min(linear, max(self.fit_s, fixed + self.epoch_s * self.epochs))
        return (other + fit) * scale


def record_seconds(records: Sequence[Mapping[str, Any]]) -> tuple[float, float]:
    """Wall and fit seconds of a work item's records (the fit summed over its runs)."""
    wall = sum(float(r["finished_at"]) - float(r["started_at"]) for r in records)
    fit = sum(float((r.get("result") or {}).get("fit_time_s") or 0.0) for r in records)
    return wall, fit


def item_seconds(
    runs: Sequence[RunConfig],
    stored: Mapping[tuple[Any, ...], tuple[float, int]],
    pilots: Mapping[tuple[Any, ...], Pilot],
) -> float | None:
    """Estimated wall seconds of one work item (its ``runs``); ``None`` when not timed.

    A pilot of the item's :func:`timing_group` wins over the group's stored mean.
    """
    group = timing_group(runs[0])
    if group in pilots:
        return pilots[group].estimate(len(runs))
    if group in stored:
        return stored[group][0] * len(runs)
    return None


def longest_first(
    items: Sequence[Sequence[RunConfig]],
    stored: Mapping[tuple[Any, ...], tuple[float, int]],
    pilots: Mapping[tuple[Any, ...], Pilot],
) -> list[int]:
    """Return the indices of ``items`` in the order to submit them: longest first.

    Longest-processing-time-first scheduling: a pool that starts its longest items first
    does not end with one worker busy on a long fit while the others idle (its makespan
    is within 4/3 of the optimum, Graham 1969). Items without an estimate come first (they
    may be long); ties and untimed items keep their order (the sort is stable).
    """
    costs = [item_seconds(runs, stored, pilots) for runs in items]
    return sorted(
        range(len(items)), key=lambda i: -math.inf if costs[i] is None else -cast(float, costs[i])
    )


def estimate_items(
    items: Sequence[Sequence[RunConfig]],
    stored: Mapping[tuple[Any, ...], tuple[float, int]],
    pilots: Mapping[tuple[Any, ...], Pilot],
    workers: int,
    *,
    cores: int | None = None,
    startup_s: float = 0.0,
) -> tuple[float | None, str]:
    """Estimated wall time of ``items`` (each the runs of one work item) and its basis.

    ``stored`` maps :func:`timing_group` to (mean seconds per run, count); ``pilots``
    maps a group to its :class:`Pilot`; ``startup_s`` is one pool worker's start-up
    (:func:`pool_start_seconds`; 0 when not measured). Returns ``(None, "")`` when a
    group has neither.
    """
    costs = []
    n_stored = n_piloted = 0
    for runs in items:
        seconds = item_seconds(runs, stored, pilots)
        if seconds is None:
            return None, ""
        costs.append(seconds)
        if timing_group(runs[0]) in pilots:
            n_piloted += len(runs)
        else:
            n_stored += len(runs)
    if not costs:
        return 0.0, "nothing to run"
    eff = effective_workers(workers, len(costs), cores)
    start = pool_start_seconds(startup_s, workers, len(costs), cores)
    total = max(sum(costs) / eff, max(costs)) + start
    parts = []
    if n_stored:
        parts.append(f"{n_stored} runs from the mean times of stored runs")
    if n_piloted:
        groups = {timing_group(r[0]) for r in items} & set(pilots)
        spent = sum(pilots[g].spent_s for g in groups)
        parts.append(
            f"{n_piloted} runs from pilot fits of {len(groups)} method x dataset group"
            f"{'s' if len(groups) != 1 else ''} ({format_duration(spent)})"
        )
    if len(items) < sum(len(r) for r in items):
        parts.append(f"{len(items)} fits, stacked groups counted once")
    if workers > 1:
        parts.append(f"{eff:.2g} effective workers")
    if start > 0:
        parts.append(f"{format_duration(start)} to start the workers")
    return total, "; ".join(parts)


class Progress:
    """Progress of a sweep: runs done / total, failures, elapsed time and ETA.

    A rich progress bar on a terminal; otherwise (a log file, a pipe) one line on
    ``stream`` at most every ``interval`` seconds, and a last one at the end.
    """

    def __init__(
        self,
        enabled: bool,
        total: int,
        name: str,
        interval: float = 60.0,
        stream: TextIO | None = None,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled and total > 0
        self.total = total
        self.name = name
        self.interval = interval
        self.bar = self.enabled and self.stream.isatty()
        self._open = False
        self.done = self.failed = 0
        self._start = self._last = time.monotonic()

    def __enter__(self) -> Callable[[bool], None]:
        if self.bar:
            self._open_bar()
            self._open = True
        return self.advance

    def _open_bar(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as RichProgress

        self._bar = RichProgress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[failed]} failed"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=Console(file=self.stream),
        )
        self._bar.__enter__()
        self._task = self._bar.add_task(
            self.name, total=self.total, completed=self.done, failed=self.failed
        )

    def line(self) -> str:
        """``otf: 120/1400 runs (3 failed), 10.0 min elapsed, ETA 1.8 h``."""
        elapsed = time.monotonic() - self._start
        text = f"{self.name}: {self.done}/{self.total} runs ({self.failed} failed), "
        text += f"{format_duration(elapsed)} elapsed"
        if 0 < self.done < self.total:
            text += f", ETA {format_duration(elapsed / self.done * (self.total - self.done))}"
        return text

    def advance(self, failed: bool) -> None:
        """Count one finished run."""
        self.done += 1
        self.failed += int(failed)
        if not self.enabled:
            return
        if self.bar:
            if self._open:
                self._bar.update(self._task, completed=self.done, failed=self.failed)
            return
        now = time.monotonic()
        if now - self._last >= self.interval or self.done == self.total:
            self._last = now
            print(self.line(), file=self.stream, flush=True)

    def __exit__(self, *exc: Any) -> None:
        if self._open:
            self._open = False
            self._bar.__exit__(*exc)
