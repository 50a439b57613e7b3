r"""Semi-dual coordinate ascent for OTF / OTFR, batched in torch on the tensors' device.

For fixed constraint duals :math:`y = \mu / \varepsilon` the optimal row duals of the OTF
dual (:mod:`otfair.ot._otf`) are

.. math::

    \lambda_i(y) = \varepsilon \log h_i
        - \varepsilon \operatorname{LSE}_j\!\big(-C_{ij}/\varepsilon + (G^\top y)_j\big),

so the plan :math:`P_{ij} = h_i\, \pi_{ij}(y)` with :math:`\pi_i = \operatorname{softmax}_j
(-C_{ij}/\varepsilon + (G^\top y)_j)` matches the rows ``h`` exactly, and the dual becomes
the concave function of ``d`` variables

.. math::

    F(y) = \sum_i h_i \lambda_i(y) - \varepsilon \sum_i h_i
        - \varepsilon \sum_c \gamma_c |y_c| ,\qquad
    \partial F / \partial y_c = -\varepsilon \big(D_c(y) + \gamma_c \operatorname{sign} y_c\big),
    \quad D_c(y) = \sum_{ij} h_i \pi_{ij} G_{cj} = (G P^\top 1)_c

(:math:`\gamma = 0` for OTF, :math:`|G h|` for OTFR). Each :math:`y_c` is maximized
exactly in turn (Gauss-Seidel): :math:`D_c` is increasing in :math:`y_c` with derivative
:math:`\sum_i h_i \operatorname{Var}_{\pi_i}(G_{c\cdot}) \ge 0`, so a safeguarded Newton
iteration (the bracketed Newton of :mod:`otfair.ot._newton`, vectorized) finds
:math:`D_c = 0` (OTF), or for OTFR keeps :math:`y_c = 0` when
:math:`|D_c(0)| \le \gamma_c` and otherwise moves :math:`D_c` onto the nearest bound.
Coupled rows of a small OTF problem get joint Newton steps after each sweep (in the row
space of ``G``).

**Batched, on the device, no host round-trip in the loop.** :class:`BatchedSemiDual`
solves ``B`` problems that share ``C`` and ``G`` (the OTF and OTFR solves of ``K``
models on one batch: ``B = 2K``) with every quantity a tensor of shape ``(B, ...)`` on
``C``'s device. The iteration count is fixed: each coordinate update is
``NEWTON_STEPS`` Newton steps (problems already at their root stay put, through masks),
joint Newton ``JOINT_STEPS``; the only host reads are one convergence check per sweep
(``check=True``, the default: one per solve when the first sweep converges, as a
two-group DP problem does) and, for coupled rows, one every 4 joint Newton steps;
``check=False`` runs ``max_iter`` sweeps without any.

Why not the alternating (Sinkhorn-like) updates of the paper (App. A): a constraint
update that holds the column masses fixed moves :math:`\mu` by :math:`O(\varepsilon)` per
iteration, so at the paper's :math:`\varepsilon = 10^{-3}` on unit-scale costs it needs
thousands of n x n passes (measured: 2,566 iterations at n = 1024), and a truncated run
returns a gradient ~100x too small. Here each update sees the row duals respond, and a
two-group DP problem is solved in one sweep.
"""

from __future__ import annotations

import torch

from otfair.ot._lse import EXP_FLOOR

#: Newton steps per coordinate update (bracketed: a step that leaves the bracket bisects);
#: a cold start (no warm start given) takes COLD_STEPS in its first sweep
NEWTON_STEPS = 12
COLD_STEPS = 48
#: joint Newton steps after a sweep (small OTF problems with several rows)
JOINT_STEPS = 20
#: backtracking candidates of a joint Newton step: t = 1, 1/2, ..., 2**-(LINE_STEPS - 1),
#: along the directions of each Levenberg-Marquardt damping (relative to the trace of M)
LINE_STEPS = 24
DAMPING = (1e-12, 1e-8, 1e-4, 1e-1)
#: entries of one chunk of the (B, rows, m) softmax (bounds the extra memory)
CHUNK_ELEMENTS = 1 << 22
#: relative bracket width at which the midpoint is taken (as ``bracketed_newton``)
XTOL = 1e-13


def row_basis(G: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Orthonormal basis ``Bm`` (d, m) of the row space of ``G`` and ``pinv(G^T)`` (float64).

    Rows of ``Bm`` beyond the rank of ``G`` are zero (rank cut at 1e-6 of the largest
    singular value: rows dependent up to float32 rounding count as dependent), so that
    no host read of the rank is needed. One small SVD (a synchronization on an
    accelerator): callers that reuse ``G`` keep the result.
    """
    G = G.detach().to(torch.float64)
    _, sing, vt = torch.linalg.svd(G, full_matrices=False)
    keep = (sing > 1e-6 * sing[0]).to(torch.float64)
    return vt * keep[:, None], torch.linalg.pinv(G.T, rtol=1e-6)


def _softmax(z: torch.Tensor) -> torch.Tensor:
    """Softmax over the last axis, exponent arguments clamped at ``EXP_FLOOR``.

    Written out (max, subtract, exp, normalize): ``torch.softmax`` over a last axis of
    2-4 classes (the class-reduced problems) is ~10x slower on a CPU.
    """
    e = (z - z.amax(dim=-1, keepdim=True)).clamp_(min=EXP_FLOOR).exp_()
    return e.div_(e.sum(dim=-1, keepdim=True))


class BatchedSemiDual:
    r"""The semi-dual of ``B`` OTF / OTFR problems on one cost, solved on its device.

    Parameters
    ----------
    H : tensor (B, n)
        Positive row masses, one row per problem.
    C : tensor (n, m)
        Cost (``m = n``, or the number of column classes of a reduced problem).
    G : tensor (d, m)
        Constraint matrix.
    eps : float
    gamma : tensor (B, d)
        OTFR bounds, 0 for the OTF problems (a zero bound is the equality, as in OTF).
    chunk_rows : int, optional
        Rows per chunk of the passes over ``C`` (default: about ``CHUNK_ELEMENTS``
        entries of ``(B, rows, m)`` per chunk).
    basis : (tensor, tensor), optional
        :func:`row_basis` of ``G`` when the caller keeps it (an OTF problem reused
        across steps), else computed on the first joint Newton step.
    """

    def __init__(self, H, C, G, eps, gamma, chunk_rows=None, basis=None):
        self.eps = float(eps)
        self.dtype = C.dtype
        self.L = C.detach() * (-1.0 / self.eps)  # (n, m) logits of the plan at y = 0
        self.H = H.detach().to(C.dtype)
        self.G = G.detach().to(C.dtype)
        self.B, self.n = self.H.shape
        self.d, self.m = self.G.shape
        self.gamma = gamma.detach().to(torch.float64)
        self.h_sum = self.H.to(torch.float64).sum(dim=1)  # (B,)
        rows = chunk_rows or max(1, CHUNK_ELEMENTS // max(self.B * self.m, 1))
        self.chunks = [slice(s, min(s + rows, self.n)) for s in range(0, self.n, rows)]
        # the scale of y = mu / eps: costs are O(mean C), so mu is too (a 0-d tensor)
        self.y_scale = (C.detach().to(torch.float64).mean() / self.eps).clamp(min=1.0)
        self._basis = basis

    # -- passes over C ------------------------------------------------------------------
    def _probs(self, w: torch.Tensor, rows: slice) -> torch.Tensor:
        """Softmax of ``-C/eps + w`` on a chunk of rows: (B, rows, m) for ``w`` (B, m)."""
        return _softmax(self.L[rows] + w[:, None, :])

    def column_masses(self, w: torch.Tensor) -> torch.Tensor:
        r""":math:`P^\top 1` (B, m) in float64 for the column weights ``w`` (B, m)."""
        col = torch.zeros(self.B, self.m, dtype=torch.float64, device=w.device)
        for rows in self.chunks:
            p = self._probs(w, rows)
            col += torch.bmm(self.H[:, None, rows], p)[:, 0].to(torch.float64)
        return col

    def constraint_values(self, w: torch.Tensor) -> torch.Tensor:
        r""":math:`D(y) = G P^\top 1` (B, d) in float64."""
        return self.column_masses(w) @ self.G.to(torch.float64).T

    def violation(self, D: torch.Tensor) -> torch.Tensor:
        r""":math:`\max_c (|D_c| - \gamma_c)_+ / \lVert h \rVert_1` per problem (B,)."""
        return (D.abs() - self.gamma).clamp(min=0.0).amax(dim=1) / self.h_sum

    def lam(self, w: torch.Tensor) -> torch.Tensor:
        """Optimal row duals (B, n) for the column weights ``w`` (B, m)."""
        total = torch.empty_like(self.H)
        for rows in self.chunks:
            total[:, rows] = torch.logsumexp(self.L[rows] + w[:, None, :], dim=-1)
        return self.eps * (self.H.log() - total)

    def _moments(self, base: torch.Tensor, t: torch.Tensor, g: torch.Tensor):
        r""":math:`D_c` and :math:`\partial D_c/\partial y_c` (B,) at ``y_c = t`` (B,)."""
        w = base + t[:, None].to(self.dtype) * g
        gg = torch.stack([g, g * g], dim=1)  # (m, 2)
        d0 = d1 = 0.0
        for rows in self.chunks:
            e = self._probs(w, rows) @ gg  # (B, rows, 2): E[g], E[g^2] under each softmax
            mean = e[..., 0]
            var = (e[..., 1] - mean * mean).clamp_(min=0.0)
            hr = self.H[:, rows]
            d0 = d0 + (hr * mean).sum(dim=1).to(torch.float64)
            d1 = d1 + (hr * var).sum(dim=1).to(torch.float64)
        return d0, d1

    # -- updates ------------------------------------------------------------------------
    def solve_row(
        self, c: int, y: torch.Tensor, rtol: float, steps: int = NEWTON_STEPS
    ) -> torch.Tensor:
        """Return ``y`` (B, d) with coordinate ``c`` maximizing ``F`` (all problems).

        ``steps`` Newton steps of the bracketed iteration; a problem that has not met its
        tolerance by then takes its evaluated point of smallest residual (the next sweep
        goes on from there).
        """
        g = self.G[c]
        g64 = g.to(torch.float64)
        yc = y[:, c]
        base = ((y @ self.G.to(torch.float64)) - yc[:, None] * g64).to(self.dtype)
        zero = torch.zeros_like(yc)
        d_zero, slope_zero = self._moments(base, zero, g)
        gam = self.gamma[:, c]
        relaxed = gam > 0
        # OTFR: y_c = 0 while |D_c(0)| <= gamma_c, else D_c goes onto the nearest bound
        target = torch.where(relaxed, torch.copysign(gam, d_zero), zero)
        r_zero = d_zero - target
        atol = rtol * self.h_sum
        done = (relaxed & (d_zero.abs() <= gam)) | (r_zero.abs() <= atol)
        spread = g64.max() - g64.min()
        step = torch.where(spread > 0, 0.25 * self.y_scale / spread, 1.0).expand_as(yc)
        size = torch.where(yc != 0, yc.abs(), step)
        inf = torch.full_like(yc, float("inf"))
        above = r_zero > 0  # D is increasing: the root is below 0
        lo = torch.where(above, -inf, zero)
        hi = torch.where(above, zero, inf)
        t = torch.where(above, -size, size)
        newton0 = -r_zero / slope_zero
        # a Newton step from 0 when there is no history, unless the slope at 0 is so flat
        # (saturated softmaxes) that the step lands far beyond the scale of y
        use0 = (slope_zero > 0) & (lo < newton0) & (newton0 < hi) & (yc == 0)
        use0 = use0 & (newton0.abs() <= 64.0 * step)
        t = torch.where(use0, newton0, t)
        result = zero.clone()
        best_t, best_r = zero, r_zero.abs()
        for _ in range(steps):
            value, slope = self._moments(base, t, g)
            r = value - target
            better = r.abs() < best_r  # False for NaN
            best_t = torch.where(better, t, best_t)
            best_r = torch.where(better, r.abs(), best_r)
            bad = torch.isnan(r) | (r == float("inf"))
            found = ~done & ~bad & (r.abs() <= atol) & (r != -float("inf"))
            result = torch.where(found, t, result)
            done = done | found
            hi = torch.where(bad | (r > 0), t, hi)
            lo = torch.where(~bad & (r < 0), t, lo)
            t_new = t - r / slope
            ok = torch.isfinite(r) & (slope > 0) & (lo < t_new) & (t_new < hi)
            closed = torch.isfinite(lo) & torch.isfinite(hi)
            # while the bracket is open, a Newton step longer than the expansion step (a
            # nearly flat, saturated residual) is replaced by the expansion
            ok = ok & (closed | ((t_new - t).abs() <= step))
            expand = torch.where(torch.isfinite(lo), t + step, t - step)
            t_new = torch.where(ok, t_new, torch.where(closed, 0.5 * (lo + hi), expand))
            step = torch.where(ok | closed, step, 2.0 * step)
            narrow = ~done & closed & (hi - lo <= XTOL * t.abs().clamp(min=1.0))
            result = torch.where(narrow, 0.5 * (lo + hi), result)
            done = done | narrow
            t = torch.where(done, t, t_new)
        result = torch.where(done, result, best_t)
        out = y.clone()
        out[:, c] = result
        return out

    def _row_basis(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Orthonormal basis ``Bm`` (r, m) of the row space of ``G`` and ``pinv(G^T)``.

        Rank cut at 1e-6: rows dependent up to float32 rounding count as dependent. One
        small SVD per problem (a host read on an accelerator, outside the sweeps).
        """
        if self._basis is None:
            self._basis = row_basis(self.G)
        return self._basis

    def _state(self, z: torch.Tensor, Bm: torch.Tensor):
        """``(F / eps up to a constant, pi, column masses)`` at row-space coordinates z."""
        logits = self.L.to(torch.float64) + (z @ Bm)[..., None, :]  # (..., n, m)
        lse = torch.logsumexp(logits, dim=-1)
        pi = torch.exp(logits - lse[..., None])
        H = self.H.to(torch.float64)
        H = H.view(H.shape[0], *([1] * (z.dim() - 2)), H.shape[1])
        objective = -(H * lse).sum(dim=-1)
        col = (H[..., None] * pi).sum(dim=-2)
        return objective, pi, col

    def joint_newton(
        self, y: torch.Tensor, active: torch.Tensor, tol: float, check: bool = True
    ) -> torch.Tensor:
        r"""``JOINT_STEPS`` Newton steps on all constraint duals at once (small OTF only).

        Only :math:`G^\top y` matters, so the iteration runs on coordinates :math:`z` of
        the row space of ``G`` (:math:`G^\top y = B^\top z`): dependent rows drop out and
        the Hessian :math:`-\varepsilon M`,
        :math:`M = \sum_i h_i \operatorname{Cov}_{\pi_i}(B_{\cdot j})`, is regular unless
        every softmax is saturated. A step takes, for the first damping of ``DAMPING``
        (Levenberg-Marquardt, towards gradient steps) that has one, the largest
        :math:`t = 2^{-k}` along its direction at which :math:`F` increases (or, within
        rounding of :math:`F`, the constraint residual falls), all candidates evaluated
        in one batched pass; problems that are not ``active``, are within ``tol`` or find
        no such step stay put. With ``check``, the steps stop early once no problem moves
        (one host read every 4 steps). Returns the minimum-norm ``y`` of the final
        :math:`z`.
        """
        Bm, pinv = self._row_basis()
        G64 = self.G.to(torch.float64)
        z = (y @ G64) @ Bm.T  # (B, r)
        r = Bm.shape[0]
        eye = torch.eye(r, dtype=torch.float64, device=z.device)
        ts = 0.5 ** torch.arange(LINE_STEPS, dtype=torch.float64, device=z.device)
        damping = torch.tensor(DAMPING, dtype=torch.float64, device=z.device)
        objective, pi, col = self._state(z, Bm)
        H = self.H.to(torch.float64)
        moved = torch.zeros_like(active)
        for step in range(JOINT_STEPS):
            D = col @ G64.T
            going = active & ((D.abs().amax(dim=1) / self.h_sum) > tol)
            if check and step % 4 == 3 and not bool(going.any()):
                break
            Dz = col @ Bm.T  # (B, r)
            Eb = pi @ Bm.T  # (B, n, r)
            M = (Bm * col[:, None, :]) @ Bm.T - (Eb * H[..., None]).transpose(1, 2) @ Eb
            scale = torch.diagonal(M, dim1=1, dim2=2).sum(dim=1).clamp(min=1e-300)
            # Levenberg-Marquardt: plain Newton first, then towards gradient steps if
            # rounding makes the Newton direction useless (saturated softmaxes)
            reg = M[:, None] + (damping[None, :] * scale[:, None])[..., None, None] * eye
            rhs = (-Dz)[:, None, :, None].expand(-1, len(DAMPING), -1, -1)
            delta = torch.linalg.solve_ex(reg, rhs)[0][..., 0]  # (B, L, r); no sync
            delta = torch.nan_to_num(delta, nan=0.0, posinf=0.0, neginf=0.0)
            steps = ts[None, None, :, None] * delta[:, :, None, :]  # (B, L, T, r)
            cand = z[:, None, :] + steps.flatten(1, 2)  # (B, L*T, r), damping-major
            new_obj, new_pi, new_col = self._state(cand, Bm)
            slack = 1e-12 * objective.abs().clamp(min=1.0)
            res_new = (new_col @ Bm.T).abs().amax(dim=-1)  # (B, T)
            ok = (new_obj > objective[:, None]) | (
                (new_obj >= (objective - slack)[:, None])
                & (res_new < Dz.abs().amax(dim=1)[:, None])
            )
            first = torch.argmax(ok.to(torch.int8), dim=1)  # largest accepted t
            take = going & ok.any(dim=1)
            idx = torch.arange(self.B, device=z.device)
            z = torch.where(take[:, None], cand[idx, first], z)
            objective = torch.where(take, new_obj[idx, first], objective)
            pi = torch.where(take[:, None, None], new_pi[idx, first], pi)
            col = torch.where(take[:, None], new_col[idx, first], col)
            moved = moved | take
        y_new = (z @ Bm) @ pinv.T  # minimum-norm y with G^T y = Bm^T z
        return torch.where(moved[:, None], y_new, y)


def solve_semidual(
    sd: BatchedSemiDual,
    *,
    tol: float,
    max_iter: int,
    y0: torch.Tensor | None = None,
    joint: torch.Tensor | None = None,
    check: bool = True,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]:
    """Gauss-Seidel sweeps on ``sd``; return ``(y, w, err, sweeps)``.

    ``y`` (B, d) the constraint duals over ``eps``, ``w = G^T y`` (B, m) in ``C``'s
    dtype, ``err`` (B,) the relative constraint violations (float64 tensors on the
    device). ``joint`` (B,) bool marks the problems that also take joint Newton steps
    after each sweep (small OTF problems with several rows). With ``check`` the sweeps
    stop once every problem is within ``tol`` (one host read per sweep); without, all
    ``max_iter`` sweeps run and nothing is read back.
    """
    G64 = sd.G.to(torch.float64)
    y = torch.zeros(sd.B, sd.d, dtype=torch.float64, device=sd.H.device)
    if y0 is not None:
        y = y0.to(torch.float64).clone()
    use_joint = joint is not None and sd.d > 1
    sweeps = 0
    err = torch.full((sd.B,), float("inf"), dtype=torch.float64, device=y.device)
    for sweeps in range(1, max_iter + 1):  # noqa: B007
        steps = COLD_STEPS if (sweeps == 1 and y0 is None) else NEWTON_STEPS
        for c in range(sd.d):
            y = sd.solve_row(c, y, rtol=0.1 * tol, steps=steps)
        err = sd.violation(sd.constraint_values((y @ G64).to(sd.dtype)))
        if check and bool((err <= tol).all()):
            break
        if use_joint:
            assert joint is not None  # use_joint implies it
            y = sd.joint_newton(y, joint & (err > tol), tol, check=check)
            err = sd.violation(sd.constraint_values((y @ G64).to(sd.dtype)))
            if check and bool((err <= tol).all()):
                break
    return y, (y @ G64).to(sd.dtype), err, sweeps
