r"""Solvers of the OTF / OTFR duals on an :class:`~otfair.ot.OTFProblem`.

The default solver, :class:`SemiDualSolver`, runs Gauss-Seidel over the constraint
duals of the semi-dual (:mod:`otfair.ot._otf_semidual`: the row duals in closed form,
each constraint dual maximized exactly by a safeguarded Newton iteration), with joint
Newton steps for small problems with coupled rows. :func:`solve_dual` adds epsilon
scaling and warm starts around any solver with the same interface (the paper's
alternating algorithm, App. A, is kept as a reference in ``benchmarks/otf_alternating.py``
and plugs in through ``solver=``); :func:`solve_otf0` combines the OTF and OTFR solves
into the adjusted cost OTF0 with its envelope-theorem gradient
(Buyl & De Bie, NeurIPS 2022, §3.4).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import torch

from otfair.ot._checks import as_tensor, check_eps, check_positive_int, check_vector
from otfair.ot._otf_backends import (
    OTF0Details,
    OTFResult,
    SemiDualSolver,
    _result,
    _solve_batch,
    _warn_unconverged,
    solver_backend,
)

if TYPE_CHECKING:
    from otfair.ot._otf_problem import OTFProblem


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


def _solve_stages(
    problem: OTFProblem,
    H: torch.Tensor,
    eps: float,
    relaxed: Sequence[bool],
    *,
    tol: float,
    max_iter: int,
    y0: torch.Tensor | None,
    eps_start: float | None,
    check: bool = True,
    backend: str = "batched",
) -> dict[str, Any]:
    """Batched solves of ``problem`` for masses ``H`` (B, n) through the eps schedule."""
    schedule = _schedule(eps, eps_start)
    with torch.no_grad():
        H = H.detach()
        gamma = None
        if any(relaxed):  # OTFR's bounds |G h|
            gamma = _abs_constraint(H.to(torch.float64), problem.G.to(torch.float64))
        total = 0
        for k, eps_k in enumerate(schedule):
            last = k == len(schedule) - 1
            C_k, G_k = problem.matrices(eps_k)
            out = _solve_batch(
                H.to(C_k.dtype), C_k, G_k, eps_k, gamma, relaxed,
                tol=tol if last else max(tol, 1e-2), max_iter=max_iter, y0=y0,
                chunk_rows=problem.chunk_rows, check=check, backend=backend,
                basis=problem.row_basis(G_k) if backend == "batched" else None,
            )  # fmt: skip
            total += out["n_iter"]
            if not last:  # mu is in cost units: carry it over, rescaled to the next eps
                y0 = out["mu"] / schedule[k + 1]
    out["n_iter"] = total
    return out


def _abs_constraint(H: torch.Tensor, G: torch.Tensor) -> torch.Tensor:
    """``|G h|`` for each row ``h`` of ``H`` (K, d), each row summed as for K = 1.

    Elementwise product and a sum over ``n`` (not a matrix product, whose blocking
    depends on K): at a fair ``h`` the signs of the ~1e-17 entries of ``G h`` choose
    the gradient of OTFR's bound, so a row of a batch must round as it does alone.
    """
    return (H[:, None, :] * G[None]).sum(dim=-1).abs()


#: the keywords of :func:`solve_dual` and their defaults (the public signatures of
#: ``otf_dual``, ``otfr_dual`` and the :class:`OTFProblem` methods show the same; a test
#: keeps them equal)
DUAL_OPTIONS: dict[str, Any] = {"tol": 1e-4, "max_iter": 100, "mu0": None, "eps_start": None,
                                "warn": True, "method": "semidual", "solver": None}  # fmt: skip
#: the keywords of :func:`solve_otf0` and their defaults (as ``otf0``'s)
OTF0_OPTIONS: dict[str, Any] = {"tol": 1e-4, "max_iter": 20, "min_score": 1e-6,
                                "warm_start": None, "eps_start": None, "warn": False,
                                "method": "semidual", "solver": None, "check": True,
                                "trusted": False}  # fmt: skip


def _options(given: dict[str, Any], defaults: dict[str, Any], caller: str) -> dict[str, Any]:
    """``defaults`` updated by ``given``; a TypeError for a keyword not in ``defaults``."""
    unknown = sorted(set(given) - set(defaults))
    if unknown:
        raise TypeError(f"{caller}() got an unexpected keyword argument {unknown[0]!r}")
    return {**defaults, **given}


def solve_dual(
    problem: OTFProblem, h: torch.Tensor, eps: float, *, relaxed: bool, name: str | None = None,
    **options: Any,
) -> OTFResult:  # fmt: skip
    """Solve the OTF (``relaxed=False``) or OTFR dual of ``problem`` for masses ``h``.

    ``h`` is checked by the caller; ``options`` are the keywords of
    :func:`otfair.ot.otf_dual` (:data:`DUAL_OPTIONS`). Runs through the halving sequence
    of ``eps`` from ``eps_start`` when given, each stage warm-started by the previous
    one's constraint duals (in cost units).
    """
    opts = _options(options, DUAL_OPTIONS, "otf_dual")
    tol, max_iter, eps_start = opts["tol"], opts["max_iter"], opts["eps_start"]
    warn, method, solver = opts["warn"], opts["method"], opts["solver"]
    mu0 = opts["mu0"]
    eps = check_eps(eps)
    max_iter = check_positive_int(max_iter, "max_iter")
    solver_cls = _solver_class(method, solver)
    name = name or ("otfr_dual" if relaxed else "otf_dual")
    dtype = problem.G.dtype
    y0 = _y0(mu0, problem.d, _schedule(eps, eps_start)[0], problem.G)
    if solver_cls is SemiDualSolver:  # the built-in solver, batched with B = 1
        out = _solve_stages(
            problem, h[None], eps, [relaxed], tol=tol, max_iter=max_iter,
            y0=None if y0 is None else y0[None], eps_start=eps_start,
            backend="batched" if solver is not None else solver_backend(h.device),
        )  # fmt: skip
        res = _result(out, 0)
        if warn:
            _warn_unconverged([res], tol, eps, name)
    else:
        res = _solve_plugin(problem, h, eps, relaxed, solver_cls, tol, max_iter, y0,
                            eps_start, warn, name)  # fmt: skip
    return replace(
        res,
        value=res.value.to(dtype),
        lam=res.lam.to(dtype),
        mu=res.mu.to(dtype),
        mass=res.mass.to(dtype),
    )


def _solve_plugin(problem, h, eps, relaxed, solver_cls, tol, max_iter, y0, eps_start, warn, name):
    """One problem through a plug-in solver class and the eps schedule."""
    schedule = _schedule(eps, eps_start)
    with torch.no_grad():
        h = h.detach()
        gamma = None
        if relaxed:  # OTFR's bounds |G h|
            gamma = (problem.G.to(torch.float64) @ h.to(torch.float64)).abs()
        total = 0
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
            if not last:
                y0 = res.mu.to(torch.float64) / schedule[k + 1]
    return replace(res, n_iter=total)


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
    problem: OTFProblem, h: object, eps: float, **options: Any
) -> tuple[torch.Tensor, OTF0Details | tuple[OTF0Details, ...]]:
    r"""OTF0 of ``h`` on ``problem`` and both solves (see :func:`otfair.ot.otf0`).

    ``options``: the keywords of :func:`otfair.ot.otf0` (:data:`OTF0_OPTIONS`) and
    ``trusted``.

    Both solves run on the detached, clipped masses; the value is re-evaluated with ``h``
    attached at the detached duals (``gamma = |G h|`` attached too), so autograd gives the
    envelope-theorem gradient. ``h`` of shape ``(K, n)`` (the scores of ``K`` models on
    one batch) gives ``K`` values, each exactly the single-vector one, solved against the
    one cached class-reduced cost; ``warm_start`` is then a sequence of ``K`` details.
    ``check=False`` runs the fixed ``max_iter`` sweeps with no host read (see
    :func:`otfair.ot._otf_semidual.solve_semidual`); ``trusted=True`` (callers that
    clipped ``h`` themselves, e.g. the OTF penalty) skips the value checks of ``h``
    (a host read), not the shape checks.
    """
    opts = _options(options, OTF0_OPTIONS, "otf0")
    tol, max_iter, min_score = opts["tol"], opts["max_iter"], opts["min_score"]
    warm_start, eps_start, warn = opts["warm_start"], opts["eps_start"], opts["warn"]
    method, solver, check = opts["method"], opts["solver"], opts["check"]
    if opts["trusted"]:
        ht = torch.as_tensor(h)
        if ht.dim() not in (1, 2) or ht.shape[-1] != problem.n:
            ht = _check_otf0_masses(problem, h, min_score)
        ht = ht.to(problem.G.dtype)
    else:
        ht = _check_otf0_masses(problem, h, min_score)
    single = ht.dim() == 1
    H = ht[None] if single else ht
    K = H.shape[0]
    starts: list[Any]
    if warm_start is None:
        starts = [None] * K
    elif single:
        starts = [warm_start]
    else:
        starts = list(warm_start)  # a sequence when K > 1
    if len(starts) != K:
        raise ValueError(f"`warm_start` must hold {K} details (one per row of `h`).")
    H_eff = H.clamp(min=float(min_score))
    if solver is not None or method != "semidual":
        _solver_class(method, solver)  # a clear error for an unknown method
        kw = {"tol": tol, "max_iter": max_iter, "eps_start": eps_start, "warn": warn,
              "method": method, "solver": solver}  # fmt: skip
        out = [_otf0_one(problem, H_eff[k], eps, starts[k], kw) for k in range(K)]
        values, details = torch.stack([v for v, _ in out]), tuple(d for _, d in out)
    else:
        values, details = _otf0_batched(
            problem, H_eff, eps, starts, tol=tol, max_iter=max_iter, eps_start=eps_start,
            warn=warn, check=check, backend=solver_backend(H.device),
        )  # fmt: skip
    return (values[0], details[0]) if single else (values, details)


def _otf0_batched(
    problem: OTFProblem,
    H_eff: torch.Tensor,
    eps: float,
    starts: Sequence[OTF0Details | None],
    *,
    tol: float,
    max_iter: int,
    eps_start: float | None,
    warn: bool,
    check: bool,
    backend: str = "batched",
) -> tuple[torch.Tensor, tuple[OTF0Details, ...]]:
    """OTF0 of the K rows of ``H_eff``: the 2K OTF and OTFR solves in one batch."""
    eps = check_eps(eps)
    max_iter = check_positive_int(max_iter, "max_iter")
    K, d = H_eff.shape[0], problem.d
    dtype = problem.G.dtype
    y0 = None
    if any(w is not None for w in starts):
        eps0 = _schedule(eps, eps_start)[0]
        zero = torch.zeros(d, dtype=torch.float64, device=H_eff.device)
        mus = [zero if w is None else w.otf.mu.to(torch.float64) for w in starts]
        nus = [zero if w is None else w.otfr.mu.to(torch.float64) for w in starts]
        y0 = torch.stack(mus + nus) / eps0
    H2 = torch.cat([H_eff, H_eff]).detach()
    out = _solve_stages(
        problem, H2, eps, [False] * K + [True] * K, tol=tol, max_iter=max_iter, y0=y0,
        eps_start=eps_start, check=check, backend=backend,
    )  # fmt: skip
    for key in ("value", "lam", "mu", "mass"):
        out[key] = out[key].to(dtype)
    lam, mu, mass = out["lam"], out["mu"], out["mass"]
    gamma = _abs_constraint(H_eff, problem.G)  # attached: OTFR's bounds move with h
    value_otf = (lam[:K] * H_eff).sum(dim=1) - eps * mass[:K]
    value_otfr = (lam[K:] * H_eff).sum(dim=1) - (gamma * mu[K:].abs()).sum(dim=1)
    value_otfr = value_otfr - eps * mass[K:]
    details = tuple(OTF0Details(_result(out, k), _result(out, K + k)) for k in range(K))
    if warn:
        _warn_unconverged([r for dd in details for r in (dd.otf, dd.otfr)], tol, eps, "otf0")
    return value_otf - value_otfr, details


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
