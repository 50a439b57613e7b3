r"""Matching-based audit measures of the FTM paper (§3.1, §5.3.2).

- :func:`matched_demographic_parity`: MDP of a model for a given (deterministic or
  stochastic) matching between the two groups.
- :func:`fair_matching_function`: the matching that minimizes MDP between two equal-size
  samples, i.e. quantile (rank) matching of the scores (FTM Proposition 3.5).
- :func:`fair_matching_cost`: the input-space transport cost
  :math:`E\|X - T_f(X)\|^2` of the fair matching function, estimated on random
  equal-size mini-batches (FTM §3.1 "mini-batch technique", §5.3.2: 100 batches of 1024).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from otfair.metrics._checks import check_lengths, check_matrix, encode_two_groups
from otfair.utils import check_finite_1d, positive_int, validate_params


def matched_demographic_parity(
    scores_0: Any, scores_1: Any, *, matching: Any | None = None
) -> float:
    r"""Compute matched demographic parity (MDP) for a given matching (FTM Def. 3.2).

    .. math::

        \mathrm{MDP}(f, T) = E_{X \sim P_0}\,\bigl|f(X, 0) - f(T(X), 1)\bigr|.

    Three ways to give the matching :math:`T`:

    - ``matching=None``: ``scores_1`` is already aligned, ``scores_1[i]`` being the
      score of the partner of individual ``i`` (equal lengths);
    - an integer index of shape ``(n0,)``: the partner of ``i`` is ``matching[i]``, i.e.
      :math:`\frac1{n_0}\sum_i |f_i - g_{T(i)}|`;
    - a coupling matrix :math:`Q` of shape ``(n0, n1)`` with non-negative entries summing
      to 1 (a stochastic transport map):
      :math:`\sum_{ij} Q_{ij} |f_i - g_j|`.

    Parameters
    ----------
    scores_0 : array-like of shape (n0,)
        Scores of the source group.
    scores_1 : array-like of shape (n1,)
        Scores of the target group.
    matching : None, array-like of int of shape (n0,), or array-like of shape (n0, n1)
        The matching (see above).

    Returns
    -------
    float
        Non-negative; at most 1 for scores in [0, 1].

    Examples
    --------
    >>> round(matched_demographic_parity([0.1, 0.9, 0.5], [0.2, 0.7, 0.4]), 6)  # aligned
    0.133333
    >>> round(matched_demographic_parity([0.1, 0.9, 0.5], [0.7, 0.2, 0.4], matching=[1, 0, 2]),
    ...       6)
    0.133333
    """
    f = check_finite_1d(scores_0, "scores_0")
    g = check_finite_1d(scores_1, "scores_1")
    if matching is None:
        check_lengths(scores_0=f, scores_1=g)
        return float(np.mean(np.abs(f - g)))
    m = np.asarray(matching)
    if m.ndim == 1:
        if m.shape[0] != f.size:
            raise ValueError(
                f"`matching` must have one partner per entry of `scores_0` ({f.size}); "
                f"got {m.shape[0]}."
            )
        if m.dtype.kind not in "iu":
            raise TypeError(f"`matching` as an index must be integer; got dtype {m.dtype}.")
        if m.min() < 0 or m.max() >= g.size:
            raise ValueError(f"`matching` indices must lie in [0, {g.size}) (len(scores_1)).")
        return float(np.mean(np.abs(f - g[m])))
    if m.ndim == 2:
        if m.shape != (f.size, g.size):
            raise ValueError(
                f"`matching` as a coupling must have shape (len(scores_0), len(scores_1)) = "
                f"{(f.size, g.size)}; got {m.shape}."
            )
        q = m.astype(np.float64)
        if not np.all(np.isfinite(q)) or q.min() < 0 or not np.isclose(q.sum(), 1.0):
            raise ValueError("`matching` as a coupling must be non-negative and sum to 1.")
        return float(np.sum(q * np.abs(f[:, None] - g[None, :])))
    raise ValueError(f"`matching` must be 1-D (index) or 2-D (coupling); got {m.shape}.")


def fair_matching_function(scores_0: Any, scores_1: Any) -> np.ndarray:
    r"""Fair matching function of a model on two equal-size samples (FTM Prop. 3.5).

    Matches individuals of equal score rank (quantile matching),
    :math:`T_f(x) = f_1^{-1} \circ F_1^{-1} \circ F_0 \circ f_0(x)`, which minimizes
    :math:`\mathrm{MDP}(f, T) = \frac1m \sum_i |f_0(x_i) - f_1(T(x_i))|` over all
    one-to-one matchings (1-D optimal transport is monotone). Ties are broken by the
    original order (stable sort), so the result is deterministic.

    Parameters
    ----------
    scores_0 : array-like of shape (m,)
        Scores :math:`f(x, 0)` of the group-0 sample.
    scores_1 : array-like of shape (m,)
        Scores :math:`f(x, 1)` of the group-1 sample (same size).

    Returns
    -------
    numpy.ndarray of int of shape (m,)
        ``partner[i]`` is the index in ``scores_1`` matched to ``scores_0[i]``.

    Examples
    --------
    >>> fair_matching_function([0.1, 0.9, 0.5], [0.7, 0.2, 0.4])  # rank to rank
    array([1, 0, 2])
    """
    f = check_finite_1d(scores_0, "scores_0")
    g = check_finite_1d(scores_1, "scores_1")
    if f.size != g.size:
        raise ValueError(
            "`scores_0` and `scores_1` must have equal sizes for rank matching "
            f"(got {f.size} and {g.size}); draw equal-size batches "
            "(see fair_matching_cost)."
        )
    partner = np.empty(f.size, dtype=np.int64)
    partner[np.argsort(f, kind="stable")] = np.argsort(g, kind="stable")
    return partner


@dataclass(frozen=True)
class FairMatchingCost:
    r"""Result of :func:`fair_matching_cost`.

    Attributes
    ----------
    cost : float
        Mean over batches of the transport cost :math:`E\|X - T_f(X)\|^2`.
    cost_std : float
        Standard deviation of the per-batch costs.
    mdp : float
        Mean over batches of the MDP of the fair matching (its minimal MDP).
    batch_costs : numpy.ndarray of shape (n_batches,)
        Per-batch transport costs.
    batch_size : int
        Size ``m`` of each group's batch (capped by the smaller group).
    """

    cost: float
    cost_std: float
    mdp: float
    batch_costs: np.ndarray
    batch_size: int


@validate_params({"batch_size": [positive_int()], "n_batches": [positive_int()]})
def fair_matching_cost(
    X: Any,
    y_score: Any,
    *,
    sensitive_features: Any,
    batch_size: int = 1024,
    n_batches: int = 100,
    random_state: int | np.random.Generator | None = 0,
) -> FairMatchingCost:
    r"""Transport cost of the fair matching function, averaged over random batches.

    For each of ``n_batches`` draws, sample :math:`m` = ``min(batch_size, n_0, n_1)``
    individuals of each group without replacement, match them by score rank
    (:func:`fair_matching_function`) and compute

    .. math::

        C_b = \frac1m \sum_{i=1}^m \bigl\| x^{(0)}_i - x^{(1)}_{T_f(i)} \bigr\|_2^2 ;

    the estimate is :math:`\frac1B \sum_b C_b` (FTM §3.1, Remark 3.6; §5.3.2 uses
    100 batches of 1024). With equal sizes rank matching is the same coupling in both
    directions, so the choice of source group in FTM Definition 3.4 does not matter.
    Lower cost means the model treats similar individuals alike.

    Parameters
    ----------
    X : array-like of shape (n, d)
        Inputs in the space where the cost is measured (usually the model's scaled
        features).
    y_score : array-like of shape (n,)
        Model scores :math:`f(x, s)` (any reals).
    sensitive_features : array-like of shape (n,)
        Binary sensitive attribute (exactly two groups; the lower sorted value is group 0).
    batch_size : int, default=1024
        Batch size per group.
    n_batches : int, default=100
        Number of random batches.
    random_state : int, numpy Generator or None, default=0
        Seed for the batches.

    Returns
    -------
    FairMatchingCost

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2)); s = np.repeat([0, 1], 100)
    >>> res = fair_matching_cost(X, X[:, 0], sensitive_features=s, batch_size=50, n_batches=5)
    >>> res.batch_costs.shape, bool(res.cost == res.batch_costs.mean())
    ((5,), True)
    """
    x = check_matrix(X, "X")
    check_lengths(X=x, y_score=y_score, sensitive_features=sensitive_features)
    score = check_finite_1d(y_score, "y_score")
    codes, groups = encode_two_groups(sensitive_features)
    for name, value in (("batch_size", batch_size), ("n_batches", n_batches)):
        if not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"`{name}` must be a positive integer; got {value!r}.")
    idx0, idx1 = np.flatnonzero(codes == 0), np.flatnonzero(codes == 1)
    m = int(min(batch_size, idx0.size, idx1.size))
    rng = np.random.default_rng(random_state)
    costs = np.empty(n_batches)
    mdps = np.empty(n_batches)
    for b in range(n_batches):
        i0 = rng.choice(idx0, size=m, replace=False)
        i1 = rng.choice(idx1, size=m, replace=False)
        partner = i1[fair_matching_function(score[i0], score[i1])]
        costs[b] = np.mean(np.sum((x[i0] - x[partner]) ** 2, axis=1))
        mdps[b] = np.mean(np.abs(score[i0] - score[partner]))
    return FairMatchingCost(
        cost=float(costs.mean()),
        cost_std=float(costs.std()),
        mdp=float(mdps.mean()),
        batch_costs=costs,
        batch_size=m,
    )
