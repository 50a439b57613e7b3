r"""Public OTF / OTFR solves and the adjusted cost OTF0 (optimal transport to fairness).

Buyl & De Bie, NeurIPS 2022, §3 and App. A. For positive masses
:math:`h \in \mathbb R_{>0}^n` (e.g. a model's scores), a cost
:math:`C \in \mathbb R^{n \times n}` and a constraint matrix
:math:`G \in \mathbb R^{d \times n}` (admissible column masses :math:`f`: :math:`G f = 0`),

.. math::

    \mathrm{OTF}_\varepsilon(h) = \min_{P \ge 0,\ P 1 = h,\ G P^\top 1 = 0}
        \langle C, P \rangle - \varepsilon H(P), \qquad
    H(P) = -\sum_{ij} P_{ij} (\log P_{ij} - 1),

and :math:`\mathrm{OTFR}_\varepsilon(h)` relaxes the linear constraint to
:math:`|G P^\top 1| \le \gamma := |G h|`. Both are solved through their duals

.. math::

    L(\lambda, \mu) &= \sum_i \lambda_i h_i - \varepsilon \sum_{ij}
        e^{(-C_{ij} + \lambda_i + \sum_c \mu_c G_{cj}) / \varepsilon}, \\
    L_R(\kappa, \phi, \psi) &= \sum_i \kappa_i h_i + \sum_c \gamma_c (\phi_c + \psi_c)
        - \varepsilon \sum_{ij} e^{(-C_{ij} + \kappa_i + \sum_c (\phi_c - \psi_c) G_{cj})
        / \varepsilon}, \quad \phi, \psi \le 0,

by exact coordinate ascent on the semi-dual (:mod:`otfair.ot._otf_solver`,
``otfair.ot._otf_semidual``): the row duals in closed form, each constraint dual
maximized exactly in turn. For OTFR the pair :math:`(\phi_c, \psi_c)` is updated
jointly through :math:`\nu_c = \phi_c - \psi_c` (at the optimum at most one is nonzero,
so :math:`\phi_c + \psi_c = -|\nu_c|`). When the columns of ``G`` take few distinct
values (discrete groups) the solves run on the exact reduction of the problem to those
column classes (:class:`~otfair.ot.OTFProblem`). The reported values are the dual
objectives at the returned duals, i.e. true lower bounds that equal
:math:`\mathrm{OTF}_\varepsilon` and :math:`\mathrm{OTFR}_\varepsilon` at convergence.

Each function builds an :class:`~otfair.ot.OTFProblem` from ``(C, G)``; callers that
solve several mass vectors on one cost build it once and call its methods.
"""

from __future__ import annotations

import inspect
from typing import Any

import torch

from otfair.ot._checks import as_tensor
from otfair.ot._otf_backends import OTF0Details, OTFResult
from otfair.ot._otf_problem import OTFProblem

__all__ = ["OTF0Details", "OTFProblem", "OTFResult", "otf0", "otf_dual", "otfr_dual"]


def _problem(h: object, C: object, G: object, chunk_rows: int | None) -> OTFProblem:
    """Return the problem of ``(C, G)`` in the dtype and on the device of ``h``."""
    return OTFProblem(C, G, chunk_rows=chunk_rows, like=as_tensor(h, "h"))


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
    solver: Any = None,
) -> OTFResult:
    r"""Solve the :math:`\mathrm{OTF}_\varepsilon(h)` dual by exact coordinate ascent.

    See the module docstring for the problem; runs without autograd (for the gradient in
    ``h`` use :func:`otf0` or the returned ``lam``, which is
    :math:`\partial\,\mathrm{OTF}_\varepsilon / \partial h` by the envelope theorem).

    Parameters
    ----------
    h : tensor of shape (n,)
        Positive row masses (e.g. a model's scores; clip sigmoid outputs, which can be
        exactly 0 in float32, to ``1e-6`` first, or use :func:`otf0`, which does).
    C : tensor of shape (n, n)
        Non-negative cost, e.g. :func:`euclidean_cost` of the batch features.
    G : tensor of shape (d, n)
        Constraint matrix; every row needs positive and negative entries.
    eps : float
        Entropic smoothing ``> 0`` (the paper uses 1e-3 with Euclidean costs on
        standardized features).
    tol : float, default=1e-4
        Tolerance on the relative constraint violation
        ``max_c (|G P^T 1|_c - gamma_c)_+ / sum(h)`` (the rows of the plan match ``h``
        exactly).
    max_iter : int, default=100
        Maximum sweeps over the ``d`` constraint duals (each row update is a
        safeguarded Newton solve costing one pass over ``C`` per step, and a two-group
        problem converges in one sweep).
    mu0 : tensor of shape (d,), optional
        Warm start for the constraint duals (they are per constraint and in cost units,
        so they transfer across batches and across values of ``eps``).
    eps_start : float, optional
        Epsilon scaling: solve first at ``eps * 2**k <= eps_start`` and halve down to
        ``eps``, warm-starting each stage (intermediate stages stop at a relative error
        of 1e-2). The semi-dual solver rarely needs it; the paper's alternating one
        (``benchmarks/otf_alternating.py``) does at ``eps <= 1e-3``. ``n_iter`` counts
        all stages.
    chunk_rows : int, optional
        Rows per chunk of the in-place log-sum-exp.
    warn : bool, default=True
        Issue a :class:`ConvergenceWarning` when ``tol`` is not reached.
    method : {"semidual"}, default="semidual"
        The built-in solver: eliminates the row duals in closed form and maximizes over
        each constraint dual exactly (``otfair.ot._otf_semidual``). When the columns
        of ``G`` take few distinct values (discrete groups) it runs on the exact class
        reduction of the problem, which costs one pass over ``C`` per ``eps``.
        ``"alternating"`` (the paper's App. A) moved to ``benchmarks/otf_alternating.py``.
    solver : class, optional
        A solver class with the interface of
        ``otfair.ot._otf_solver.SemiDualSolver`` (overrides ``method``; e.g. the
        reference ``AlternatingSolver`` of ``benchmarks/otf_alternating.py``).

    Returns
    -------
    OTFResult
    """
    options = {"tol": tol, "max_iter": max_iter, "mu0": mu0, "eps_start": eps_start,
               "warn": warn, "method": method, "solver": solver}  # fmt: skip
    return _problem(h, C, G, chunk_rows).otf_dual(h, eps, **options)


_OTF_DUAL_SIGNATURE = inspect.signature(otf_dual)


def otfr_dual(h: object, C: object, G: object, eps: float, **options: Any) -> OTFResult:
    r"""Solve the relaxed :math:`\mathrm{OTFR}_\varepsilon(h)` dual (bounds :math:`|G h|`).

    Same parameters (the keyword ones with the same defaults) and result as
    :func:`otf_dual`; ``result.mu`` holds :math:`\nu = \phi - \psi` and the value
    includes :math:`\sum_c \gamma_c(\phi_c + \psi_c)`. Rows with :math:`\gamma_c = 0`
    are treated as equalities (the same closed-form update as OTF), so that
    :math:`\mathrm{OTF}^0_\varepsilon(h) = 0` exactly when :math:`G h = 0` exactly.
    """
    _OTF_DUAL_SIGNATURE.bind(h, C, G, eps, **options)  # a TypeError for any other keyword
    chunk_rows = options.pop("chunk_rows", None)
    return _problem(h, C, G, chunk_rows).otfr_dual(h, eps, **options)


def otf0(
    h: torch.Tensor, C: object, G: object, eps: float, *, tol: float = 1e-4, max_iter: int = 20,
    min_score: float = 1e-6, warm_start: OTF0Details | None = None,
    eps_start: float | None = None, chunk_rows: int | None = None, warn: bool = False,
    return_details: bool = False, method: str = "semidual", solver: Any = None,
    check: bool = True,
) -> torch.Tensor | tuple[torch.Tensor, OTF0Details | tuple[OTF0Details, ...]]:  # fmt: skip
    r"""Compute the adjusted OTF cost, differentiable in the masses ``h``.

    .. math::

        \mathrm{OTF}^0_\varepsilon(h) = \mathrm{OTF}_\varepsilon(h)
            - \mathrm{OTFR}_\varepsilon(h)

    Buyl & De Bie, NeurIPS 2022, Def. 5 and §3.4. It is zero when
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
    h : tensor of shape (n,) or (K, n)
        Non-negative masses (e.g. scores in [0, 1]), or ``K`` such vectors (the scores
        of ``K`` models on one batch: one class-reduced cost serves all of them, and
        each value equals the single-vector one). Entries below ``min_score``, exact
        zeros included (float32 ``sigmoid`` returns 0 below about -88), are raised to it
        with zero gradient. Negative entries raise ``ValueError``.
    C : tensor of shape (n, n)
        Cost matrix (e.g. :func:`euclidean_cost` on non-protected features).
    G : tensor of shape (d, n)
        Constraint matrix of the batch.
    eps : float
        Entropic smoothing ``> 0``.
    tol : float, default=1e-4
        Relative tolerance of both solves (see :func:`otf_dual`).
    max_iter : int, default=20
        Sweeps per solve.
    min_score : float, default=1e-6
        Lower clip of the masses (absolute; the entropic problem needs ``h > 0``).
    warm_start : OTF0Details or sequence of K OTF0Details, optional
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
    method, solver : {"semidual"} and class, optional
        The solver of both problems, as in :func:`otf_dual` (``solver`` overrides).
    check : bool, default=True
        Stop the sweeps once both solves are within ``tol`` (one host read per sweep);
        ``False`` runs all ``max_iter`` sweeps with no host read (a fixed schedule for
        accelerators; problems already converged stay put).

    Returns
    -------
    torch.Tensor or (torch.Tensor, OTF0Details)
        The 0-d value (shape (K,) for ``K`` vectors) and, if asked, the details (a tuple
        of ``K`` for ``K`` vectors).
    """
    return _problem(h, C, G, chunk_rows).otf0(
        h, eps, tol=tol, max_iter=max_iter, min_score=min_score, warm_start=warm_start,
        eps_start=eps_start, warn=warn, return_details=return_details, method=method,
        solver=solver, check=check,
    )  # fmt: skip
