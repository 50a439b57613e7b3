r"""The host (numpy) semi-dual solver of OTF / OTFR: the default on CPU tensors.

The same Gauss-Seidel on the semi-dual as :mod:`otfair.ot._otf_semidual` (see its
docstring for the math), one problem at a time, with each constraint dual's root found
by a numpy safeguarded Newton iteration that stops as soon as the root is found. On a
CPU its reads of tensor values are views of the same memory, not device round-trips, and
it is ~10x cheaper per solve than the batched torch solver, whose fixed-length masked
Newton steps pay torch's per-call overhead on tiny tensors (measured in
``benchmarks/otf_ratio_bench.py``: one warm-started ``otf0`` at n = 1000, 0.95 ms here
vs 13 ms batched). On an accelerator the batched solver runs instead, with no host read
inside the solve loop (issue 26); :func:`otfair.ot._otf_solver.solver_backend` chooses.

The method, its formulas and why it is not the paper's alternating algorithm: see
:mod:`otfair.ot._otf_semidual`.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from otfair.ot._lse import EXP_FLOOR, _chunks, default_chunk_rows
from otfair.ot._newton import bracketed_newton

#: problems with at most this many columns (class-reduced ones) solve rows in numpy
SMALL_COLUMNS = 64


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
        # a reduced problem (few columns) is tiny: its 1-D row solves run in numpy, where
        # an operation on n x K floats costs ~2 us instead of torch's ~10 us dispatch
        self._small = None
        if self.m <= SMALL_COLUMNS:
            self._small = (
                np.ascontiguousarray((-C / self.eps).to(torch.float64).cpu().numpy().T),
                self.h.to(torch.float64).cpu().numpy(),
                self.G.to(torch.float64).cpu().numpy(),
            )

    @property
    def is_small(self) -> bool:
        """Whether the row solves (and joint Newton steps) run on the numpy copy."""
        return self._small is not None

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

    def _small_softmax(self, w: torch.Tensor) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(unnormalized exp (m, n), column max, column sum)`` on the numpy copy."""
        logits = self._small[0]
        z = logits + w.to(torch.float64).cpu().numpy()[:, None]
        mx = z.max(axis=0)
        z -= mx
        np.maximum(z, EXP_FLOOR, out=z)
        e = np.exp(z, out=z)
        return e, mx, e.sum(axis=0)

    def constraint_values(self, w: torch.Tensor) -> torch.Tensor:
        r""":math:`D(y) = G P^\top 1` for all rows (float64, shape (d,))."""
        if self._small is not None:
            e, _, s = self._small_softmax(w)
            col = e @ (self._small[1] / s)  # column masses of the plan
            return torch.as_tensor(self._small[2] @ col, device=self.C.device)
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
        if self._small is not None:
            _, mx, s = self._small_softmax(w)
            total = torch.as_tensor(mx + np.log(s), dtype=self.C.dtype, device=self.C.device)
            return self.eps * (self.h.log() - total)
        total = self.C.new_empty(self.C.shape[0])
        for rows, _, mx, s in self._softmax_chunks(w):
            total[rows] = mx + s.log()
        return self.eps * (self.h.log() - total)

    # -- updates ------------------------------------------------------------------------
    def solve_row(self, c: int, y: torch.Tensor, w: torch.Tensor, rtol: float) -> float:
        """Return the :math:`y_c` maximizing :math:`F` along coordinate ``c``."""
        g = self.G[c]
        base = w - float(y[c]) * g  # column weights without row c
        if self._small is not None:
            residual = _small_residual(*self._small[:2], base, g)
        else:

            def residual(t: float) -> tuple[float, float]:
                return self.row_moments(base + t * g, g)

        # D at y_c = 0 fixes the side of the root: start there at the warm start's
        # magnitude (batches differ in which group needs mass, rarely in how much)
        d_zero, slope_zero = residual(0.0)
        target = 0.0
        if self.relaxed and self.gamma[c] > 0.0:
            if abs(d_zero) <= self.gamma[c]:
                return 0.0
            target = math.copysign(self.gamma[c], d_zero)
        r_zero = d_zero - target
        atol = rtol * self.h_sum
        if abs(r_zero) <= atol:
            return 0.0
        spread = float(g.max() - g.min())
        step = 0.25 * self.y_scale / spread if spread > 0 else 1.0
        size = abs(float(y[c])) or step
        if r_zero > 0:  # D is increasing: the root is below 0
            lo, hi, start = -math.inf, 0.0, -size
        else:
            lo, hi, start = 0.0, math.inf, size
        if slope_zero > 0 and lo < -r_zero / slope_zero < hi and not y[c]:
            start = -r_zero / slope_zero  # a Newton step from 0 when there is no history

        def shifted(t: float) -> tuple[float, float, float]:
            value, slope = residual(t)
            return value - target, slope, atol

        return bracketed_newton(shifted, start, lo=lo, hi=hi, step=step)

    def joint_newton(
        self, y: torch.Tensor, tol: float, max_steps: int
    ) -> tuple[torch.Tensor, int]:
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
        logits, h, G = self._small
        _, sing, vt = np.linalg.svd(G, full_matrices=False)
        # rank cut at 1e-6: rows that are dependent up to float32 rounding count as dependent
        B = vt[: int((sing > 1e-6 * sing[0]).sum())]  # (r, m) orthonormal rows
        z = B @ (G.T @ y.cpu().numpy())
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
        return torch.as_tensor(y_new, dtype=y.dtype, device=y.device), steps

    def violation(self, D: torch.Tensor) -> float:
        r""":math:`\max_c (|D_c| - \gamma_c)_+ / \lVert h \rVert_1`."""
        gam = torch.tensor(self.gamma, dtype=torch.float64, device=D.device)
        return float((D.abs() - gam).clamp(min=0.0).max()) / self.h_sum


def _small_residual(logits: np.ndarray, h: np.ndarray, base: torch.Tensor, g: torch.Tensor):
    """``t -> (D_c, dD_c/dt)`` of a reduced problem, in numpy float64 (see ``row_moments``).

    ``logits`` is ``-C^T / eps`` (m, n): reductions over the few columns run along
    contiguous rows of length n.
    """
    g_np = g.to(torch.float64).cpu().numpy()[:, None]
    base_np = logits + base.to(torch.float64).cpu().numpy()[:, None]
    g2 = g_np * g_np

    def residual(t: float) -> tuple[float, float]:
        z = base_np + t * g_np
        z -= z.max(axis=0)
        np.maximum(z, EXP_FLOOR, out=z)
        e = np.exp(z, out=z)
        s = e.sum(axis=0)
        mean = (e * g_np).sum(axis=0) / s
        var = np.maximum((e * g2).sum(axis=0) / s - mean * mean, 0.0)
        return float(h @ mean), float(h @ var)

    return residual
