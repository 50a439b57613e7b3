r"""Full-batch quasi-Newton training: one model, one smooth objective, L-BFGS.

The solver of :class:`~otfair.estimators.FairClassifier` under ``solver="lbfgs"`` (the
default for the logistic model with a penalty that needs no stochastic batches). As
scikit-learn's ``LogisticRegression(solver="lbfgs")`` does, the objective is evaluated
on the whole training set and minimized by SciPy's L-BFGS-B with its gradient from
torch's autograd; an iteration is one quasi-Newton step (one or a few passes over the
data, the line search included). It stops when the largest gradient entry falls below
``tol`` (``gtol``) or when the objective's relative decrease falls below float32's
resolution (the objective is computed in the model's float32), and reports whether it
stopped before ``max_iter``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.optimize
import torch
from torch import nn
from torch.nn import functional as F

from otfair.estimators._training import TrainData
from otfair.penalties import penalty_values

#: relative decrease of the objective below which L-BFGS stops: a few float32 ulps of
#: the loss (its evaluation is float32, so smaller changes are rounding noise)
FTOL = 1e-7


class FullBatchObjective:
    r"""FairClassifier's training objective on the whole training set, for L-BFGS.

    :math:`(1 - a)\,\mathrm{CE} + a R` (convex) or :math:`\mathrm{CE} + a R`
    (additive), plus :math:`\frac{l_2}{2n}\lVert W\rVert^2` on the weights, with
    :math:`R` the fitted penalty on the model's scores (:func:`penalty_values`, as the
    batch schemes call it; the full batch's data work, OTF's class-reduced cost, is
    kept in one cache across evaluations).

    Parameters
    ----------
    model : torch.nn.Module
        The model (logits).
    data : TrainData
        The training tensors (features, labels, group codes, constraint matrix).
    penalty : FairnessPenalty or None
        The fitted penalty (``None``: the cross-entropy alone).
    strength : float
        :math:`a`.
    convex : bool
        Convex mixing (else additive).
    l2 : float
        The coefficient :math:`l_2 / (2n)` of the squared weights.
    """

    def __init__(
        self,
        model: nn.Module,
        data: TrainData,
        penalty: Any,
        *,
        strength: float,
        convex: bool,
        l2: float,
    ) -> None:
        self.model = model
        self.data = data
        self.penalty = penalty
        self.strength = strength
        self.convex = convex
        self.l2 = l2
        self.weights = [m.weight for m in model.modules() if isinstance(m, nn.Linear)]
        wants = getattr(penalty, "requires_features", False)
        self.features = data.features if wants else None
        self.cache: dict[Any, Any] = {}

    def __call__(self) -> torch.Tensor:
        """Return the objective at the model's current parameters."""
        data, a = self.data, self.strength
        logits = self.model(data.X)[:, 0]
        loss = F.binary_cross_entropy_with_logits(logits, data.y)
        if self.penalty is not None:
            scores = torch.sigmoid(logits)
            value = penalty_values(
                self.penalty, scores, data.s, data.y, self.features, G=data.G, cache=self.cache
            )
            loss = (1 - a) * loss + a * value if self.convex else loss + a * value
        if self.l2:
            loss = loss + self.l2 * sum((w * w).sum() for w in self.weights)
        return loss


@dataclass(frozen=True)
class LbfgsResult:
    """What a full-batch L-BFGS fit ended with.

    Attributes
    ----------
    history : list of float
        The objective after each iteration (the first entry: at the start).
    n_iter : int
        Quasi-Newton iterations made.
    converged : bool
        Whether a tolerance stopped it (else ``max_iter`` did).
    message : str
        SciPy's reason for stopping.
    """

    history: list[float]
    n_iter: int
    converged: bool
    message: str


def train_lbfgs(
    model: nn.Module,
    objective: Callable[[], torch.Tensor],
    *,
    max_iter: int,
    tol: float | None,
) -> LbfgsResult:
    """Minimize ``objective()`` over ``model``'s parameters with L-BFGS; return the result.

    Parameters
    ----------
    model : torch.nn.Module
        Its parameters are the variables; they hold the minimizer on return.
    objective : callable
        ``objective()`` -> the 0-dim training objective on the full training set,
        computed from the model's current parameters.
    max_iter : int
        Cap on the quasi-Newton iterations.
    tol : float or None
        Stop when the largest absolute gradient entry is below ``tol`` (SciPy's
        ``gtol``); ``None`` runs ``max_iter`` iterations unless the objective stops
        decreasing.
    """
    params = [p for p in model.parameters() if p.requires_grad]
    start = nn.utils.parameters_to_vector(params).detach()
    dtype = start.dtype

    def value_and_grad(w: np.ndarray) -> tuple[float, np.ndarray]:
        nn.utils.vector_to_parameters(torch.as_tensor(w, dtype=dtype, device=start.device), params)
        for p in params:
            p.grad = None
        loss = objective()
        loss.backward()
        grad = torch.cat(
            [(torch.zeros_like(p) if p.grad is None else p.grad).reshape(-1) for p in params]
        )
        value = float(loss.detach())
        if not np.isfinite(value):  # let the line search step back from an overflow
            return np.inf, np.zeros(len(w))
        return value, grad.detach().cpu().double().numpy()

    w0 = start.cpu().double().numpy()
    history = [value_and_grad(w0)[0]]

    def callback(intermediate_result: scipy.optimize.OptimizeResult) -> None:
        history.append(float(intermediate_result.fun))

    result = scipy.optimize.minimize(
        value_and_grad,
        w0,
        jac=True,
        method="L-BFGS-B",
        callback=callback,
        options={
            "maxiter": int(max_iter),
            "gtol": 0.0 if tol is None else float(tol),
            "ftol": FTOL,
            "maxls": 50,
        },
    )
    with torch.no_grad():
        nn.utils.vector_to_parameters(
            torch.as_tensor(result.x, dtype=dtype, device=start.device), params
        )
    for p in params:
        p.grad = None
    converged = bool(result.status == 0) or int(result.nit) < int(max_iter)
    return LbfgsResult(history, int(result.nit), converged, str(result.message))
