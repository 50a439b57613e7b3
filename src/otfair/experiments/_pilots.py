"""Pilot fits: time one work item of a timing group before a sweep starts its workers.

The rule (2- and 1-epoch fits of a run that trains more, the real item otherwise) and
the estimate it gives are described in :mod:`otfair.experiments._plan`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from otfair.experiments._backends import StopSignals
from otfair.experiments._plan import PILOT_EPOCHS, Pilot, record_seconds, run_epochs_of
from otfair.experiments._stacking import WorkItem, configs_of, execute_item

__all__ = ["PILOT_GROUP_RUNS", "pilot_item", "run_item"]

#: Runs of a stacked group that a scaled pilot fits (the estimate scales by K over this).
PILOT_GROUP_RUNS = 2


def _with_epochs(item: WorkItem, epochs: int) -> WorkItem:
    """Return the work item with every run's ``epochs`` set (a pilot of it)."""
    runs = tuple(replace(c, epochs=epochs) for c in configs_of(item))
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
    most :data:`PILOT_GROUP_RUNS` runs of a stacked group, whose records are discarded.
    """
    began = time.perf_counter()
    epochs = run_epochs_of(configs_of(item)[0])
    if isinstance(item, tuple) and epochs not in (None, 1):
        item = item[:PILOT_GROUP_RUNS]  # a scaled pilot: K runs estimated as K / 2 of these
    runs = len(configs_of(item))
    if epochs is None or epochs == 1:
        records = run_item(item, plugins, stop)
        wall, fit = record_seconds(records)
        return Pilot(runs, wall, fit, spent_s=time.perf_counter() - began), records
    epoch_s = None
    cold = 0.0
    if epochs > PILOT_EPOCHS[0]:
        _, fit2 = record_seconds(run_item(_with_epochs(item, PILOT_EPOCHS[0]), plugins, stop))
    wall, fit = record_seconds(run_item(_with_epochs(item, PILOT_EPOCHS[1]), plugins, stop))
    if epochs > PILOT_EPOCHS[0]:
        epoch_s = max(0.0, fit2 - fit) / (PILOT_EPOCHS[0] - PILOT_EPOCHS[1])
        # more than two 1-epoch fits: a per-run cost the second fit skipped (a cache)
        cold = max(0.0, fit2 - PILOT_EPOCHS[0] * fit)
    spent = time.perf_counter() - began
    pilot = Pilot(runs, wall, fit, epochs, epoch_s, spent_s=spent, cold_s=cold)
    return pilot, None
