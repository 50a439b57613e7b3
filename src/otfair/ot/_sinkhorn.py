"""Log-domain Sinkhorn for entropic optimal transport."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from numbers import Real

import torch

from otfair.ot._checks import (
    check_eps,
    check_matrix,
    check_positive_int,
    check_same_mass,
    check_shaped,
    check_weights,
)
from otfair.ot._lse import lse_cols, lse_rows
from otfair.utils import Interval, positive_int, validate_params


class ConvergenceWarning(UserWarning):
    """An iterative OT solver stopped at ``max_iter`` before reaching ``tol``."""


@dataclass(frozen=True)
class SinkhornResult:
    r"""Outcome of :func:`sinkhorn` (all tensors detached, on the device of ``M``).

    Attributes
    ----------
    f, g : torch.Tensor of shape (n0,) / (n1,)
        Dual potentials; the plan is
        :math:`P_{ij} = a_i b_j \exp((f_i + g_j - M_{ij}) / \varepsilon)`.
    plan : torch.Tensor of shape (n0, n1) or None
        The plan :math:`P` (``None`` when ``return_plan=False``).
    value : torch.Tensor
        The regularized value
        :math:`\mathrm{OT}_\varepsilon = \langle P, M\rangle
        + \varepsilon\,\mathrm{KL}(P \,\|\, a \otimes b)`, computed as the dual objective
        :math:`\langle a, f\rangle + \langle b, g\rangle`.
    sharp_value : torch.Tensor
        The sharp value :math:`\langle P, M \rangle` (what POT's ``ot.sinkhorn2``
        returns).
    n_iter : int
        Iterations performed (one iteration updates ``f`` then ``g``).
    marginal_error : float
        :math:`\lVert P 1 - a \rVert_1` at the last check (columns are exact after a
        ``g`` update).
    converged : bool
        Whether ``marginal_error <= tol`` was reached within ``max_iter``.
    """

    f: torch.Tensor
    g: torch.Tensor
    plan: torch.Tensor | None
    value: torch.Tensor
    sharp_value: torch.Tensor
    n_iter: int
    marginal_error: float
    converged: bool


def _log_weights(w: torch.Tensor) -> torch.Tensor:
    return torch.where(w > 0, w.clamp_min(torch.finfo(w.dtype).tiny).log(), -torch.inf)


@validate_params(
    {
        "tol": [Interval(Real, 0, None, closed="left")],
        "check_every": [positive_int()],
        "return_plan": ["boolean"],
        "chunk_rows": [positive_int(), None],
        "warn": ["boolean"],
    }
)
def sinkhorn(
    a: object | None,
    b: object | None,
    M: object,
    eps: float,
    *,
    tol: float = 1e-6,
    max_iter: int = 1000,
    check_every: int = 1,
    f0: torch.Tensor | None = None,
    g0: torch.Tensor | None = None,
    return_plan: bool = True,
    chunk_rows: int | None = None,
    warn: bool = True,
) -> SinkhornResult:
    r"""Entropic OT between weights ``a`` and ``b`` by log-domain Sinkhorn iterations.

    Solves (Cuturi 2013; Peyré & Cuturi 2019, §4.4) :math:`\mathrm{OT}_\varepsilon(a, b) =
    \min_{P \ge 0,\, P 1 = a,\, P^\top 1 = b} \langle P, M \rangle + \varepsilon\,
    \mathrm{KL}(P \,\|\, a \otimes b)` with the alternating dual updates, in the log domain,

    .. math::

        f_i \leftarrow -\varepsilon \log \sum_j b_j e^{(g_j - M_{ij})/\varepsilon},\qquad
        g_j \leftarrow -\varepsilon \log \sum_i a_i e^{(f_i - M_{ij})/\varepsilon}.

    The plan is that of POT's ``ot.sinkhorn`` (the KL and entropy forms differ by a
    constant on the feasible set). The loop stops when :math:`\lVert P 1 - a \rVert_1 \le`
    ``tol`` or after ``max_iter`` iterations (``converged`` says which; a
    :class:`ConvergenceWarning` unless ``warn=False``). Results are detached; for a
    differentiable value use :func:`sharp_sinkhorn` or the envelope theorem.

    Parameters
    ----------
    a : tensor of shape (n0,) or None
        Source weights, non-negative, positive total (uniform when ``None``).
    b : tensor of shape (n1,) or None
        Target weights with the same total as ``a`` (uniform when ``None``).
    M : tensor of shape (n0, n1)
        Cost matrix.
    eps : float
        Regularization ``> 0`` in the units of ``M`` (scale ``M``, e.g. by its median).
    tol : float, default=1e-6
        Tolerance on the L1 row-marginal error. In float32 this is reachable when
        ``M / eps`` stays below a few hundred; scale ``M`` first or use float64.
    max_iter : int, default=1000
        Maximum number of iterations.
    check_every : int, default=1
        Check the marginal error every this many iterations (free: reuses the update).
    f0, g0 : tensor, optional
        Warm-start potentials (e.g. from a previous, similar problem).
    return_plan : bool, default=True
        Materialize the n0 x n1 plan in the result.
    chunk_rows : int, optional
        Rows per chunk of the in-place log-sum-exp (see ``otfair.ot._lse``).
    warn : bool, default=True
        Issue a :class:`ConvergenceWarning` when ``tol`` is not reached.

    Returns
    -------
    SinkhornResult
    """
    eps, max_iter, check_every = _check_settings(eps, tol, max_iter, check_every)
    Mt = check_matrix(M, "M")
    with torch.no_grad():
        Mt, at, bt, f, g = _problem(a, b, Mt.detach(), f0, g0)
        f, g, err, converged, it = _iterate(
            Mt, at, bt, f, g, eps, float(tol), max_iter, check_every, chunk_rows
        )
        if not converged and warn:
            _warn_not_converged(err, tol, max_iter, eps)
        log_p = (f[:, None] + g[None, :] - Mt) / eps
        P = (log_p + _log_weights(at)[:, None] + _log_weights(bt)[None, :]).exp()
        sharp, value = (P * Mt).sum(), (at * f).sum() + (bt * g).sum()
    plan = P if return_plan else None
    return SinkhornResult(f, g, plan, value, sharp, it, err, converged)


def _check_settings(
    eps: float, tol: float, max_iter: int, check_every: int
) -> tuple[float, int, int]:
    """Return ``eps``, ``max_iter`` and ``check_every`` checked (and ``tol >= 0``)."""
    eps = check_eps(eps)
    max_iter = check_positive_int(max_iter, "max_iter")
    check_every = check_positive_int(check_every, "check_every")
    if not float(tol) >= 0.0:
        raise ValueError(f"`tol` must be >= 0; got {tol!r}.")
    return eps, max_iter, check_every


def _warn_not_converged(err: float, tol: float, max_iter: int, eps: float) -> None:
    """Issue the :class:`ConvergenceWarning` of a run that stopped at ``max_iter``."""
    warnings.warn(
        f"sinkhorn did not converge: marginal error {err:.3g} > tol={tol:g} after "
        f"{max_iter} iterations (eps={eps:g}); increase max_iter or eps.",
        ConvergenceWarning,
        stacklevel=3,  # the caller of sinkhorn
    )


def _problem(
    a: object | None, b: object | None, Mt: torch.Tensor, f0: object, g0: object
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Return the cost, the checked weights of equal mass and the starting potentials."""
    n0, n1 = Mt.shape
    at = check_weights(a, n0, "a", like=Mt, normalize=False).detach()
    bt = check_weights(b, n1, "b", like=Mt, normalize=False).detach()
    check_same_mass(at, bt, ("a", "b"))
    f = Mt.new_zeros(n0) if f0 is None else check_shaped(f0, (n0,), "f0", like=Mt).clone()
    g = Mt.new_zeros(n1) if g0 is None else check_shaped(g0, (n1,), "g0", like=Mt).clone()
    return Mt, at, bt, f, g


def _iterate(
    Mt: torch.Tensor,
    at: torch.Tensor,
    bt: torch.Tensor,
    f: torch.Tensor,
    g: torch.Tensor,
    eps: float,
    tol: float,
    max_iter: int,
    check_every: int,
    chunk_rows: int | None,
) -> tuple[torch.Tensor, torch.Tensor, float, bool, int]:
    """Run the alternating log-domain updates: ``(f, g, error, converged, iterations)``.

    The row-marginal error of the current ``(f, g)`` is read off the next ``f`` update
    every ``check_every`` iterations, so the check costs nothing.
    """
    log_a, log_b = _log_weights(at), _log_weights(bt)
    scale = -1.0 / eps
    err, it = float("inf"), 0
    while it < max_iter:
        f_new = -eps * lse_rows(Mt, scale, g / eps + log_b, chunk_rows=chunk_rows)
        if it % check_every == 0 and it > 0:
            # row marginal of the current (f, g): a_i exp((f_i - f_new_i) / eps)
            err = float((at * torch.expm1((f - f_new) / eps)).abs().sum())
            if err <= tol:
                return f, g, err, True, it
        f = f_new
        g = -eps * lse_cols(Mt, scale, f / eps + log_a, chunk_rows=chunk_rows)
        it += 1
    return f, g, err, False, it
