"""The strength checks of a fit and of a path: a number, or a list of distinct numbers."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np


def check_strength(value: Any, name: str = "strength") -> Any:
    """Refuse a sequence of strengths (a curve) with the one message naming the path.

    Returns ``value`` unchanged otherwise (its range is checked by the estimator).
    """
    if not isinstance(value, (numbers.Real, str)) and hasattr(value, "__len__"):
        shown = [float(v) if isinstance(v, numbers.Real) else v for v in value]
        raise ValueError(
            f"`{name}` must be a number; got {shown}. A list of strengths is a trade-off "
            f"curve: fit it with otfair.estimators.fairness_path(estimator, X, y, "
            f"sensitive_features=s, strengths={shown})."
        )
    return value


def check_strengths(strengths: Any, name: str = "strengths") -> list[float]:
    """Return a path's strengths as a list of distinct finite floats.

    Raises ``ValueError`` naming ``name`` for an empty, repeated or non-finite list.
    """
    if isinstance(strengths, (numbers.Real, str)):
        strengths = [strengths]
    try:
        values = np.asarray(strengths, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"`{name}` must be a list of numbers; got {strengths!r}.") from None
    if values.size == 0:
        raise ValueError(f"`{name}` must hold at least one value.")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"`{name}` must be finite; got {values.tolist()}.")
    if len(np.unique(values)) != values.size:
        raise ValueError(f"`{name}` values must be distinct; got {values.tolist()}.")
    return [float(v) for v in values]
