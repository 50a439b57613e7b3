"""The estimate of one ``otfair fit`` run: the sweep's pilot rule on a single run.

A run whose estimator trains ``E`` epochs (``E`` > 2) is fitted for 2 and for 1 epoch
first (:data:`otfair_lab.experiments._plan.PILOT_EPOCHS`, without progress output); the
difference is the cost of an epoch, the rest of the 1-epoch fit its fixed cost, and the
run is estimated at ``other + fixed + E * per_epoch`` (:meth:`Pilot.estimate`), with
the range :data:`ESTIMATE_RANGE` around it. A run without an epoch budget, or of at
most 2 epochs, is not piloted (its fit is its own estimate). ``--max-violation``'s
cross-validation is piloted by FairnessCV itself on one fold (:func:`budget_fits`).
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
    and the refit, :func:`budget_fits`); ``pilots`` what the estimate was measured on.
    """

    seconds: float
    epochs: int
    spent_s: float
    before_s: float = 0.0
    fits: str = ""
    pilots: str = "2- and 1-epoch pilot fits"

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
            f"from {self.pilots}, {format_duration(self.spent_s)}, and "
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


def budget_fits(
    run: Mapping[str, Any], cv: int, max_violation: float = 0.0, metric: str | None = None
) -> tuple[float, str]:
    """Pilot ``--max-violation``'s FairnessCV on one fold; return its seconds to go and words.

    The pilots are FairnessCV itself (its thread limits, its fold measurements, its
    discarded warm-start probe, its refit) with ``cv`` one fold of the training rows
    (``(cv - 1) / cv`` of them to fit on), as the run searches ``cv`` of them. A fit of
    ``E`` epochs (Adam: exactly ``E`` unless it converges first) is piloted at 1 and
    ``L`` epochs (:data:`RETRY_EPOCHS`, at most a quarter of ``E``), twice each (the
    faster one kept: the first pays one-time costs), and each part extrapolated to
    ``E`` epochs (:func:`scaled_seconds`): the run is ``cv`` such folds and the refit.
    A full-batch L-BFGS fit stops at its convergence, far below its ``E`` iterations,
    and FairnessCV's ascending search warm-starts its strengths and stops once the
    choice is settled: there one fold's real search at ``max_violation`` (0: the
    tightest budget, a search to its last strength) is timed instead, and its cost
    counted ``cv`` times. The data preparation and the test split's evaluation are
    timed too (``other``).
    """
    import numpy as np

    from otfair.estimators import default_strengths
    from otfair_lab.experiments._request import RunRequest
    from otfair_lab.experiments._single import build_estimator, evaluate, prepare_data

    args = {k: v for k, v in run.items() if k not in ("dataset", "method", "verbose", "announce")}
    request = RunRequest.from_args(run["dataset"], run["method"], **args)
    start = time.perf_counter()
    data = prepare_data(request)
    other = time.perf_counter() - start
    estimator = build_estimator(request, data, None)
    split = data.split
    fold = one_fold(split, cv)
    epochs = int(estimator.get_params(deep=False).get("epochs") or 1)
    try:
        grid = len(default_strengths(estimator))
    except ValueError:  # no path to search (the CLI refuses such a method before)
        grid = 1
    loose = {"max_violation": float(np.finfo(float).max)}
    first = _search_pilot(estimator, split, fold, 1, loose)
    best = getattr(first.search, "best_estimator_", None)
    if best is not None:  # the result's test panel, timed on the 1-epoch refit
        start = time.perf_counter()
        evaluate(request, data, best, strength=None, fit_time=0.0)
        other += time.perf_counter() - start
    if getattr(best, "solver_", None) == "lbfgs":
        budget = {"max_violation": max_violation, "metric": metric or "auto"}
        real = _search_pilot(estimator, split, fold, epochs, budget, budgeted=True)
        refit = real.refit_s if real.refit_s is not None else epochs * (first.refit_s or 0.0)
        fold_s, how = real.fold_s, "as one fold's search took at full length"
    else:
        longer = max(PILOT_EPOCHS[0], min(RETRY_EPOCHS, epochs // 4))
        short, long = _pilot_pair(estimator, split, fold, longer, loose, first)
        fold_s = scaled_seconds(short.fold_s, long.fold_s, longer, epochs)
        refit = scaled_seconds(short.refit_s or 0.0, long.refit_s or 0.0, longer, epochs)
        how = f"from 1- and {longer}-epoch pilots"
    return other + cv * fold_s + refit, (
        f"FairnessCV: {cv} folds x a path of up to {grid} strengths on {cv - 1}/{cv} of "
        f"the rows ({format_seconds(fold_s)} each, {how}) and the refit "
        f"({format_seconds(refit)})"
    )


def one_fold(split: Any, cv: int) -> tuple[Any, Any]:
    """Return the ``(train, test)`` rows of the first of ``cv`` shuffled folds of ``split``.

    Stratified on label x group (a classifier's, where each combination has ``cv``
    rows), as FairnessCV's own folds are, so that the held-out rows hold every group.
    """
    import numpy as np
    from sklearn.model_selection import KFold, StratifiedKFold

    n = len(split.y_train)
    if split.task == "classification":
        s = np.asarray(split.s_train, dtype=object).reshape(n, -1)
        key = [f"{label}|{row.tolist()}" for label, row in zip(split.y_train, s, strict=True)]
        if np.unique(key, return_counts=True)[1].min() >= cv:
            folds = StratifiedKFold(cv, shuffle=True, random_state=0)
            return next(folds.split(split.X_train, key))
    return next(KFold(cv, shuffle=True, random_state=0).split(split.X_train))


@dataclass(frozen=True)
class SearchPilot:
    """One timed FairnessCV pilot on one fold.

    ``fold_s``: its seconds apart from the refit (the fold's fits, the warm-start probe,
    the measurements); ``refit_s``: the refit's (``None``: the search raised before it,
    no strength within the budget on this fold, after fitting the whole path).
    """

    fold_s: float
    refit_s: float | None
    search: Any


def _search_pilot(
    estimator: Any,
    split: Any,
    fold: Any,
    epochs: int,
    params: Mapping[str, Any],
    *,
    budgeted: bool = False,
) -> SearchPilot:
    """Time FairnessCV with ``params`` on the one ``fold`` of ``split``'s training rows.

    ``budgeted``: the run's own budget, which one fold may not meet (its ``ValueError``
    is then the pilot's end); other pilots raise as the run would.
    """
    from sklearn.base import clone

    from otfair.estimators import FairnessCV

    search = FairnessCV(
        clone(estimator).set_params(epochs=epochs),
        cv=[fold],
        check_refit=False,
        below_constant="warn",  # a 1-epoch model below the constant is still timed
        **params,
    )
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():  # an under-trained pilot's, not the run's
            warnings.simplefilter("ignore")
            search.fit(split.X_train, split.y_train, sensitive_features=split.s_train)
    except ValueError:  # no strength within the budget on this fold: the path was fitted
        if not budgeted:
            raise
        return SearchPilot(time.perf_counter() - start, None, search)
    wall = time.perf_counter() - start
    return SearchPilot(wall - search.refit_time_, search.refit_time_, search)


def _pilot_pair(
    estimator: Any,
    split: Any,
    fold: Any,
    longer: int,
    params: Mapping[str, Any],
    first: SearchPilot,
) -> tuple[SearchPilot, SearchPilot]:
    """Return the faster of two 1-epoch pilots (``first`` one) and of two ``longer`` ones.

    The faster of two: a pilot of a fraction of a second is at the mercy of the load.
    """
    more = [_search_pilot(estimator, split, fold, e, params) for e in (longer, 1, longer)]
    return _faster(first, more[1]), _faster(more[0], more[2])


def _faster(a: SearchPilot, b: SearchPilot) -> SearchPilot:
    """Return the pilot of the two that took less time in all."""
    return min((a, b), key=lambda p: p.fold_s + (p.refit_s or 0.0))


def scaled_seconds(short: float, long: float, long_epochs: int, epochs: int) -> float:
    """Seconds of an ``epochs``-epoch fit from its 1- and ``long_epochs``-epoch pilots.

    The difference of the pilots is ``long_epochs - 1`` epochs; the 1-epoch pilot less
    an epoch is the fixed cost. A difference that is not positive (their noise exceeds
    the epochs between them) charges the longer pilot's mean epoch, fixed cost included,
    for each epoch.

    >>> scaled_seconds(1.5, 6.0, 10, 100)  # 0.5 s an epoch, 1 s fixed
    51.0
    >>> scaled_seconds(2.0, 1.0, 10, 100)  # unmeasured: 0.1 s an epoch, all included
    11.9
    """
    diff = long - short
    per_epoch = diff / (long_epochs - 1) if diff > 0 else long / long_epochs
    return max(short, short + (epochs - 1) * per_epoch)


def format_seconds(seconds: float) -> str:
    """:func:`otfair_lab.experiments._plan.format_duration`."""
    from otfair_lab.experiments._plan import format_duration

    return format_duration(seconds)


#: Epochs of the longer pilot fit run when the 2- and 1-epoch fits do not separate the
#: cost of an epoch from the fixed cost (at most a quarter of the run's epochs), and of
#: FairnessCV's longer one-fold pilots (:func:`budget_fits`).
RETRY_EPOCHS = 10


def estimate_fit(
    run: Mapping[str, Any],
    *,
    cv: int | None = None,
    max_violation: float = 0.0,
    metric: str | None = None,
    before_s: float = 0.0,
) -> FitEstimate | None:
    """Pilot the ``run_single`` keywords ``run``; ``None`` when it needs no pilot.

    The pilots are silent (``verbose=False``, no announcements, and their warnings
    ignored: a 1- or 2-epoch timing probe is under-trained and capped by design, and the
    run itself warns about what is true of it); a pilot that fails raises as the run
    itself would. ``cv``: the run is ``--max-violation``'s FairnessCV with that many
    folds, budget ``max_violation`` and ``metric`` (:func:`budget_fits`, whose pilots
    replace the single run's); ``before_s``: seconds the command spent before the
    pilots (counted in :attr:`FitEstimate.whole_s`).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _estimate_fit(run, cv=cv, budget=(max_violation, metric), before_s=before_s)


def _estimate_fit(
    run: Mapping[str, Any],
    *,
    cv: int | None,
    budget: tuple[float, str | None],
    before_s: float,
) -> FitEstimate | None:
    """:func:`estimate_fit`'s pilots and estimate (warnings as the caller set them)."""
    epochs = run_epochs(run)
    if epochs is None or epochs <= PILOT_EPOCHS[0]:
        return None
    began = time.perf_counter()
    from otfair_lab.experiments._backends import warm_up, warm_up_configs

    warm_up(warm_up_configs([_config(run)]))  # one-time costs (imports) in no pilot
    if cv is not None:  # FairnessCV's own pilots: its folds, its refit, its threads
        seconds, counted = budget_fits(run, cv, *budget)
        spent = time.perf_counter() - began
        return FitEstimate(seconds, epochs, spent, before_s, counted, "FairnessCV pilots")
    return FitEstimate(_single_seconds(run, epochs), epochs, time.perf_counter() - began, before_s)


def _single_seconds(run: Mapping[str, Any], epochs: int) -> float:
    """Seconds of the single run ``run`` of ``epochs`` epochs from its pilot fits."""
    from otfair_lab.experiments._single import run_single

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
    return Pilot(1, wall1, fit1, epochs, per_epoch).estimate(1)
