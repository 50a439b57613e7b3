r"""The host driver of the OTF / OTFR semi-dual: the default on CPU tensors.

The Gauss-Seidel of :mod:`otfair.ot._otf_semidual` on its :class:`SemiDual` (see that
module for the math), one problem at a time, with each constraint dual's root found by
a scalar safeguarded Newton iteration (:func:`otfair.ot._newton.bracketed_newton`) that
stops as soon as the root is found. A class-reduced problem (``n x K``, a few classes)
runs on numpy arrays (:data:`~otfair.ot._otf_namespace.NUMPY`: ~2 us per operation
against torch's ~10 us dispatch) after one conversion of all inputs; a dense one on the
CPU tensors themselves (:data:`~otfair.ot._otf_namespace.TORCH`). On a CPU reading a
value is a view of the same memory, not a device round-trip, and this is ~10x cheaper per
solve than the batched driver, whose fixed-length masked Newton steps pay torch's
per-call overhead on tiny tensors (``benchmarks/otf_ratio_bench.py``). On an accelerator
the batched driver runs instead; :func:`otfair.ot._otf_backends.solver_backend` chooses.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from otfair.ot._newton import bracketed_newton
from otfair.ot._otf_namespace import NUMPY, TORCH
from otfair.ot._otf_semidual import SMALL_COLUMNS, SemiDual

#: joint Newton steps after a sweep of a small OTF problem with coupled rows
JOINT_STEPS = 20
DAMPING = (0.0, 1e-8, 1e-4, 1e-1)


def _coordinate_root(
    residual: Callable[[float], tuple[float, float]],
    yc: float,
    gamma: float,
    atol: float,
    y_scale: float,
    spread: float,
) -> float:
    r"""Return the :math:`y_c` maximizing :math:`F` along one coordinate.

    ``residual(t) = (D_c, dD_c/dt)`` at :math:`y_c = t`; ``yc`` the current value (the
    warm start's magnitude), ``gamma`` the OTFR bound (0: the equality), ``atol`` the
    tolerance on :math:`D_c`, ``spread`` :math:`\max_j G_{cj} - \min_j G_{cj}`.
    """
    # D at y_c = 0 fixes the side of the root: start there at the warm start's
    # magnitude (batches differ in which group needs mass, rarely in how much)
    d_zero, slope_zero = residual(0.0)
    target = 0.0
    if gamma > 0.0:
        if abs(d_zero) <= gamma:
            return 0.0
        target = math.copysign(gamma, d_zero)
    r_zero = d_zero - target
    if abs(r_zero) <= atol:
        return 0.0
    step = 0.25 * y_scale / spread if spread > 0 else 1.0
    size = abs(yc) or step
    if r_zero > 0:  # D is increasing: the root is below 0
        lo, hi, start = -math.inf, 0.0, -size
    else:
        lo, hi, start = 0.0, math.inf, size
    if slope_zero > 0 and lo < -r_zero / slope_zero < hi and not yc:
        start = -r_zero / slope_zero  # a Newton step from 0 when there is no history

    def shifted(t: float) -> tuple[float, float, float]:
        value, slope = residual(t)
        return value - target, slope, atol

    return bracketed_newton(shifted, start, lo=lo, hi=hi, step=step)


def solve_row(sd: SemiDual, c: int, y: Any, w: Any, rtol: float) -> float:
    """Return the :math:`y_c` maximizing :math:`F` along coordinate ``c`` (``sd`` one problem)."""
    g = sd.G[c]
    yc = float(y[c])
    base = w - yc * g  # column weights without row c

    def residual(t: float) -> tuple[float, float]:
        value, slope = sd.moments(base + t * g, c)
        return float(value), float(slope)

    spread = float(sd.spread[c])
    atol = rtol * float(sd.h_sum)
    gamma = float(sd.gamma[c])
    return _coordinate_root(residual, yc, gamma, atol, float(sd.y_scale), spread)


def joint_newton(sd: SemiDual, y: np.ndarray, tol: float) -> np.ndarray:
    r"""Newton's method on all constraint duals at once (one small OTF problem, numpy).

    Only :math:`G^\top y` matters, so the iteration runs on coordinates :math:`z` of the
    row space of ``G`` (orthonormal basis ``B`` from its SVD, :math:`G^\top y = B^\top z`):
    dependent rows (e.g. the per-group DP rows) drop out, and the Hessian
    :math:`-\varepsilon M` (:meth:`SemiDual.joint_system`) is regular unless every
    softmax is saturated. The step solves :math:`M \delta = -B P^\top 1` (with the first
    Levenberg-Marquardt damping of ``DAMPING`` that works) and is halved until :math:`F`
    increases (or, within rounding of :math:`F`, the constraint residual falls). Coupled
    rows take Gauss-Seidel tens of sweeps; this takes a handful of steps. Returns the
    minimum-norm ``y`` of the final :math:`z`; the caller finishes with
    Gauss-Seidel sweeps if ``tol`` is not reached.
    """
    G, h_sum = sd.G64, float(sd.h_sum)
    _, sing, vt = np.linalg.svd(G, full_matrices=False)
    # rank cut at 1e-6: rows that are dependent up to float32 rounding count as dependent
    Bm = vt[: int((sing > 1e-6 * sing[0]).sum())]  # (r, m) orthonormal rows
    z = Bm @ (G.T @ y)
    objective, e, s, col = sd.joint_state(z, Bm)
    for _ in range(JOINT_STEPS):
        if np.abs(col @ G.T).max() <= tol * h_sum:
            break
        Dz, M = sd.joint_system(e, s, col, Bm)
        scale = max(float(np.trace(M)), 1e-300)
        step = None
        # Levenberg-Marquardt damping: plain Newton first, then towards gradient
        # steps if rounding makes the Newton direction useless (saturated softmaxes)
        for damping in DAMPING:
            reg = M + damping * scale * np.eye(len(Dz))
            step = _line_search(
                sd, Bm, z, objective, Dz, np.linalg.lstsq(reg, -Dz, rcond=1e-14)[0]
            )
            if step is not None:
                break
        if step is None:
            break  # no progress along the Newton direction: leave it to Gauss-Seidel
        z, objective, e, s, col = step
    return np.linalg.lstsq(G.T, Bm.T @ z, rcond=None)[0]


def _line_search(sd, Bm, z, objective, Dz, delta):
    """Return the first step ``t delta`` (``t = 1, 1/2, ...``, 30 halvings) that is accepted.

    A step whose objective overflows (a near-singular system's long Newton step, where a
    model's scores have nearly collapsed) is not finite, hence rejected and halved.
    """
    t = 1.0
    slack = 1e-12 * max(abs(float(objective)), 1.0)
    for _ in range(30):
        cand = z + t * delta
        with np.errstate(over="ignore", invalid="ignore"):
            new_objective, new_e, new_s, new_col = sd.joint_state(cand, Bm)
        if np.isfinite(new_objective) and (
            new_objective > objective
            or (
                new_objective >= objective - slack
                and np.abs(new_col @ Bm.T).max() < np.abs(Dz).max()
            )
        ):
            return cand, new_objective, new_e, new_s, new_col
        t *= 0.5
    return None


def solve_host(sd: SemiDual, *, tol: float, max_iter: int, y0: Any = None, joint: bool = False):
    """Gauss-Seidel sweeps on the one problem ``sd``; return ``(y, w, err, sweeps)``.

    ``y`` (d,) and ``w = G^T y`` (m,) arrays of ``sd``'s namespace, ``err`` a float.
    With ``joint`` (a small OTF problem with coupled rows, numpy), joint Newton steps
    (:func:`joint_newton`) and a new error after each sweep that leaves it above ``tol``.
    """
    xp = sd.xp
    y = xp.zeros((sd.d,), sd.H)
    if y0 is not None:
        y[:] = y0
    w = xp.like(y @ sd.G64, sd.H)
    it, err = 0, math.inf
    while it < max_iter:
        for c in range(sd.d):
            y[c] = solve_row(sd, c, y, w, rtol=0.1 * tol)
            w = xp.like(y @ sd.G64, sd.H)
        it += 1
        err = float(sd.violation(sd.constraint_values(w)))
        if err > tol and joint:
            y = joint_newton(sd, y, tol)
            w = xp.like(y @ sd.G64, sd.H)
            err = float(sd.violation(sd.constraint_values(w)))
        if err <= tol:
            break
    return y, w, err, it


def solve_host_batch(
    H: torch.Tensor,
    C: torch.Tensor,
    G: torch.Tensor,
    eps: float,
    gamma: torch.Tensor,
    relaxed: Sequence[bool],
    *,
    tol: float,
    max_iter: int,
    y0: torch.Tensor | None = None,
    chunk_rows: int | None = None,
) -> dict[str, Any]:
    """Solve ``B`` problems on one cost, one after the other; the outputs of a batched solve.

    The interface of :func:`otfair.ot._otf_backends._solve_batch` (``H`` (B, n) masses,
    ``C`` (n, m), ``G`` (d, m), ``gamma`` (B, d) with zeros where not ``relaxed``,
    ``y0`` (B, d) or None). A class-reduced problem (``m <= SMALL_COLUMNS``) reads every
    input to the host in **one** conversion of one concatenated float64 tensor and
    solves in numpy, so the B solves cost one host read in all (a device synchronization
    on an accelerator, a view of the same memory on a CPU); a dense one solves on the
    tensors. The outputs are tensors on ``C``'s device.
    """
    B, n = H.shape
    d, m = G.shape
    device, dtype = C.device, C.dtype
    small = m <= SMALL_COLUMNS
    arrays: tuple[Any, ...] = (H, C, G, gamma, y0)
    if small:
        parts = [H, C, G, gamma] + ([] if y0 is None else [y0])
        flat = torch.cat([p.detach().reshape(-1).to(torch.float64) for p in parts])
        host = flat.numpy(force=True)  # the one host read
        ends = np.cumsum([B * n, n * m, d * m, B * d])
        arrays = (
            host[: ends[0]].reshape(B, n), host[ends[0] : ends[1]].reshape(n, m),
            host[ends[1] : ends[2]].reshape(d, m), host[ends[2] : ends[3]].reshape(B, d),
            None if y0 is None else host[ends[3] :].reshape(B, d),
        )  # fmt: skip
    Hx, Cx, Gx, gx, y0x = arrays
    xp = NUMPY if small else TORCH
    problems = SemiDual(Hx, Cx, Gx, eps, gx, xp=xp, chunk_rows=chunk_rows)
    out: dict[str, list] = {key: [] for key in ("value", "lam", "mu", "mass", "err")}
    sweeps = 0
    for b in range(B):
        sd = problems.problem(b)
        joint = small and not relaxed[b] and d > 1
        y, w, err, it = solve_host(
            sd, tol=tol, max_iter=max_iter, y0=None if y0x is None else y0x[b], joint=joint
        )
        sweeps, lam = max(sweeps, it), sd.lam(w)
        row = (sd.value(lam, y), lam, sd.eps * y, sd.h_sum, err)
        for key, part in zip(out, row, strict=True):
            out[key].append(part)
    result: dict[str, Any] = {"n_iter": sweeps, "tol": tol}
    for key, values in out.items():
        if small or key == "err":
            result[key] = torch.from_numpy(np.array(values, dtype=np.float64)).to(device)
        else:
            result[key] = torch.stack(values)
    result["lam"] = result["lam"].to(dtype)
    return result
