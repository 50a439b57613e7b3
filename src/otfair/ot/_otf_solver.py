r"""Solvers of the OTF / OTFR duals on an :class:`~otfair.ot.OTFProblem`.

The default solver, :class:`SemiDualSolver`, runs Gauss-Seidel over the constraint
duals of the semi-dual (:mod:`otfair.ot._otf_semidual`: the row duals in closed form,
each constraint dual maximized exactly by a safeguarded Newton iteration), with joint
Newton steps for small problems with coupled rows. :func:`solve_dual` adds epsilon
scaling and warm starts around any solver with the same interface (the paper's
alternating algorithm, App. A, is kept as a reference in ``benchmarks/otf_alternating.py``
and plugs in through ``solver=``); :func:`solve_otf0` combines the OTF and OTFR solves
into the adjusted cost OTF0 with its envelope-theorem gradient
(otf-optimal-transport-to-fairness.txt §3.4).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import torch

from otfair.ot._checks import as_tensor, check_eps, check_positive_int, check_vector
from otfair.ot._otf_semidual import SemiDual
from otfair.ot._sinkhorn import ConvergenceWarning

if TYPE_CHECKING:
    from otfair.ot._otf_problem import OTFProblem


@dataclass(frozen=True)
class OTFResult:
    r"""Duals and dual value of an OTF or OTFR solve (detached tensors).

    Attributes
    ----------
    value : torch.Tensor
        Dual objective at the returned duals (a lower bound of the primal value, equal to
        it at convergence).
    lam : torch.Tensor of shape (n,)
        Row duals (:math:`\lambda` for OTF, :math:`\kappa` for OTFR); the gradient of the
        value with respect to ``h`` when ``gamma`` is held fixed.
    mu : torch.Tensor of shape (d,)
        Constraint duals: :math:`\mu` for OTF, :math:`\nu = \phi - \psi` for OTFR
        (:math:`\phi = \min(\nu, 0)`, :math:`\psi = \min(-\nu, 0)`).
    mass : torch.Tensor
        :math:`\sum_{ij} P_{ij}` at the returned duals.
    n_iter : int
        Outer iterations performed.
    marginal_error : float
        Relative row-marginal error :math:`\lVert P 1 - h \rVert_1 / \lVert h \rVert_1`
        (0 for the semi-dual solver, whose rows match ``h`` by construction).
    constraint_error : float
        :math:`\max_c (|(G P^\top 1)_c| - \gamma_c)_+ / \lVert h \rVert_1`.
    converged : bool
        Whether the solver's error (the constraint error for the semi-dual solver) is at
        most ``tol``.
    """

    value: torch.Tensor
    lam: torch.Tensor
    mu: torch.Tensor
    mass: torch.Tensor
    n_iter: int
    marginal_error: float
    constraint_error: float
    converged: bool

    @property
    def phi(self) -> torch.Tensor:
        r"""OTFR's :math:`\phi = \min(\nu, 0)`."""
        return self.mu.clamp(max=0.0)

    @property
    def psi(self) -> torch.Tensor:
        r"""OTFR's :math:`\psi = \min(-\nu, 0)`."""
        return (-self.mu).clamp(max=0.0)


@dataclass(frozen=True)
class OTF0Details:
    """Both solves behind one :func:`otfair.ot.otf0` value."""

    otf: OTFResult
    otfr: OTFResult


class SemiDualSolver:
    """Gauss-Seidel on the semi-dual (:mod:`otfair.ot._otf_semidual`); the default.

    The solver interface of :func:`solve_dual`: ``Solver(h, C, G, eps, gamma=,
    chunk_rows=)`` on the (possibly class-reduced) matrices of one ``eps``, then
    ``solve(tol=, max_iter=, y0=, warn=, name=) -> OTFResult`` with ``y0 = mu / eps``.
    """

    def __init__(self, h, C, G, eps, *, gamma=None, chunk_rows=None):
        self.sd = SemiDual(h, C, G, eps, gamma=gamma, chunk_rows=chunk_rows)
        self.gamma = gamma

    def solve(self, *, tol, max_iter, y0=None, warn=False, name="otf") -> OTFResult:
        """Sweep until the constraint violation is at most ``tol`` (or ``max_iter``)."""
        sd = self.sd
        G64 = sd.G.to(torch.float64)
        y = torch.zeros(sd.d, dtype=torch.float64, device=sd.C.device)
        if y0 is not None:
            y = y0.clone()
        it, err = 0, math.inf
        # coupled rows of a small OTF problem: after each sweep (which gets the softmaxes
        # off their saturated plateau, where the Hessian vanishes) try joint Newton steps
        joint = sd.is_small and not sd.relaxed and sd.d > 1
        w = (G64.T @ y).to(sd.C.dtype)
        while it < max_iter:
            for c in range(sd.d):
                y[c] = sd.solve_row(c, y, w, rtol=0.1 * tol)
                w = (G64.T @ y).to(sd.C.dtype)
            it += 1
            err = sd.violation(sd.constraint_values(w))
            if err > tol and joint:
                y, _ = sd.joint_newton(y, tol, 20)
                w = (G64.T @ y).to(sd.C.dtype)
                err = sd.violation(sd.constraint_values(w))
            if err <= tol:
                break
        converged = err <= tol
        if not converged and warn:
            warnings.warn(
                f"{name} did not converge: constraint error {err:.3g} > tol={tol:g} after "
                f"{it} sweeps (eps={sd.eps:g}).",
                ConvergenceWarning,
                stacklevel=4,
            )
        lam = sd.lam(w)
        h64 = sd.h.to(torch.float64)
        value = (lam.to(torch.float64) * h64).sum() - sd.eps * h64.sum()
        if self.gamma is not None:
            gam = torch.as_tensor(self.gamma, dtype=torch.float64, device=y.device)
            value = value - sd.eps * (gam * y.abs()).sum()
        return OTFResult(
            value=value,
            lam=lam,
            mu=sd.eps * y,
            mass=h64.sum(),
            n_iter=it,
            marginal_error=0.0,
            constraint_error=err,
            converged=converged,
        )


METHODS = ("semidual",)


def _solver_class(method: str, solver: Any) -> Any:
    if solver is not None:
        return solver
    if method == "alternating":
        raise ValueError(
            "`method='alternating'` (the OTF paper's reference algorithm) moved out of the "
            "package: pass `solver=AlternatingSolver` from benchmarks/otf_alternating.py."
        )
    if method not in METHODS:
        raise ValueError(f"`method` must be one of {METHODS}; got {method!r}.")
    return SemiDualSolver


def _y0(mu0: object | None, d: int, eps: float, like: torch.Tensor) -> torch.Tensor | None:
    if mu0 is None:
        return None
    t = check_vector(mu0, "mu0", like=like)
    if t.shape[0] != d:
        raise ValueError(f"`mu0` must have {d} entries (one per row of G); got {t.shape[0]}.")
    return t.detach().to(torch.float64) / eps


def _schedule(eps: float, eps_start: float | None) -> list[float]:
    """``eps * 2**k`` for ``k`` down to 0, starting at the largest ``<= eps_start``."""
    schedule = [eps]
    if eps_start is not None:
        eps_start = check_eps(eps_start, "eps_start")
        while schedule[0] * 2.0 <= eps_start:
            schedule.insert(0, schedule[0] * 2.0)
    return schedule


def solve_dual(
    problem: OTFProblem,
    h: torch.Tensor,
    eps: float,
    *,
    relaxed: bool,
    tol: float = 1e-4,
    max_iter: int = 100,
    mu0: object | None = None,
    eps_start: float | None = None,
    warn: bool = True,
    method: str = "semidual",
    solver: Any = None,
    name: str | None = None,
) -> OTFResult:
    """Solve the OTF (``relaxed=False``) or OTFR dual of ``problem`` for masses ``h``.

    ``h`` is checked by the caller; see :func:`otfair.ot.otf_dual` for the keywords.
    Runs through the halving sequence of ``eps`` from ``eps_start`` when given, each
    stage warm-started by the previous one's constraint duals (in cost units).
    """
    eps = check_eps(eps)
    max_iter = check_positive_int(max_iter, "max_iter")
    solver_cls = _solver_class(method, solver)
    name = name or ("otfr_dual" if relaxed else "otf_dual")
    schedule = _schedule(eps, eps_start)
    dtype = problem.G.dtype
    with torch.no_grad():
        h = h.detach()
        gamma = None
        if relaxed:  # OTFR's bounds |G h|
            gamma = (problem.G.to(torch.float64) @ h.to(torch.float64)).abs()
        y0, total = _y0(mu0, problem.d, schedule[0], problem.G), 0
        for k, eps_k in enumerate(schedule):
            last = k == len(schedule) - 1
            C_k, G_k = problem.matrices(eps_k)
            res = solver_cls(
                h.to(C_k.dtype), C_k, G_k, eps_k, gamma=gamma, chunk_rows=problem.chunk_rows
            ).solve(
                tol=tol if last else max(tol, 1e-2),
                max_iter=max_iter,
                y0=y0,
                warn=warn and last,
                name=name,
            )
            total += res.n_iter
            if not last:  # mu is in cost units: carry it over, rescaled to the next eps
                y0 = res.mu.to(torch.float64) / schedule[k + 1]
    return replace(
        res,
        n_iter=total,
        value=res.value.to(dtype),
        lam=res.lam.to(dtype),
        mu=res.mu.to(dtype),
        mass=res.mass.to(dtype),
    )


def _check_otf0_masses(problem: OTFProblem, h: object, min_score: float) -> torch.Tensor:
    """Return ``h`` ((n,) or (K, n)) checked: non-negative, ``n`` columns, finite."""
    ht = as_tensor(h, "h", like=problem.G)
    if ht.dim() == 2 and ht.shape[1] == 1 and problem.n != 1:
        ht = ht[:, 0]
    if ht.dim() not in (1, 2) or ht.shape[-1] != problem.n:
        raise ValueError(
            f"`h` must have shape ({problem.n},) or (K, {problem.n}) to match the cost; "
            f"got {tuple(ht.shape)}: `h` has {ht.shape[-1] if ht.dim() else 0} entries."
        )
    if bool((ht.detach() < 0).any()):
        raise ValueError(
            f"`h` must be non-negative masses (entries below `min_score` are raised to it); "
            f"its minimum is {float(ht.detach().min()):.4g}. Pass scores, not logits."
        )
    if not 0.0 < float(min_score) <= 1.0:
        raise ValueError(f"`min_score` must be in (0, 1]; got {min_score!r}.")
    return ht


def solve_otf0(
    problem: OTFProblem,
    h: object,
    eps: float,
    *,
    tol: float = 1e-4,
    max_iter: int = 20,
    min_score: float = 1e-6,
    warm_start: OTF0Details | Sequence[OTF0Details] | None = None,
    eps_start: float | None = None,
    warn: bool = False,
    method: str = "semidual",
    solver: Any = None,
) -> tuple[torch.Tensor, OTF0Details | tuple[OTF0Details, ...]]:
    r"""OTF0 of ``h`` on ``problem`` and both solves (see :func:`otfair.ot.otf0`).

    Both solves run on the detached, clipped masses; the value is re-evaluated with ``h``
    attached at the detached duals (``gamma = |G h|`` attached too), so autograd gives the
    envelope-theorem gradient. ``h`` of shape ``(K, n)`` (the scores of ``K`` models on
    one batch) gives ``K`` values, each exactly the single-vector one, solved against the
    one cached class-reduced cost; ``warm_start`` is then a sequence of ``K`` details.
    """
    ht = _check_otf0_masses(problem, h, min_score)
    kw = {"tol": tol, "max_iter": max_iter, "eps_start": eps_start, "warn": warn,
          "method": method, "solver": solver}  # fmt: skip
    if ht.dim() == 1:
        return _otf0_one(problem, ht.clamp(min=float(min_score)), eps, warm_start, kw)
    K = ht.shape[0]
    starts = [None] * K if warm_start is None else list(warm_start)
    if len(starts) != K:
        raise ValueError(f"`warm_start` must hold {K} details (one per row of `h`).")
    h_eff = ht.clamp(min=float(min_score))
    out = [_otf0_one(problem, h_eff[k], eps, starts[k], kw) for k in range(K)]
    return torch.stack([v for v, _ in out]), tuple(d for _, d in out)


def _otf0_one(
    problem: OTFProblem, h_eff: torch.Tensor, eps: float, warm: OTF0Details | None, kw: dict
) -> tuple[torch.Tensor, OTF0Details]:
    mu0 = nu0 = None
    if warm is not None:
        mu0, nu0 = warm.otf.mu, warm.otfr.mu
    res = solve_dual(problem, h_eff, eps, relaxed=False, mu0=mu0, name="otf0 (OTF)", **kw)
    res_r = solve_dual(problem, h_eff, eps, relaxed=True, mu0=nu0, name="otf0 (OTFR)", **kw)
    eps = float(eps)
    gamma = (problem.G @ h_eff).abs()  # attached: OTFR's bounds move with h
    value_otf = (res.lam * h_eff).sum() - eps * res.mass
    value_otfr = (
        (res_r.lam * h_eff).sum() + (gamma * (res_r.phi + res_r.psi)).sum() - eps * res_r.mass
    )
    return value_otf - value_otfr, OTF0Details(res, res_r)
