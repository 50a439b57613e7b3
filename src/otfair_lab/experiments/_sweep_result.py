"""What a sweep did: :class:`SweepSummary`, :class:`SweepInterrupted`, run labels.

Kept apart from the runner (:mod:`otfair_lab.experiments._runner`) so that the CLI and the
reproduction code can name a sweep's outcome without the runner's machinery.
"""

from __future__ import annotations

import socket
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from otfair_lab.experiments._spec import FULL_PROFILE, RunConfig

__all__ = [
    "DISK_FULL",
    "LOST_CLUSTER",
    "SweepInterrupted",
    "SweepSummary",
    "future_record",
    "run_label",
]


@dataclass(frozen=True)
class SweepSummary:
    """What a call of :func:`run_sweep` did.

    ``ok``/``failed`` count the runs of this call; ``stored_ok``/``stored_failed`` count
    every run of the selection (spec and profile) in the store after it, and ``errors``
    lists the distinct first lines of the stored errors with their counts, most frequent
    first. After an interruption, ``interrupted`` is the signal's name, ``abandoned``
    names the runs that were running (not stored) and ``not_started`` counts the rest;
    a sweep whose store's disk filled up, or whose Dask scheduler went away, stops the
    same way, with ``interrupted`` set to ``DISK_FULL`` or ``LOST_CLUSTER`` and
    ``reason`` the one-line message naming the cause.
    ``other_ok``/``other_failed`` count the store's rows outside the selection (another
    profile, a grid edited since), which ``otfair report`` counts too. ``warnings`` lists
    the distinct warnings of this call's runs with the number of runs that gave each,
    most frequent first.
    """

    total: int
    skipped: int
    ok: int
    failed: int
    store_path: Path
    wall_time_s: float
    stored_ok: int = 0
    stored_failed: int = 0
    errors: tuple[tuple[str, int], ...] = ()
    profile: str = FULL_PROFILE
    interrupted: str | None = None
    abandoned: tuple[str, ...] = ()
    not_started: int = 0
    other_ok: int = 0
    other_failed: int = 0
    reason: str = ""
    warnings: tuple[tuple[str, int], ...] = ()


#: ``SweepSummary.interrupted`` of a sweep stopped because its store's disk is full.
DISK_FULL = "a full disk"
#: ``SweepSummary.interrupted`` of a sweep whose Dask scheduler went away.
LOST_CLUSTER = "a lost Dask scheduler"


class SweepInterrupted(KeyboardInterrupt):
    """SIGINT, SIGTERM or a full disk stopped :func:`run_sweep`; ``summary`` says what was kept.

    A :class:`KeyboardInterrupt`, so that code unaware of it stops as on Ctrl-C (and no
    ``except Exception`` swallows it).
    """

    def __init__(self, summary: SweepSummary) -> None:
        super().__init__(
            f"sweep interrupted by {summary.interrupted}: {summary.ok + summary.failed} runs "
            f"stored, {len(summary.abandoned)} abandoned, {summary.not_started} not started"
        )
        self.summary = summary


def run_label(config: RunConfig) -> str:
    """How messages name a run: ``otf 0.01 eo seed 3 on adult``."""
    parts = [config.method_label or config.method]
    if config.strength is not None:
        parts.append(f"{config.strength:g}")
    if config.notion:
        parts.append(config.notion)
    parts.append(f"seed {config.seed} on {config.dataset_label or config.dataset}")
    return " ".join(parts)


def future_record(get: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Return the record of a finished future (an error record if the worker died)."""
    now = time.time()
    try:
        return get()
    except Exception as exc:  # noqa: BLE001 - e.g. BrokenProcessPool, a lost Dask worker
        return {
            "status": "error",
            "error": f"worker failure: {type(exc).__name__}: {exc}",
            "traceback": traceback.format_exc(),
            "started_at": now,
            "finished_at": now,
            "host": socket.gethostname(),
            "worker_failure": True,
        }
