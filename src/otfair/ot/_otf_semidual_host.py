r"""The host (numpy) semi-dual solver of OTF / OTFR: the default on CPU tensors.

The same Gauss-Seidel on the semi-dual as :mod:`otfair.ot._otf_semidual` (see its
docstring for the math), one problem at a time, with each constraint dual's root found
by a numpy safeguarded Newton iteration that stops as soon as the root is found. On a
CPU its reads of tensor values are views of the same memory, not device round-trips, and
it is ~10x cheaper per solve than the batched torch solver, whose fixed-length masked
Newton steps pay torch's per-call overhead on tiny tensors (measured in
``benchmarks/otf_ratio_bench.py``: one warm-started ``otf0`` at n = 1000, 0.95 ms here
vs 13 ms batched). On an accelerator the batched solver runs instead, with no host read
inside the solve loop; :func:`otfair.ot._otf_solver.solver_backend` chooses.

The method, its formulas and why it is not the paper's alternating algorithm: see
:mod:`otfair.ot._otf_semidual`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from otfair.ot._lse import EXP_FLOOR, _chunks, default_chunk_rows
from otfair.ot._newton import bracketed_newton


class SemiDual:
    r"""Moments of :math:`\pi(y)` and the row/constraint updates for one ``eps``.

    Parameters
    ----------
    h : tensor (n,)
        Positive row masses.
    C : tensor (n, m)
        Cost (``m = n``, or the number of column classes of a reduced problem).
    G : tensor (d, m)
        Constraint matrix.
    eps : float
    gamma : tensor (d,) or None
        OTFR bounds (None for OTF).
    chunk_rows : int or None
        Rows per chunk of the passes over ``C``.
    """

    def __init__(self, h, C, G, eps, gamma=None, chunk_rows=None):
        self.C, self.eps = C, float(eps)
        self.h = h.detach().to(C.dtype)
        self.G = G.to(C.dtype)
        self.d, self.m = G.shape
        self.gamma = [0.0] * self.d if gamma is None else [float(x) for x in gamma]
        self.relaxed = gamma is not None
        self.chunk = chunk_rows or default_chunk_rows(*C.shape)
        self.h_sum = float(self.h.sum())
        # the scale of y = mu / eps: costs are O(mean C), so mu is too
        self.y_scale = max(1.0, float(C.mean()) / self.eps)

    # -- passes over C ------------------------------------------------------------------
    def _softmax_chunks(self, w: torch.Tensor):
        """Yield ``(rows, unnormalized exp, row max, row sum)`` of ``-C/eps + w``."""
        n = self.C.shape[0]
        buf = self.C.new_empty(min(self.chunk, n), self.m)
        for start, stop in _chunks(n, self.chunk):
            b = buf[: stop - start]
            torch.add(w, self.C[start:stop], alpha=-1.0 / self.eps, out=b)
            mx = b.amax(dim=1, keepdim=True)
            b.sub_(mx).clamp_(min=EXP_FLOOR).exp_()
            yield slice(start, stop), b, mx[:, 0], b.sum(dim=1)

    def constraint_values(self, w: torch.Tensor) -> torch.Tensor:
        r""":math:`D(y) = G P^\top 1` for all rows (float64, shape (d,))."""
        out = torch.zeros(self.d, dtype=torch.float64, device=self.C.device)
        for rows, b, _, s in self._softmax_chunks(w):
            weights = (self.h[rows] / s).to(b.dtype)
            col = weights @ b  # column masses of this chunk
            out += (self.G @ col).to(torch.float64)
        return out

    def row_moments(self, w: torch.Tensor, g: torch.Tensor) -> tuple[float, float]:
        r""":math:`D_c` and :math:`\partial D_c / \partial y_c` for one row ``g``."""
        d0 = d1 = 0.0
        gg = torch.stack([g, g * g], dim=1)
        for rows, b, _, s in self._softmax_chunks(w):
            e = (b @ gg).div_(s[:, None])  # E[g], E[g^2] under each row's softmax
            mean = e[:, 0]
            var = e[:, 1].sub_(mean * mean).clamp_(min=0.0)
            hr = self.h[rows]
            d0 += float(hr @ mean)
            d1 += float(hr @ var)
        return d0, d1

    def lam(self, w: torch.Tensor) -> torch.Tensor:
        """Optimal row duals for the column weights ``w = G^T y``."""
        total = self.C.new_empty(self.C.shape[0])
        for rows, _, mx, s in self._softmax_chunks(w):
            total[rows] = mx + s.log()
        return self.eps * (self.h.log() - total)

    # -- updates ------------------------------------------------------------------------
    def solve_row(self, c: int, y: torch.Tensor, w: torch.Tensor, rtol: float) -> float:
        """Return the :math:`y_c` maximizing :math:`F` along coordinate ``c``."""
        g = self.G[c]
        yc = float(y[c])
        base = w - yc * g  # column weights without row c

        def residual(t: float) -> tuple[float, float]:
            return self.row_moments(base + t * g, g)

        spread = float(g.max() - g.min())
        gamma = self.gamma[c] if self.relaxed else 0.0
        return _coordinate_root(residual, yc, gamma, rtol * self.h_sum, self.y_scale, spread)

    def violation(self, D: torch.Tensor) -> float:
        r""":math:`\max_c (|D_c| - \gamma_c)_+ / \lVert h \rVert_1`."""
        gam = torch.tensor(self.gamma, dtype=torch.float64, device=D.device)
        return float((D.abs() - gam).clamp(min=0.0).max()) / self.h_sum


def _coordinate_root(
    residual: Callable[[float], tuple[float, float]],
    yc: float,
    gamma: float,
    atol: float,
    y_scale: float,
    spread: float,
) -> float:
    r"""Return the :math:`y_c` maximizing :math:`F` along one coordinate (``solve_row``).

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


class SmallSemiDual:
    r"""The semi-dual of one reduced problem (few columns), entirely in numpy float64.

    A class-reduced problem is ``n x K`` with ``K`` a few classes: an operation on it
    costs ~2 us in numpy against torch's ~10 us dispatch, and every value the
    Gauss-Seidel loop reads (residuals, brackets, convergence) is a numpy float, so a
    solve reads nothing back from torch tensors (the caller converts its inputs once,
    :func:`solve_small_batch`). Same updates as :class:`SemiDual`.

    Parameters
    ----------
    logits : ndarray (m, n)
        ``-C^T / eps`` (reductions over the few columns run along contiguous rows).
    h : ndarray (n,)
    G : ndarray (d, m)
    eps : float
    gamma : ndarray (d,) or None
        OTFR bounds (None for OTF).
    y_scale : float
        Scale of :math:`y = \mu / \varepsilon`: ``max(1, mean(C) / eps)``.
    """

    def __init__(self, logits, h, G, eps, gamma=None, y_scale=1.0):
        self.logits, self.h, self.G, self.eps = logits, h, G, float(eps)
        self.d, self.m = G.shape
        self.relaxed = gamma is not None
        self.gamma = np.zeros(self.d) if gamma is None else gamma
        self.h_sum = float(h.sum())
        self.y_scale = y_scale
        self.spread = G.max(axis=1) - G.min(axis=1)

    def _softmax(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(unnormalized exp (m, n), column max, column sum)`` of ``logits + w``."""
        z = self.logits + w[:, None]
        mx = z.max(axis=0)
        z -= mx
        np.maximum(z, EXP_FLOOR, out=z)
        e = np.exp(z, out=z)
        return e, mx, e.sum(axis=0)

    def constraint_values(self, w: np.ndarray) -> np.ndarray:
        r""":math:`D(y) = G P^\top 1` (d,)."""
        e, _, s = self._softmax(w)
        return self.G @ (e @ (self.h / s))  # G times the column masses of the plan

    def violation(self, D: np.ndarray) -> float:
        r""":math:`\max_c (|D_c| - \gamma_c)_+ / \lVert h \rVert_1`."""
        return float(np.maximum(np.abs(D) - self.gamma, 0.0).max()) / self.h_sum

    def lam(self, w: np.ndarray) -> np.ndarray:
        """Optimal row duals (n,) for the column weights ``w = G^T y``."""
        _, mx, s = self._softmax(w)
        return self.eps * (np.log(self.h) - (mx + np.log(s)))

    def solve_row(self, c: int, y: np.ndarray, w: np.ndarray, rtol: float) -> float:
        """Return the :math:`y_c` maximizing :math:`F` along coordinate ``c``."""
        g = self.G[c][:, None]
        g2 = g * g
        base = self.logits + (w - y[c] * self.G[c])[:, None]  # without row c
        h = self.h

        def residual(t: float) -> tuple[float, float]:
            z = base + t * g
            z -= z.max(axis=0)
            np.maximum(z, EXP_FLOOR, out=z)
            e = np.exp(z, out=z)
            s = e.sum(axis=0)
            mean = (e * g).sum(axis=0) / s
            var = np.maximum((e * g2).sum(axis=0) / s - mean * mean, 0.0)
            return float(h @ mean), float(h @ var)

        gamma = float(self.gamma[c]) if self.relaxed else 0.0
        atol = rtol * self.h_sum
        return _coordinate_root(residual, float(y[c]), gamma, atol, self.y_scale, self.spread[c])

    def joint_newton(self, y: np.ndarray, tol: float, max_steps: int) -> tuple[np.ndarray, int]:
        r"""Newton's method on all constraint duals at once (small OTF problems only).

        Only :math:`G^\top y` matters, so the iteration runs on coordinates
        :math:`z` of the row space of ``G`` (orthonormal basis ``B`` from its SVD,
        :math:`G^\top y = B^\top z`): dependent rows (e.g. the per-group DP rows) drop
        out, and the Hessian :math:`-\varepsilon M`,
        :math:`M = \sum_i h_i \operatorname{Cov}_{\pi_i}(B_{\cdot j})`, is regular
        unless every softmax is saturated. The step solves :math:`M \delta = -B P^\top 1`
        and is halved until :math:`F` increases (or, within rounding of :math:`F`, the
        constraint residual falls). Coupled rows (two attributes, several groups) take
        Gauss-Seidel tens of sweeps; this takes a handful of steps. Returns
        ``(y, steps)`` with the minimum-norm ``y`` for the final :math:`z`; the caller
        finishes with Gauss-Seidel sweeps if ``tol`` is not reached.
        """
        logits, h, G = self.logits, self.h, self.G
        _, sing, vt = np.linalg.svd(G, full_matrices=False)
        # rank cut at 1e-6: rows that are dependent up to float32 rounding count as dependent
        B = vt[: int((sing > 1e-6 * sing[0]).sum())]  # (r, m) orthonormal rows
        z = B @ (G.T @ y)
        h_sum = float(h.sum())

        def state(zv):
            logit = logits + (B.T @ zv)[:, None]
            mx = logit.max(axis=0)
            logit -= mx
            np.maximum(logit, EXP_FLOOR, out=logit)
            e = np.exp(logit, out=logit)
            s = e.sum(axis=0)
            pi = e / s
            objective = -float(h @ (mx + np.log(s)))  # F / eps up to a constant
            return objective, pi, pi @ h  # column masses of P

        objective, pi, col = state(z)
        steps = 0
        for steps in range(1, max_steps + 1):
            if np.abs(G @ col).max() <= tol * h_sum:
                steps -= 1
                break
            Dz = B @ col
            Eb = B @ pi  # (r, n): E[b] under each row's softmax
            M = (B * col) @ B.T - (Eb * h) @ Eb.T
            accepted = False
            scale = max(float(np.trace(M)), 1e-300)
            # Levenberg-Marquardt damping: plain Newton first, then towards gradient
            # steps if rounding makes the Newton direction useless (saturated softmaxes)
            for damping in (0.0, 1e-8, 1e-4, 1e-1):
                reg = M + damping * scale * np.eye(len(Dz))
                delta = np.linalg.lstsq(reg, -Dz, rcond=1e-14)[0]
                t = 1.0
                for _ in range(30):
                    new_objective, new_pi, new_col = state(z + t * delta)
                    slack = 1e-12 * max(abs(objective), 1.0)
                    if new_objective > objective or (
                        new_objective >= objective - slack
                        and np.abs(B @ new_col).max() < np.abs(Dz).max()
                    ):
                        accepted = True
                        break
                    t *= 0.5
                if accepted:
                    break
            if not accepted:
                break  # no progress along the Newton direction: leave it to Gauss-Seidel
            z, objective, pi, col = z + t * delta, new_objective, new_pi, new_col
        y_new = np.linalg.lstsq(G.T, B.T @ z, rcond=None)[0]
        return y_new, steps


def solve_small(
    sd: SmallSemiDual, *, tol: float, max_iter: int, y0: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, float, int]:
    """Gauss-Seidel sweeps on ``sd``; return ``(y, w, err, sweeps)`` (numpy, floats).

    After each sweep that leaves an OTF problem with coupled rows above ``tol``, joint
    Newton steps (:meth:`SmallSemiDual.joint_newton`) and a new error.
    """
    y = np.zeros(sd.d) if y0 is None else np.array(y0, dtype=np.float64)
    joint = not sd.relaxed and sd.d > 1
    w = sd.G.T @ y
    it, err = 0, math.inf
    while it < max_iter:
        for c in range(sd.d):
            y[c] = sd.solve_row(c, y, w, rtol=0.1 * tol)
            w = sd.G.T @ y
        it += 1
        err = sd.violation(sd.constraint_values(w))
        if err > tol and joint:
            y, _ = sd.joint_newton(y, tol, 20)
            w = sd.G.T @ y
            err = sd.violation(sd.constraint_values(w))
        if err <= tol:
            break
    return y, w, err, it


def solve_small_batch(
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
) -> dict[str, Any]:
    """Solve ``B`` reduced problems on one cost, one after the other, in numpy.

    The interface of :func:`otfair.ot._otf_solver._solve_batch` (``H`` (B, n) masses,
    ``C`` (n, m), ``G`` (d, m), ``gamma`` (B, d) with zeros where not ``relaxed``,
    ``y0`` (B, d) or None): every input is read to the host in **one** conversion of
    one concatenated float64 tensor and the outputs come back as tensors on ``C``'s
    device, so the B solves cost one host read in all (a device synchronization on an
    accelerator, a view of the same memory on a CPU).
    """
    B, n = H.shape
    d, m = G.shape
    parts = [H, C, G, gamma] + ([] if y0 is None else [y0])
    flat = torch.cat([p.detach().reshape(-1).to(torch.float64) for p in parts])
    host = flat.numpy(force=True)  # the one host read
    sizes = np.cumsum([B * n, n * m, d * m, B * d])
    Hn = host[: sizes[0]].reshape(B, n)
    Cn = host[sizes[0] : sizes[1]].reshape(n, m)
    Gn = host[sizes[1] : sizes[2]].reshape(d, m)
    gam = host[sizes[2] : sizes[3]].reshape(B, d)
    Y0 = None if y0 is None else host[sizes[3] :].reshape(B, d)
    logits = np.ascontiguousarray((-Cn / eps).T)
    y_scale = max(1.0, float(Cn.mean()) / eps)
    lam = np.empty((B, n))
    mu = np.empty((B, d))
    value, err = np.empty(B), np.empty(B)
    sweeps = 0
    for b in range(B):
        sd = SmallSemiDual(logits, Hn[b], Gn, eps, gam[b] if relaxed[b] else None, y_scale)
        y, w, err[b], it = solve_small(
            sd, tol=tol, max_iter=max_iter, y0=None if Y0 is None else Y0[b]
        )
        sweeps = max(sweeps, it)
        lam[b] = sd.lam(w)
        value[b] = lam[b] @ Hn[b] - eps * sd.h_sum - eps * float(gam[b] @ np.abs(y))
        mu[b] = eps * y

    def back(a: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(a).to(C.device)

    return {"value": back(value), "lam": back(lam).to(C.dtype), "mu": back(mu),
            "mass": back(Hn.sum(axis=1)), "n_iter": sweeps, "err": back(err),
            "tol": tol}  # fmt: skip
