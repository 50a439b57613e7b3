"""The estimate of one ``otfair fit`` run: the sweep's pilot rule on a single run.

A run whose estimator trains ``E`` epochs (``E`` > 2) is fitted for 2 and for 1 epoch
first (:data:`otfair.experiments._plan.PILOT_EPOCHS`, without progress output); the
difference is the cost of an epoch, the rest of the 1-epoch fit its fixed cost, and the
run is estimated at ``other + fixed + E * per_epoch`` (:meth:`Pilot.estimate`), with
the range :data:`ESTIMATE_RANGE` around it. A run without an epoch budget, or of at
most 2 epochs, is not piloted (its fit is its own estimate).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from otfair.experiments._plan import ESTIMATE_RANGE, PILOT_EPOCHS, Pilot, epoch_seconds


@dataclass(frozen=True)
class FitEstimate:
    """A single run's estimate: ``seconds`` (point), ``epochs`` and the pilots' cost."""

    seconds: float
    epochs: int
    spent_s: float

    @property
    def low(self) -> float:
        """Lower end of the stated range (seconds)."""
        return self.seconds * ESTIMATE_RANGE[0]

    @property
    def high(self) -> float:
        """Upper end of the stated range (seconds)."""
        return self.seconds * ESTIMATE_RANGE[1]

    def describe(self) -> str:
        """``estimated 12.5 min (range 6.2 min-25.0 min; 300 epochs, pilots 4 s)``."""
        from otfair.experiments._plan import format_duration

        return (
            f"estimated {format_duration(self.seconds)} (range {format_duration(self.low)}"
            f"-{format_duration(self.high)}; {self.epochs} epochs from 2- and 1-epoch pilot "
            f"fits, {format_duration(self.spent_s)})"
        )


def run_epochs(run: Mapping[str, Any]) -> int | None:
    """Epochs the run's estimator trains (``None``: no epoch budget, or not buildable)."""
    from otfair.experiments._plan import run_epochs_of
    from otfair.experiments._spec import RunConfig

    config = RunConfig(
        dataset=str(run["dataset"]),
        method=str(run["method"]),
        seed=int(run.get("seed") or 0),
        strength=run.get("strength"),
        notion=run.get("notion"),
        epochs=run.get("epochs"),
        method_options=dict(run.get("method_options") or {}),
    )
    return run_epochs_of(config)


def estimate_fit(run: Mapping[str, Any]) -> FitEstimate | None:
    """Pilot the ``run_single`` keywords ``run``; ``None`` when it needs no pilot.

    The pilots are silent (``verbose=False``, no announcements); a pilot that fails
    raises as the run itself would.
    """
    from otfair.experiments._single import run_single

    epochs = run_epochs(run)
    if epochs is None or epochs <= PILOT_EPOCHS[0]:
        return None
    began = time.perf_counter()
    quiet = {**run, "verbose": False, "announce": None}
    fits = []
    for pilot_epochs in PILOT_EPOCHS:
        start = time.perf_counter()
        result = run_single(**{**quiet, "epochs": pilot_epochs})
        fits.append((time.perf_counter() - start, float(result.get("fit_time_s") or 0.0)))
    (_, fit2), (wall1, fit1) = fits
    pilot = Pilot(1, wall1, fit1, epochs, epoch_seconds(fit2, fit1))
    return FitEstimate(pilot.estimate(1), epochs, time.perf_counter() - began)
