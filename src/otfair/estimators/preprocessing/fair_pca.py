r"""Fair PCA: a linear projection that equalizes the group means (Kleindessner et al. 2023).

Kleindessner, Donini, Russell and Zafar, "Efficient Fair PCA for Fair Representation
Learning", AISTATS 2023, §2-3 (Algorithm 1; the covariance variant, Algorithm 2).
See ``docs/baselines.md``.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any, ClassVar, cast

import numpy as np
from scipy.linalg import eigh, null_space
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from otfair.estimators._docs import fill_estimator_doc
from otfair.estimators._quantile_barycenter import (
    check_fit_groups,
    encode_fitted_groups,
)
from otfair.notions import Notion, as_notion
from otfair.utils import (
    Interval,
    StrOptions,
    check_binary_labels,
    check_strength,
    fit_context,
    set_params_from_init,
)
from otfair.utils._discrete_groups import refuse_continuous_groups

__all__ = ["FairPCA"]


@fill_estimator_doc
class FairPCA(TransformerMixin, BaseEstimator):
    r"""Project onto the top principal directions orthogonal to the group-mean differences.

    With standardized features :math:`X` (zero mean), group means :math:`\mu_s` and
    :math:`R` an orthonormal basis of the complement of
    :math:`\mathrm{span}\{\mu_s - \mu\}_s` (the null space of :math:`Z_c^\top X`,
    :math:`Z_c` the centered one-hot group matrix), fair PCA keeps

    .. math::

        U = R V_k, \qquad V_k = \text{top-}k \text{ eigenvectors of } R^\top \Sigma R,

    so :math:`U^\top \mu_s` is the same for every group: no linear classifier on
    :math:`U^\top x` can tell the groups apart by their means (Kleindessner et al.,
    Algorithm 1). With ``equalize_covariance=True`` (Algorithm 2) the search is first
    restricted to the :math:`l` eigenvectors :math:`W` of
    :math:`R^\top(\Sigma_0 - \Sigma_1)R` whose eigenvalues are smallest in magnitude, then
    :math:`U = R W V_k` with :math:`V_k` the top eigenvectors of :math:`W^\top R^\top \Sigma
    R W` (two groups). The paper's trade-off appends the standard PCA components scaled
    by :math:`(1 - \lambda)^3`, where ``strength`` :math:`\lambda \in [0, 1]` (the paper's
    trade-off parameter is :math:`1 - \lambda`); at :math:`\lambda = 1` nothing is appended.

    Parameters
    ----------
    n_components : int or None, default=None
        Target dimension :math:`k` (at most ``d - (n_groups - 1)``). ``None``: every
        dimension left after the group-mean directions are removed (the columns of
        :math:`R`; with ``equalize_covariance``, the :math:`l` kept), as scikit-learn's
        ``PCA`` keeps all components by default. (The ``fair-pca`` method of
        ``otfair fit`` / ``otfair sweep`` uses :math:`k = 10`, the paper's setting.)
    equalize_covariance : bool, default=False
        Also (approximately) equalize the group covariances (two groups).
    n_cov_eigenvectors : int, default=10
        :math:`l` of Algorithm 2 (clipped to ``[k, d - 1]``); smaller enforces more.
        With ``n_components=None``, :math:`k = l`.
    strength : float, default=1.0
        :math:`\lambda`; below 1, ``k`` standard PCA components times
        :math:`(1 - \lambda)^3` are appended.
    standardize : bool, default=True
        Standardize the features with the training mean and standard deviation first.
    notion : {"dp", "eopp"}, default="dp"
        ``"dp"`` fits on all rows (equal selection rates of a linear model downstream);
        ``"eopp"`` fits on the rows with :math:`Y = 1` only (equal true positive rates),
        as the paper does; then ``y`` is required.

    Attributes
    ----------
    components_ : ndarray of shape (d, k)
        :math:`U` (in standardized coordinates).
    pca_components_ : ndarray of shape (d, k)
        Standard PCA directions (for the trade-off).
    mean_, scale_ : ndarray of shape (d,)
    groups_ : ndarray

    See Also
    --------
    otfair.estimators.OTRepair : Repairs the features themselves by optimal transport.
    otfair.estimators.LAFTRClassifier : A learned (non-linear) fair representation.

    Notes
    -----
    Cost on :math:`n` rows and :math:`d` features: ``fit`` forms the covariance,
    :math:`O(n\,d^2)`, and solves symmetric eigenproblems and a null space,
    :math:`O(d^3)`; ``transform`` of :math:`m` rows is a product, :math:`O(m\,d\,k)`.
    No randomness (the eigenvectors' signs are fixed).

    References
    ----------
    .. [1] Kleindessner, M., Donini, M., Russell, C. and Zafar, M. B. *Efficient fair PCA
       for fair representation learning*. AISTATS 2023.

    {examples_binary}
    >>> from otfair.estimators import FairPCA
    >>> pca = FairPCA(n_components=2).fit(X, sensitive_features=s)
    >>> Z = pca.transform(X)
    >>> Z.shape, bool(abs(Z[s == 0].mean(0) - Z[s == 1].mean(0)).max() < 1e-6)
    ((200, 2), True)
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "equalize_covariance": ["boolean"],
        "n_cov_eigenvectors": [Interval(Integral, 1, None, closed="left")],
        "strength": [Interval(Real, 0, 1, closed="both")],
        "standardize": ["boolean"],
        "notion": [StrOptions({"dp", "eopp"}), Notion],
    }

    def __init__(
        self,
        n_components: int | None = None,
        *,
        equalize_covariance: bool = False,
        n_cov_eigenvectors: int = 10,
        strength: float = 1.0,
        standardize: bool = True,
        notion: str = "dp",
    ) -> None:
        set_params_from_init(self, locals())

    @fit_context
    def fit(self, X: Any, y: Any = None, *, sensitive_features: Any) -> FairPCA:
        """Compute the fair projection from ``X`` and the groups."""
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        codes, self.groups_ = check_fit_groups(X, sensitive_features)
        refuse_continuous_groups(
            codes, self.groups_, why="FairPCA removes one mean direction per discrete group"
        )
        notion = as_notion(self.notion, allowed=("dp", "eopp"))
        if notion.requires_labels:  # eopp: the rows of its label cell, Y = 1
            if y is None:
                raise ValueError(f"`y` is required when notion={notion.name!r}.")
            labels = check_binary_labels(y, "y")
            if len(labels) != len(X):
                raise ValueError(f"`y` has {len(labels)} rows but `X` has {len(X)}.")
            rows = np.isin(labels, cast(tuple[int, ...], notion.label_cells))  # int cells
            X, codes = X[rows], codes[rows]
            if len(np.unique(codes)) < len(self.groups_):
                raise ValueError(f"notion={notion.name!r} needs rows with y = 1 in every group.")
        n, d = X.shape
        k_groups = len(self.groups_)
        k = self.n_components
        integral = isinstance(k, (int, np.integer)) and not isinstance(k, bool)
        if k is not None and (not integral or k < 1):
            raise ValueError(f"`n_components` must be a positive integer or None; got {k!r}.")
        if k is not None and k > d - (k_groups - 1):
            raise ValueError(
                f"`n_components`={k} exceeds the {d - (k_groups - 1)} dimensions left after "
                f"removing the {k_groups - 1} group-mean direction(s); pass at most "
                f"{d - (k_groups - 1)}, or None (all of them)."
            )
        self.n_features_in_ = d
        self.mean_ = X.mean(axis=0)
        scale = X.std(axis=0) if self.standardize else np.ones(d)
        self.scale_ = np.where(scale > 0, scale, 1.0)
        Xs = (X - self.mean_) / self.scale_
        onehot = np.eye(k_groups)[codes]
        zc = onehot - onehot.mean(axis=0)
        R = null_space(zc.T @ Xs)  # (d, d - rank)
        if k is None:  # every dimension left
            k = R.shape[1]
            if k == 0:
                raise ValueError(
                    f"No dimension of the {d} features is left after removing the "
                    f"{k_groups - 1} group-mean direction(s): FairPCA needs more features."
                )
        cov = Xs.T @ Xs / n
        if self.equalize_covariance:
            if k_groups != 2:
                raise ValueError("equalize_covariance=True supports two groups.")
            diff = np.cov(Xs[codes == 0].T) - np.cov(Xs[codes == 1].T)
            vals, vecs = eigh(R.T @ diff @ R)
            low = k if self.n_components is not None else 1
            l_ = int(np.clip(self.n_cov_eigenvectors, low, R.shape[1]))
            k = l_ if self.n_components is None else k
            W = vecs[:, np.argsort(np.abs(vals), kind="stable")[:l_]]
            R = R @ W
        self.components_ = _sign_fix(R @ _top_eigenvectors(R.T @ cov @ R, k))
        self.pca_components_ = _sign_fix(_top_eigenvectors(cov, k))
        return self

    def transform(self, X: Any, *, sensitive_features: Any = None) -> np.ndarray:
        """Project ``X``: shape (n, k), or (n, 2k) with the trade-off block when strength < 1.

        ``sensitive_features`` is not needed (the projection is group-blind); when given,
        it is validated against the fitted groups.
        """
        check_is_fitted(self, "components_")
        strength = check_strength(self.strength, maximum=1.0)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if sensitive_features is not None:
            encode_fitted_groups(sensitive_features, self.groups_, len(X))
        Xs = (X - self.mean_) / self.scale_
        fair = Xs @ self.components_
        if strength >= 1.0:
            return fair
        return np.hstack([fair, (1.0 - strength) ** 3 * (Xs @ self.pca_components_)])

    def fit_transform(self, X: Any, y: Any = None, **fit_params: Any) -> np.ndarray:
        """Fit, then project ``X``."""
        return self.fit(X, y, **fit_params).transform(X)


def _top_eigenvectors(matrix: np.ndarray, k: int | np.integer) -> np.ndarray:
    vals, vecs = eigh(matrix)
    return vecs[:, np.argsort(vals)[::-1][:k]]


def _sign_fix(U: np.ndarray) -> np.ndarray:
    """Make every column's largest-magnitude entry positive (deterministic output)."""
    idx = np.argmax(np.abs(U), axis=0)
    return U * np.sign(U[idx, np.arange(U.shape[1])])
