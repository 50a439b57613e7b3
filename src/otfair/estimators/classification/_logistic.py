r"""The logistic model's full-batch objective with a fixed-batch penalty, and its fit.

Under L-BFGS the logistic model with a penalty whose work is per batch (OTF) is trained
by :class:`LogisticObjective`, whose penalty is averaged over fixed batches
(:meth:`otfair.penalties.FairnessPenalty.fixed_batch_objective`):

.. math::

    (1 - a)\,\mathrm{CE}(w, b) + \frac{a}{B} \sum_b R(h_b)
    + \frac{l_2}{2n} \lVert w \rVert^2
    \qquad (\text{additive mixing: } \mathrm{CE} + a \cdot)

with :math:`h = \sigma(Xw + b)` the scores of all training rows and :math:`h_b` those of
batch :math:`b` (a fixed-batch Adam epoch's batches under the same seed: the objective
such an epoch minimizes, with the cross-entropy on all rows at once). Its value and
gradient are computed without autograd, in float64 NumPy,

.. math::

    \nabla_z = \frac{(1 - a)}{n} (h - y) + a\, \nabla_h R \odot h (1 - h),\qquad
    \nabla_w = X^\top \nabla_z + \frac{l_2}{n} w,\quad \nabla_b = 1^\top \nabla_z,

and :func:`fit_logistic` minimizes it preconditioned by the data term's Hessian at the
start (:func:`otfair.estimators._lbfgs.minimize_lbfgs`): by full-memory BFGS when a
penalty enters and the model has up to ``FULL_MEMORY_MAX_PARAMS`` parameters (OTF's term
is nonsmooth near fairness: :mod:`otfair.estimators._bfgs`), else by L-BFGS.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from otfair.estimators._bfgs import FULL_MEMORY_MAX_PARAMS
from otfair.estimators._lbfgs import (
    FLOAT64_FTOL,
    LbfgsResult,
    minimize_lbfgs,
    one_blas_thread_if_small,
)
from otfair.penalties import FixedBatchPenalty

__all__ = ["LogisticObjective", "fit_logistic"]


class LogisticObjective:
    r"""The mixed objective of the logistic model (module docstring) as ``value_and_grad``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The training inputs.
    y : ndarray of shape (n,)
        The labels, 0/1.
    penalty : FixedBatchPenalty or None
        The penalty over the fixed batches (``None``: the cross-entropy alone).
    strength : float
        :math:`a`.
    convex : bool
        Convex mixing (else additive).
    l2 : float
        The estimator's ``l2``: the term is :math:`\frac{l_2}{2n}\lVert w\rVert^2`.
    """

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray,
        penalty: FixedBatchPenalty | None,
        *,
        strength: float,
        convex: bool,
        l2: float,
    ) -> None:
        # float64 products: float32 rounding of the logits (~1e-7) is noise a line search
        # sees (a 1e-5 step changes them by ~1e-5)
        self.X = np.ascontiguousarray(X, dtype=np.float64)
        # the preconditioner's float32 copy: the data as given when they are float32
        # (the estimators' case: float64(x) -> float32 gives x back)
        self.X32 = np.ascontiguousarray(X, dtype=np.float32)
        self.y = np.asarray(y, dtype=np.float64)
        self.penalty = penalty
        self.strength = float(strength)
        self.convex = convex
        self.l2 = float(l2) / (2 * len(self.y))

    @property
    def penalized(self) -> bool:
        """Whether a penalty enters the objective (a penalty at a positive strength)."""
        return self.penalty is not None and self.strength > 0

    def __call__(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """Return the objective and its gradient at ``theta = (w, b)``."""
        w, b = theta[:-1], theta[-1]
        z = self.X @ w + b
        n = len(self.y)
        softplus = np.maximum(z, 0.0) + np.log1p(np.exp(-np.abs(z)))
        ce = float(np.mean(softplus - self.y * z))
        h = 0.5 + 0.5 * np.tanh(0.5 * z)  # the logistic function, overflow-free
        a = self.strength
        ce_weight = 1.0 - a if self.convex else 1.0
        value = ce_weight * ce
        dz = (ce_weight / n) * (h - self.y)
        if self.penalty is not None and a > 0:
            r, dr = self.penalty.value_and_grad(h)
            value += a * r
            dz += a * dr * h * (1.0 - h)
        value += self.l2 * float(w @ w)
        grad = np.empty_like(theta)
        grad[:-1] = self.X.T @ dz + 2.0 * self.l2 * w
        grad[-1] = dz.sum()
        return value, grad

    def factor(self, theta: np.ndarray) -> np.ndarray:
        r"""Return the Cholesky factor of the data term's Hessian at ``theta`` (a preconditioner).

        :math:`c\,\tilde X^\top \mathrm{diag}(h(1-h)/n)\,\tilde X + \frac{l_2}{n} I_w`
        with :math:`\tilde X = [X, 1]` and :math:`c` the cross-entropy's weight: the
        objective's Hessian but for the penalty's part (a small ridge keeps it definite).
        On all rows: from every fourth row, rare one-hot columns lost their curvature
        and a FairnessCV search on Adult took 4x the L-BFGS evaluations.
        """
        X = self.X
        w, b = theta[:-1], theta[-1]
        z = X @ w + b
        h = 0.5 + 0.5 * np.tanh(0.5 * z)
        ce_weight = 1.0 - self.strength if self.convex else 1.0
        weight = (ce_weight / len(z)) * h * (1.0 - h)
        d = X.shape[1]
        H = np.empty((d + 1, d + 1))
        X32 = self.X32  # a preconditioner: float32 products suffice
        with np.errstate(over="ignore", invalid="ignore"):
            H[:d, :d] = X32.T @ (X32 * weight.astype(np.float32)[:, None])
        if not np.isfinite(H[:d, :d]).all():  # raw features past 1e19: float64 products
            H[:d, :d] = X.T @ (X * weight[:, None])
        H[:d, d] = H[d, :d] = X.T @ weight
        H[d, d] = weight.sum()
        H[np.arange(d), np.arange(d)] += 2.0 * self.l2
        return spread_cholesky(H)


#: attempts of :func:`ridged_cholesky`, each with a ridge 100 times the last
RIDGE_ATTEMPTS = 6


def ridged_cholesky(H: np.ndarray) -> np.ndarray:
    r"""Return the Cholesky factor of ``H + r I`` with the smallest ridge ``r`` that works.

    ``r = 1e-8 (1 + \mathrm{tr}(H) / p)`` first (``p`` the order of ``H``), then 100 times
    larger until the factorization succeeds: collinear columns (one-hot groups beside the
    intercept) without an ``l2`` term leave the data Hessian singular, and its float32
    products can put an eigenvalue a little below 0, beyond the first ridge. The factor
    preconditions the quasi-Newton steps only, so a larger ridge slows them at most.
    The ridge follows the mean diagonal, which suits a diagonal of one order of
    magnitude; :func:`spread_cholesky` handles one that spans many.
    """
    p = H.shape[0]
    diagonal = np.arange(p)
    ridge = 1e-8 * (1.0 + np.trace(H) / p)
    H[diagonal, diagonal] += ridge
    for _ in range(RIDGE_ATTEMPTS - 1):
        try:
            return np.linalg.cholesky(H)
        except np.linalg.LinAlgError:
            H[diagonal, diagonal] += 99.0 * ridge  # the ridge becomes 100 times larger
            ridge *= 100.0
    return np.linalg.cholesky(H)


#: a diagonal whose positive entries span more than this ratio is factored as
#: :math:`D^{1/2} \operatorname{chol}(D^{-1/2} H D^{-1/2})`
DIAGONAL_SPREAD = 1e16


def spread_cholesky(H: np.ndarray) -> np.ndarray:
    r"""Return :func:`ridged_cholesky` of ``H``, rescaled first where its diagonal spans orders.

    On raw features of magnitude 1e20 the weights' curvature is ~1e40 against the
    intercept's ~0.25: a ridge that follows the mean diagonal swamps the intercept's
    curvature, and the preconditioned fit ended short of the unit-scale fit's minimum
    (``tests/estimators/test_fit_quality.py`` now holds it to that minimum). Where the
    positive diagonal entries span more than :data:`DIAGONAL_SPREAD`, the factor is
    :math:`D^{1/2} L` with :math:`L L^\top` the factor of the unit-diagonal
    :math:`D^{-1/2} H D^{-1/2}` (:math:`D` the diagonal; 1 where it is not positive),
    whose ridge is then relative to every entry alike. Elsewhere (every usual scale) it
    is :func:`ridged_cholesky` of ``H`` itself, bit for bit.
    """
    diagonal = np.diag(H)
    positive = diagonal[diagonal > 0]
    if not positive.size or positive.max() <= DIAGONAL_SPREAD * positive.min():
        return ridged_cholesky(H)
    scale = np.sqrt(np.where(diagonal > 0, diagonal, 1.0))
    return ridged_cholesky(H / scale[:, None] / scale[None, :]) * scale[:, None]


def fit_logistic(
    model: nn.Module, objective: LogisticObjective, *, max_iter: int, tol: float | None
) -> LbfgsResult:
    """Minimize ``objective`` over the logistic ``model`` (one ``nn.Linear``) from its state.

    The model's weight and bias start the search and hold the minimizer on return.
    A penalized objective takes full-memory BFGS up to ``FULL_MEMORY_MAX_PARAMS``
    parameters (OTF's term is nonsmooth near fairness, where L-BFGS crawls or stops
    early: :mod:`otfair.estimators._bfgs`); the cross-entropy alone (smooth), and larger
    models, L-BFGS, as scikit-learn's ``LogisticRegression``.
    """
    linear = next(m for m in model.modules() if isinstance(m, nn.Linear))
    weight, bias = linear.weight, linear.bias
    theta0 = np.concatenate(
        [weight.detach().cpu().double().numpy().ravel(), bias.detach().cpu().double().numpy()]
    )
    with one_blas_thread_if_small(objective.X.size):
        factor = objective.factor(theta0)  # a float64 objective: FLOAT64_FTOL
        theta, result = minimize_lbfgs(
            objective,
            theta0,
            max_iter=max_iter,
            tol=tol,
            factor=factor,
            ftol=FLOAT64_FTOL,
            full_memory=objective.penalized and theta0.size <= FULL_MEMORY_MAX_PARAMS,
        )
    with torch.no_grad():
        weight.copy_(torch.as_tensor(theta[:-1].reshape(weight.shape), dtype=weight.dtype))
        bias.copy_(torch.as_tensor(theta[-1:], dtype=bias.dtype))
    return result
