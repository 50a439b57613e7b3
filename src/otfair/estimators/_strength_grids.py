"""Default strength grids: where :class:`~otfair.estimators.FairnessCV` searches.

Each grid is the unpenalized model (strength 0) followed by a (mostly) log grid over the range
where the method's trade-off moves: the convex weight alpha of OTF (its gradient is
large, so the trade-off lies below alpha = 0.1), the convex weight of the other convex
penalties (Norm, Barycenter), the additive weight lambda of FTM, GapReg, the adversary
and FairTorch's DP loss, and lambda of the regression nets (CENet, WassersteinNet). The
grids are stated here once; :func:`default_strengths` reads the estimator to choose one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from otfair.estimators._path import strength_param

__all__ = ["GRIDS", "default_strengths", "strength_param"]

#: name -> default strengths (0 = the unpenalized model, then a log grid)
GRIDS: dict[str, tuple[float, ...]] = {
    # (1 - alpha) CE + alpha OTF0: at alpha = 0.1 Adult's PDP is already ~3% of the
    # unfair model's (docs/classifiers.md), so the grid stops there
    "otf": (0.0, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1),
    # (1 - alpha) CE + alpha R for the other convex penalties: log-spaced to 0.3, then
    # evenly spaced to 0.9, where Norm's trade-off lies on COMPAS (its DP gap moves only
    # above alpha = 0.3)
    "convex": (0.0, 0.01, 0.03, 0.1, 0.3, 0.5, 0.7, 0.9),
    # CE + lambda R (FTM, GapReg, adversary, FairTorch DP)
    "additive": (0.0, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0),
    # MSE + lambda adversary (CENet, WassersteinNet)
    "regression": (0.0, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0),
}


def _grid_name(estimator: Any) -> str:
    """Return the key of :data:`GRIDS` for ``estimator``."""
    if strength_param(estimator) == "lam":
        return "regression"
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
