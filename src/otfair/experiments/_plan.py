"""A sweep's plan (runs, estimated time) and its progress display.

The estimate of a run's wall time comes from the store when runs of the same group
(dataset and method labels, epochs, subsample: :func:`timing_group`) finished there
before, e.g. in a ``one_split`` profile; other runs are scaled from the first run of the
sweep, which the runner times before it fills the other workers, by their training rows
x epochs (:func:`run_work`; a sweep ordered smallest dataset first would otherwise be
estimated at the smallest dataset's cost). Methods differ in cost per row and epoch, so
this is a rough figure. The total is the sum divided by the number of workers.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from otfair.experiments._spec import RunConfig
from otfair.experiments._store import timing_group


@dataclass(frozen=True)
class SweepPlan:
    """What a sweep is about to do; passed to ``run_sweep(on_plan=...)``.

    ``estimate_s`` is ``None`` while the first run is being timed (``on_plan`` is then
    called a second time with the estimate); ``basis`` says where the estimate comes from;
    ``profiles`` are the spec's profiles.
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
            return f"{text}; " + (self.basis or "timing the first run to estimate the total")
        return f"{text}; estimated {format_duration(self.estimate_s)} ({self.basis})"


def format_duration(seconds: float) -> str:
    """``42 s``, ``12.5 min`` or ``3.4 h``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def estimate(
    todo: Sequence[RunConfig],
    stored: Mapping[tuple[Any, ...], tuple[float, int]],
    workers: int,
    first: tuple[RunConfig, float] | None = None,
) -> tuple[float | None, str]:
    """Estimated wall time of ``todo`` on ``workers`` and the basis of the estimate.

    ``stored`` maps :func:`timing_group` to (mean seconds, count); ``first`` is a run
    timed just now, whose time stands in for every group without stored timings.
    Returns ``(None, "")`` when some run has neither.
    """
    total = 0.0
    n_stored = n_first = 0
    first_work = run_work(first[0]) if first is not None else None
    for config in todo:
        group = timing_group(config)
        if group in stored:
            total += stored[group][0]
            n_stored += 1
        elif first is not None:
            work = run_work(config)
            scale = work / first_work if work is not None and first_work else 1.0
            total += first[1] * scale
            n_first += 1
        else:
            return None, ""
    parts = []
    if n_stored:
        runs = sum(stored[g][1] for g in {timing_group(c) for c in todo} if g in stored)
        parts.append(f"{n_stored} from the mean times of {runs} stored runs")
    if n_first and first is not None:
        cfg, seconds = first
        parts.append(
            f"{n_first} scaled by training rows x epochs from the first run's {seconds:.1f} s "
            f"({cfg.method_label or cfg.method} on {cfg.dataset_label or cfg.dataset}); "
            "methods differ in cost, so a rough figure"
        )
    return total / max(1, min(workers, len(todo))), "; ".join(parts)


def run_work(config: RunConfig) -> float | None:
    """Training rows x epochs of a run (``None`` when the dataset's size is not known).

    Rows come from the dataset registry (:meth:`otfair.datasets.DatasetEntry.approximate_rows`),
    times the training fraction, capped by ``max_train_rows``; a run without ``epochs``
    counts one (the method's default, the same for every run of that method).
    """
    from otfair.datasets._api import dataset_entries

    entry = dataset_entries().get(config.dataset)
    rows = entry.approximate_rows(config.dataset_options) if entry is not None else None
    if rows is None:
        return None
    train = rows * (1.0 - float(config.test_size))
    if config.max_train_rows is not None:
        train = min(train, float(config.max_train_rows))
    return train * float(config.epochs or 1)


def needs_timing(todo: Sequence[RunConfig], stored: Mapping[tuple[Any, ...], Any]) -> int | None:
    """Index of the first run of ``todo`` without a stored timing (``None``: all have one)."""
    for i, config in enumerate(todo):
        if timing_group(config) not in stored:
            return i
    return None


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

    def __exit__(self, *exc: object) -> None:
        if self._open:
            self._open = False
            self._bar.__exit__(*exc)
