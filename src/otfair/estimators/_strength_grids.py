"""Default strength grids: where :class:`~otfair.estimators.FairnessCV` searches.

Each grid is the unpenalized model (strength 0) followed by a (mostly) log grid that runs
from where the method's penalty starts to move the model to where the model is close to
a constant (fair, and no better than the best constant predictor, which ``FairnessCV``
then excludes), so that a budget anywhere in between is reached on the shipped data
sets. For the convex weight alpha of ``(1 - alpha) CE + alpha R`` (OTF, Norm,
Barycenter) the grid is log-spaced in ``alpha / (1 - alpha)`` near 1 (0.9, 0.97, 0.99)
and stops below 1: at alpha = 1 the objective no longer sees the labels (refused by the
estimators). Measured with the logistic model at the training defaults of this
writing (100 epochs of Adam; 20,000 Adult rows, all of COMPAS; a converged solver moves
them): OTF's DP gap falls below 0.03 at alpha 0.03 on Adult, but on COMPAS it moves only
above alpha 0.9 (0.06 at 0.99; with 1,000 steps of Adam at lr 0.01, 0.015 at 0.997, close
to the constant); Norm's falls below 0.03 at alpha 0.7 on COMPAS, and
GapReg's only at lambda 300. The additive weight lambda of GapReg, the adversary
and FairTorch's DP loss therefore runs to 1000, and lambda of the regression nets
(CENet, WassersteinNet) to 100; the representation classifiers' adversary weights
follow their papers' sweeps (LAFTR's gamma to 4, CFair's mu to 100, sIPM-LFR's lambda
to 10: ``strength_grids`` in ``otfair/penalties/_representation.py``; the fair
normalizing flows' KL weight gamma runs from 0.02 to 0.9). FTM's runs to 10 (the paper's
largest), dense below 3: past a finite lambda its constant model is the optimum
(``FTM_GRID``, ``otfair/penalties/_plan.py``).

The grids live on the penalties (:meth:`otfair.penalties.PenaltyObject.strength_grid`,
the regression nets' adversaries' ``strength_grids``); this module reads them for an
estimator (:func:`default_strengths`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from otfair.estimators._path import strength_param
from otfair.penalties import OTF, JointCriticPenalty, PenaltyObject, as_penalty_object
from otfair.penalties._plan import ADDITIVE_GRID, CONVEX_GRID
from otfair.penalties._representation import (
    ConditionalAlignment,
    LAFTRAdversary,
    SigmoidIPMCritic,
)

__all__ = ["GRIDS", "default_strengths", "larger_is_fairer", "strength_param"]

#: the grids by kind, as the penalties state them (kept for callers of this name)
GRIDS: dict[str, tuple[float, ...]] = {
    "otf": OTF.strength_grid("convex"),
    "convex": CONVEX_GRID,
    "additive": ADDITIVE_GRID,
    "regression": JointCriticPenalty.strength_grids["additive"],
    "laftr": LAFTRAdversary.strength_grids["additive"],
    "sipm": SigmoidIPMCritic.strength_grids["additive"],
    "cfair": ConditionalAlignment.strength_grids["additive"],
    # the fair normalizing flows' KL weight gamma in [0, 1): 0, the sweep of the lab's
    # fair-nf (0.02, 0.1, 0.5, 0.9) and 0.3, 0.7 between (each fit trains flows: few)
    "fair-nf": (0.0, 0.02, 0.1, 0.3, 0.5, 0.7, 0.9),
    # AdapFair's lambda in [0, 1] weighs the cross-entropy (eq. 1): 1 trains its flows on
    # the labels alone, 0 on the Wasserstein term alone; the lab's sweep (0.9 to 0.1) and
    # both ends, with 0.01 and 0.03 (blind flows move between 0.1 and 0). The fairer
    # strengths are the smaller ones (``larger_is_fairer``).
    "adapfair": (0.0, 0.01, 0.03, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0),
}


def _declared_row(estimator: Any) -> str | None:
    """Return the :data:`GRIDS` row an estimator names (``_strength_grid``).

    The regression nets and the representation classifiers (LAFTR, sIPM-LFR, CFair)
    name one: their strength weighs an adversary, not a ``penalty``.
    """
    grid = getattr(estimator, "_strength_grid", None)  # a row named by the estimator
    return str(grid) if grid is not None and strength_param(estimator) else None


def _penalty_grid(estimator: Any) -> tuple[float, ...]:
    """Return the grid of ``estimator``'s penalty under the estimator's mixing."""
    from otfair.estimators._path import strength_param

    strength_param(estimator)  # "has no strength parameter" (LogisticRegression's penalty)
    params = estimator.get_params(deep=False)
    if "penalty" not in params:
        raise ValueError(
            f"FairnessCV has no default strength grid for {type(estimator).__name__}: "
            "pass the strengths to search, FairnessCV(strengths=[...])."
        )
    penalty = params["penalty"]
    if isinstance(penalty, str) and penalty == "none":
        raise ValueError(
            "FairnessCV needs a fairness penalty: the estimator has penalty='none' (no "
            "trade-off to choose)."
        )
    spec: PenaltyObject = as_penalty_object(penalty)
    mixing = params.get("mixing", "auto")
    if mixing == "auto":
        mixing = spec.training_plan(spec.build(params.get("notion", "dp"))).mixing
    return spec.strength_grid(mixing)


def default_strengths(estimator: Any) -> np.ndarray:
    """Return the default strength grid of ``estimator`` (a copy of its penalty's grid).

    The strengths :class:`FairnessCV` searches when ``strengths`` is not given.

    Parameters
    ----------
    estimator : estimator
        An estimator with a strength parameter (:func:`strength_param`) and, for
        :class:`FairClassifier`, a fairness penalty.

    Returns
    -------
    ndarray of shape (n_strengths,)
        The unpenalized model's strength 0, then a (mostly) log grid.

    Raises
    ------
    ValueError
        The estimator has no strength parameter or has ``penalty="none"``.

    See Also
    --------
    FairnessCV : Searches this grid when ``strengths`` is not given.
    fairness_path : Fits an estimator at each strength of a grid.

    Examples
    --------
    >>> from otfair.estimators import FairClassifier, default_strengths
    >>> default_strengths(FairClassifier(penalty="gapreg"))[:4]
    array([0. , 0.1, 0.3, 1. ])
    """
    row = _declared_row(estimator)
    grid = GRIDS[row] if row is not None else _penalty_grid(estimator)
    return np.asarray(grid, dtype=float)


def larger_is_fairer(estimator: Any) -> bool:
    """Whether ``estimator``'s larger strengths are its fairer models (a penalty's weight).

    False for an estimator whose strength weighs the task (AdapFair's lambda:
    ``_fairer_strengths = "smaller"``): FairnessCV's refit check then moves to smaller
    strengths, and its refinement bisects towards the larger ones.
    """
    return getattr(estimator, "_fairer_strengths", "larger") != "smaller"
