"""Backends of the semi-dual solve: result types, solver classes and batched solves.

:class:`SemiDualSolver` (torch, batched) and :class:`HostSemiDualSolver` (numpy, one
problem at a time) maximize the semi-dual of the OTF / OTFR problems (Buyl & De Bie,
"Optimal Transport of Classifiers to Fairness", NeurIPS 2022, §3.4);
:func:`solver_backend` picks one from the environment variable
:data:`BACKEND_ENV_VAR` and the device, and :func:`_solve_batch` solves a batch.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import torch

from otfair.ot._otf_semidual import SMALL_COLUMNS, SemiDual, solve_semidual
from otfair.ot._otf_semidual_host import solve_host_batch
from otfair.ot._sinkhorn import ConvergenceWarning
from otfair.utils._warnings import user_stacklevel


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
    """Gauss-Seidel on the semi-dual (:mod:`otfair.ot._otf_semidual`), one problem.

    The solver interface of :func:`solve_dual` for plug-in solvers: ``Solver(h, C, G,
    eps, gamma=, chunk_rows=)`` on the (possibly class-reduced) matrices of one ``eps``,
    then ``solve(tol=, max_iter=, y0=, warn=, name=) -> OTFResult`` with ``y0 = mu / eps``.
    The package's own solves call the batched :func:`_solve_batch` directly (this class
    is that with one problem).
    """

    backend = "batched"

    def __init__(self, h, C, G, eps, *, gamma=None, chunk_rows=None):
        self.args = (h, C, G, eps, gamma, chunk_rows)

    def solve(self, *, tol, max_iter, y0=None, warn=False, name="otf") -> OTFResult:
        """Sweep until the constraint violation is at most ``tol`` (or ``max_iter``)."""
        h, C, G, eps, gamma, chunk_rows = self.args
        relaxed = gamma is not None
        gam = None if gamma is None else torch.as_tensor(gamma)[None]
        out = _solve_batch(
            h[None], C, G, eps, gam, [relaxed], tol=tol, max_iter=max_iter,
            y0=None if y0 is None else y0[None], chunk_rows=chunk_rows, backend=self.backend,
        )  # fmt: skip
        res = _result(out, 0)
        if self.backend == "host":  # errors are host floats there
            error = float(out["err"][0])
            res = replace(res, constraint_error=error, converged=error <= tol)
        if warn:
            _warn_unconverged([res], tol, eps, name)
        return res


class HostSemiDualSolver(SemiDualSolver):
    """Gauss-Seidel on the semi-dual with scalar root finding (:mod:`._otf_semidual_host`).

    The default for CPU tensors (see :func:`solver_backend`): one problem at a time, each
    constraint dual's Newton iteration stopped as soon as its root is found; the same
    plug-in interface as :class:`SemiDualSolver`, and the same answers (float64, 1e-8 in
    ``tests/ot/test_otf.py``).
    """

    backend = "host"


#: Environment variable that chooses the built-in OTF solver (see :func:`solver_backend`).
BACKEND_ENV_VAR = "OTFAIR_OTF_SOLVER"
BACKENDS = ("auto", "batched", "host")


def solver_backend(device: torch.device) -> str:
    """Return the built-in solver for tensors on ``device``: ``"batched"`` or ``"host"``.

    ``$OTFAIR_OTF_SOLVER`` = ``auto`` (the default) picks the host (numpy) solver for CPU
    tensors, where reading a value is free and it is ~10x cheaper per solve, and the
    batched torch solver elsewhere (no host round-trip inside its loop);
    ``batched`` or ``host`` force one (e.g. ``batched`` to check the device path on a CPU).
    """
    choice = os.environ.get(BACKEND_ENV_VAR, "auto").strip().lower() or "auto"
    if choice not in BACKENDS:
        raise ValueError(f"${BACKEND_ENV_VAR} must be one of {BACKENDS}; got {choice!r}.")
    if choice == "auto":
        return "host" if torch.device(device).type == "cpu" else "batched"
    return choice


def _solve_batch(
    H: torch.Tensor,
    C: torch.Tensor,
    G: torch.Tensor,
    eps: float,
    gamma: torch.Tensor | None,
    relaxed: Sequence[bool],
    *,
    tol: float,
    max_iter: int,
    y0: torch.Tensor | None = None,
    chunk_rows: int | None = None,
    check: bool = True,
    basis: tuple[torch.Tensor, torch.Tensor] | None = None,
    backend: str = "batched",
) -> dict[str, Any]:
    """Solve ``B`` problems sharing ``(C, G)`` at one ``eps``; return batched tensors.

    ``H`` (B, n) masses; ``gamma`` (B, d) OTFR bounds (ignored where ``relaxed`` is
    False; None when no problem is relaxed); ``y0`` (B, d) warm starts ``mu / eps``.
    ``backend="batched"``: everything stays on ``C``'s device, see
    :func:`otfair.ot._otf_semidual.solve_semidual`; ``"host"`` (:func:`solver_backend`):
    problem by problem, :func:`otfair.ot._otf_semidual_host.solve_host_batch` (a reduced
    problem in numpy after one host read).
    """
    B = H.shape[0]
    device = C.device
    rel = torch.tensor(list(relaxed), dtype=torch.bool).to(device)
    gam = torch.zeros(B, G.shape[0], dtype=torch.float64, device=device)
    if gamma is not None:
        gam = torch.where(rel[:, None], gamma.to(device=device, dtype=torch.float64), gam)
    if backend == "host":
        return solve_host_batch(
            H, C, G, eps, gam, relaxed, tol=tol, max_iter=max_iter, y0=y0, chunk_rows=chunk_rows
        )
    sd = SemiDual(H, C, G, eps, gam, chunk_rows=chunk_rows)
    joint = None
    if sd.m <= SMALL_COLUMNS and sd.d > 1 and not all(relaxed):
        joint = ~rel
    y, w, err, sweeps = solve_semidual(
        sd, tol=tol, max_iter=max_iter, y0=y0, joint=joint, check=check, basis=basis
    )
    lam = sd.lam(w)
    return {"value": sd.value(lam, y), "lam": lam, "mu": sd.eps * y, "mass": sd.h_sum,
            "n_iter": sweeps, "err": err, "tol": tol}  # fmt: skip


def _result(out: dict[str, Any], b: int) -> OTFResult:
    """Problem ``b`` of a :func:`_solve_batch` output (device tensors, no host read)."""
    return OTFResult(
        value=out["value"][b],
        lam=out["lam"][b],
        mu=out["mu"][b],
        mass=out["mass"][b],
        n_iter=out["n_iter"],
        marginal_error=0.0,
        constraint_error=out["err"][b],
        converged=out["err"][b] <= out["tol"],
    )


def _warn_unconverged(results: Sequence[OTFResult], tol: float, eps: float, name: str) -> None:
    """Issue a :class:`ConvergenceWarning` for the first result above ``tol`` (a host read)."""
    for res in results:
        if not bool(res.converged):
            warnings.warn(
                f"{name} did not converge: constraint error {float(res.constraint_error):.3g}"
                f" > tol={tol:g} after {res.n_iter} sweeps (eps={eps:g}).",
                ConvergenceWarning,
                stacklevel=user_stacklevel(),
            )
            return
