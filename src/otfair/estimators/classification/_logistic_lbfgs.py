r"""The logistic model's objective with a fixed-batch penalty, for L-BFGS (float64 NumPy).

A penalty whose work is per batch (OTF's class-reduced cost is quadratic in a batch's
rows) is not a full-batch function; averaged over fixed batches it is one
(:meth:`otfair.penalties.FairnessPenalty.fixed_batch_objective`), and the logistic
model's training objective becomes

.. math::

    (1 - a)\,\mathrm{CE}(w, b) + \frac{a}{B} \sum_b R(h_b)
    + \frac{l_2}{2n} \lVert w \rVert^2
    \qquad (\text{additive mixing: } \mathrm{CE} + a \cdot)

with :math:`h = \sigma(Xw + b)` the scores of all training rows, :math:`\mathrm{CE}`
their mean cross-entropy and :math:`h_b` those of batch :math:`b` (the batches of a
fixed-batch Adam epoch under the same seed: this is the objective such an epoch
minimizes, with the cross-entropy on all rows at once). Its value and gradient are
computed here without autograd,

.. math::

    \nabla_z = \frac{(1 - a)}{n} (h - y) + a\, \nabla_h R \odot h (1 - h),\qquad
    \nabla_w = X^\top \nabla_z + \frac{l_2}{n} w,\quad \nabla_b = 1^\top \nabla_z,

one product with :math:`X` and one with :math:`X^\top` per evaluation: what SciPy's
L-BFGS-B (:func:`otfair.estimators._training.minimize_lbfgs`) calls.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from otfair.estimators._lbfgs import LbfgsResult, minimize_lbfgs
from otfair.estimators._training import TrainData
from otfair.penalties import FixedBatchPenalty

__all__ = ["LogisticObjective", "fit_logistic", "fixed_batch_key"]


def _digest(t: torch.Tensor) -> tuple[float, ...]:
    """Two weighted column sums of a 1-D or 2-D tensor: a cheap digest of its values."""
    a = t.detach().to(torch.float64).reshape(t.shape[0], -1)
    rows = torch.arange(1, a.shape[0] + 1, dtype=torch.float64, device=a.device)
    weights = torch.stack([torch.ones_like(rows), torch.sin(rows)])
    return tuple((weights @ a).reshape(-1).tolist())


def fixed_batch_key(data: TrainData, seed: int, batch_size: int, *settings: Any) -> tuple:
    """Return what a kept fixed-batch penalty belongs to: data, seed, batch size, settings.

    The data enter through their shapes and two weighted column sums of the inputs,
    labels and constraint matrix (a millisecond on 20,000 rows; a different data set
    that agrees on all of them is not a case a warm-started fit meets by chance).
    """
    G = data.G
    assert G is not None  # a constraint penalty's data
    return (
        tuple(data.X.shape),
        _digest(data.X),
        _digest(data.y),
        _digest(G.T),
        int(seed),
        int(batch_size),
        repr(settings),
    )


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
        self.y = np.asarray(y, dtype=np.float64)
        self.penalty = penalty
        self.strength = float(strength)
        self.convex = convex
        self.l2 = float(l2) / (2 * len(self.y))

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

        :math:`c\,	ilde X^	op \mathrm{diag}(h(1-h)/n)\,	ilde X + rac{l_2}{n} I_w`
        with :math:`	ilde X = [X, 1]` and :math:`c` the cross-entropy's weight: the
        objective's Hessian but for the penalty's part (a small ridge keeps it definite).
        """
        w, b = theta[:-1], theta[-1]
        z = self.X @ w + b
        h = 0.5 + 0.5 * np.tanh(0.5 * z)
        ce_weight = 1.0 - self.strength if self.convex else 1.0
        weight = (ce_weight / len(self.y)) * h * (1.0 - h)
        d = self.X.shape[1]
        H = np.empty((d + 1, d + 1))
        H[:d, :d] = self.X.T @ (self.X * weight[:, None])
        H[:d, d] = H[d, :d] = self.X.T @ weight
        H[d, d] = weight.sum()
        H[np.arange(d), np.arange(d)] += 2.0 * self.l2
        H[np.arange(d + 1), np.arange(d + 1)] += 1e-8 * (1.0 + np.trace(H) / (d + 1))
        return np.linalg.cholesky(H)


def fit_logistic(
    model: nn.Module, objective: LogisticObjective, *, max_iter: int, tol: float | None
) -> LbfgsResult:
    """Minimize ``objective`` over the logistic ``model`` (one ``nn.Linear``) from its state.

    The model's weight and bias start the search and hold the minimizer on return.
    """
    linear = next(m for m in model.modules() if isinstance(m, nn.Linear))
    weight, bias = linear.weight, linear.bias
    theta0 = np.concatenate(
        [weight.detach().cpu().double().numpy().ravel(), bias.detach().cpu().double().numpy()]
    )
    theta, result = minimize_lbfgs(
        objective, theta0, max_iter=max_iter, tol=tol, factor=objective.factor(theta0)
    )
    with torch.no_grad():
        weight.copy_(torch.as_tensor(theta[:-1].reshape(weight.shape), dtype=weight.dtype))
        bias.copy_(torch.as_tensor(theta[-1:], dtype=bias.dtype))
    return result
