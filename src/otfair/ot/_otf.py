r"""OTF and OTFR dual solvers and the adjusted cost OTF0 (optimal transport to fairness).

otf-optimal-transport-to-fairness.txt §3 and App. A; methods.md §2. For scores
:math:`h \in (0, 1]^n`, a cost :math:`C \in \mathbb R^{n \times n}` and a constraint
matrix :math:`G \in \mathbb R^{d \times n}` (fair score vectors: :math:`G f = 0`),

.. math::

    \mathrm{OTF}_\varepsilon(h) = \min_{P \ge 0,\ P 1 = h,\ G P^\top 1 = 0}
        \langle C, P \rangle - \varepsilon H(P), \qquad
    H(P) = -\sum_{ij} P_{ij} (\log P_{ij} - 1),

and :math:`\mathrm{OTFR}_\varepsilon(h)` relaxes the fairness constraint to
:math:`|G P^\top 1| \le \gamma := |G h|`. Both are solved through their duals

.. math::

    L(\lambda, \mu) &= \sum_i \lambda_i h_i - \varepsilon \sum_{ij}
        e^{(-C_{ij} + \lambda_i + \sum_c \mu_c G_{cj}) / \varepsilon}, \\
    L_R(\kappa, \phi, \psi) &= \sum_i \kappa_i h_i + \sum_c \gamma_c (\phi_c + \psi_c)
        - \varepsilon \sum_{ij} e^{(-C_{ij} + \kappa_i + \sum_c (\phi_c - \psi_c) G_{cj})
        / \varepsilon}, \quad \phi, \psi \le 0,

by exact coordinate ascent. The default (``method="semidual"``,
:mod:`otfair.ot._otf_semidual`) eliminates the row duals in closed form and maximizes
the resulting concave function of the ``d`` constraint duals one coordinate at a time
(safeguarded Newton on the monotone constraint value), with joint Newton steps for small
problems with coupled rows. ``method="alternating"`` is the paper's scheme (App. A): all
:math:`\lambda_i` at once (one row log-sum-exp), then
the column masses :math:`\log \eta_j = \operatorname{LSE}_i ((-C_{ij} + \lambda_i) /
\varepsilon)` (one column log-sum-exp), then each constraint dual in turn
(:mod:`otfair.ot._otf_rows`: closed form for two-valued rows, safeguarded Newton
otherwise). For OTFR the pair :math:`(\phi_c, \psi_c)` is updated jointly through
:math:`\nu_c = \phi_c - \psi_c` (at the optimum at most one of them is nonzero, so
:math:`\phi_c + \psi_c = -|\nu_c|`): :math:`\nu_c = 0` if the current constraint value
already satisfies :math:`|(G P^\top 1)_c| \le \gamma_c`, else it moves the value onto the
nearest bound. When the columns of ``G`` take few distinct values (discrete groups), both
methods run on the exact reduction of the problem to those column classes
(:class:`_Problem`). The reported values are the dual objectives at the returned duals,
i.e. true lower bounds that equal :math:`\mathrm{OTF}_\varepsilon` and
:math:`\mathrm{OTFR}_\varepsilon` at convergence.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, replace

import torch

from otfair.ot._checks import check_eps, check_matrix, check_positive_int, check_vector
from otfair.ot._lse import lse_cols, lse_rows, lse_rows_by_class
from otfair.ot._otf_rows import Row, prepare_rows, solve_row
from otfair.ot._otf_semidual import SemiDual
from otfair.ot._sinkhorn import ConvergenceWarning


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
        (0 for the semi-dual method, whose rows match ``h`` by construction).
    constraint_error : float
        :math:`\max_c (|(G P^\top 1)_c| - \gamma_c)_+ / \lVert h \rVert_1` (~0 for the
        alternating method, whose constraint update satisfies it exactly).
    converged : bool
        Whether the method's error (constraint error for ``"semidual"``, marginal
        error for ``"alternating"``) is at most ``tol``.
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


def check_scores(h: object, name: str = "h") -> torch.Tensor:
    """Return scores as a 1-D tensor, checking that they lie in (0, 1]."""
    t = check_vector(h, name)
    td = t.detach()
    if bool((td <= 0).any()) or bool((td > 1).any()):
        raise ValueError(
            f"`{name}` must be scores in (0, 1]; got range [{float(td.min()):.4g}, "
            f"{float(td.max()):.4g}]. Pass probabilities (e.g. sigmoid outputs), not logits."
        )
    return t


def _check_problem(h: object, C: object, G: object) -> tuple[torch.Tensor, ...]:
    ht = check_scores(h)
    n = ht.shape[0]
    Ct = check_matrix(C, "C", like=ht).detach()
    if tuple(Ct.shape) != (n, n):
        raise ValueError(f"`C` must have shape ({n}, {n}) to match `h`; got {tuple(Ct.shape)}.")
    Gt = check_matrix(G, "G", like=ht).detach()
    if Gt.shape[1] != n:
        raise ValueError(
            f"`G` must have shape (d, {n}) (one column per score); got {tuple(Gt.shape)}."
        )
    for c in range(Gt.shape[0]):
        row = Gt[c]
        if not (bool((row > 0).any()) and bool((row < 0).any())):
            raise ValueError(
                f"`G` row {c} must have both positive and negative entries (no fair score "
                "vector exists otherwise); is a group empty in this batch?"
            )
    return ht, Ct, Gt


class _SemiDualSolver:
    """Gauss-Seidel on the semi-dual (:mod:`otfair.ot._otf_semidual`); the default."""

    def __init__(self, h, C, G, eps, *, gamma=None, chunk_rows=None):
        self.sd = SemiDual(h, C, G, eps, gamma=gamma, chunk_rows=chunk_rows)
        self.gamma = gamma

    def solve(self, *, tol, max_iter, y0=None, warn=False, name="otf") -> OTFResult:
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


class _DualSolver:
    """The paper's alternating updates (App. A), shared by OTF and OTFR.

    ``method="alternating"``: all row duals, then each constraint dual with the column
    masses held fixed (closed form for two-valued rows, safeguarded Newton otherwise).
    """

    def __init__(self, h, C, G, eps, *, gamma=None, chunk_rows=None):
        self.h = h.detach()
        self.C, self.eps, self.chunk_rows = C, eps, chunk_rows
        self.rows: list[Row] = prepare_rows(G)
        self.G64 = G.to(torch.float64)
        self.gamma = None if gamma is None else [float(x) for x in gamma]
        self.log_h = self.h.log()

    def lam_update(self, GTy: torch.Tensor) -> torch.Tensor:
        w = GTy.to(self.C.dtype)
        return self.eps * (
            self.log_h - lse_rows(self.C, -1.0 / self.eps, w, chunk_rows=self.chunk_rows)
        )

    def log_eta(self, lam: torch.Tensor) -> torch.Tensor:
        lse = lse_cols(self.C, -1.0 / self.eps, lam / self.eps, chunk_rows=self.chunk_rows)
        return lse.to(torch.float64)

    def update_rows(self, log_eta: torch.Tensor, y: torch.Tensor, GTy: torch.Tensor) -> None:
        """Gauss-Seidel pass over the constraint duals (``y = mu / eps``), in place."""
        for c, row in enumerate(self.rows):
            w = log_eta + GTy - y[c] * row.g
            if self.gamma is None or self.gamma[c] == 0.0:
                y_new = solve_row(row, w, 0.0, float(y[c]))
            else:
                # current constraint value (G P^T 1)_c at nu_c = 0
                w_max = float(w.max())
                d0 = float((row.g * torch.exp(w - w_max)).sum()) * math.exp(w_max)
                if abs(d0) <= self.gamma[c]:
                    y_new = 0.0
                else:
                    target = self.gamma[c] if d0 > 0 else -self.gamma[c]
                    y_new = solve_row(row, w, target, float(y[c]))
            GTy += (y_new - float(y[c])) * row.g
            y[c] = y_new

    def value(self, lam, log_eta, y, GTy):
        mass = torch.exp(log_eta + GTy).sum()
        val = (lam.to(torch.float64) * self.h.to(torch.float64)).sum() - self.eps * mass
        if self.gamma is not None:
            gam = torch.tensor(self.gamma, dtype=torch.float64, device=y.device)
            val = val - self.eps * (gam * y.abs()).sum()
        return val, mass

    def constraint_error(self, log_eta, GTy) -> float:
        col = torch.exp(log_eta + GTy)
        viol = (self.G64 @ col).abs()
        if self.gamma is not None:
            viol = viol - torch.tensor(self.gamma, dtype=torch.float64, device=viol.device)
        return float(viol.clamp(min=0).max()) / float(self.h.sum())

    def row_error(self, lam, lam_new) -> float:
        err = (self.h * torch.expm1((lam - lam_new) / self.eps)).abs().sum()
        return float(err) / float(self.h.sum())

    def solve(self, *, tol, max_iter, y0=None, warn=False, name="otf") -> OTFResult:
        d = len(self.rows)
        dev = self.C.device
        y = torch.zeros(d, dtype=torch.float64, device=dev) if y0 is None else y0.clone()
        GTy = self.G64.T @ y
        lam = self.lam_update(GTy)
        log_eta = self.log_eta(lam)
        err, converged, it = math.inf, False, 0
        while True:
            self.update_rows(log_eta, y, GTy)
            it += 1
            lam_new = self.lam_update(GTy)
            err = self.row_error(lam, lam_new)
            if err <= tol or it >= max_iter:
                converged = err <= tol
                break
            lam = lam_new
            log_eta = self.log_eta(lam)
        if not converged and warn:
            warnings.warn(
                f"{name} did not converge: row-marginal error {err:.3g} > tol={tol:g} after "
                f"{it} iterations (eps={self.eps:g}).",
                ConvergenceWarning,
                stacklevel=3,
            )
        value, mass = self.value(lam, log_eta, y, GTy)
        return OTFResult(
            value=value.to(self.C.dtype),
            lam=lam,
            mu=(self.eps * y).to(self.C.dtype),
            mass=mass.to(self.C.dtype),
            n_iter=it,
            marginal_error=err,
            constraint_error=self.constraint_error(log_eta, GTy),
            converged=converged,
        )


#: the class reduction is used when the columns of G take at most this fraction of n values
MAX_CLASS_FRACTION = 0.25


def column_classes(G: torch.Tensor, max_classes: int) -> tuple[torch.Tensor, torch.Tensor] | None:
    """Distinct columns of ``G`` (d, K) and the class of each column, or None if K is large.

    Classes are numbered in the lexicographic order of the columns' per-row value codes,
    so a batch sorted by class gives sorted classes. Built from one 1-D ``unique`` per
    row (``torch.unique(G.T, dim=0)`` is ~10x slower).
    """
    codes = torch.zeros(G.shape[1], dtype=torch.long, device=G.device)
    for row in G:
        values, inv = torch.unique(row, return_inverse=True)
        if values.numel() > max_classes:
            return None
        codes = codes * values.numel() + inv
        codes = torch.unique(codes, return_inverse=True)[1]  # keep the codes < n
    n_classes = int(codes.max()) + 1
    if n_classes > max_classes:
        return None
    first = torch.full((n_classes,), G.shape[1], dtype=torch.long, device=G.device)
    first.scatter_reduce_(0, codes, torch.arange(G.shape[1], device=G.device), "amin")
    return G[:, first].contiguous(), codes


class _Problem:
    r"""A checked OTF problem and, where it pays, its exact reduction to column classes.

    When the columns of ``G`` take only ``K`` distinct values (discrete sensitive
    attributes, possibly crossed with binary labels: ``K`` = groups for DP, groups x 2
    for EO), every quantity of the coordinate ascent depends on the columns only through
    their class. The dual is then exactly the dual of the ``n x K`` problem with the
    class cost

    .. math::

        \tilde C_{ik} = -\varepsilon \log \sum_{j:\, k(j) = k} e^{-C_{ij}/\varepsilon}

    and the ``d x K`` constraint matrix of the distinct columns, so that one pass over
    ``C`` per value of ``eps`` replaces two per iteration (``lambda`` and the duals are
    unchanged; the plan's column masses are summed per class).
    """

    def __init__(self, h, C, G, chunk_rows, classes=False):
        self.h, self.C, self.G, self.chunk_rows = h, C, G, chunk_rows
        if classes is False:  # not given: find them
            classes = column_classes(G, max_classes=int(MAX_CLASS_FRACTION * G.shape[1]))
        self.classes = classes
        self._cache: dict[float, torch.Tensor] = {}

    def at(self, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
        """Cost and constraint matrix of the (possibly reduced) problem at ``eps``."""
        if self.classes is None:
            return self.C, self.G
        cols, inv = self.classes
        if eps not in self._cache:
            lse = lse_rows_by_class(
                self.C, -1.0 / eps, inv, cols.shape[1], chunk_rows=self.chunk_rows
            )
            self._cache[eps] = -eps * lse.to(torch.float64)
        return self._cache[eps], cols.to(torch.float64)


def _solve(
    problem: _Problem, eps, *, gamma, tol, max_iter, mu0, eps_start, warn, name, method
) -> OTFResult:
    """Run the coordinate ascent, optionally through a halving sequence of eps."""
    schedule = [eps]
    if eps_start is not None:
        eps_start = check_eps(eps_start, "eps_start")
        while schedule[0] * 2.0 <= eps_start:
            schedule.insert(0, schedule[0] * 2.0)
    dtype = problem.C.dtype
    y0, total = _y0(mu0, problem.G.shape[0], schedule[0], problem.C), 0
    for k, eps_k in enumerate(schedule):
        last = k == len(schedule) - 1
        C_k, G_k = problem.at(eps_k)
        solver_cls = _SemiDualSolver if method == "semidual" else _DualSolver
        solver = solver_cls(
            problem.h.to(C_k.dtype), C_k, G_k, eps_k, gamma=gamma, chunk_rows=problem.chunk_rows
        )
        res = solver.solve(
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


METHODS = ("semidual", "alternating")


def _check_method(method: str) -> str:
    if method not in METHODS:
        raise ValueError(f"`method` must be one of {METHODS}; got {method!r}.")
    return method


def _gamma(problem: _Problem) -> torch.Tensor:
    """OTFR's bounds :math:`|G h|` (float64)."""
    return (problem.G.to(torch.float64) @ problem.h.to(torch.float64)).abs()


def _y0(mu0: object | None, d: int, eps: float, like: torch.Tensor) -> torch.Tensor | None:
    if mu0 is None:
        return None
    t = check_vector(mu0, "mu0", like=like)
    if t.shape[0] != d:
        raise ValueError(f"`mu0` must have {d} entries (one per row of G); got {t.shape[0]}.")
    return t.detach().to(torch.float64) / eps


def otf_dual(
    h: object,
    C: object,
    G: object,
    eps: float,
    *,
    tol: float = 1e-4,
    max_iter: int = 100,
    mu0: object | None = None,
    eps_start: float | None = None,
    chunk_rows: int | None = None,
    warn: bool = True,
    method: str = "semidual",
) -> OTFResult:
    r"""Solve the :math:`\mathrm{OTF}_\varepsilon(h)` dual by exact coordinate ascent.

    See the module docstring for the problem; runs without autograd (for the gradient in
    ``h`` use :func:`otf0` or the returned ``lam``, which is
    :math:`\partial\,\mathrm{OTF}_\varepsilon / \partial h` by the envelope theorem).

    Parameters
    ----------
    h : tensor of shape (n,)
        Scores in (0, 1] (clip sigmoid outputs to ``[1e-6, 1]`` first).
    C : tensor of shape (n, n)
        Non-negative cost, e.g. :func:`euclidean_cost` of the batch features.
    G : tensor of shape (d, n)
        Constraint matrix; every row needs positive and negative entries.
    eps : float
        Entropic smoothing ``> 0`` (the paper uses 1e-3 with Euclidean costs on
        standardized features).
    tol : float, default=1e-4
        Tolerance on the relative error: the constraint violation
        ``max_c (|G P^T 1|_c - gamma_c)_+ / sum(h)`` for ``"semidual"`` (its rows match
        ``h`` exactly), the row-marginal error for ``"alternating"``.
    max_iter : int, default=100
        Maximum outer iterations: sweeps over the ``d`` constraint duals
        (``"semidual"``; each row update is a safeguarded Newton solve costing one pass
        over ``C`` per step, and a two-group DP problem converges in one sweep), or
        alternating iterations (one row and one column log-sum-exp pass plus the ``d``
        constraint updates).
    mu0 : tensor of shape (d,), optional
        Warm start for the constraint duals (they are per constraint and in cost units,
        so they transfer across batches and across values of ``eps``).
    eps_start : float, optional
        Epsilon scaling: solve first at ``eps * 2**k <= eps_start`` and halve down to
        ``eps``, warm-starting each stage (intermediate stages stop at a relative error
        of 1e-2). The alternating method needs it at small ``eps`` (1e-3 and below on
        unit-scale costs take it thousands of plain iterations); the semi-dual one
        rarely does. ``n_iter`` counts all stages.
    chunk_rows : int, optional
        Rows per chunk of the in-place log-sum-exp.
    warn : bool, default=True
        Issue a :class:`ConvergenceWarning` when ``tol`` is not reached.
    method : {"semidual", "alternating"}, default="semidual"
        ``"semidual"`` eliminates the row duals in closed form and maximizes over each
        constraint dual exactly (:mod:`otfair.ot._otf_semidual`); ``"alternating"`` is
        the paper's algorithm (App. A), kept as a reference. Both return the dual value
        at their duals. When the columns of ``G`` take few distinct values (discrete
        groups, DP or EO), both run on the exact class reduction of the problem, which
        costs one pass over ``C`` per ``eps``.

    Returns
    -------
    OTFResult
    """
    eps = check_eps(eps)
    max_iter = check_positive_int(max_iter, "max_iter")
    ht, Ct, Gt = _check_problem(h, C, G)
    with torch.no_grad():
        problem = _Problem(ht.detach(), Ct, Gt, chunk_rows)
        return _solve(
            problem,
            eps,
            gamma=None,
            tol=tol,
            max_iter=max_iter,
            mu0=mu0,
            eps_start=eps_start,
            warn=warn,
            name="otf_dual",
            method=_check_method(method),
        )


def otfr_dual(
    h: object,
    C: object,
    G: object,
    eps: float,
    *,
    tol: float = 1e-4,
    max_iter: int = 100,
    mu0: object | None = None,
    eps_start: float | None = None,
    chunk_rows: int | None = None,
    warn: bool = True,
    method: str = "semidual",
) -> OTFResult:
    r"""Solve the relaxed :math:`\mathrm{OTFR}_\varepsilon(h)` dual (bounds :math:`|G h|`).

    Same parameters and result as :func:`otf_dual`; ``result.mu`` holds
    :math:`\nu = \phi - \psi` and the value includes :math:`\sum_c \gamma_c(\phi_c +
    \psi_c)`. Rows with :math:`\gamma_c = 0` are treated as equalities (the same
    closed-form update as OTF), so that :math:`\mathrm{OTF}^0_\varepsilon(h) = 0`
    exactly when :math:`G h = 0` exactly.
    """
    eps = check_eps(eps)
    max_iter = check_positive_int(max_iter, "max_iter")
    ht, Ct, Gt = _check_problem(h, C, G)
    with torch.no_grad():
        problem = _Problem(ht.detach(), Ct, Gt, chunk_rows)
        return _solve(
            problem,
            eps,
            gamma=_gamma(problem),
            tol=tol,
            max_iter=max_iter,
            mu0=mu0,
            eps_start=eps_start,
            warn=warn,
            name="otfr_dual",
            method=_check_method(method),
        )


@dataclass(frozen=True)
class OTF0Details:
    """Both solves behind one :func:`otf0` value."""

    otf: OTFResult
    otfr: OTFResult


def otf0(
    h: torch.Tensor,
    C: object,
    G: object,
    eps: float,
    *,
    tol: float = 1e-4,
    max_iter: int = 20,
    min_score: float = 1e-6,
    warm_start: OTF0Details | None = None,
    eps_start: float | None = None,
    chunk_rows: int | None = None,
    warn: bool = False,
    return_details: bool = False,
    method: str = "semidual",
) -> torch.Tensor | tuple[torch.Tensor, OTF0Details]:
    r"""Compute the adjusted OTF cost, differentiable in the scores ``h``.

    .. math::

        \mathrm{OTF}^0_\varepsilon(h) = \mathrm{OTF}_\varepsilon(h)
            - \mathrm{OTFR}_\varepsilon(h)

    otf-optimal-transport-to-fairness.txt Def. 5 and §3.4. It is zero when
    :math:`G h = 0` (Prop. 2) and positive otherwise. The returned tensor is
    differentiable in ``h`` with the envelope-theorem gradient: both dual functions are
    evaluated at their converged, *detached* duals with ``h`` attached (``gamma = |G h|``
    included), so autograd gives

    .. math::

        \nabla_h \mathrm{OTF}^0_\varepsilon = \lambda^* - \kappa^*
            - \sum_c (\phi^*_c + \psi^*_c)\, \mathrm{sign}(G h)_c\, G_{c\cdot}.

    ``C`` and ``G`` carry no gradient. Before convergence (small ``eps``, few
    iterations) both terms are dual lower bounds, so their difference is an estimate that
    can be off either way; ``details.otf.converged`` says whether it is exact to ``tol``.

    Parameters
    ----------
    h : tensor of shape (n,)
        Scores in (0, 1]; values below ``min_score`` are clipped to it (with zero
        gradient).
    C : tensor of shape (n, n)
        Cost matrix (e.g. :func:`euclidean_cost` on non-protected features).
    G : tensor of shape (d, n)
        Constraint matrix of the batch.
    eps : float
        Entropic smoothing ``> 0``.
    tol : float, default=1e-4
        Relative tolerance of both solves (see :func:`otf_dual`).
    max_iter : int, default=20
        Sweeps (semi-dual) or iterations (alternating) per solve.
    min_score : float, default=1e-6
        Lower clip of the scores (the entropic problem needs ``h > 0``).
    warm_start : OTF0Details, optional
        Details of a previous call: their constraint duals start this solve.
    eps_start : float, optional
        Epsilon scaling for both solves (see :func:`otf_dual`).
    chunk_rows : int, optional
        Rows per chunk of the in-place log-sum-exp (bounds the extra memory).
    warn : bool, default=False
        Issue :class:`ConvergenceWarning` when a solve stops at ``max_iter``
        (``details.otf.converged`` reports it either way).
    return_details : bool, default=False
        Also return the :class:`OTF0Details`.
    method : {"semidual", "alternating"}, default="semidual"
        Solver of both problems (see :func:`otf_dual`).

    Returns
    -------
    torch.Tensor or (torch.Tensor, OTF0Details)
        The 0-d value (and the details).
    """
    ht = check_scores(h)
    if not 0.0 < float(min_score) <= 1.0:
        raise ValueError(f"`min_score` must be in (0, 1]; got {min_score!r}.")
    h_eff = ht.clamp(min=float(min_score))
    mu0 = nu0 = None
    if warm_start is not None:
        mu0, nu0 = warm_start.otf.mu, warm_start.otfr.mu
    eps = check_eps(eps)
    max_iter = check_positive_int(max_iter, "max_iter")
    _, Ct, Gt = _check_problem(h_eff, C, G)
    with torch.no_grad():
        problem = _Problem(h_eff.detach(), Ct, Gt, chunk_rows)
    value, details = otf0_checked(
        h_eff, problem, eps, tol=tol, max_iter=max_iter, mu0=mu0, nu0=nu0,
        eps_start=eps_start, warn=warn, method=_check_method(method),
    )  # fmt: skip
    if return_details:
        return value, details
    return value


def otf0_checked(
    h_eff: torch.Tensor,
    problem: _Problem,
    eps: float,
    *,
    tol: float,
    max_iter: int,
    mu0: torch.Tensor | None = None,
    nu0: torch.Tensor | None = None,
    eps_start: float | None = None,
    warn: bool = False,
    method: str = "semidual",
) -> tuple[torch.Tensor, OTF0Details]:
    """:func:`otf0` on an already checked problem (for callers that build ``C`` and ``G``).

    ``h_eff`` are the clipped scores (attached), ``problem`` the :class:`_Problem` of
    their detached values; both solves share it (and its class reduction).
    """
    with torch.no_grad():
        kw = {"tol": tol, "max_iter": max_iter, "eps_start": eps_start, "warn": warn,
              "method": method}  # fmt: skip
        res = _solve(problem, eps, gamma=None, mu0=mu0, name="otf0 (OTF)", **kw)
        res_r = _solve(problem, eps, gamma=_gamma(problem), mu0=nu0, name="otf0 (OTFR)", **kw)
    gamma = (problem.G @ h_eff).abs()  # attached: OTFR's bounds move with h
    value_otf = (res.lam * h_eff).sum() - eps * res.mass
    value_otfr = (
        (res_r.lam * h_eff).sum() + (gamma * (res_r.phi + res_r.psi)).sum() - eps * res_r.mass
    )
    return value_otf - value_otfr, OTF0Details(res, res_r)
