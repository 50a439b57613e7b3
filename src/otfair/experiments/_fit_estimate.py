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
    """A single run's estimate: ``seconds`` (point), ``epochs`` and the pilots' cost.

    ``seconds`` is what follows the pilots; ``before_s`` what the command spent before
    them (imports, checks), so that :attr:`whole_s` is the whole command's estimate.
    ``fits`` says what was counted (``--max-violation``: the cross-validation's paths
    and the refit, :func:`budget_fits`).
    """

    seconds: float
    epochs: int
    spent_s: float
    before_s: float = 0.0
    fits: str = ""

    @property
    def whole_s(self) -> float:
        """The whole command: what came before, the pilots, and the estimate after them."""
        return self.before_s + self.spent_s + self.seconds

    @property
    def low(self) -> float:
        """Lower end of the stated range of the whole command (seconds)."""
        return self.before_s + self.spent_s + self.seconds * ESTIMATE_RANGE[0]

    @property
    def high(self) -> float:
        """Upper end of the stated range of the whole command (seconds)."""
        return self.before_s + self.spent_s + self.seconds * ESTIMATE_RANGE[1]

    def describe(self) -> str:
        """``estimated 12.5 min in all (range ...; 300 epochs from pilot fits, 4 s; ...)``."""
        from otfair.experiments._plan import format_duration

        counted = f"; {self.fits}" if self.fits else ""
        return (
            f"estimated {format_duration(self.whole_s)} in all (range "
            f"{format_duration(self.low)}-{format_duration(self.high)}; {self.epochs} epochs "
            f"from 2- and 1-epoch pilot fits, {format_duration(self.spent_s)}, and "
            f"{format_duration(self.before_s)} of start-up and checks, both included"
            f"{counted}; {format_duration(self.seconds)} to go)"
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


def budget_fits(run: Mapping[str, Any], cv: int) -> tuple[float, str]:
    """Single fits that ``--max-violation`` (FairnessCV, ``cv`` folds) costs, and the words.

    FairnessCV fits the whole strength path (``K`` strengths of the estimator's default
    grid) on each fold's ``(cv - 1) / cv`` of the training rows, then refits the chosen
    strength on all of them: ``K * (cv - 1) + 1`` fits of the run's size (a fit's cost
    grows with its rows; a stacked path of K strengths is counted as K fits, the sweep's
    own rule, :meth:`otfair.experiments._plan.Pilot.estimate`).
    """
    from otfair.estimators._strength_grids import default_strengths
    from otfair.experiments.methods import get_method

    estimator = get_method(str(run["method"])).build(
        None,
        notion=run.get("notion"),
        random_state=0,
        epochs=run.get("epochs"),
        device="cpu",
        dataset=str(run["dataset"]),
        **dict(run.get("method_options") or {}),
    )
    try:
        k = len(default_strengths(estimator))
    except ValueError:  # no path to search (refused by the CLI before): one fit per fold
        k = 1
    fits = k * (cv - 1) + 1
    return float(fits), (
        f"FairnessCV: {cv} folds x {k} strengths on {cv - 1}/{cv} of the rows and the "
        f"refit, {fits} fits of this size"
    )


def estimate_fit(
    run: Mapping[str, Any], *, cv: int | None = None, before_s: float = 0.0
) -> FitEstimate | None:
    """Pilot the ``run_single`` keywords ``run``; ``None`` when it needs no pilot.

    The pilots are silent (``verbose=False``, no announcements); a pilot that fails
    raises as the run itself would. ``cv``: the run is ``--max-violation``'s
    FairnessCV with that many folds (:func:`budget_fits`); ``before_s``: seconds the
    command spent before the pilots (counted in :attr:`FitEstimate.whole_s`).
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
    seconds, counted = pilot.estimate(1), ""
    if cv is not None:
        n_fits, counted = budget_fits(run, cv)
        other = max(0.0, wall1 - fit1)  # data, evaluation: once
        seconds = other + (seconds - other) * n_fits
    return FitEstimate(seconds, epochs, time.perf_counter() - began, before_s, counted)
