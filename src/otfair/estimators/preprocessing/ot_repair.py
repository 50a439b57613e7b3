r"""Optimal-transport repair of the features (Gordaliza et al. 2019; Feldman et al. 2015).

Gordaliza, del Barrio, Gamboa and Loubes, "Obtaining Fairness using Optimal Transport
Theory", ICML 2019, §3-§5 (total, partial and random repair); Feldman, Friedler,
Moeller, Scheidegger and Venkatasubramanian, "Certifying and Removing Disparate Impact",
KDD 2015, §5 (the 1-D geometric repair). See ``docs/baselines.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.neighbors import NearestNeighbors
from sklearn.utils.validation import check_is_fitted, validate_data

from otfair.estimators._docs import fill_estimator_doc
from otfair.estimators._quantile_barycenter import (
    GroupQuantiles,
    check_fit_groups,
    draw_fit_seed,
    encode_fitted_groups,
)
from otfair.utils import Interval, StrOptions, check_strength, fit_context, set_params_from_init

__all__ = ["OTRepair"]


@fill_estimator_doc
class OTRepair(TransformerMixin, BaseEstimator):
    r"""Move every group's feature distribution toward the groups' Wasserstein barycenter.

    **Total repair** replaces :math:`x` of group :math:`s` by :math:`T_s(x)`, the
    optimal-transport map from :math:`\mu_s` (the law of :math:`X \mid S = s`) to the
    barycenter :math:`\mu_B = \arg\min_\nu \sum_s \pi_s W_2^2(\mu_s, \nu)`, with
    :math:`\pi_s` the group shares; afterwards :math:`X` is independent of :math:`S`.

    * ``method="quantile"``: per coordinate (Feldman et al.'s geometric repair is this
      map), :math:`T_s(x) = Q_B(F_s(x))` with :math:`Q_B = \sum_s \pi_s Q_s`, using the
      randomized probability integral transform on ties so that the repaired marginal
      is exactly :math:`\mu_B` (Gordaliza et al.'s random tie breaking; seeded).
    * ``method="joint"``: the joint law, two groups. The exact OT plan :math:`\gamma`
      between the groups' empirical measures (POT's ``ot.emd``, squared Euclidean cost,
      at most ``max_ot_samples`` points per group) gives the barycenter as the push-forward
      of :math:`\gamma` by :math:`(x, x') \mapsto \pi_0 x + \pi_1 x'`: a point of group 0
      goes to :math:`\pi_0 x + \pi_1 x'` with :math:`x'` drawn from its row of
      :math:`\gamma` (and symmetrically for group 1). Other points move by the
      displacement of their nearest fitted neighbour in their group.

    **Partial repair** with ``strength`` :math:`\lambda \in [0, 1]` (§5 of Gordaliza et
    al.): ``mode="geometric"`` returns :math:`(1 - \lambda) x + \lambda T_s(x)` (a point on
    the :math:`W_2` geodesic); ``mode="random"`` returns :math:`T_s(x)` with probability
    :math:`\lambda` and :math:`x` otherwise (the mixture
    :math:`(1 - \lambda)\mu_s + \lambda \mu_B`, the paper's random repair).

    Parameters
    ----------
    strength : float, default=1.0
        Repair amount :math:`\lambda`; 1 is total repair, 0 the identity.
    mode : {"geometric", "random"}, default="geometric"
        Partial-repair scheme.
    method : {"quantile", "joint"}, default="quantile"
        Per-coordinate quantile maps or joint exact OT (two groups).
    columns : sequence of int or None, default=None
        Columns to repair (others pass through); ``None`` repairs all.
    max_ot_samples : int, default=2000
        Per-group subsample size of the exact OT problem (``method="joint"``).
    quantile_method : {"linear", "inverted_cdf"}, default="linear"
        :func:`numpy.quantile` method of the group quantile functions.
    random_state : int, RandomState, Generator or None, default=None
        Seeds the subsample, the partner draws and the randomized repair
        (``transform`` is reproducible); one seed is drawn from it at fit time, numpy's
        global generator is never used.

    Attributes
    ----------
    groups_ : ndarray
        The fitted groups.
    weights_ : ndarray
        Their shares :math:`\pi_s`.

    See Also
    --------
    otfair.estimators.FairPCA : A linear fair representation.
    otfair.estimators.WassersteinBarycenterClassifier
        Repairs a classifier's scores instead of the features.

    Notes
    -----
    The groups are the distinct values of ``sensitive_features``: a continuous attribute
    (numeric, more than 10 distinct values, some on a single row or not whole numbers)
    and a group of one row are refused with a ``ValueError`` (bin the attribute first,
    e.g. with :func:`numpy.digitize`), instead of one quantile map per value.

    Cost of ``method="quantile"`` on :math:`n` rows and :math:`d` repaired columns:
    ``fit`` sorts every group's values per column, :math:`O(d\,n \log n)`;
    ``transform`` of :math:`m` rows is :math:`O(d\,(k\,m + m \log m + m \log n))`
    for :math:`k` groups (the rows sorted, binary searches for :math:`F_s`, indexing of
    the sorted values for the :math:`Q_{s'}`). ``method="joint"`` solves an exact OT
    problem between at most ``max_ot_samples`` points per group (network simplex, roughly
    cubic in that size), then one nearest-neighbour query per transformed row.

    References
    ----------
    .. [1] Gordaliza, P., del Barrio, E., Gamboa, F. and Loubes, J.-M. *Obtaining Fairness
       using Optimal Transport Theory*. ICML 2019.
    .. [2] Feldman, M., Friedler, S. A., Moeller, J., Scheidegger, C. and
       Venkatasubramanian, S. *Certifying and Removing Disparate Impact*. KDD 2015.

    {examples_binary}
    >>> from otfair.estimators import OTRepair
    >>> repair = OTRepair(strength=1.0).fit(X, sensitive_features=s)
    >>> repair.transform(X, sensitive_features=s).shape
    (200, 3)
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "strength": [Interval(Real, 0, 1, closed="both")],
        "mode": [StrOptions({"geometric", "random"})],
        "method": [StrOptions({"quantile", "joint"})],
        "columns": ["array-like", None],
        "max_ot_samples": [Interval(Integral, 1, None, closed="left")],
        "quantile_method": [StrOptions({"linear", "inverted_cdf"})],
        "random_state": ["random_state", np.random.Generator],
    }

    def __init__(
        self,
        strength: float = 1.0,
        *,
        mode: str = "geometric",
        method: str = "quantile",
        columns: Sequence[int] | None = None,
        max_ot_samples: int = 2000,
        quantile_method: str = "linear",
        random_state: Any = None,
    ) -> None:
        set_params_from_init(self, locals())

    @fit_context
    def fit(self, X: Any, y: Any = None, *, sensitive_features: Any) -> OTRepair:
        """Estimate the group distributions and the barycenter maps."""
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        codes, self.groups_ = check_fit_groups(X, sensitive_features)
        _check_discrete(codes, self.groups_)
        self.n_features_in_ = X.shape[1]
        self.columns_ = self._check_columns(X.shape[1])
        k = len(self.groups_)
        self.weights_ = np.bincount(codes, minlength=k) / len(codes)
        self._seed = draw_fit_seed(self.random_state)
        Xc = X[:, self.columns_]
        if self.method == "quantile":
            self.maps_ = [
                GroupQuantiles(Xc[:, j], codes, k, quantile_method=self.quantile_method)
                for j in range(Xc.shape[1])
            ]
        else:
            if k != 2:
                raise ValueError(
                    f"method='joint' supports two groups; found {k}. Use method='quantile'."
                )
            self._fit_joint(Xc, codes, np.random.default_rng([self._seed, 0]))
        return self

    def _check_columns(self, d: int) -> np.ndarray:
        if self.columns is None:
            return np.arange(d)
        cols = np.asarray(self.columns, dtype=np.int64).ravel()
        if cols.size == 0 or cols.min() < -d or cols.max() >= d:
            raise ValueError(f"`columns` must be indices into the {d} features; got {cols}.")
        return np.unique(cols % d)

    def _fit_joint(self, X: np.ndarray, codes: np.ndarray, rng: np.random.Generator) -> None:
        import ot

        cap = int(self.max_ot_samples)
        if cap < 1:
            raise ValueError(f"`max_ot_samples` must be >= 1; got {self.max_ot_samples!r}.")
        pts = []
        for g in (0, 1):
            rows = np.flatnonzero(codes == g)
            if len(rows) > cap:
                rows = np.sort(rng.choice(rows, size=cap, replace=False))
            pts.append(X[rows])
        a = np.full(len(pts[0]), 1.0 / len(pts[0]))
        b = np.full(len(pts[1]), 1.0 / len(pts[1]))
        plan = ot.emd(a, b, ot.dist(pts[0], pts[1]))
        p0, p1 = self.weights_
        partner1 = _draw_partners(plan, rng)  # for every group-0 point, a group-1 point
        partner0 = _draw_partners(plan.T, rng)
        moved0 = p0 * pts[0] + p1 * pts[1][partner1]
        moved1 = p0 * pts[0][partner0] + p1 * pts[1]
        self.support_ = pts
        self.displacement_ = [moved0 - pts[0], moved1 - pts[1]]
        self.neighbors_ = [NearestNeighbors(n_neighbors=1).fit(p) for p in pts]

    def transform(self, X: Any, *, sensitive_features: Any) -> np.ndarray:
        """Return the (partially) repaired features, shape (n, d)."""
        check_is_fitted(self, "groups_")
        strength = check_strength(self.strength, maximum=1.0)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        codes = encode_fitted_groups(sensitive_features, self.groups_, len(X))
        rng = np.random.default_rng([self._seed, 1])
        Xc = X[:, self.columns_]
        repaired = self._total_repair(Xc, codes, rng)
        if self.mode == "geometric":
            new = (1.0 - strength) * Xc + strength * repaired
        else:
            take = rng.uniform(size=len(X)) < strength
            new = np.where(take[:, None], repaired, Xc)
        out = X.copy()
        out[:, self.columns_] = new
        return out

    def fit_transform(self, X: Any, y: Any = None, **fit_params: Any) -> np.ndarray:
        """Fit, then transform ``X`` (``sensitive_features=`` is required)."""
        return self.fit(X, y, **fit_params).transform(
            X, sensitive_features=fit_params["sensitive_features"]
        )

    def _total_repair(
        self, X: np.ndarray, codes: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        out = np.empty_like(X)
        if self.method == "quantile":
            for j, maps in enumerate(self.maps_):
                out[:, j] = maps.to_barycenter(X[:, j], codes, rng=rng)
            return out
        for g in (0, 1):
            rows = codes == g
            if np.any(rows):
                idx = self.neighbors_[g].kneighbors(X[rows], return_distance=False)[:, 0]
                out[rows] = X[rows] + self.displacement_[g][idx]
        return out


def _check_discrete(codes: np.ndarray, groups: np.ndarray) -> None:
    """Refuse a continuous attribute, or a group of one row (too small to map).

    OTRepair moves each *discrete* group to the barycenter; a continuous attribute
    (:func:`otfair.utils._discrete_groups.refuse_continuous_groups`) would make one group
    per value, each mapped by the quantile function of a point or two, which collapses
    the features.
    """
    from otfair.utils._discrete_groups import refuse_continuous_groups
    from otfair.utils._validation import describe_groups, small_groups

    refuse_continuous_groups(codes, groups, why="OTRepair repairs between discrete groups")
    found = small_groups(codes, groups, 2)
    if not found:
        return
    raise ValueError(
        f"`sensitive_features` group(s) {describe_groups(found)} have fewer than 2 rows: "
        "a group's quantile map needs at least 2; merge them into another group, drop "
        "their rows, or collect more data."
    )


def _draw_partners(plan: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """For every row of a transport plan, a column drawn with the row's conditional law."""
    rows = plan / plan.sum(axis=1, keepdims=True)
    cum = np.cumsum(rows, axis=1)
    u = rng.uniform(size=(len(plan), 1)) * cum[:, -1:]
    return np.minimum((cum < u).sum(axis=1), plan.shape[1] - 1)
