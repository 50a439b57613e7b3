r"""One-dimensional Wasserstein barycenters of group distributions, by quantile maps.

Shared by the OT post-processing and repair methods (Chzhen et al. 2020; Gordaliza et
al. 2019; Feldman et al. 2015). On the real line the :math:`W_2` barycenter of group
distributions :math:`\mu_s` with weights :math:`p_s` has quantile function
:math:`Q_B = \sum_s p_s Q_s`, and the optimal map from group :math:`s` to it is

.. math::

    T_s(v) = Q_B\big(F_s(v)\big) = \sum_{s'} p_{s'}\, Q_{s'}\big(F_s(v)\big).

:class:`GroupQuantiles` stores each group's sorted calibration values and evaluates
:math:`F_s`, :math:`Q_s` and :math:`T_s`. Ties are broken either by a uniform jitter of
the values (Chzhen et al.) or by the randomized probability integral transform
:math:`u = F_s(v^-) + U\,(F_s(v) - F_s(v^-))`, :math:`U \sim \mathcal U(0, 1)`, which is
exactly uniform when :math:`v \sim \mu_s` (Gordaliza et al.'s random tie breaking).
Also: group encoding with unseen-group detection at predict time.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from otfair.utils import draw_seed, encode_groups

__all__ = [
    "GroupQuantiles",
    "check_fit_groups",
    "draw_fit_seed",
    "encode_fitted_groups",
    "fit_or_calibration_split",
    "sorted_quantile",
]


def encode_fitted_groups(
    sensitive_features: Any, groups: np.ndarray, n_samples: int
) -> np.ndarray:
    """Map ``sensitive_features`` onto the codes of the fitted ``groups``.

    Raises a ``ValueError`` for a length mismatch, missing values, or a group not seen
    at fit time (naming it).
    """
    if sensitive_features is None:
        raise ValueError("`sensitive_features` is required (pass it as a keyword).")
    codes, present = encode_groups(sensitive_features, "sensitive_features", min_groups=1)
    if len(codes) != n_samples:
        raise ValueError(
            f"`sensitive_features` has {len(codes)} rows but `X` has {n_samples} samples."
        )
    lookup = {_key(g): i for i, g in enumerate(groups)}
    unseen = [g for g in present if _key(g) not in lookup]
    if unseen:
        raise ValueError(
            f"`sensitive_features` contains group(s) {list(unseen)[:5]} not seen during fit "
            f"(fitted groups: {list(groups)[:10]})."
        )
    mapping = np.array([lookup[_key(g)] for g in present], dtype=np.int64)
    return mapping[codes]


def _key(value: Any) -> Any:
    """Hashable key under which 1, 1.0 and np.int64(1) coincide."""
    if isinstance(value, (np.generic,)):
        value = value.item()
    return value


class GroupQuantiles:
    r"""Per-group empirical CDFs and quantiles of 1-D calibration values.

    The values of every group are sorted once; :math:`F_s` is then a binary search
    (:func:`numpy.searchsorted`) and :math:`Q_s` an interpolation between two order
    statistics located by their index, with :func:`numpy.quantile`'s own formulas (the
    same numbers, without its per-call copy and partition of the whole group). Cost:
    :math:`O(n \log n)` to build on :math:`n` values, :math:`O(m \log n)` for
    :meth:`cdf` on :math:`m` queries, :math:`O(m)` for :meth:`quantile` and
    :math:`O(k\,m + m \log m + m \log n)` for :meth:`to_barycenter` with :math:`k`
    groups (it sorts the queries); memory :math:`O(n + m)`.

    Parameters
    ----------
    values : ndarray of shape (n,)
        Calibration values (jittered beforehand if wanted).
    codes : ndarray of shape (n,)
        Group code in ``range(n_groups)`` of each value.
    n_groups : int
        Number of groups; every group must have at least one value.
    quantile_method : {"linear", "inverted_cdf"}, default="linear"
        The :func:`numpy.quantile` method reproduced by :math:`Q_s`: ``"linear"``
        interpolates the order statistics (Hyndman and Fan's type 7, EquiPy's choice),
        ``"inverted_cdf"`` is the generalized inverse
        :math:`Q(t) = \inf\{v: F(v) \ge t\}` of Chzhen et al.
    """

    def __init__(
        self,
        values: np.ndarray,
        codes: np.ndarray,
        n_groups: int,
        *,
        quantile_method: str = "linear",
    ) -> None:
        if quantile_method not in ("linear", "inverted_cdf"):
            raise ValueError(
                f"`quantile_method` must be 'linear' or 'inverted_cdf'; got {quantile_method!r}."
            )
        self.sorted_ = [np.sort(values[codes == g]) for g in range(n_groups)]
        sizes = np.array([len(v) for v in self.sorted_], dtype=np.float64)
        if np.any(sizes == 0):
            raise ValueError("every group needs at least one calibration value.")
        self.weights_ = sizes / sizes.sum()
        self.quantile_method = quantile_method

    def cdf(
        self, values: np.ndarray, group: int, *, side: Literal["left", "right"] = "right"
    ) -> np.ndarray:
        r"""Empirical CDF :math:`F_s(v) = \#\{i: v_i \le v\} / n_s` (``side="left"``: < v).

        A binary search per query: :math:`O(m \log n_s)`.
        """
        ref = self.sorted_[group]
        return np.searchsorted(ref, values, side=side) / len(ref)

    def quantile(self, u: np.ndarray, group: int) -> np.ndarray:
        """Empirical quantile :math:`Q_s(u)` of group ``group`` (``u`` clipped to [0, 1]).

        Equal to ``numpy.quantile(sorted_[group], u, method=quantile_method)``, computed
        from the sorted values in :math:`O(m)` for :math:`m` levels.
        """
        u = np.clip(np.asarray(u, dtype=np.float64), 0.0, 1.0)
        return sorted_quantile(self.sorted_[group], u, self.quantile_method)

    def barycenter_quantile(self, u: np.ndarray) -> np.ndarray:
        r""":math:`Q_B(u) = \sum_s p_s Q_s(u)` with the calibration group shares."""
        return sum(w * self.quantile(u, g) for g, w in enumerate(self.weights_))

    def randomized_cdf(
        self, values: np.ndarray, group: int, rng: np.random.Generator
    ) -> np.ndarray:
        r"""Randomized PIT :math:`F_s(v^-) + U (F_s(v) - F_s(v^-))`, uniform on ties."""
        lo = self.cdf(values, group, side="left")
        hi = self.cdf(values, group, side="right")
        return lo + rng.uniform(size=len(values)) * (hi - lo)

    def to_barycenter(
        self,
        values: np.ndarray,
        codes: np.ndarray,
        *,
        rng: np.random.Generator | None = None,
    ) -> np.ndarray:
        r"""Apply :math:`T_s = Q_B \circ F_s` row-wise (randomized PIT when ``rng`` is given).

        Every group's queries are sorted first (:math:`O(m \log m)`): the binary searches
        of :math:`F_s` and the reads of the sorted calibration values then move forward
        through memory, several times faster than in row order on large sets. The numbers
        are those of :meth:`cdf`, :meth:`randomized_cdf` (uniforms drawn in row order)
        and :meth:`barycenter_quantile` applied in row order.
        """
        out = np.empty(len(values), dtype=np.float64)
        for g, ref in enumerate(self.sorted_):
            rows = np.flatnonzero(codes == g)
            if len(rows) == 0:
                continue
            v = values[rows]
            order = np.argsort(v)
            ranked = v[order]
            u = np.searchsorted(ref, ranked, side="right") / len(ref)
            if rng is not None:  # the uniforms in row order, the same per-row arithmetic
                lo = np.searchsorted(ref, ranked, side="left") / len(ref)
                u = lo + rng.uniform(size=len(v))[order] * (u - lo)
            out[rows[order]] = self.barycenter_quantile(u)  # u (nearly) sorted: in order
        return out


def sorted_quantile(ref: np.ndarray, u: np.ndarray, method: str = "linear") -> np.ndarray:
    r"""``numpy.quantile(ref, u, method=method)`` for an already sorted ``ref``, in O(m).

    The order statistics around the virtual index are read directly instead of being
    found by :func:`numpy.partition` on a copy of ``ref`` (:math:`O(n)` or worse per
    call). The arithmetic is numpy's (NumPy 2.x, ``_quantile``): for ``"linear"`` the
    virtual index :math:`h = (n - 1) u`, :math:`g = h - \lfloor h \rfloor` and its
    ``_lerp``, :math:`a + (b - a) g` for :math:`g < 1/2` and :math:`b - (b - a)(1 - g)`
    otherwise; for ``"inverted_cdf"`` the order statistic of index
    :math:`\lceil n u \rceil - 1` (at least 0). So the values are bit for bit numpy's.

    Parameters
    ----------
    ref : ndarray of shape (n,)
        Sorted (ascending), finite values, ``n >= 1``.
    u : ndarray of shape (m,)
        Levels in [0, 1].
    method : {"linear", "inverted_cdf"}
    """
    shape = np.shape(u)
    u = np.atleast_1d(np.asarray(u, dtype=np.float64)).ravel()
    n = len(ref)
    if method == "inverted_cdf":
        index = n * u - 1
        below = np.floor(index)
        idx = np.where(index - below == 0, below, below + 1).astype(np.intp)
        return ref.take(np.maximum(idx, 0)).reshape(shape)
    if method != "linear":
        raise ValueError(f"`quantile_method` must be 'linear' or 'inverted_cdf'; got {method!r}.")
    virtual = (n - 1) * u
    prev = np.floor(virtual)
    lo = prev.astype(np.intp)  # <= n - 1 since u <= 1
    hi = np.minimum(lo + 1, n - 1)
    # Past the last index numpy reads the last value on both sides, with its index -1
    # in the weight: the same value (b - a = 0) and the same weight as numpy's.
    gamma = virtual - np.where(virtual >= n - 1, -1.0, prev)
    a, b = ref.take(lo), ref.take(hi)
    diff = b - a
    out = np.where(gamma >= 0.5, b - diff * (1.0 - gamma), a + diff * gamma)
    return out.reshape(shape)


def check_fit_groups(X: np.ndarray, sensitive_features: Any) -> tuple[np.ndarray, np.ndarray]:
    """Encode the fit-time groups (at least two) and check they match the rows of ``X``."""
    if sensitive_features is None:
        raise ValueError("`sensitive_features` is required (pass it as a keyword).")
    codes, groups = encode_groups(sensitive_features)
    if len(codes) != len(X):
        raise ValueError(
            f"`sensitive_features` has {len(codes)} rows but `X` has {len(X)} samples."
        )
    return codes, groups


def grouped_score(
    est: Any, X: Any, y: Any, sample_weight: Any, sensitive_features: Any, metric: Any
) -> float:
    """Return ``metric(y, est.predict(X, sensitive_features=...))``: a post-processor's score.

    scikit-learn's ``score`` with the groups the predictions need (accuracy for the
    classifier, :math:`R^2` for the regressor).
    """
    pred = est.predict(X, sensitive_features=sensitive_features)
    return float(metric(y, pred, sample_weight=sample_weight))


def draw_fit_seed(random_state: Any) -> int:
    """Draw the one seed of a fit from ``random_state`` without touching global generators.

    ``None`` draws fresh OS entropy, an int or a ``RandomState`` gives what
    :func:`otfair.utils.draw_seed` gives, and a ``numpy.random.Generator`` (the caller's
    own) gives ``random_state.integers(2**31 - 1)``.
    """
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(2**31 - 1))
    return draw_seed(random_state)


def check_split_groups(
    codes: np.ndarray,
    groups: Any,
    n_calib: int,
    name: str = "sensitive_features",
) -> None:
    """Refuse groups a split stratified by group cannot place on both sides.

    scikit-learn's stratified split words this as "the least populated class in y";
    here the strata are the sensitive groups, so the message names them (and their
    sizes) and the fix. Every group needs two rows, and each side of the split as many
    rows as there are groups.
    """
    from otfair.utils._validation import describe_groups, small_groups

    labels = np.arange(int(codes.max()) + 1) if groups is None else np.asarray(groups)
    found = small_groups(codes, labels, 2)
    if found:
        raise ValueError(
            f"`{name}` group(s) {describe_groups(found)} have fewer than 2 rows: the "
            "calibration split is stratified by group and needs every group on both "
            "sides; merge them into another group, drop their rows, or collect more data."
        )
    k, n_fit = len(labels), len(codes) - n_calib
    if min(n_calib, n_fit) < k:
        raise ValueError(
            f"`{name}` has {k} groups but the calibration split of {len(codes)} rows keeps "
            f"{n_calib} for calibration and {n_fit} for fitting: each side needs at least "
            "one row per group; pass more rows, fewer groups or another "
            "`calibration_fraction`."
        )


def fit_or_calibration_split(
    meta: Any,
    X: np.ndarray,
    y: np.ndarray | None,
    stratify: np.ndarray,
    seed: int,
    groups: Any = None,
    sensitive: Any = None,
) -> np.ndarray:
    """Set ``meta.estimator_`` and return the calibration rows of a post-processor.

    ``meta.prefit``: the given estimator is used as is and every row calibrates;
    otherwise a clone is fitted on ``1 - meta.calibration_fraction`` of the rows (split
    stratified by group: ``stratify`` holds the group codes, ``groups`` their labels for
    the messages, :func:`check_split_groups`) and the rest calibrates. A base estimator
    whose ``fit`` takes ``sensitive_features`` (otfair's fair models) gets those rows of
    ``sensitive`` (the post-processor's ``sensitive_features``, an array of ``len(X)``
    rows).
    """
    import math

    from sklearn.base import clone
    from sklearn.model_selection import train_test_split
    from sklearn.utils.validation import check_is_fitted, has_fit_parameter

    if meta.prefit:
        check_is_fitted(meta.estimator)
        meta.estimator_ = meta.estimator
        return np.arange(len(X))
    if y is None:
        raise ValueError(
            f"{type(meta).__name__} requires y to be passed, but the target y is None "
            "(`y` is required when prefit=False)."
        )
    if len(y) != len(X):
        raise ValueError(f"`y` has {len(y)} rows but `X` has {len(X)}.")
    frac = meta.calibration_fraction
    if not (isinstance(frac, (int, float)) and 0.0 < frac < 1.0):
        raise ValueError(f"`calibration_fraction` must lie in (0, 1); got {frac!r}.")
    check_split_groups(np.asarray(stratify), groups, math.ceil(frac * len(X)))
    train, calib = train_test_split(
        np.arange(len(X)), test_size=frac, random_state=seed, stratify=stratify
    )
    base = clone(meta.estimator)
    if sensitive is not None and has_fit_parameter(base, "sensitive_features"):
        base.fit(X[train], y[train], sensitive_features=np.asarray(sensitive)[train])
    else:
        base.fit(X[train], y[train])
    meta.estimator_ = base
    return calib
