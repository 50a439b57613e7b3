"""The inputs every fair estimator of the baselines must refuse at fit time."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest


def check_bad_fit_inputs(
    fit: Callable[[np.ndarray, np.ndarray], object],
    X: np.ndarray,
    s: np.ndarray,
    *,
    n_short: int,
    nan_at: tuple[int, int] = (0, 0),
    rows: str = "rows",
) -> None:
    """Check that ``fit(X, s)`` refuses one group, a NaN feature and too few groups.

    The last case passes only the first ``n_short`` sensitive values; ``rows`` is what
    its error message must match.
    """
    with pytest.raises(ValueError, match="at least 2 groups"):
        fit(X, np.zeros(len(X)))
    Xn = X.copy()
    Xn[nan_at] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        fit(Xn, s)
    with pytest.raises(ValueError, match=rows):
        fit(X, s[:n_short])
