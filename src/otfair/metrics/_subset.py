r"""Subset fairness (FTM paper Definition 4.1, §5.2.2 and App. E.2).

A group-fair model can still discriminate inside subsets of the input space. The FTM
paper measures the DP gap restricted to a subset :math:`A`,

.. math::

    \mathrm{DP}_A(f) = \bigl| E[f(X, 0) \mid S = 0, X \in A] - E[f(X, 1) \mid S = 1, X \in A]
    \bigr|,

on (1) random half-spaces :math:`A_v = \{x : v^\top x \ge 0\}`, :math:`v \sim U[-1, 1]^d`,
and (2) the two halves of the data split at the median of one named input variable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from otfair.metrics._checks import (
    check_lengths,
    check_matrix,
    check_threshold,
    group_means,
    max_pairwise_gap,
)
from otfair.metrics._constraints import THRESHOLD
from otfair.metrics._distribution import max_pairwise_distance, wasserstein_1d
from otfair.utils import (
    StrOptions,
    check_probabilities,
    encode_groups,
    positive_int,
    validate_params,
)

SubsetMeasure = Literal["dp", "mean_score_gap", "wdp"]
_MEASURES = ("dp", "mean_score_gap", "wdp")
_CHUNK = 128  # subsets evaluated together (an n x 128 mask matrix)


@dataclass(frozen=True)
class SubsetFairness:
    """Summary of a fairness measure over many random subsets.

    Attributes
    ----------
    values : numpy.ndarray
        The measure on every evaluated subset (skipped subsets excluded).
    mean, std, max, q95 : float
        Mean, standard deviation, maximum and 95th percentile of ``values``.
    n_subsets : int
        Number of subsets drawn.
    n_skipped : int
        Subsets skipped because some group had fewer than ``min_group_size`` members.
    measure : str
        Which measure ``values`` holds.
    """

    values: np.ndarray
    mean: float
    std: float
    max: float
    q95: float
    n_subsets: int
    n_skipped: int
    measure: str

    def as_dict(self) -> dict[str, float]:
        """Flat summary without the per-subset values."""
        return {
            "mean": self.mean,
            "std": self.std,
            "max": self.max,
            "q95": self.q95,
            "n_subsets": self.n_subsets,
            "n_skipped": self.n_skipped,
        }


def _prepare(
    X: Any, y_score: Any, sensitive_features: Any, threshold: float, measure: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    if measure not in _MEASURES:
        raise ValueError(f"`measure` must be one of {_MEASURES}; got {measure!r}.")
    check_lengths(X=X, y_score=y_score, sensitive_features=sensitive_features)
    x = check_matrix(X, "X")
    score = check_probabilities(y_score, "y_score")
    codes, groups = encode_groups(sensitive_features)
    return x, score, codes, groups, check_threshold(threshold)


def _measure_on(
    mask: np.ndarray,
    score: np.ndarray,
    codes: np.ndarray,
    k: int,
    tau: float,
    measure: str,
) -> float:
    s, c = score[mask], codes[mask]
    if measure == "wdp":
        return max_pairwise_distance(s, c, k, wasserstein_1d)
    values = (s >= tau).astype(np.float64) if measure == "dp" else s
    return max_pairwise_gap(group_means(values, c, k)[0])


@validate_params(
    {
        "n_subsets": [positive_int()],
        "measure": [StrOptions(set(_MEASURES))],
        "threshold": THRESHOLD,
        "min_group_size": [positive_int()],
    }
)
def subset_fairness(
    X: Any,
    y_score: Any,
    *,
    sensitive_features: Any,
    n_subsets: int = 1000,
    measure: SubsetMeasure = "dp",
    threshold: float = 0.5,
    min_group_size: int = 1,
    random_state: int | np.random.Generator | None = 0,
) -> SubsetFairness:
    r"""Fairness on random half-space subsets :math:`\{i : v^\top x_i \ge 0\}`.

    For :math:`v_1, \dots, v_B \sim U[-1, 1]^d` (``B = n_subsets``), evaluate ``measure``
    on each subset :math:`A_b = \{i : v_b^\top x_i \ge 0\}` and summarize (FTM §5.2.2,
    Figure 4 uses 1,000 subsets of the test set and the hard DP):

    - ``"dp"``: :math:`\max_{a,b} |P(\hat Y=1 | S=a, A) - P(\hat Y=1 | S=b, A)|`,
      :math:`\hat Y = 1[f \ge \tau]`;
    - ``"mean_score_gap"``: the same with the scores instead of :math:`\hat Y`;
    - ``"wdp"``: :math:`W_1` between the groups' score distributions on :math:`A`.

    The half-spaces pass through the origin, so ``X`` should be centered (standardized
    features, as models see them). A subset in which some group has fewer than
    ``min_group_size`` members has no defined gap: it is skipped and counted in
    ``n_skipped``.

    Parameters
    ----------
    X : array-like of shape (n, d)
        Inputs that define the subsets.
    y_score : array-like of shape (n,)
        Probability scores in [0, 1].
    sensitive_features : array-like of shape (n,) or (n, k)
        Group membership.
    n_subsets : int, default=1000
        Number of random directions :math:`v`.
    measure : {"dp", "mean_score_gap", "wdp"}, default="dp"
        Fairness measure evaluated on each subset.
    threshold : float, default=0.5
        Decision threshold for ``"dp"``.
    min_group_size : int, default=1
        Minimum number of members of every group for a subset to count.
    random_state : int, numpy Generator or None, default=0
        Seed for the directions.

    Returns
    -------
    SubsetFairness
        ``mean``, ``std``, ``max``, ``q95`` over the evaluated subsets, ``n_skipped``.

    Raises
    ------
    ValueError
        On bad input, or when every subset had to be skipped.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 2)); s = (rng.random(400) < 0.5).astype(int)
    >>> res = subset_fairness(X, np.full(400, 0.7), sensitive_features=s, n_subsets=20)
    >>> res.max  # a constant score is fair on every subset
    0.0
    """
    x, score, codes, groups, tau = _prepare(X, y_score, sensitive_features, threshold, measure)
    for name, value in (("n_subsets", n_subsets), ("min_group_size", min_group_size)):
        if not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"`{name}` must be a positive integer; got {value!r}.")
    rng = np.random.default_rng(random_state)
    directions = rng.uniform(-1.0, 1.0, size=(n_subsets, x.shape[1]))
    arr = _subset_gaps(x, score, codes, len(groups), tau, measure, directions, min_group_size)
    return _summary(arr, n_subsets, measure, min_group_size)


def _summary(arr: np.ndarray, n_subsets: int, measure: str, min_group_size: int) -> SubsetFairness:
    """Return the summary of the subset gaps ``arr`` (a ValueError when there is none)."""
    if arr.size == 0:
        raise ValueError(
            f"All {n_subsets} random subsets left some group of `sensitive_features` with "
            f"fewer than {min_group_size} members; is `X` centered?"
        )
    return SubsetFairness(
        values=arr,
        mean=float(arr.mean()),
        std=float(arr.std()),
        max=float(arr.max()),
        q95=float(np.quantile(arr, 0.95)),
        n_subsets=int(n_subsets),
        n_skipped=int(n_subsets - arr.size),
        measure=measure,
    )


def _subset_gaps(
    x: np.ndarray,
    score: np.ndarray,
    codes: np.ndarray,
    k: int,
    tau: float,
    measure: str,
    directions: np.ndarray,
    min_group_size: int,
) -> np.ndarray:
    """Return ``measure`` on every half-space subset in which each group is large enough.

    The subsets are evaluated ``_CHUNK`` directions at a time; the mean-based measures
    as one matrix product per chunk.
    """
    onehot = np.eye(k)[codes]
    values: list[Any] = []  # floats (wdp) and float64 scalars (means)
    for start in range(0, len(directions), _CHUNK):
        masks = (x @ directions[start : start + _CHUNK].T >= 0.0).astype(np.float64)
        counts = masks.T @ onehot  # (chunk, k) group sizes in each subset
        keep = counts.min(axis=1) >= min_group_size
        if measure == "wdp":
            values.extend(
                _measure_on(m.astype(bool), score, codes, k, tau, measure) for m in masks.T[keep]
            )
            continue
        target = (score >= tau).astype(np.float64) if measure == "dp" else score
        means = (masks.T[keep] @ (onehot * target[:, None])) / counts[keep]
        values.extend(means.max(axis=1) - means.min(axis=1))
    return np.asarray(values, dtype=np.float64)


def median_split(values: np.ndarray) -> tuple[np.ndarray, float]:
    r"""Split at the median: ``high = values > m`` (or ``>= m`` if that would be empty).

    The split of :func:`subset_fairness_by_variable`. For a binary variable this gives
    its two levels whatever the median is.

    Parameters
    ----------
    values : ndarray of shape (n,)
        The variable's values.

    Returns
    -------
    high : ndarray of bool, shape (n,)
        The mask of the high half.
    median : float
        The median :math:`m`.

    Examples
    --------
    >>> import numpy as np
    >>> from otfair.metrics import median_split
    >>> median_split(np.array([0.0, 0.0, 1.0, 1.0, 1.0]))
    (array([False, False,  True,  True,  True]), 1.0)
    """
    med = float(np.median(values))
    high = values > med
    if not high.any():
        high = values >= med
    return high, med


@validate_params({"threshold": THRESHOLD})
def subset_fairness_by_variable(
    X: Any,
    y_score: Any,
    *,
    sensitive_features: Any,
    variable: int | str,
    threshold: float = 0.5,
) -> pd.DataFrame:
    r"""Fairness on the two halves of the data split at the median of one input variable.

    With :math:`m` the median of variable :math:`j`, the subsets are
    ``low`` :math:`= \{i: x_{ij} \le m\}` and ``high`` :math:`= \{i: x_{ij} > m\}`
    (``<`` / ``>=`` when no value exceeds the median, e.g. a binary variable with
    median 1), as in FTM §5.2.2 (Tables 1, 8, 9: age on German, marital status on
    Dutch). On each half the DP gap, mean score gap and WDP are reported.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n, d)
        Inputs.
    y_score : array-like of shape (n,)
        Probability scores in [0, 1].
    sensitive_features : array-like of shape (n,) or (n, k)
        Group membership.
    variable : int or str
        Column index, or column name when ``X`` is a DataFrame.
    threshold : float, default=0.5
        Decision threshold for the DP gap.

    Returns
    -------
    pandas.DataFrame
        Index ``["low", "high"]``; columns ``n``, ``median``, ``dp_gap``,
        ``mean_score_gap``, ``wdp``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 2)); s = (rng.random(400) < 0.5).astype(int)
    >>> table = subset_fairness_by_variable(X, np.full(400, 0.7), sensitive_features=s,
    ...                                     variable=0)
    >>> table["n"].tolist(), table["dp_gap"].tolist()
    ([200, 200], [0.0, 0.0])
    """
    if isinstance(variable, str):
        if not isinstance(X, pd.DataFrame):
            raise TypeError("`variable` given by name requires `X` to be a DataFrame.")
        if variable not in X.columns:
            raise ValueError(
                f"`variable` {variable!r} is not a column of `X`; available: {list(X.columns)}."
            )
        j = list(X.columns).index(variable)
    else:
        j = int(variable)
    x, score, codes, groups, tau = _prepare(X, y_score, sensitive_features, threshold, "dp")
    if not -x.shape[1] <= j < x.shape[1]:
        raise ValueError(f"`variable` index {j} is out of range for X with {x.shape[1]} columns.")
    high, med = median_split(x[:, j])
    k = len(groups)
    rows = {}
    for name, mask in (("low", ~high), ("high", high)):
        counts = np.bincount(codes[mask], minlength=k)
        if counts.min() == 0:
            empty = [str(g) for g, c in zip(groups, counts, strict=True) if c == 0]
            raise ValueError(
                f"The {name} half of variable {variable!r} has no member of group(s) {empty} "
                "of `sensitive_features`."
            )
        rows[name] = {
            "n": int(mask.sum()),
            "median": med,
            "dp_gap": _measure_on(mask, score, codes, k, tau, "dp"),
            "mean_score_gap": _measure_on(mask, score, codes, k, tau, "mean_score_gap"),
            "wdp": _measure_on(mask, score, codes, k, tau, "wdp"),
        }
    return pd.DataFrame.from_dict(rows, orient="index")
