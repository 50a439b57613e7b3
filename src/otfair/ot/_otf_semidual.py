r"""The OTF / OTFR semi-dual, written once over numpy and torch, and its batched solve.

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

**One semi-dual, two drivers.** :class:`SemiDual` holds the problem and every quantity
of the semi-dual (the passes over ``C``: column masses, constraint values :math:`D`, the
moments of one row, the row duals, the value; the joint Newton system), written once over
an array namespace (:mod:`otfair.ot._otf_namespace`: numpy or torch). Two drivers run the
Gauss-Seidel on it: the host one (:mod:`otfair.ot._otf_semidual_host`) solves one problem
at a time and stops each root at once (numpy for class-reduced problems, torch for dense
ones on a CPU); the batched one here keeps everything on the device.

**Batched, on the device, no host round-trip in the loop.** :func:`solve_semidual`
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

from typing import Any

import torch

from otfair.ot._otf_namespace import TORCH, Namespace

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
#: reduced problems with at most this many columns take joint Newton steps (OTF, d > 1)
SMALL_COLUMNS = 64


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


class SemiDual:
    r"""The semi-dual of ``B`` OTF / OTFR problems on one cost, over numpy or torch.

    Every method takes column weights ``w = G^T y`` (B, m) in the dtype of ``C`` and
    returns float64 arrays of the namespace (torch tensors on ``C``'s device, or numpy
    arrays), with no host read.

    Parameters
    ----------
    H : array (B, n)
        Positive row masses, one row per problem.
    C : array (n, m)
        Cost (``m = n``, or the number of column classes of a reduced problem).
    G : array (d, m)
        Constraint matrix.
    eps : float
    gamma : array (B, d)
        OTFR bounds, 0 for the OTF problems (a zero bound is the equality, as in OTF).
    xp : Namespace, default=TORCH
        The arrays' library (:data:`~otfair.ot._otf_namespace.NUMPY` for numpy ones).
    chunk_rows : int, optional
        Rows per chunk of the passes over ``C`` (default: about ``CHUNK_ELEMENTS``
        entries of ``(B, rows, m)`` per chunk).
    """

    def __init__(self, H, C, G, eps, gamma, *, xp: Namespace = TORCH, chunk_rows=None):
        self.xp, self.eps = xp, float(eps)
        self.L = xp.logits(C, eps)
        self.dtype = C.dtype
        self.H = xp.like(H, C)
        self.G = xp.like(G, C)
        self.G64 = xp.float64(self.G)
        self.pairs = [xp.vectors(xp.stack([g, g * g], 0)) for g in self.G]  # g, g**2 per row
        self.B, self.n = self.H.shape
        self.d, self.m = self.G.shape
        self.gamma = xp.float64(gamma)
        self.h_sum = xp.float64(self.H).sum(-1)  # (B,)
        self.chunk_rows = chunk_rows
        self.chunks, self._chunks1 = self._chunks(self.B), self._chunks(1)
        #: max_j G_cj - min_j G_cj (d,): the scale of a row, for the Newton steps
        self.spread = xp.spread(self.G64)
        # the scale of y = mu / eps: costs are O(mean C), so mu is too (0-d in torch)
        y_scale = xp.mean64(C) / self.eps
        self.y_scale = y_scale.clamp(min=1.0) if xp is TORCH else max(1.0, float(y_scale))

    def _chunks(self, batch: int) -> list[slice]:
        rows = self.chunk_rows or max(1, CHUNK_ELEMENTS // max(batch * self.m, 1))
        return [slice(s, min(s + rows, self.n)) for s in range(0, self.n, rows)]

    def problem(self, b: int) -> SemiDual:
        """Problem ``b`` alone: ``H`` (n,), ``gamma`` (d,), and every result unbatched."""
        view = object.__new__(SemiDual)
        view.__dict__.update(self.__dict__)
        view.H, view.gamma, view.h_sum = self.H[b], self.gamma[b], self.h_sum[b]
        view.chunks = self._chunks1
        return view

    # -- passes over C ------------------------------------------------------------------
    def _stats(self, w, rows: slice):
        """``(exp, row max, row sum)`` of the softmax of ``-C/eps + w`` on a chunk of rows."""
        return self.xp.softmax_stats(self.xp.chunk_logits(self.L, rows, w))

    def column_masses(self, w):
        r""":math:`P^\top 1` (B, m) in float64."""
        xp, col = self.xp, None
        for rows in self.chunks:
            e, _, s = xp.softmax_stats(xp.chunk_logits(self.L, rows, w))
            part = xp.float64(xp.col_sums(e, self.H[..., rows] / s))
            col = part if col is None else col + part
        return col

    def constraint_values(self, w):
        r""":math:`D(y) = G P^\top 1` (B, d) in float64."""
        return self.column_masses(w) @ self.G64.T

    def violation(self, D):
        r""":math:`\max_c (|D_c| - \gamma_c)_+ / \lVert h \rVert_1` per problem (B,)."""
        excess = self.xp.clamp_min_(abs(D) - self.gamma, 0.0)
        return self.xp.amax(excess) / self.h_sum

    def lam(self, w):
        """Optimal row duals (B, n), in ``C``'s dtype."""
        parts = []
        for rows in self.chunks:
            _, mx, s = self._stats(w, rows)
            parts.append(mx + self.xp.log(s))
        total = parts[0] if len(parts) == 1 else self.xp.concat(parts, -1)
        return self.eps * (self.xp.log(self.H) - total)

    def value(self, lam, y):
        r"""Return the dual value :math:`F` (B,) at the row duals ``lam`` and ``y`` (B, d)."""
        value = self.xp.dot(self.xp.float64(lam), self.xp.float64(self.H))
        return value - self.eps * self.h_sum - self.eps * self.xp.dot(self.gamma, abs(y))

    def moments(self, w, c: int):
        r""":math:`D_c` and :math:`\partial D_c/\partial y_c` (B,) for the row ``c`` of ``G``."""
        xp = self.xp
        d0: Any = None
        d1: Any = None
        for rows in self.chunks:
            e, _, s = xp.softmax_stats(xp.chunk_logits(self.L, rows, w))
            R = xp.row_matrix(e, self.pairs[c])  # E[g], E[g^2] times s, per row
            mean = xp.row_part(R, 0) / s
            var = xp.clamp_min_(xp.row_part(R, 1) / s - mean * mean, 0.0)
            hr = self.H[..., rows]
            part0, part1 = xp.float64(xp.dot(hr, mean)), xp.float64(xp.dot(hr, var))
            d0, d1 = (part0, part1) if d0 is None else (d0 + part0, d1 + part1)
        return d0, d1

    # -- the joint Newton system (float64, no chunks: small problems) -------------------
    def joint_state(self, z, Bm):
        """``(F / eps up to a constant, e, s, column masses)`` at row-space coordinates ``z``.

        ``z`` (B, ..., r) with ``G^T y = Bm^T z``; ``(e, s)`` the softmax statistics of
        the whole plan (:meth:`Namespace.softmax_stats`), for :meth:`joint_system`.
        """
        xp = self.xp
        L64 = xp.logits64(self.L)
        e, mx, s = xp.softmax_stats(xp.chunk_logits(L64, slice(None), z @ Bm))
        H = xp.float64(self.H)
        H = H.reshape(tuple(H.shape[:-1]) + (1,) * (z.ndim - H.ndim) + (self.n,))
        return -xp.dot(H, mx + xp.log(s)), e, s, xp.col_sums(e, H / s)

    def joint_system(self, e, s, col, Bm):
        r"""Return ``(Dz, M)``: :math:`B P^\top 1` (B, r) and the Newton matrix (B, r, r).

        :math:`M = \sum_i h_i \operatorname{Cov}_{\pi_i}(B)`; with :math:`\pi_i = e_i / s_i`
        and :math:`R_i = e_i B^\top`,
        :math:`M = B \operatorname{diag}(P^\top 1) B^\top - \sum_i (h_i / s_i^2) R_i R_i^\top`.
        """
        xp = self.xp
        R = xp.row_matrix(e, xp.vectors(Bm))
        M = (Bm * col[..., None, :]) @ Bm.T - xp.gram(R, xp.float64(self.H) / (s * s))
        return col @ Bm.T, M


# -- the batched driver (torch, on the device) ----------------------------------------------
def _root_start(sd: SemiDual, c: int, y: torch.Tensor, rtol: float):
    """Set up the root of row ``c``: ``(g, base, target, atol, state)`` from ``y_c = 0``.

    ``state`` holds the residual at 0, the problems already solved there, the bracket,
    the expansion step and the first point (a Newton step from 0 when there is no warm
    start, else the warm start's magnitude on the side of the root).
    """
    g = sd.G[c]
    g64 = g.to(torch.float64)
    yc = y[:, c]
    base = ((y @ sd.G64) - yc[:, None] * g64).to(sd.dtype)
    zero = torch.zeros_like(yc)
    d_zero, slope_zero = sd.moments(base, c)
    gam = sd.gamma[:, c]
    relaxed = gam > 0
    # OTFR: y_c = 0 while |D_c(0)| <= gamma_c, else D_c goes onto the nearest bound
    target = torch.where(relaxed, torch.copysign(gam, d_zero), zero)
    r_zero = d_zero - target
    atol = rtol * sd.h_sum
    done = (relaxed & (d_zero.abs() <= gam)) | (r_zero.abs() <= atol)
    spread = sd.spread[c]
    step = torch.where(spread > 0, 0.25 * sd.y_scale / spread, 1.0).expand_as(yc)
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
    return g, base, target, atol, (r_zero, done, lo, hi, step, t)


def solve_row(
    sd: SemiDual, c: int, y: torch.Tensor, rtol: float, steps: int = NEWTON_STEPS
) -> torch.Tensor:
    """Return ``y`` (B, d) with coordinate ``c`` maximizing ``F`` (all problems).

    ``steps`` Newton steps of the bracketed iteration, masked where a problem is done; a
    problem that has not met its tolerance by then takes its evaluated point of smallest
    residual (the next sweep goes on from there).
    """
    g, base, target, atol, (r_zero, done, lo, hi, step, t) = _root_start(sd, c, y, rtol)
    zero = torch.zeros_like(r_zero)
    result = zero.clone()
    best_t, best_r = zero, r_zero.abs()
    for _ in range(steps):
        value, slope = sd.moments(base + t[:, None].to(sd.dtype) * g, c)
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
    out = y.clone()
    out[:, c] = torch.where(done, result, best_t)
    return out


def joint_newton(
    sd: SemiDual,
    basis: tuple[torch.Tensor, torch.Tensor],
    y: torch.Tensor,
    active: torch.Tensor,
    tol: float,
    check: bool = True,
) -> torch.Tensor:
    r"""``JOINT_STEPS`` Newton steps on all constraint duals at once (small OTF only).

    Only :math:`G^\top y` matters, so the iteration runs on coordinates :math:`z` of
    the row space of ``G`` (``basis``, :func:`row_basis`: :math:`G^\top y = B^\top z`):
    dependent rows drop out and the Hessian :math:`-\varepsilon M`,
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
    Bm, pinv = basis
    z = (y @ sd.G64) @ Bm.T  # (B, r)
    eye = torch.eye(Bm.shape[0], dtype=torch.float64, device=z.device)
    ts = 0.5 ** torch.arange(LINE_STEPS, dtype=torch.float64, device=z.device)
    damping = torch.tensor(DAMPING, dtype=torch.float64, device=z.device)
    idx = torch.arange(sd.B, device=z.device)
    objective, e, s, col = sd.joint_state(z, Bm)
    moved = torch.zeros_like(active)
    for step in range(JOINT_STEPS):
        going = active & ((col @ sd.G64.T).abs().amax(dim=1) / sd.h_sum > tol)
        if check and step % 4 == 3 and not bool(going.any()):
            break
        Dz, M = sd.joint_system(e, s, col, Bm)
        scale = torch.diagonal(M, dim1=1, dim2=2).sum(dim=1).clamp(min=1e-300)
        # Levenberg-Marquardt: plain Newton first, then towards gradient steps if
        # rounding makes the Newton direction useless (saturated softmaxes)
        reg = M[:, None] + (damping[None, :] * scale[:, None])[..., None, None] * eye
        rhs = (-Dz)[:, None, :, None].expand(-1, len(DAMPING), -1, -1)
        delta = torch.linalg.solve_ex(reg, rhs)[0][..., 0]  # (B, L, r); no sync
        delta = torch.nan_to_num(delta, nan=0.0, posinf=0.0, neginf=0.0)
        steps = ts[None, None, :, None] * delta[:, :, None, :]  # (B, L, T, r)
        cand = z[:, None, :] + steps.flatten(1, 2)  # (B, L*T, r), damping-major
        new_obj, new_e, new_s, new_col = sd.joint_state(cand, Bm)
        slack = 1e-12 * objective.abs().clamp(min=1.0)
        res_new = (new_col @ Bm.T).abs().amax(dim=-1)  # (B, T)
        ok = (new_obj > objective[:, None]) | (
            (new_obj >= (objective - slack)[:, None]) & (res_new < Dz.abs().amax(dim=1)[:, None])
        )
        first = torch.argmax(ok.to(torch.int8), dim=1)  # largest accepted t
        take = going & ok.any(dim=1)
        z = torch.where(take[:, None], cand[idx, first], z)
        objective = torch.where(take, new_obj[idx, first], objective)
        e = torch.where(take[:, None, None], new_e[idx, first], e)
        s = torch.where(take[:, None], new_s[idx, first], s)
        col = torch.where(take[:, None], new_col[idx, first], col)
        moved = moved | take
    y_new = (z @ Bm) @ pinv.T  # minimum-norm y with G^T y = Bm^T z
    return torch.where(moved[:, None], y_new, y)


def solve_semidual(
    sd: SemiDual,
    *,
    tol: float,
    max_iter: int,
    y0: torch.Tensor | None = None,
    joint: torch.Tensor | None = None,
    check: bool = True,
    basis: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]:
    """Gauss-Seidel sweeps on ``sd`` (torch); return ``(y, w, err, sweeps)``.

    ``y`` (B, d) the constraint duals over ``eps``, ``w = G^T y`` (B, m) in ``C``'s
    dtype, ``err`` (B,) the relative constraint violations (float64 tensors on the
    device). ``joint`` (B,) bool marks the problems that also take joint Newton steps
    after each sweep (small OTF problems with several rows), on ``basis``
    (:func:`row_basis` of ``G``, computed here when not given). With ``check`` the
    sweeps stop once every problem is within ``tol`` (one host read per sweep); without,
    all ``max_iter`` sweeps run and nothing is read back.
    """
    y = torch.zeros(sd.B, sd.d, dtype=torch.float64, device=sd.H.device)
    if y0 is not None:
        y = y0.to(torch.float64).clone()
    use_joint = joint is not None and sd.d > 1
    sweeps = 0
    err = torch.full((sd.B,), float("inf"), dtype=torch.float64, device=y.device)
    for sweeps in range(1, max_iter + 1):  # noqa: B007
        steps = COLD_STEPS if (sweeps == 1 and y0 is None) else NEWTON_STEPS
        for c in range(sd.d):
            y = solve_row(sd, c, y, rtol=0.1 * tol, steps=steps)
        err = sd.violation(sd.constraint_values((y @ sd.G64).to(sd.dtype)))
        if check and bool((err <= tol).all()):
            break
        if use_joint:
            assert joint is not None  # use_joint implies it
            basis = basis or row_basis(sd.G)
            y = joint_newton(sd, basis, y, joint & (err > tol), tol, check=check)
            err = sd.violation(sd.constraint_values((y @ sd.G64).to(sd.dtype)))
            if check and bool((err <= tol).all()):
                break
    return y, (y @ sd.G64).to(sd.dtype), err, sweeps
