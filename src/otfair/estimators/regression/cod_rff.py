r"""COD regression with random Fourier features (Komiyama et al. 2018, kernel version).

Komiyama, Takeda, Honda and Shimao, "Nonconvex Optimization for Regression with Fairness
Constraints", ICML 2018, §3-4 (the CoD-constrained QCQP) and §5 (random Fourier
features for the RBF kernel); the setting of the accuracy-parity paper (App. B:
:math:`\gamma \in \{0.1, 1, 10, 100\}`, :math:`\varepsilon \in \{0.01, 0.1, 0.5, 1\}`).
See ``docs/baselines.md``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.kernel_approximation import RBFSampler
from sklearn.preprocessing import MinMaxScaler
from sklearn.utils.validation import check_is_fitted, validate_data

from otfair.estimators._docs import fill_estimator_doc
from otfair.estimators._quantile_barycenter import encode_fitted_groups
from otfair.estimators.regression.baselines import CODParams, CODRegressor
from otfair.utils import (
    StrOptions,
    draw_seed,
    fit_context,
    positive_int,
    positive_real,
)

__all__ = ["PAPER_GAMMAS", "CODRFFRegressor"]


@fill_estimator_doc
@dataclass(eq=False, repr=False)
class CODRFFRegressor(RegressorMixin, BaseEstimator, CODParams):
    r"""Least squares on random Fourier features with a CoD fairness constraint.

    The features are mapped to :math:`z(x) = \sqrt{2/D}\,\cos(W^\top x + b)`,
    :math:`W_{\cdot j} \sim \mathcal N(0, 2\gamma I)`, :math:`b_j \sim \mathcal U(0, 2\pi)`,
    so that :math:`z(x)^\top z(x') \approx \exp(-\gamma \|x - x'\|^2)` (Rahimi & Recht
    2007; scikit-learn's :class:`~sklearn.kernel_approximation.RBFSampler`, seeded), and
    the linear COD problem of :class:`otfair.estimators.CODRegressor` is solved on them:

    .. math::

        \min_{\beta, b}\ \frac1n \|y - Z\beta - b\|^2 \quad\text{s.t.}\quad
        \frac{\beta^\top \Sigma_B \beta}{\beta^\top \Sigma_Z \beta} \le \varepsilon,

    the share of the prediction variance explained by :math:`S` (its :math:`R^2`), through
    the tight SDP relaxation of this one-constraint QCQP. Memory is :math:`O(D^2)`, so
    unlike the exact kernel version it runs on Adult-sized data.

    Parameters
    ----------
    eps : float, default=0.1
        CoD bound :math:`\varepsilon` (paper grid {0.01, 0.1, 0.5, 1.0}).
    gamma : float, "scale" or sequence of them, default="scale"
        RBF kernel parameter; ``"scale"`` is :math:`1 / (d\,\mathrm{Var}(X))` (as
        scikit-learn's SVC). A sequence is a grid: one model per value, the one with the
        lowest *training* MSE is kept (``gamma_``; ``gamma_mse_`` has every value's), as
        the accuracy-parity paper reports "the best results with minimal MSE loss" per
        eps (App. B; its grid ``PAPER_GAMMAS`` = {0.1, 1, 10, 100}, for features in
        [0, 1]: use it with ``rescale="minmax"``; on standardized features the kernel
        vanishes, Crime's test R^2 < 0 for every value of that grid).
    rescale : {"none", "minmax"}, default="none"
        ``"minmax"`` maps each input column to [0, 1] with the training part's minimum
        and maximum before the random features (the paper's feature range; a column
        constant on the training part maps to 0). Min-max scaling undoes any earlier
        per-column affine scaling, so on otfair's standardized splits it gives the raw
        features' [0, 1] version.
    n_components : int, default=50
        Number :math:`D` of random features (the SDP has a (D+1)x(D+1) PSD variable:
        D = 100 takes ~30 s of CPU on Crime, D = 50 a few seconds).
    ridge : float, default=1e-6
        Diagonal regularization of :math:`\Sigma_Z`.
    solver : str or None, default=None
        cvxpy solver (``None``: Clarabel, else SCS).
    scale_y : {"auto", True, False}, default="auto"
        Target scaling, as in :class:`~otfair.estimators.CODRegressor`.
    random_state : int, RandomState or None, default=None
        Seeds the random features.

    Attributes
    ----------
    rff_ : RBFSampler
        The fitted feature map (of the kept ``gamma_``).
    gamma_ : float
        The kernel parameter used (``"scale"`` resolved; the grid's best).
    gamma_mse_ : dict
        Training MSE per grid value (one entry for a single ``gamma``).
    scaler_ : MinMaxScaler or None
        The ``rescale="minmax"`` map fitted on the training inputs.
    cod_ : CODRegressor
        The linear COD model on the features (``cod_.cod_`` is the attained CoD).

    See Also
    --------
    otfair.estimators.CODRegressor : The linear COD baseline.
    otfair.estimators.BGLRegressor : The bounded-group-loss baseline.

    {references_cod}

    {examples_regression}
    >>> from otfair.estimators import CODRFFRegressor
    >>> reg = CODRFFRegressor(eps=0.1, n_components=20, random_state=0)
    >>> reg.fit(X, y, sensitive_features=s).predict(X).shape
    (200,)
    """

    _: KW_ONLY
    gamma: float | str | Sequence[float] = "scale"
    rescale: str = "none"
    n_components: int = 50

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        # eps, ridge, solver, scale_y and random_state: those of the linear model it fits
        **CODRegressor._parameter_constraints,
        "gamma": [positive_real(), StrOptions({"scale"}), "array-like"],
        "rescale": [StrOptions({"none", "minmax"})],
        "n_components": [positive_int()],
    }

    @fit_context
    def fit(self, X: Any, y: Any, *, sensitive_features: Any) -> CODRFFRegressor:
        """Draw the random features and solve the CoD-constrained least squares."""
        gammas = _check_gammas(self.gamma)  # each value of a list (a grid)
        n_comp = int(self.n_components)
        X = validate_data(self, X, dtype=np.float64)
        self.scaler_ = None
        if self.rescale == "minmax":
            self.scaler_ = MinMaxScaler().fit(X)
            X = self.scaler_.transform(X)
        seed = draw_seed(self.random_state)
        fits, self.gamma_mse_ = {}, {}
        for gamma in gammas:
            if gamma == "scale":
                var = float(X.var())
                gamma = 1.0 / (X.shape[1] * var) if var > 0 else 1.0
            # the same seed for every value: the grid's models share the base draws
            rff = RBFSampler(gamma=float(gamma), n_components=int(n_comp), random_state=seed)
            Z = rff.fit_transform(X)
            cod = CODRegressor(
                eps=self.eps, ridge=self.ridge, solver=self.solver, scale_y=self.scale_y
            ).fit(Z, y, sensitive_features=sensitive_features)
            fits[float(gamma)] = (rff, cod)
            residual = cod.predict(Z) - np.asarray(y, dtype=np.float64).ravel()
            self.gamma_mse_[float(gamma)] = float(np.mean(residual**2))
        self.gamma_ = min(self.gamma_mse_, key=self.gamma_mse_.__getitem__)  # first on ties
        self.rff_, self.cod_ = fits[self.gamma_]
        self.groups_ = self.cod_.groups_
        return self

    def predict(self, X: Any, *, sensitive_features: Any = None) -> np.ndarray:
        """Predict, shape (n,); ``sensitive_features`` is optional (validated if given)."""
        check_is_fitted(self, "cod_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if sensitive_features is not None:
            encode_fitted_groups(sensitive_features, self.groups_, len(X))
        if self.scaler_ is not None:
            X = self.scaler_.transform(X)
        return self.cod_.predict(self.rff_.transform(X))


#: The accuracy-parity paper's RBF grid for COD (App. B), for features in [0, 1].
PAPER_GAMMAS = (0.1, 1.0, 10.0, 100.0)


def _check_gammas(gamma: Any) -> list[float | str]:
    """Return ``gamma`` as a non-empty list of positive numbers / ``"scale"``."""

    def ok(g: Any) -> bool:
        number = isinstance(g, (int, float, np.integer, np.floating)) and not isinstance(g, bool)
        return g == "scale" if isinstance(g, str) else number and g > 0

    grid = [gamma] if isinstance(gamma, str) or not isinstance(gamma, Sequence) else gamma
    if not len(grid) or not all(ok(g) for g in grid):
        raise ValueError(
            "`gamma` must be 'scale', a positive number or a non-empty sequence of them; "
            f"got {gamma!r}."
        )
    return list(grid)
