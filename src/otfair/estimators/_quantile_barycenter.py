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

from typing import Any

import numpy as np

from otfair.utils import encode_groups

__all__ = [
    "GroupQuantiles",
    "check_fit_groups",
    "check_n_features",
    "check_strength",
    "encode_fitted_groups",
    "fit_or_calibration_split",
]


def check_strength(value: Any, name: str = "strength") -> float:
    """Return ``value`` as a float in [0, 1] or raise a ``ValueError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
        raise TypeError(f"`{name}` must be a number in [0, 1]; got {value!r}.")
    if not (0.0 <= float(value) <= 1.0):
        raise ValueError(f"`{name}` must lie in [0, 1]; got {value!r}.")
    return float(value)


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

    Parameters
    ----------
    values : ndarray of shape (n,)
        Calibration values (jittered beforehand if wanted).
    codes : ndarray of shape (n,)
        Group code in ``range(n_groups)`` of each value.
    n_groups : int
        Number of groups; every group must have at least one value.
    quantile_method : str, default="linear"
        ``method`` of :func:`numpy.quantile`: ``"linear"`` interpolates the order
        statistics (EquiPy's choice), ``"inverted_cdf"`` is the generalized inverse
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
        self.sorted_ = [np.sort(values[codes == g]) for g in range(n_groups)]
        sizes = np.array([len(v) for v in self.sorted_], dtype=np.float64)
        if np.any(sizes == 0):
            raise ValueError("every group needs at least one calibration value.")
        self.weights_ = sizes / sizes.sum()
        self.quantile_method = quantile_method

    def cdf(self, values: np.ndarray, group: int, *, side: str = "right") -> np.ndarray:
        r"""Empirical CDF :math:`F_s(v) = \#\{i: v_i \le v\} / n_s` (``side="left"``: < v)."""
        ref = self.sorted_[group]
        return np.searchsorted(ref, values, side=side) / len(ref)

    def quantile(self, u: np.ndarray, group: int) -> np.ndarray:
        """Empirical quantile :math:`Q_s(u)` of group ``group``."""
        u = np.clip(u, 0.0, 1.0)
        return np.quantile(self.sorted_[group], u, method=self.quantile_method)

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
        r"""Apply :math:`T_s = Q_B \circ F_s` row-wise (randomized PIT when ``rng`` is given)."""
        out = np.empty(len(values), dtype=np.float64)
        for g in range(len(self.sorted_)):
            mask = codes == g
            if not np.any(mask):
                continue
            if rng is None:
                u = self.cdf(values[mask], g)
            else:
                u = self.randomized_cdf(values[mask], g, rng)
            out[mask] = self.barycenter_quantile(u)
        return out


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


def check_n_features(estimator: Any, X: np.ndarray) -> None:
    """Raise if ``X`` has another number of columns than at fit time."""
    if X.shape[1] != estimator.n_features_in_:
        raise ValueError(
            f"`X` has {X.shape[1]} features, but {type(estimator).__name__} was fitted with "
            f"{estimator.n_features_in_}."
        )


def fit_or_calibration_split(
    meta: Any, X: np.ndarray, y: np.ndarray | None, stratify: np.ndarray, seed: int
) -> np.ndarray:
    """Set ``meta.estimator_`` and return the calibration rows of a post-processor.

    ``meta.prefit``: the given estimator is used as is and every row calibrates;
    otherwise a clone is fitted on ``1 - meta.calibration_fraction`` of the rows (split
    stratified by group) and the rest calibrates.
    """
    from sklearn.base import clone
    from sklearn.model_selection import train_test_split
    from sklearn.utils.validation import check_is_fitted

    if meta.prefit:
        check_is_fitted(meta.estimator)
        meta.estimator_ = meta.estimator
        return np.arange(len(X))
    if y is None:
        raise ValueError("`y` is required when prefit=False.")
    if len(y) != len(X):
        raise ValueError(f"`y` has {len(y)} rows but `X` has {len(X)}.")
    frac = meta.calibration_fraction
    if not (isinstance(frac, (int, float)) and 0.0 < frac < 1.0):
        raise ValueError(f"`calibration_fraction` must lie in (0, 1); got {frac!r}.")
    train, calib = train_test_split(
        np.arange(len(X)), test_size=frac, random_state=seed, stratify=stratify
    )
    meta.estimator_ = clone(meta.estimator).fit(X[train], y[train])
    return calib
