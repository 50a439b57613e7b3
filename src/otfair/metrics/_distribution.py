"""Distances between the groups' score distributions: WDP, KSDP and TVDP.

All three compare the empirical score distributions :math:`P_a, P_b` of two groups and
take the largest value over pairs of groups. They are computed exactly in numpy (sorting
and CDF evaluation), with no OT solver.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations
from typing import Any

import numpy as np

from otfair.metrics._checks import validate_metric_input
from otfair.metrics._constraints import BINS, GROUP_SIZE
from otfair.metrics._docs import fill_doc
from otfair.utils import MIN_GROUP_SIZE, validate_params


def wasserstein_1d(u: np.ndarray, v: np.ndarray) -> float:
    r"""Exact 1-Wasserstein distance between two empirical distributions on the line.

    .. math::

        W_1(P_u, P_v) = \int_{\mathbb{R}} |F_u(t) - F_v(t)|\, dt,

    evaluated exactly on the merged sorted sample (piecewise-constant CDFs).
    """
    u = np.sort(np.asarray(u, dtype=np.float64))
    v = np.sort(np.asarray(v, dtype=np.float64))
    grid = np.concatenate([u, v])
    grid.sort(kind="mergesort")
    widths = np.diff(grid)
    cdf_u = np.searchsorted(u, grid[:-1], side="right") / u.size
    cdf_v = np.searchsorted(v, grid[:-1], side="right") / v.size
    return float(np.sum(np.abs(cdf_u - cdf_v) * widths))


def ks_distance(u: np.ndarray, v: np.ndarray) -> float:
    r"""Kolmogorov-Smirnov distance :math:`\sup_t |F_u(t) - F_v(t)|` (exact)."""
    u = np.sort(np.asarray(u, dtype=np.float64))
    v = np.sort(np.asarray(v, dtype=np.float64))
    grid = np.concatenate([u, v])
    cdf_u = np.searchsorted(u, grid, side="right") / u.size
    cdf_v = np.searchsorted(v, grid, side="right") / v.size
    return float(np.max(np.abs(cdf_u - cdf_v)))


def tv_histogram(u: np.ndarray, v: np.ndarray, bins: np.ndarray) -> float:
    r"""Total variation :math:`\tfrac12 \sum_j |p_j - q_j|` between two histograms."""
    p = np.histogram(u, bins=bins)[0] / u.size
    q = np.histogram(v, bins=bins)[0] / v.size
    return float(0.5 * np.sum(np.abs(p - q)))


def max_pairwise_distance(
    score: np.ndarray,
    codes: np.ndarray,
    n_groups: int,
    distance: Callable[[np.ndarray, np.ndarray], float],
) -> float:
    """Largest ``distance`` between the score samples of any two groups."""
    samples = [score[codes == g] for g in range(n_groups)]
    return max(distance(samples[a], samples[b]) for a, b in combinations(range(n_groups), 2))


def _score_distance(
    y_true: Any,
    y_score: Any,
    sensitive_features: Any,
    distance: Callable[[np.ndarray, np.ndarray], float],
    pos_label: Any = None,
    min_group_size: int = MIN_GROUP_SIZE,
) -> float:
    """Validate a metric call and return the largest ``distance`` between two groups."""
    _, score, codes, groups, _ = validate_metric_input(
        y_true, y_score, sensitive_features, pos_label, min_group_size, labels="length"
    )
    return max_pairwise_distance(score, codes, len(groups), distance)


@fill_doc
@validate_params({"min_group_size": GROUP_SIZE})
def wasserstein_demographic_parity(
    y_true: Any,
    y_score: Any,
    *,
    sensitive_features: Any,
    pos_label: Any = None,
    min_group_size: int = MIN_GROUP_SIZE,
) -> float:
    r"""WDP: exact 1-Wasserstein distance between the groups' score distributions.

    .. math::

        \mathrm{WDP} = \max_{a, b}\; W_1\bigl(P(f(X) \mid S=a),\, P(f(X) \mid S=b)\bigr)
        = \max_{a,b} \int |F_a(t) - F_b(t)|\, dt

    (FTM paper §5, AdapFair's DP distance). Computed exactly by sorting; scores are not
    range-checked, so regression predictions work too.

    Parameters
    ----------
    y_true, y_score, sensitive_features, pos_label, min_group_size
        See :func:`~otfair.metrics.mean_score_gap`.

    Returns
    -------
    float
        Non-negative; at most 1 for scores in [0, 1].

    {examples_scores}
    >>> round(wasserstein_demographic_parity(y, p, sensitive_features=s), 6)
    0.3
    """
    return _score_distance(
        y_true, y_score, sensitive_features, wasserstein_1d, pos_label, min_group_size
    )


@fill_doc
@validate_params({"min_group_size": GROUP_SIZE})
def ks_demographic_parity(
    y_true: Any,
    y_score: Any,
    *,
    sensitive_features: Any,
    pos_label: Any = None,
    min_group_size: int = MIN_GROUP_SIZE,
) -> float:
    r"""KSDP: Kolmogorov-Smirnov distance between the groups' score distributions.

    .. math::

        \mathrm{KSDP} = \max_{a, b}\; \sup_t \bigl| F_a(t) - F_b(t) \bigr|,

    with :math:`F_g` the empirical CDF of the scores of group :math:`g` (exact; equals the
    two-sample KS statistic). Same parameters as :func:`wasserstein_demographic_parity`;
    the value lies in [0, 1].

    {examples_scores}
    >>> ks_demographic_parity(y, p, sensitive_features=s)
    0.5
    """
    return _score_distance(
        y_true, y_score, sensitive_features, ks_distance, pos_label, min_group_size
    )


@fill_doc
@validate_params({"bins": BINS, "min_group_size": GROUP_SIZE})
def tv_demographic_parity(
    y_true: Any,
    y_score: Any,
    *,
    sensitive_features: Any,
    bins: int = 100,
    score_range: tuple[float, float] = (0.0, 1.0),
    pos_label: Any = None,
    min_group_size: int = MIN_GROUP_SIZE,
) -> float:
    r"""TVDP: total variation between the groups' score histograms.

    .. math::

        \mathrm{TVDP} = \max_{a, b}\; \tfrac12 \sum_{j=1}^{B}
        \bigl| P(f(X) \in I_j \mid S=a) - P(f(X) \in I_j \mid S=b) \bigr|,

    on ``bins`` equal intervals :math:`I_j` covering ``score_range`` (default 100 bins on
    [0, 1]; the last bin is closed). TV between continuous score laws is estimated by this
    fixed histogram (FTM paper, Theorem 3.3 uses TVDP).

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Targets (only the length is checked).
    y_score : array-like of shape (n,)
        Scores; all must lie in ``score_range``.
    sensitive_features : array-like of shape (n,) or (n, k)
        Group membership.
    bins : int, default=100
        Number of equal-width bins.
    score_range : (float, float), default=(0.0, 1.0)
        Interval covered by the bins.
    {pos_label}
    {min_group_size}

    Returns
    -------
    float
        The largest total variation between two groups' histograms, in [0, 1].

    {examples_scores}
    >>> tv_demographic_parity(y, p, sensitive_features=s)  # no bin holds both groups
    1.0
    >>> tv_demographic_parity(y, p, sensitive_features=s, bins=2)  # [0, 0.5) and [0.5, 1]
    0.5
    """
    lo, hi = _check_score_range(score_range)
    _, score, codes, groups, _ = validate_metric_input(
        y_true, y_score, sensitive_features, pos_label, min_group_size, labels="length"
    )
    if score.min() < lo or score.max() > hi:
        raise ValueError(
            f"`y_score` must lie in score_range [{lo}, {hi}]; got range "
            f"[{score.min():.4g}, {score.max():.4g}]."
        )
    edges = np.linspace(lo, hi, int(bins) + 1)
    return max_pairwise_distance(score, codes, len(groups), lambda u, v: tv_histogram(u, v, edges))


def _check_score_range(score_range: Any) -> tuple[float, float]:
    """Return ``(low, high)``, two finite numbers with low < high; ValueError naming it."""
    try:
        lo, hi = (float(v) for v in score_range)
    except (TypeError, ValueError):
        lo = hi = float("nan")
    if not (np.isfinite(lo) and np.isfinite(hi) and hi > lo):
        raise ValueError(
            "`score_range` must be two finite numbers (low, high) with low < high; "
            f"got {score_range!r}."
        )
    return lo, hi
