r"""Baselines of the accuracy-disparity experiments: unfair net, BGL and COD.

* :class:`UnfairRegressor` — the same sigmoid regression net trained on the MSE only
  (the paper's "no debias", :math:`\lambda = 0`).
* :class:`BGLRegressor` — bounded group loss (Agarwal et al., 2019) with fairlearn's
  exponentiated gradient, made deterministic by predicting the *expected* prediction of
  the randomized ensemble.
* :class:`CODRegressor` — least squares with a bound on the coefficient of determination
  of the sensitive attribute from the predictions (Komiyama et al., 2018), a
  one-constraint non-convex QCQP solved exactly through its SDP relaxation with cvxpy.
"""

from __future__ import annotations

import warnings
from dataclasses import KW_ONLY, dataclass
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.linear_model import LinearRegression
from sklearn.utils.validation import check_is_fitted

from otfair.estimators._docs import fill_estimator_doc
from otfair.estimators._torch_base import FitQualityWarning
from otfair.estimators.regression._base import (
    CONVERGENCE,
    FITTED_ATTRIBUTES,
    SCALE_Y,
    FairRegressorMixin,
    NeuralFairRegressor,
)
from otfair.utils import (
    RANDOM_STATE,
    HasMethods,
    fit_context,
    local_random_state,
    non_negative_real,
    positive_int,
    positive_real,
    set_params_from_init,
)
from otfair.utils._docstrings import fill_doc
from otfair.utils._warnings import quiet_fairlearn_deprecations, user_stacklevel

__all__ = ["BGLRegressor", "CODRegressor", "UnfairRegressor"]

#: relative slack of BGL's bound check (fairlearn's game meets it to its own tolerance)
BOUND_RTOL = 0.05


@fill_estimator_doc
@fill_doc(convergence=CONVERGENCE, fitted_attributes=FITTED_ATTRIBUTES)
@dataclass(eq=False, repr=False)
class UnfairRegressor(NeuralFairRegressor):
    r"""The sigmoid regression net of App. B trained on the MSE alone (no debiasing).

    .. math::

        \min_{g, h}\ \frac1n \sum_i \big(\sigma(h(g(x_i))) - y_i\big)^2

    Same parameters as :class:`~otfair.estimators.WassersteinNet` without the adversary;
    ``sensitive_features`` is optional: accepted (and validated: one value per row) for a
    uniform interface but unused, so ``fit(X, y)`` and scikit-learn's model selection
    (``cross_val_score``) work as for any regressor.

    Parameters
    ----------
    encoder_hidden : sequence of int, default=(60,)
        Widths of the ReLU feature map; the head is linear + sigmoid.
    epochs : int, default=50
        Passes over the data.
    {convergence}
    batch_size : int, default=256
        Mini-batch size.
    lr : float, default=1.0
        Adadelta learning rate.
    scale_y : {"auto", True, False}, default="auto"
        Target scaling to [0, 1] (see :class:`~otfair.estimators.WassersteinNet`).
    random_state : int, RandomState or None, default=None
        Seed of the initialization and batch order.
    device : str or torch.device, default="cpu"
        Torch device.

    Attributes
    ----------
    encoder_, head_ : torch.nn.Module
        Fitted feature map and regression head.
    adversary_ : None
        No adversary (kept for the common interface of the regression nets).
    history_ : list of dict
        Per-epoch training ``mse``.
    n_iter_ : int
        Epochs trained (``epochs`` unless ``tol`` ended the training first).
    fit_quality_warning_ : str or None
        The :class:`~otfair.estimators.FitQualityWarning` this fit gave, None when none.
    {fitted_attributes}
    {device_attribute}

    See Also
    --------
    otfair.estimators.CENet : The same net with a cross-entropy discriminator.
    otfair.estimators.WassersteinNet : The same net with a Wasserstein critic.

    {references_accuracy_disparity}

    {examples_regression}
    >>> from otfair.estimators import UnfairRegressor
    >>> reg = UnfairRegressor(epochs=2, random_state=0).fit(X, y, sensitive_features=s)
    >>> reg.predict(X).shape
    (200,)
    """

    _uses_groups: ClassVar[bool] = False


@fill_estimator_doc
@fill_doc(fitted_attributes=FITTED_ATTRIBUTES)
class BGLRegressor(FairRegressorMixin, BaseEstimator):
    r"""Bounded group loss with fairlearn's exponentiated gradient (Agarwal et al., 2019).

    .. math::

        \min_{Q \in \Delta(\mathcal H)}\ E_Q\,E[\ell(h(X), Y)]
        \quad \text{s.t.}\quad E_Q\,E[\ell(h(X), Y) \mid A = a] \le \varepsilon
        \ \ \forall a,

    with :math:`\ell` the square loss on [0, 1] (targets scaled as in ``scale_y``; ``eps``
    is in scaled units). fairlearn returns a randomized ensemble :math:`Q`; ``predict``
    returns its expectation :math:`\sum_t Q_t h_t(x)`, which is deterministic and has
    a square loss no larger than the ensemble's (Jensen).

    Parameters
    ----------
    eps : float, default=0.1
        Upper bound :math:`\varepsilon` on every group's loss (paper grids: Adult
        {0.07, 0.1, 0.2, 0.5}, COMPAS {0.1, 0.2, 0.3, 0.5}, Crime and Law
        {0.01, 0.02, 0.03, 0.05}).
    estimator : sklearn regressor or None, default=None
        Base learner (must accept ``sample_weight``); ``None`` is ``LinearRegression``.
    max_iter : int, default=50
        Exponentiated-gradient iterations (fairlearn's default).
    max_samples : int or None, default=None
        Fit on a random subsample of at most this many rows (e.g. 10000 for a quick
        Adult run); ``None`` uses all rows. Drawn with ``random_state``.
    scale_y : {"auto", True, False}, default="auto"
        Target scaling to [0, 1].
    random_state : int, RandomState or None, default=None
        Seed of the subsample (the algorithm itself is deterministic).

    Attributes
    ----------
    predictors_ : list of numpy.ndarray
        Coefficients of the linear predictors of the BGL game's iterates.
    weights_ : numpy.ndarray
        Mixture weight of each predictor (the prediction is their weighted mean).
    group_losses_ : numpy.ndarray of shape (2,)
        Each group's mean square loss of the fitted prediction on the rows it was fitted
        on, in the scaled units of ``eps``: the bound holds where every entry is at most
        ``eps``. Where one is above it, ``fit`` warns (:class:`FitQualityWarning`): the
        bound is infeasible for the base learner, or ``max_iter`` ended the game first.
    {fitted_attributes}

    See Also
    --------
    otfair.estimators.CODRegressor : The COD baseline (a constrained least-squares fit).
    otfair.estimators.CENet : The cross-entropy adversarial net of the same paper.
    otfair.estimators.WassersteinNet : The Wasserstein adversarial net of the same paper.

    References
    ----------
    .. [1] Agarwal, A., Dudík, M. and Wu, Z. S. *Fair Regression: Quantitative Definitions
       and Reduction-based Algorithms*. ICML 2019.

    {examples_regression}
    >>> from otfair.estimators import BGLRegressor
    >>> reg = BGLRegressor(eps=0.1, max_iter=10).fit(X, y, sensitive_features=s)
    >>> reg.predict(X).shape
    (200,)
    """

    def __init__(
        self,
        eps: float = 0.1,
        *,
        estimator: Any = None,
        max_iter: int = 50,
        max_samples: int | None = None,
        scale_y: str | bool = "auto",
        random_state: Any = None,
    ) -> None:
        set_params_from_init(self, locals())

    _parameter_constraints: dict[str, list[Any]] = {
        "eps": [positive_real()],
        "estimator": [None, HasMethods(["fit", "predict"])],
        "max_iter": [positive_int()],
        "max_samples": [None, positive_int()],
        "scale_y": SCALE_Y,
        "random_state": RANDOM_STATE,
    }

    @fit_context(validate_nested=True)  # the user's ``estimator`` validates its own
    def fit(self, X: Any, y: Any, *, sensitive_features: Any) -> BGLRegressor:
        """Run exponentiated gradient with the bounded-group-loss constraint."""
        from fairlearn.reductions import BoundedGroupLoss, ExponentiatedGradient, SquareLoss

        eps, max_iter = float(self.eps), int(self.max_iter)
        X, y_scaled, codes = self._check_fit_inputs(X, y, sensitive_features)
        if self.max_samples is not None:
            cap = int(self.max_samples)
            if cap < len(y_scaled):
                rng = local_random_state(self.random_state)
                keep: np.ndarray = np.sort(rng.choice(len(y_scaled), size=cap, replace=False))
                X, y_scaled, codes = X[keep], y_scaled[keep], codes[keep]
        base = LinearRegression() if self.estimator is None else clone(self.estimator)
        mitigator = ExponentiatedGradient(
            base,
            constraints=BoundedGroupLoss(SquareLoss(0.0, 1.0), upper_bound=eps),
            max_iter=max_iter,
        )
        with quiet_fairlearn_deprecations():  # pandas 3's, about fairlearn's own lines
            mitigator.fit(X.astype(np.float64), y_scaled, sensitive_features=codes)
        weights = np.asarray(mitigator.weights_, dtype=np.float64)
        keep = weights > 0
        self.predictors_ = [p for p, k in zip(mitigator.predictors_, keep, strict=True) if k]
        self.weights_ = weights[keep] / weights[keep].sum()
        loss = (self._expected(X.astype(np.float64)) - y_scaled) ** 2
        self.group_losses_ = np.array([loss[codes == g].mean() for g in (0, 1)])
        if self.group_losses_.max() > eps * (1.0 + BOUND_RTOL):
            warnings.warn(
                f"BGLRegressor: the bound eps={eps:g} is not met on the training rows "
                f"(group losses {self.group_losses_[0]:.4g} and {self.group_losses_[1]:.4g}, "
                "in the scaled target units of eps); the bound is infeasible for the base "
                f"learner, or max_iter={max_iter} ended the game first. Raise eps (or "
                "max_iter); `group_losses_` holds the losses reached.",
                FitQualityWarning,
                stacklevel=user_stacklevel(),
            )
        return self

    def _expected(self, X: np.ndarray) -> np.ndarray:
        """Return the ensemble's expected prediction in scaled target units, shape (n,)."""
        pairs = zip(self.weights_, self.predictors_, strict=True)
        return np.asarray(
            sum(w * np.asarray(p.predict(X), dtype=np.float64) for w, p in pairs),
            dtype=np.float64,
        )

    def predict(self, X: Any) -> np.ndarray:
        """Return the expected prediction of the fitted randomized ensemble, shape (n,)."""
        check_is_fitted(self, "predictors_")
        X = self._check_X(X, reset=False).astype(np.float64)
        return self._unscale(self._expected(X))


@dataclass(eq=False, repr=False)
class CODParams:
    """The parameters of the COD problem, declared once (dataclass fields).

    :class:`CODRegressor` and :class:`~otfair.estimators.CODRFFRegressor` (which solves
    it on random features) both take them. Not for direct use.
    """

    eps: float = 0.1
    _: KW_ONLY
    ridge: float = 1e-6
    solver: str | None = None
    scale_y: str | bool = "auto"
    random_state: Any = None


@fill_estimator_doc
@fill_doc(fitted_attributes=FITTED_ATTRIBUTES)
@dataclass(eq=False, repr=False)
class CODRegressor(FairRegressorMixin, BaseEstimator, CODParams):
    r"""Least squares with a coefficient-of-determination constraint (Komiyama et al., 2018).

    For the linear model :math:`\hat y = x^\top \beta + b` (the sensitive attribute is not
    an input, as in the accuracy-disparity setting),

    .. math::

        \min_{\beta, b}\ \frac1n \|y - X\beta - b\|^2 \quad\text{s.t.}\quad
        \mathrm{CoD}(\hat Y \mid S) = \frac{\beta^\top \Sigma_B \beta}{\beta^\top \Sigma_X \beta}
        \le \varepsilon,

    with :math:`\Sigma_X` the covariance of :math:`X` and
    :math:`\Sigma_B = p(1-p)\,\delta\delta^\top` its between-group part
    (:math:`\delta` = difference of group means, :math:`p = P(S=1)`): the :math:`R^2` of
    regressing the predictions on :math:`S`. The constraint
    :math:`\beta^\top(\Sigma_B - \varepsilon\Sigma_X)\beta \le 0` is non-convex, but a QCQP
    with a single quadratic constraint has a tight SDP relaxation (S-lemma); it is solved
    with cvxpy (an open SDP solver: Clarabel, else SCS) and a rank-one solution is
    recovered (a bisection towards the feasible point :math:`\delta^\top\beta = 0` guards
    against solver inaccuracy). Memory is :math:`O(d^2)`, independent of ``n``.

    Parameters
    ----------
    eps : float, default=0.1
        Bound :math:`\varepsilon \in [0, 1]` on the coefficient of determination (paper
        grid {0.01, 0.1, 0.5, 1.0}); ``>= 1`` is ordinary least squares.
    ridge : float, default=1e-6
        Added to :math:`\Sigma_X`'s diagonal for numerical stability.
    solver : str or None, default=None
        cvxpy solver name; ``None`` picks Clarabel or SCS.
    scale_y : {"auto", True, False}, default="auto"
        Target scaling to [0, 1] (kept for a uniform interface with the other methods).
    random_state : None
        Unused (the solution is deterministic); accepted for a uniform interface.

    Attributes
    ----------
    coef_ : numpy.ndarray of shape (n_features,)
        Coefficients of the fitted linear predictor (on standardized targets).
    intercept_ : float
        Its intercept.
    cod_ : float
        Coefficient of determination of the fitted predictions from the sensitive
        attribute (the constrained quantity, at most ``eps``).
    {fitted_attributes}

    See Also
    --------
    otfair.estimators.CODRFFRegressor : The kernel version (random Fourier features).
    otfair.estimators.BGLRegressor : The bounded-group-loss baseline.

    Notes
    -----
    Komiyama et al. also give a kernelized version (random Fourier features); this class
    solves the linear model. Requires ``pip install otfair[cod]`` (cvxpy).

    {references_cod}

    {examples_regression}
    >>> from otfair.estimators import CODRegressor
    >>> reg = CODRegressor(eps=0.1)
    >>> reg.fit(X, y, sensitive_features=s).predict(X).shape
    (200,)
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "eps": [non_negative_real()],
        "ridge": [non_negative_real()],
        "solver": [None, str],
        "scale_y": SCALE_Y,
        "random_state": RANDOM_STATE,
    }

    @fit_context
    def fit(self, X: Any, y: Any, *, sensitive_features: Any) -> CODRegressor:
        """Solve the CoD-constrained least squares problem."""
        eps, ridge = float(self.eps), float(self.ridge)
        X, y_scaled, codes = self._check_fit_inputs(X, y, sensitive_features)
        X = X.astype(np.float64)
        x_mean, y_mean = X.mean(axis=0), y_scaled.mean()
        Xc, yc = X - x_mean, y_scaled - y_mean
        n, d = X.shape
        sigma_x = Xc.T @ Xc / n + ridge * np.eye(d)
        q = Xc.T @ yc / n
        p = codes.mean()
        delta = X[codes == 1].mean(axis=0) - X[codes == 0].mean(axis=0)
        sigma_b = p * (1.0 - p) * np.outer(delta, delta)
        # solved for gamma = D beta, D the features' standard deviations: the same problem
        # (the CoD is invariant to it), on a unit scale whatever the features' units (raw
        # features of magnitude 1e6 put Sigma_X near 1e12 and the SDP solver failed)
        std = np.sqrt(np.diag(sigma_x))
        inv = 1.0 / np.where(std > 0, std, 1.0)
        sigma_x, sigma_b = sigma_x * np.outer(inv, inv), sigma_b * np.outer(inv, inv)
        q, delta = q * inv, delta * inv
        gamma_ols = np.linalg.solve(sigma_x, q)
        if eps >= 1.0 or _cod(gamma_ols, sigma_b, sigma_x) <= eps:
            gamma = gamma_ols
        else:
            gamma = self._solve_sdp(sigma_x, q, sigma_b, eps, delta, gamma_ols)
        beta = gamma * inv
        self.coef_ = beta
        self.intercept_ = float(y_mean - x_mean @ beta)
        self.cod_ = _cod(gamma, sigma_b, sigma_x)
        return self

    def _solve_sdp(
        self,
        sigma_x: np.ndarray,
        q: np.ndarray,
        sigma_b: np.ndarray,
        eps: float,
        delta: np.ndarray,
        beta_ols: np.ndarray,
    ) -> np.ndarray:
        try:
            import cvxpy as cp
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(
                "CODRegressor needs cvxpy: `pip install otfair[cod]` (or `pip install cvxpy`)."
            ) from exc
        d = len(q)
        lifted = cp.Variable((d + 1, d + 1), PSD=True)
        W, w = lifted[:d, :d], lifted[:d, d]
        objective = cp.Minimize(cp.trace(sigma_x @ W) - 2 * q @ w)
        constraints = [lifted[d, d] == 1, cp.trace((sigma_b - eps * sigma_x) @ W) <= 0]
        problem = cp.Problem(objective, constraints)
        solver = self.solver or ("CLARABEL" if "CLARABEL" in cp.installed_solvers() else "SCS")
        try:
            problem.solve(solver=solver)
        except cp.error.SolverError as exc:
            raise RuntimeError(
                f"COD: the SDP solver {solver} failed ({exc}); try another `solver` "
                f"(installed: {', '.join(cp.installed_solvers())}) or a larger `eps`."
            ) from exc
        if lifted.value is None:
            raise RuntimeError(f"COD: the SDP solver {solver} failed ({problem.status}).")
        candidates = [np.asarray(w.value).ravel()]
        vals, vecs = np.linalg.eigh(lifted.value)
        top = vecs[:, -1]
        if abs(top[d]) > 1e-12:
            candidates.append(top[:d] / top[d])
        # feasible anchor: least squares restricted to delta^T beta = 0 (CoD = 0)
        z = np.linalg.solve(sigma_x, delta)
        anchor = beta_ols - z * (delta @ beta_ols) / max(delta @ z, 1e-300)
        best, best_obj = anchor, _quad_obj(anchor, sigma_x, q)
        for cand in candidates:
            cand = _pull_to_feasible(cand, anchor, sigma_b, sigma_x, eps)
            obj = _quad_obj(cand, sigma_x, q)
            if obj < best_obj:
                best, best_obj = cand, obj
        return best

    def predict(self, X: Any) -> np.ndarray:
        """Return linear predictions, shape (n,), in the units of the training ``y``."""
        check_is_fitted(self, "coef_")
        X = self._check_X(X, reset=False).astype(np.float64)
        return self._unscale(X @ self.coef_ + self.intercept_)


def _cod(beta: np.ndarray, sigma_b: np.ndarray, sigma_x: np.ndarray) -> float:
    """Coefficient of determination of the predictions from the sensitive attribute."""
    total = float(beta @ sigma_x @ beta)
    return float(beta @ sigma_b @ beta) / total if total > 0 else 0.0


def _quad_obj(beta: np.ndarray, sigma_x: np.ndarray, q: np.ndarray) -> float:
    return float(beta @ sigma_x @ beta - 2 * q @ beta)


def _pull_to_feasible(
    beta: np.ndarray,
    anchor: np.ndarray,
    sigma_b: np.ndarray,
    sigma_x: np.ndarray,
    eps: float,
    tol: float = 1e-9,
) -> np.ndarray:
    """Move ``beta`` towards the feasible ``anchor`` until ``CoD <= eps`` (bisection)."""
    if _cod(beta, sigma_b, sigma_x) <= eps + tol:
        return beta
    lo, hi = 0.0, 1.0  # fraction of the way to the anchor; hi is feasible
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if _cod((1 - mid) * beta + mid * anchor, sigma_b, sigma_x) <= eps:
            hi = mid
        else:
            lo = mid
    return (1 - hi) * beta + hi * anchor
