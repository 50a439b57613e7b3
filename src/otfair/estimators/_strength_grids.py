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
GapReg's only at lambda 300. The additive weight lambda of FTM, GapReg, the adversary
and FairTorch's DP loss therefore runs to 1000, and lambda of the regression nets
(CENet, WassersteinNet) to 100.
The grids are stated here once; :func:`default_strengths` reads the estimator to choose
one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from otfair.estimators._path import strength_param

__all__ = ["GRIDS", "default_strengths", "strength_param"]

#: name -> default strengths (0 = the unpenalized model, then a log grid)
GRIDS: dict[str, tuple[float, ...]] = {
    # (1 - alpha) CE + alpha OTF0: Adult's DP gap falls from 0.20 (alpha 0) through 0.06
    # (0.01) to 0.015 (0.1); COMPAS's moves only above alpha = 0.9 and falls below 0.02
    # only at 0.997 (a well-trained logistic model)
    "otf": (0.0, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 0.3, 0.7, 0.9, 0.97, 0.99, 0.997),
    # (1 - alpha) CE + alpha R for the other convex penalties: log-spaced to 0.3, then
    # evenly spaced to 0.9 (Norm's DP gap on COMPAS moves between 0.3 and 0.9), then
    # log-spaced in 1 - alpha
    "convex": (0.0, 0.01, 0.03, 0.1, 0.3, 0.5, 0.7, 0.9, 0.97, 0.99),
    # CE + lambda R (FTM, GapReg, adversary, FairTorch DP): half-decades to 1000
    "additive": (0.0, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0),
    # MSE + lambda adversary (CENet, WassersteinNet)
    "regression": (0.0, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0),
}


def _grid_name(estimator: Any) -> str:
    """Return the key of :data:`GRIDS` for ``estimator``."""
    grid = getattr(estimator, "_strength_grid", None)  # a row named by the estimator
    if grid is not None and strength_param(estimator):
        return str(grid)
    params = estimator.get_params(deep=False)
    penalty = params.get("penalty", "none")
    if isinstance(penalty, str) and penalty == "none":
        raise ValueError(
            "FairnessCV needs a fairness penalty: the estimator has penalty='none' (no "
            "trade-off to choose)."
        )
    from otfair.penalties import as_penalty_object

    spec = as_penalty_object(penalty)
    mixing = params.get("mixing", "auto")
    if mixing == "auto":
        mixing = spec.build(params.get("notion", "dp")).default_mixing
    if mixing == "convex":
        return "otf" if spec.name == "otf" else "convex"
    return "additive"


def default_strengths(estimator: Any) -> np.ndarray:
    """Return the default strength grid of ``estimator`` (a copy of a :data:`GRIDS` row)."""
    return np.asarray(GRIDS[_grid_name(estimator)], dtype=float)
