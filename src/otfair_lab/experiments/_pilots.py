"""Pilot fits: time one work item of a timing group before a sweep starts its workers.

The rule (2- and 1-epoch fits of a run that trains more, each on a split of its own,
the real item otherwise) and the estimate it gives are described in
:mod:`otfair_lab.experiments._plan`; :func:`time_worker_start` measures what a worker of a
process pool pays before its first run.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from otfair_lab.experiments._backends import StopSignals
from otfair_lab.experiments._execute import execute_item
from otfair_lab.experiments._plan import PILOT_EPOCHS, Pilot, run_epochs_of
from otfair_lab.experiments._spec import RunConfig
from otfair_lab.experiments._stacking import WorkItem, configs_of

__all__ = [
    "PILOT_GROUP_RUNS",
    "PILOT_SEED_OFFSET",
    "pilot_item",
    "run_item",
    "start_up_configs",
    "time_worker_start",
]

#: Runs of a stacked group that a scaled pilot fits (the estimate scales by K over this).
PILOT_GROUP_RUNS = 2

#: Added to a run's seed for its scaled pilot fits (plus 1 for the second): each fit
#: draws a split no run of the sweep uses, so both pay what every run pays once for its
#: own split (FTM's matching, other per-split caches) and their difference is the cost
#: of the extra epoch alone.
PILOT_SEED_OFFSET = 100_003


def _pilot_of(item: WorkItem, epochs: int, seed_shift: int) -> WorkItem:
    """Return the work item with every run's ``epochs`` and a seed of its own set."""
    runs = tuple(
        replace(c, epochs=epochs, seed=c.seed + PILOT_SEED_OFFSET + seed_shift)
        for c in configs_of(item)
    )
    return runs if isinstance(item, tuple) else runs[0]


def run_item(item: WorkItem, plugins: Sequence[str], stop: StopSignals) -> list[dict[str, Any]]:
    """Run a work item in this process (interruptible) and return one record per run."""
    with stop.interruptible():
        result = execute_item(item, plugins)
    return result if isinstance(result, list) else [result]


def pilot_item(
    item: WorkItem, plugins: Sequence[str], stop: StopSignals
) -> tuple[Pilot, list[dict[str, Any]] | None]:
    """Time one item of a group; return the pilot and the records when it was the item.

    See :mod:`._plan`: the real item when its runs have no epoch budget or train one
    epoch; else fits of :data:`PILOT_EPOCHS` (2 then 1; only 1 for a 2-epoch run) of at
    most :data:`PILOT_GROUP_RUNS` runs of a stacked group, each on a split of its own
    (:data:`PILOT_SEED_OFFSET`), whose records are discarded. The process should be
    warm (one tiny fit of the method before): a one-time cost of the process is not a
    cost of each run.
    """
    began = time.perf_counter()
    epochs = run_epochs_of(configs_of(item)[0])
    if epochs == 1:
        epochs = None  # as without an epoch budget: the pilot is the item itself
    if isinstance(item, tuple) and epochs is not None:
        item = item[:PILOT_GROUP_RUNS]  # a scaled pilot: K runs estimated as K / 2 of these
    fits = [item]
    if epochs is not None:  # 2 then 1 epochs (1 only for a 2-epoch run), own splits each
        fits = [_pilot_of(item, e, shift) for shift, e in enumerate(PILOT_EPOCHS) if e < epochs]
    records = [run_item(fit, plugins, stop) for fit in fits]
    spent = time.perf_counter() - began
    pilot = Pilot.measured(len(configs_of(item)), records, epochs, spent)
    return pilot, records[0] if epochs is None else None


def start_up_configs(configs: Sequence[RunConfig]) -> list[RunConfig]:
    """Return the fits that time a worker's start-up: what its first runs pay once.

    One tiny fit of each method on the embedded synthetic data
    (:func:`otfair_lab.experiments._backends.warm_up_configs`: lazy imports, first
    operations) and one tiny run (1 epoch, 64 training rows) on each dataset of
    ``configs``, the first run using it (loading the data file).
    """
    from otfair_lab.experiments._backends import warm_up_configs

    out = warm_up_configs(configs)
    datasets: set[str] = set()
    for c in configs:
        if c.dataset not in datasets:
            datasets.add(c.dataset)
            out.append(replace(c, epochs=1, max_train_rows=64))
    return out


def _start_worker(plugins: tuple[str, ...], warmups: tuple[RunConfig, ...]) -> None:
    """Do what a pool worker does before its first run: its set-up, a tiny fit each."""
    from otfair_lab.experiments._backends import pool_worker_init, warm_up

    pool_worker_init(plugins)
    warm_up(warmups)


def time_worker_start(
    plugins: Sequence[str], warmups: Sequence[RunConfig], stop: StopSignals
) -> float:
    """Wall seconds that one fresh ``spawn`` worker takes to be ready to run.

    Starts a process as the pool does (interpreter start-up, the imports of torch and
    otfair, :func:`otfair_lab.experiments._backends.worker_init`), fits ``warmups`` (one tiny
    fit of each method: the lazy imports and first operations that a worker's first run
    pays) and waits for it to end. The process is killed if the sweep is stopped.
    """
    import multiprocessing

    from otfair_lab.experiments._backends import signals_blocked, start_resource_tracker

    ctx = multiprocessing.get_context("spawn")
    proc = ctx.Process(target=_start_worker, args=(tuple(plugins), tuple(warmups)), daemon=True)
    start_resource_tracker()
    began = time.perf_counter()
    try:
        with signals_blocked():  # like the pool's workers: no traceback on a Ctrl-C
            proc.start()
        with stop.interruptible():
            proc.join()
        return time.perf_counter() - began
    finally:
        if proc.is_alive():
            proc.kill()
            proc.join()
