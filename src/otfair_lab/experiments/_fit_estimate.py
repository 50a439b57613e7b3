"""The estimate of one ``otfair fit`` run: the sweep's pilot rule on a single run.

A run whose estimator trains ``E`` epochs (``E`` > 2) is fitted for 2 and for 1 epoch
first (:data:`otfair_lab.experiments._plan.PILOT_EPOCHS`, without progress output); the
difference is the cost of an epoch, the rest of the 1-epoch fit its fixed cost, and the
run is estimated at ``other + fixed + E * per_epoch`` (:meth:`Pilot.estimate`), with
the range :data:`ESTIMATE_RANGE` around it. A run without an epoch budget, or of at
most 2 epochs, is not piloted (its fit is its own estimate).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from otfair_lab.experiments._plan import ESTIMATE_RANGE, PILOT_EPOCHS, Pilot, epoch_seconds


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
        from otfair_lab.experiments._plan import format_duration

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
    from otfair_lab.experiments._plan import run_epochs_of

    return run_epochs_of(_config(run))


def _config(run: Mapping[str, Any]) -> Any:
    from otfair_lab.experiments._spec import RunConfig

    return RunConfig(
        dataset=str(run["dataset"]),
        method=str(run["method"]),
        seed=int(run.get("seed") or 0),
        strength=run.get("strength"),
        notion=run.get("notion"),
        epochs=run.get("epochs"),
        method_options=dict(run.get("method_options") or {}),
    )


def budget_fits(run: Mapping[str, Any], cv: int) -> tuple[float, str]:
    """Pilot ``--max-violation``'s cross-validation; return its seconds and the words.

    FairnessCV fits the whole strength path (the ``K`` strengths of the estimator's
    default grid, one stacked training run where the estimator supports it) on each of
    ``cv`` folds' ``(cv - 1) / cv`` of the training rows. The path itself is piloted on
    that many rows, for 2 and 1 epochs (:data:`PILOT_EPOCHS`): its cost is
    ``cv * (fixed + epochs * per_epoch)``, and each of FairnessCV's default ``refine``
    rounds (none at this writing) fits one more strength on every fold: ``refine / K``
    of a path, an upper bound (a round may not be needed). The refit at the chosen strength is the
    single run's estimate.
    """
    import numpy as np
    from sklearn.base import clone

    from otfair.estimators import FairnessCV, default_strengths, fairness_path
    from otfair.utils import safe_indexing as _safe_indexing
    from otfair_lab.experiments._request import RunRequest
    from otfair_lab.experiments._single import build_estimator, prepare_data

    args = {k: v for k, v in run.items() if k not in ("dataset", "method", "verbose", "announce")}
    request = RunRequest.from_args(run["dataset"], run["method"], **args)
    data = prepare_data(request)
    estimator = build_estimator(request, data, None)
    try:
        strengths = [float(v) for v in default_strengths(estimator)]
    except ValueError:  # no path to search (the CLI refuses such a method before)
        strengths = [float(estimator.get_params(deep=False).get("strength") or 0.0)]
    split = data.split
    n = len(split.y_train)
    rows = np.arange(max(2, n * (cv - 1) // cv))  # one fold's training rows
    X, y, s = (_safe_indexing(a, rows) for a in (split.X_train, split.y_train, split.s_train))
    epochs = int(estimator.get_params(deep=False).get("epochs") or 1)
    times = []
    for pilot_epochs in PILOT_EPOCHS:
        start = time.perf_counter()
        fairness_path(
            clone(estimator).set_params(epochs=pilot_epochs),
            X,
            y,
            sensitive_features=s,
            strengths=strengths,
        )
        times.append(time.perf_counter() - start)
    per_epoch = epoch_seconds(times[0], times[1])
    fixed = times[1] if per_epoch is None else max(0.0, times[1] - per_epoch)
    path = fixed + epochs * (times[1] if per_epoch is None else per_epoch)
    rounds = int(FairnessCV(estimator, max_violation=0.0).refine)  # the default rounds
    return cv * path * (1 + rounds / len(strengths)), (
        f"FairnessCV: {cv} folds x a path of up to {len(strengths)} strengths on {cv - 1}/{cv} "
        f"of the rows ({format_seconds(path)} each, from 2- and 1-epoch path pilots)"
        + (f", up to {rounds} refinement strengths per fold" if rounds else "")
        + " and the refit"
    )


def format_seconds(seconds: float) -> str:
    """:func:`otfair_lab.experiments._plan.format_duration`."""
    from otfair_lab.experiments._plan import format_duration

    return format_duration(seconds)


#: Epochs of the longer pilot fit run when the 2- and 1-epoch fits do not separate the
#: cost of an epoch from the fixed cost (at most a quarter of the run's epochs).
RETRY_EPOCHS = 10


def estimate_fit(
    run: Mapping[str, Any], *, cv: int | None = None, before_s: float = 0.0
) -> FitEstimate | None:
    """Pilot the ``run_single`` keywords ``run``; ``None`` when it needs no pilot.

    The pilots are silent (``verbose=False``, no announcements, and their warnings
    ignored: a 1- or 2-epoch timing probe is under-trained and capped by design, and the
    run itself warns about what is true of it); a pilot that fails raises as the run
    itself would. ``cv``: the run is ``--max-violation``'s FairnessCV with that many
    folds (:func:`budget_fits`); ``before_s``: seconds the command spent before the
    pilots (counted in :attr:`FitEstimate.whole_s`).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _estimate_fit(run, cv=cv, before_s=before_s)


def _estimate_fit(
    run: Mapping[str, Any], *, cv: int | None, before_s: float
) -> FitEstimate | None:
    """:func:`estimate_fit`'s pilots and estimate (warnings as the caller set them)."""
    from otfair_lab.experiments._single import run_single

    epochs = run_epochs(run)
    if epochs is None or epochs <= PILOT_EPOCHS[0]:
        return None
    began = time.perf_counter()
    from otfair_lab.experiments._backends import warm_up, warm_up_configs

    warm_up(warm_up_configs([_config(run)]))  # one-time costs (imports) in no pilot
    quiet = {**run, "verbose": False, "announce": None}
    fits = []
    for pilot_epochs in PILOT_EPOCHS:
        start = time.perf_counter()
        result = run_single(**{**quiet, "epochs": pilot_epochs})
        fits.append((time.perf_counter() - start, float(result.get("fit_time_s") or 0.0)))
    (_, fit2), (wall1, fit1) = fits
    per_epoch = epoch_seconds(fit2, fit1)
    longer = min(RETRY_EPOCHS, epochs // 4)
    if per_epoch is None and longer > PILOT_EPOCHS[0]:
        # the 2- and 1-epoch fits differ by less than their noise (a fixed cost larger
        # than an epoch): a longer pilot separates them, rather than charging the whole
        # 1-epoch fit per epoch
        result = run_single(**{**quiet, "epochs": longer})
        fit_long = float(result.get("fit_time_s") or 0.0)
        fit1 = min(fit1, fit_long)
        diff = fit_long - min(fit1, fit2)
        per_epoch = diff / (longer - 1) if diff > 0 else None
    pilot = Pilot(1, wall1, fit1, epochs, per_epoch)
    seconds, counted = pilot.estimate(1), ""
    if cv is not None:
        cv_seconds, counted = budget_fits(run, cv)
        seconds += cv_seconds
    return FitEstimate(seconds, epochs, time.perf_counter() - began, before_s, counted)
