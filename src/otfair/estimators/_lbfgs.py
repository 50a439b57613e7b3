"""Full-batch quasi-Newton training: SciPy's L-BFGS-B on a torch model or a NumPy objective.

:func:`train_lbfgs` minimizes a torch objective over a model's parameters (autograd
gradients); :func:`minimize_lbfgs` minimizes any ``value_and_grad`` function, optionally
preconditioned by a Cholesky factor of an approximate Hessian (the logistic model's
fixed-batch OTF objective, :class:`otfair.estimators.classification._logistic.LogisticObjective`).
Both stop on the same rules (``tol`` on the largest gradient entry, a relative decrease
below ``LBFGS_FTOL``, or ``max_iter``) and report an :class:`LbfgsResult`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.optimize
import torch
from torch import nn

from otfair.estimators._bfgs import minimize_bfgs
from otfair.utils._threads import (  # the estimators' names for them
    ONE_BLAS_THREAD_MAX_ENTRIES,
    one_blas_thread,
    one_blas_thread_if_small,
)

__all__ = [
    "FLOAT64_FTOL",
    "LBFGS_FTOL",
    "ONE_BLAS_THREAD_MAX_ENTRIES",
    "LbfgsResult",
    "minimize_lbfgs",
    "one_blas_thread",
    "one_blas_thread_if_small",
    "train_lbfgs",
]


#: relative decrease of the objective below which L-BFGS stops: a few float32 ulps of
#: the loss (its evaluation is float32, so smaller changes are rounding noise)
LBFGS_FTOL = 1e-7
#: the same for an objective evaluated in float64 (scikit-learn's ``LogisticRegression``
#: uses ``64 * eps`` too): its L-BFGS stops on ``tol`` or ``max_iter``, not because one
#: iteration gained little. With 1e-7 (SciPy divides by ``max(|f|, 1)``: an absolute
#: 1e-7 on these objectives, below 1), OTF fits on Adult at strength 0.9 stopped well
#: above their minimum with a gradient far above ``tol``, reported as converged (the
#: rule on a quadratic below 1: ``tests/estimators/test_otf_lbfgs.py``).
FLOAT64_FTOL = 64 * float(np.finfo(np.float64).eps)
#: full-memory BFGS's stall rule, per unit of ``tol``: it stops when the objective's
#: relative decrease over its last 10 iterations is at most ``tol / 10`` (1e-5 at
#: ``FairClassifier``'s default). On the FairnessCV searches of
#: ``benchmarks/fairness_cv_vs_fairlearn.py`` it kept every choice and cut German's and
#: Diabetes's OTF searches most (their strong strengths crawl along the kinks).
STALL_RTOL_PER_TOL = 0.1


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


def minimize_lbfgs(
    value_and_grad: Callable[[np.ndarray], tuple[float, np.ndarray]],
    x0: np.ndarray,
    *,
    max_iter: int,
    tol: float | None,
    factor: np.ndarray | None = None,
    ftol: float = LBFGS_FTOL,
    full_memory: bool = False,
) -> tuple[np.ndarray, LbfgsResult]:
    r"""Minimize ``value_and_grad`` from ``x0`` with SciPy's L-BFGS-B: ``(x, result)``.

    ``tol``: stop when the largest absolute gradient entry is below it (SciPy's
    ``gtol``); ``None`` runs ``max_iter`` iterations unless the objective stops
    decreasing (an iteration's relative decrease below ``ftol``: ``LBFGS_FTOL`` for a
    float32 evaluation, ``FLOAT64_FTOL`` for a float64 one). A non-finite value is
    returned as ``inf`` so that the line search steps back from an overflow.

    ``factor``: a lower-triangular :math:`L` with :math:`LL^\top` close to the
    objective's Hessian (a preconditioner). L-BFGS then runs on :math:`u = L^\top x`,
    in which the objective is close to :math:`\lVert u\rVert^2/2` up to a linear
    term: its first steps are Newton's rather than the gradient's (a warm start near
    the minimum ends in a few iterations). The stopping rules are unchanged: ``tol``
    is still checked on the gradient in ``x``.

    ``full_memory``: full-memory BFGS with a weak Wolfe line search instead
    (:func:`otfair.estimators._bfgs.minimize_bfgs`; for up to a few thousand variables):
    on a nonsmooth objective (OTF's near fairness) it keeps the curvature across the
    kinks that L-BFGS's ten pairs forget. Its line search ending without a step (at a
    kink or at the objective's rounding level) counts as converged, as L-BFGS-B's does.
    With ``tol`` set it also stops when the objective's relative decrease over its last
    10 iterations is at most ``STALL_RTOL_PER_TOL * tol`` (``tol / 10``; the stall rule
    of :func:`otfair.estimators._bfgs.minimize_bfgs`): at a minimum on the kinks the
    gradient need not fall below ``tol``.
    """
    history: list[float] = []  # the first entry: L-BFGS-B's first evaluation, at x0

    def checked(w: np.ndarray) -> tuple[float, np.ndarray]:
        value, grad = value_and_grad(w)
        if not np.isfinite(value):
            value, grad = np.inf, np.zeros(len(w))
        if not history:
            history.append(float(value))
        return value, grad

    x0 = np.asarray(x0, dtype=np.float64)
    if full_memory and factor is None:
        factor = np.eye(len(x0))
    if factor is not None:
        return _minimize_preconditioned(
            checked,
            history,
            x0,
            factor,
            max_iter=max_iter,
            tol=tol,
            ftol=ftol,
            full_memory=full_memory,
        )

    def callback(intermediate_result: scipy.optimize.OptimizeResult) -> None:
        history.append(float(intermediate_result.fun))

    result = scipy.optimize.minimize(
        checked,
        x0,
        jac=True,
        method="L-BFGS-B",
        callback=callback,
        options={
            "maxiter": int(max_iter),
            "gtol": 0.0 if tol is None else float(tol),
            "ftol": float(ftol),
            "maxls": 50,
        },
    )
    converged = bool(result.status == 0) or int(result.nit) < int(max_iter)
    return result.x, LbfgsResult(history, int(result.nit), converged, str(result.message))


def _minimize_preconditioned(
    checked: Callable[[np.ndarray], tuple[float, np.ndarray]],
    history: list[float],
    x0: np.ndarray,
    factor: np.ndarray,
    *,
    max_iter: int,
    tol: float | None,
    ftol: float,
    full_memory: bool = False,
) -> tuple[np.ndarray, LbfgsResult]:
    r""":func:`minimize_lbfgs` in :math:`u = L^\top x` (``factor`` :math:`L`)."""
    L = np.asarray(factor, dtype=np.float64)

    def to_x(u: np.ndarray) -> np.ndarray:
        return scipy.linalg.solve_triangular(L, u, trans="T", lower=True)

    seen: dict[bytes, np.ndarray] = {}  # the gradient in x of the last point evaluated

    def in_u(u: np.ndarray) -> tuple[float, np.ndarray]:
        value, grad = checked(to_x(u))
        seen.clear()
        seen[u.tobytes()] = grad
        return value, scipy.linalg.solve_triangular(L, grad, lower=True)

    if full_memory:

        def met(u: np.ndarray, value: float) -> bool:
            history.append(float(value))
            grad = seen.get(u.tobytes())
            if grad is None:
                grad = checked(to_x(u))[1]
            return tol is not None and float(np.abs(grad).max()) <= tol

        stall = 0.0 if tol is None else STALL_RTOL_PER_TOL * float(tol)
        out = minimize_bfgs(
            in_u, L.T @ x0, max_iter=max_iter, ftol=ftol, done=met, stall_rtol=stall
        )
        return to_x(out.x), LbfgsResult(history, out.n_iter, out.stopped, out.message)

    state = {"nit": 0, "met": False}

    def callback(intermediate_result: scipy.optimize.OptimizeResult) -> None:
        history.append(float(intermediate_result.fun))
        state["nit"] += 1
        u = intermediate_result.x
        grad = seen.get(u.tobytes())
        if grad is None:
            grad = checked(to_x(u))[1]
        if tol is not None and float(np.abs(grad).max()) <= tol:
            state["met"] = True
            raise StopIteration

    result = scipy.optimize.minimize(
        in_u,
        L.T @ x0,
        jac=True,
        method="L-BFGS-B",
        callback=callback,
        options={"maxiter": int(max_iter), "gtol": 0.0, "ftol": float(ftol), "maxls": 50},
    )
    nit = int(state["nit"])
    converged = bool(state["met"]) or bool(result.status == 0) or nit < int(max_iter)
    message = "gradient below tol" if state["met"] else str(result.message)
    return to_x(result.x), LbfgsResult(history, nit, converged, message)


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
        return float(loss.detach()), grad.detach().cpu().double().numpy()

    x, result = minimize_lbfgs(
        value_and_grad, start.cpu().double().numpy(), max_iter=max_iter, tol=tol
    )
    with torch.no_grad():
        nn.utils.vector_to_parameters(torch.as_tensor(x, dtype=dtype, device=start.device), params)
    for p in params:
        p.grad = None
    return result
