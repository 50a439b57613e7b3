r"""OTF0 of many fixed batches at once, for two groups under any label-cell notion (NumPy).

The two-group DP batches have one scalar dual (:mod:`otfair.ot._otf_two_groups`). Under
equalized odds (and equal opportunity) the constraints of a binary attribute live on the
label cells: the rows of :math:`G` for label :math:`l` are multiples of one direction
:math:`v^{(l)}` on the two column classes ``(group 0, l)`` and ``(group 1, l)`` and zero
elsewhere (:class:`otfair.notions.LinearConstraints`). With :math:`P` such cells (EO:
:math:`P = 2`) and :math:`K` column classes (those of no cell carry no constraint:
equal opportunity's ``Y = 0`` rows), write :math:`V \in \mathbb R^{P \times K}` for the
cells' directions. OTF's and OTFR's duals then have one variable per cell,
:math:`s \in \mathbb R^P` (Buyl & De Bie, NeurIPS 2022, §3.2-3.4 and App. A):

.. math::

    \Phi(s) = \varepsilon \sum_i h_i L_i(s), \quad
    L_i(s) = \log \sum_k e^{((V^\top s)_k - \tilde C_{ik})/\varepsilon}, \qquad
    \mathrm{OTF}^0 = \min_s \Big[\Phi(s) + \sum_p \gamma_p |s_p|\Big] - \min_s \Phi(s),

with :math:`\gamma_p = |\sum_i h_i V_{p,k(i)}|` (several rows of :math:`G` that are
multiples of one cell's direction give one bound: :math:`|c\, v^\top M| \le |c\, v^\top
h|` for every multiple :math:`c`). :math:`\Phi` is convex with gradient
:math:`\nabla\Phi(s) = V M(s)` (the plan's class masses) and Hessian
:math:`\varepsilon^{-1} \sum_i h_i \mathrm{Cov}_{\pi_i}(V)`, :math:`\pi_i` the softmax of
row ``i``. Both minima are found for all ``B`` batches at once by a Newton iteration with
a trust radius (the Hessian is nearly zero between the kinks of the
:math:`\varepsilon \to 0` piecewise-linear :math:`\Phi`; the radius doubles on a
decrease and quarters otherwise), warm-started from the previous call's duals (a
quasi-Newton solver's consecutive calls move the scores a little). OTFR's minimum is
:math:`s = 0` when :math:`|\nabla_p\Phi(0)| \le \gamma_p` for every cell (to the solves'
tolerance, times 1e3; at a small :math:`\varepsilon` the plan at 0 keeps each row in its own class
and meets the bound with equality), else an active-set Newton iteration on the cells
whose bound binds. By the envelope theorem

.. math::

    \frac{\partial\, \mathrm{OTF}^0}{\partial h_i} = \varepsilon\,(L_i(s_R) - L_i(s^\star))
    + \sum_p |s_{R,p}|\, \mathrm{sign}\Big(\sum_j h_j V_{p,k(j)}\Big) V_{p,k(i)}.

The general solver (:func:`otfair.ot.otf0`) gives the same value and gradient to its
tolerance (``tests/ot/test_otf_cells.py``).

Where the Newton passes go (the logistic model's EO fits on German, Adult and Diabetes):
most batches of a call are solved in two to four passes; one or two take tens, walking
a nearly flat valley of :math:`\Phi` (the gradient constant along it, the minimum barely
below its floor) at the trust radius's doubling, or starting on the wrong side of 0
after their gap changed sign. The batches are solved together, so those few set the
call's passes. Measured and not adopted: starting each cell on the side that
:math:`-\nabla\Phi(0)` points to, from its last dual on that side (more passes: the
coupled cells' sides are not the decoupled ones'), a fourfold radius growth, and
cutting a rejected step back to where the linear pieces through its two ends meet (no
fewer passes). Measured later (a logistic EO fit on Diabetes, 20,000 rows, alpha 0.01):
every evaluation was in the minimum of :math:`\Phi` (OTFR's bound held at 0 on every
batch); 3-5 evaluations per batch and call is typical, and the tail of 10-35 makes up
about two thirds of the batch-evaluations; flooring each call's starting radius at 0.01,
0.1 or 1 saved at most 5% of them; ``RTOL`` at 1e-6 or 1e-5 saves about 20% but moves
the fits (German's FairnessCV choice with them). Factoring :math:`e^{(V^\top s)_k /
\varepsilon}` out of the softmax (only a K-vector per batch depends on :math:`s`) would
underflow: at :math:`\varepsilon = 10^{-3}` of the mean cost, :math:`|V^\top s| /
\varepsilon` reaches 1,000-1,600 while a row's :math:`\tilde C / \varepsilon` spans
1,400-13,000. Measured and not adopted either: where a step is longer than the radius,
an exact line search on the :math:`\varepsilon \to 0` limit of :math:`\Phi` along the
Newton direction (each row's upper envelope of its ``K`` lines, the breakpoints sorted):
on German's EO search (282 recorded solves) it took six times the evaluations and left
some unsolved, because the valleys are flatter than the smoothing: in a traced solve the
limit fell by 7e-6 along the direction while the smoothed :math:`\Phi` at the limit's
minimum was 6e-4 above its start, so the limit's kink is no guide to the smoothed
minimum. Stopping short of the kink by ``8 eps / |slope change|`` (and trying the line
search again only after an accepted step) cut the evaluations by 44% (3,845 against
6,910) to the same minima, but the line search (four evaluations' worth of array
operations) took the time saved: 1.13 s against 1.12 s for the 282 solves.

Measured later on the 1,275 solver calls of German's logistic EO search, replayed from
recorded states (25 passes a call, 91 batch-evaluations): in the slow batches' flat
valleys the gradient is the residue of exponentially small tails (7e-6, where one row's
share is about 0.2), set by rows about ten :math:`\varepsilon` from a tie on both sides,
so the minimum is not on a kink of the limit. Extending a damped step to the limit's
first kink along it (stopping three :math:`\varepsilon` short) tripled the passes: the
kink lies past the smoothed minimum, the extended step is rejected, and the walk
alternates. Trying eleven lengths along a damped step at once (a quarter to 256 times
it, one stacked evaluation) cut the passes by 30% (22,046 against 31,699) but each pass
carries eleven times the arrays: 5.1 s against 3.7 s. Each pass is small-array
overhead there (about 100 microseconds for the nine batches of 63 rows): the operations
per pass, not their size, set the time (`benchmarks/cells_solver_bench.py` replays
those calls).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from otfair.ot._otf_fixed_batches import FixedBatchOTF0, padded, reduced_batches
from otfair.ot._otf_problem import column_classes

__all__ = ["CellsOTF0", "constraint_cells"]

#: Newton steps at most per solve
MAX_STEPS = 200
#: a dual is solved when each gradient entry is below this fraction of the batch's mass
#: (times the cell direction's scale)
RTOL = 1e-8
#: the masses are clipped below at this value, as the penalty clips the scores
MIN_MASS = 1e-6
#: active-set rounds of OTFR's solve at most (a cell's bound binds or not)
MAX_ROUNDS = 6


def constraint_cells(cols: np.ndarray, *, rtol: float = 1e-5) -> np.ndarray | None:
    """Return the cells' directions ``V`` (P, K) of the distinct columns ``cols`` (d, K), or None.

    Each row of ``cols`` must be a multiple of one cell's direction: nonzero on exactly
    two columns, with opposite signs; rows on the same two columns must be proportional
    (to ``rtol``) and no column may lie in two cells. ``V``'s rows are unit vectors,
    ordered by their first column. None otherwise (several attributes, more groups,
    continuous attributes).
    """
    c = np.asarray(cols, dtype=np.float64)
    if c.ndim != 2 or c.shape[0] == 0 or c.shape[1] < 2:
        return None
    cells: dict[tuple[int, int], np.ndarray] = {}
    for row in c:
        support = np.flatnonzero(row != 0)
        if len(support) != 2 or row[support[0]] * row[support[1]] >= 0:
            return None
        key = (int(support[0]), int(support[1]))
        unit = row / np.linalg.norm(row)
        if key in cells:
            known = cells[key]
            if abs(known[key[0]] * unit[key[1]] - known[key[1]] * unit[key[0]]) > rtol:
                return None
            continue
        cells[key] = unit
    used = [k for key in cells for k in key]
    if len(used) != len(set(used)):
        return None
    return np.stack([cells[key] for key in sorted(cells)])


class CellsOTF0(FixedBatchOTF0):
    r"""The mean OTF0 of fixed batches, :math:`\frac1B \sum_b \mathrm{OTF}^0(h_b)`, with gradient.

    For two groups under DP, EO or equal opportunity (module docstring). Build it with
    :meth:`from_batches`; call :meth:`value_and_grad` with the scores of all training
    rows. Keeps each batch's last duals as the next call's start.

    Parameters
    ----------
    costs : ndarray of shape (B, m, K)
        The class-reduced costs of each batch (rows padded to ``m``; a class missing
        from a batch has cost ``inf``: no mass goes there).
    mask : bool ndarray of shape (B, m)
        The real rows (padding rows carry no mass).
    own : int ndarray of shape (B, m)
        Each row's own column class.
    index : int ndarray of shape (B, m)
        The training row of each entry (0 on padding).
    V : ndarray of shape (P, K)
        The cells' directions (:func:`constraint_cells`).
    eps : float
        The entropic smoothing the costs were reduced at.
    n_batches : int
        :math:`B` of the mean: every batch, those that miss a cell's group (no penalty)
        too.
    n_rows : int
        The number of training rows (the length of the scores).
    """

    def __init__(
        self,
        costs: np.ndarray,
        mask: np.ndarray,
        own: np.ndarray,
        index: np.ndarray,
        V: np.ndarray,
        eps: float,
        n_batches: int,
        n_rows: int,
    ) -> None:
        self.mask = np.asarray(mask, dtype=bool)
        self.costs = np.where(self.mask[..., None], np.asarray(costs, dtype=np.float64), 0.0)
        self.own = np.where(self.mask, np.asarray(own, dtype=np.int64), 0)
        self.index = np.asarray(index, dtype=np.int64)
        self.V = np.asarray(V, dtype=np.float64)
        self.eps = float(eps)
        self.n_batches = int(n_batches)
        self.n_rows = int(n_rows)
        self.rows = self.index[self.mask]  # each training row lies in one batch at most
        self.v_own = np.where(self.mask[..., None], self.V.T[self.own], 0.0)  # (B, m, P)
        # -C / eps by class (B, K, m): the row sums over the few classes run elementwise
        self._neg_cost = np.ascontiguousarray(np.moveaxis(-self.costs / self.eps, 2, 1))
        cells = np.array([np.flatnonzero(row) for row in self.V])  # each cell's two classes
        self._first, self._second = cells[:, 0], cells[:, 1]
        rows = np.arange(len(cells))
        self._v_first = self.V[rows, self._first][None, :, None]
        self._v_second = self.V[rows, self._second][None, :, None]
        self._v_squared = np.ascontiguousarray((self.V**2).T)
        # the plan's rows at s = 0 and their log-normalizers do not depend on the masses
        top = self._neg_cost.max(axis=1)
        plan0 = np.exp(self._neg_cost - top[:, None, :])
        total = plan0.sum(axis=1)
        self._plan0 = plan0 / total[:, None, :]
        self._L0 = top + np.log(total)
        self._scale = np.abs(self.V).max(axis=1)  # (P,)
        B, P = self.costs.shape[0], self.V.shape[0]
        self._s_star = np.zeros((B, P))  # the last call's duals (warm starts)
        self._s_r = np.zeros((B, P))
        self._radius = np.ones(B)  # trust radii, in cost units (the mean cost is 1)

    @classmethod
    def from_batches(
        cls,
        features: torch.Tensor,
        G: torch.Tensor,
        batches: Sequence[np.ndarray],
        eps: float,
    ) -> CellsOTF0 | None:
        """Reduce each batch's cost once; None unless the constraints are two-group cells.

        As :meth:`otfair.ot._otf_two_groups.TwoGroupOTF0.from_batches` (the training
        rows' ``features`` and ``G``, each batch's row indices): a batch missing a
        constrained class (a group of a label cell) carries no penalty but counts in
        the mean; None when a batch is too small for the class reduction (fewer than
        four rows per class).
        """
        G = G.detach()
        n = G.shape[1]
        found = column_classes(G, max_classes=max(n // 4, 1))
        if found is None:
            return None
        cols_t, codes_t = found
        cols, codes = cols_t.cpu().numpy(), codes_t.cpu().numpy()
        V = constraint_cells(cols)
        if V is None:
            return None
        constrained = np.flatnonzero(np.abs(V).sum(axis=0) > 0)
        kept = [np.asarray(idx) for idx in batches]
        kept = [idx for idx in kept if np.isin(constrained, codes[idx]).all()]  # else none
        reduced = reduced_batches(features, G, kept, eps) if kept else None
        if reduced is None:  # no batch, or one too small for the class reduction
            return None
        costs = []
        for idx, batch_cost in zip(kept, reduced[0], strict=True):  # a class it lacks: inf
            cost = np.full((len(idx), cols.shape[1]), np.inf)
            cost[:, np.unique(codes[idx])] = batch_cost  # its classes, in the same order
            costs.append(cost)
        cost, mask, index = padded(costs, reduced[1])
        return cls(cost, mask, codes[index], index, V, eps, len(batches), n)

    def _evaluate(
        self, s: np.ndarray, h: np.ndarray, batch: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        r"""Return :math:`L` (b, m), :math:`\Phi` (b,), its gradient (b, P) and Hessian (b, P, P).

        :math:`\nabla_p\Phi = \sum_{k \in p} V_{pk} M_k` and the Hessian's diagonal
        part :math:`\varepsilon^{-1} \sum_{k \in p} V_{pk}^2 M_k` come from the class
        masses :math:`M_k = \sum_i h_i \pi_{ik}`; only the cross term
        :math:`-\varepsilon^{-1} \sum_i h_i q_{ip} q_{iq}`, :math:`q_{ip} = \sum_{k \in
        p} V_{pk} \pi_{ik}`, needs the rows.
        """
        if len(batch) == self._neg_cost.shape[0]:
            z = self._neg_cost + ((s @ self.V) / self.eps)[:, :, None]  # (b, K, m)
        else:
            z = self._neg_cost[batch]
            z += ((s @ self.V) / self.eps)[:, :, None]
        top = z.max(axis=1)
        z -= top[:, None, :]
        np.exp(z, out=z)
        total = z.sum(axis=1)
        L = top + np.log(total)
        z /= total[:, None, :]  # the plan's rows pi_ik
        M = np.einsum("bkm,bm->bk", z, h)  # the class masses
        grad = M @ self.V.T
        # q_ip = V_pa pi_ia + V_pc pi_ic, the cells' classes a and c (b, P, m)
        q = z[:, self._first] * self._v_first
        q += z[:, self._second] * self._v_second
        hess = -np.einsum("bpm,bqm->bpq", q * h[:, None, :], q)
        P = self.V.shape[0]
        hess.reshape(len(batch), P * P)[:, :: P + 1] += M @ self._v_squared
        hess /= self.eps
        phi = self.eps * (h * L).sum(axis=1)
        return L, phi, grad, hess

    def _minimize(
        self,
        s: np.ndarray,
        h: np.ndarray,
        batch: np.ndarray,
        linear: np.ndarray,
        free: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        r"""Minimize :math:`\Phi(s) + \text{linear}^\top s` over the ``free`` cells (others fixed).

        Newton steps within a trust radius per problem (in cost units, :math:`|V^\top
        \delta s|_\infty`), all ``b`` problems at once, from ``s`` (b, P): a step longer
        than the radius is damped (Levenberg-Marquardt) and cut to it; the radius doubles
        on a sufficient decrease and quarters otherwise. Returns the minimizers (b, P) and
        :math:`L` (b, m) at them.
        """
        s = s.copy()
        P = self.V.shape[0]
        top = self._scale.max()
        atol = RTOL * np.maximum(h.sum(axis=1), 1.0)[:, None] * self._scale  # (b, P)
        radius = self._radius[batch].copy()
        L, phi, grad, hess = self._evaluate(s, h, batch)
        f = phi + (linear * s).sum(axis=1)
        g = np.where(free, grad + linear, 0.0)
        eye = np.eye(P)
        every = bool(free.all())  # no fixed cell: H is the Hessian itself
        plain = every and not linear.any()  # Phi alone: f and g are Phi's
        active = np.arange(len(s))
        with np.errstate(all="ignore"):  # a singular H: no finite Newton step (below)
            for _ in range(MAX_STEPS):
                active = active[(np.abs(g[active]) > atol[active]).any(axis=1)]
                if not len(active):
                    break
                fa, ga, ra = free[active], g[active], radius[active]
                if every:
                    H = hess[active]
                else:
                    both = fa[:, :, None] & fa[:, None, :]
                    H = np.where(both, hess[active], 0.0) + eye * (~fa)[:, :, None]
                H += eye * (1e-12 * np.abs(H).max(axis=(1, 2)) + 1e-300)[:, None, None]
                step, size = self._trust_step(H, ga, ra, top)
                trial = s[active] + step
                L_t, phi_t, grad_t, hess_t = self._evaluate(trial, h[active], batch[active])
                f_a = f[active]
                if plain:
                    f_t, g_t = phi_t, grad_t
                else:
                    f_t = phi_t + (linear[active] * trial).sum(axis=1)
                    g_t = np.where(fa, grad_t + linear[active], 0.0)
                slack = 1e-13 * np.abs(f_a)  # rounding of Phi
                accept = f_t <= f_a + 1e-4 * (ga * step).sum(axis=1) + slack
                accept |= (np.abs(g_t) <= atol[active]).all(axis=1)
                radius[active] = np.where(accept, np.maximum(ra, 2 * size), 0.25 * size)
                take = active[accept]
                s[take], L[take], f[take] = trial[accept], L_t[accept], f_t[accept]
                hess[take], g[take] = hess_t[accept], g_t[accept]
                stuck = ~accept & (radius[active] < 1e-14)
                g[active[stuck]] = 0.0  # rounding: no decrease is measurable any more
        self._radius[batch] = np.maximum(radius, 1e-6)
        return s, L

    @classmethod
    def _trust_step(
        cls, H: np.ndarray, g: np.ndarray, radius: np.ndarray, top: float
    ) -> tuple[np.ndarray, np.ndarray]:
        r"""Return the Newton step within the trust ``radius`` per problem, and its size.

        A step longer than the radius (or none: H singular, all rows saturated) is
        damped towards the gradient (Levenberg-Marquardt, :math:`|step| \sim` radius
        where H is flat; the gradient step itself where the damped one is not finite)
        and cut to the radius. Sizes are in cost units (``top`` the largest scale of a
        cell's direction). Call it under ``np.errstate(all="ignore")``.
        """
        step = cls._step(H, g)
        size = np.abs(step).max(axis=1) * top
        long = ~(size <= radius)
        if long.any():
            g_top = np.abs(g).max(axis=1) * top
            lam = g_top / radius
            diagonal = H.reshape(len(g), -1)[:, :: g.shape[1] + 1]
            damped = cls._step(H, g, diagonal + lam[:, None])
            steep = -g * (radius / g_top)[:, None]
            ok = np.isfinite(damped).all(axis=1)
            step = np.where(long[:, None], np.where(ok[:, None], damped, steep), step)
            size = np.abs(step).max(axis=1) * top
        cut = np.minimum(1.0, radius / np.maximum(size, 1e-300))
        step *= cut[:, None]
        size *= cut
        return step, size

    @staticmethod
    def _step(H: np.ndarray, g: np.ndarray, diagonal: np.ndarray | None = None) -> np.ndarray:
        """Return :math:`-H^{-1} g` per problem (not finite where H is singular).

        ``diagonal`` (b, P): H's diagonal replaced by it (a damped H). One or two cells
        (DP, equal opportunity, EO) in closed form. Call it under
        ``np.errstate(all="ignore")`` (a singular H: the caller takes the gradient).
        """
        P = g.shape[1]
        if diagonal is None:
            diagonal = H.reshape(len(g), -1)[:, :: P + 1]
        if P == 1:
            return -g / diagonal
        if P == 2:
            a, d = diagonal[:, 0], diagonal[:, 1]
            b, c = H[:, 0, 1], H[:, 1, 0]
            det = a * d - b * c
            step = np.empty_like(g)
            np.multiply(d, g[:, 0], out=step[:, 0])
            step[:, 0] -= b * g[:, 1]
            np.multiply(a, g[:, 1], out=step[:, 1])
            step[:, 1] -= c * g[:, 0]
            step /= -det[:, None]
            return step
        H = H.copy()
        H.reshape(len(g), -1)[:, :: P + 1] = diagonal
        return -np.linalg.solve(H, g[..., None])[..., 0]

    def batch_values(self, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return OTF0 of each complete batch (B,) and its gradient in the masses (B, m)."""
        raw = np.asarray(scores, dtype=np.float64)[self.index]
        h = np.where(self.mask, np.maximum(raw, MIN_MASS), 0.0)
        B, P = self._s_star.shape
        every = np.arange(B)
        nothing, free = np.zeros((B, P)), np.ones((B, P), dtype=bool)
        s_star, L_star = self._minimize(self._s_star, h, every, nothing, free)
        self._s_star = s_star
        signed = (h[..., None] * self.v_own).sum(axis=1)  # (B, P): V M of the own classes
        gamma = np.abs(signed)
        L0 = self._L0
        u0 = np.einsum("bkm,bm->bk", self._plan0, h) @ self.V.T  # V M(0)
        # a bound holds at s = 0 to this (1e3 times the solves' tolerance: the value
        # would jump under rounding if a flat excess were solved for)
        atol = 1e3 * RTOL * np.maximum(h.sum(axis=1), 1.0)[:, None] * self._scale
        # OTFR: s = 0 when every cell's bound holds at s = 0 (to the tolerance: at a small
        # eps the plan at 0 keeps each row in its class and meets the bound with equality)
        s_r = np.zeros((B, P))
        L_r = L0
        outside = np.flatnonzero((np.abs(u0) > gamma + atol).any(axis=1))
        if len(outside):
            o = outside
            s_o, L_o = self._relaxed(h[o], o, gamma[o], u0[o], atol[o])
            s_r[outside], L_r = s_o, L0.copy()
            L_r[outside] = L_o
        self._s_r = s_r
        change = self.eps * (L_r - L_star)
        values = (h * change).sum(axis=1) + (gamma * np.abs(s_r)).sum(axis=1)
        grad = change + ((np.abs(s_r) * np.sign(signed))[:, None, :] * self.v_own).sum(axis=2)
        grad = np.where(self.mask & (raw > MIN_MASS), grad, 0.0)
        positive = values > 0
        return np.where(positive, values, 0.0), np.where(positive[:, None], grad, 0.0)

    def _relaxed(
        self,
        h: np.ndarray,
        batch: np.ndarray,
        gamma: np.ndarray,
        u0: np.ndarray,
        atol: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        r"""OTFR's duals where a bound binds: :math:`\min_s \Phi(s) + \sum_p \gamma_p |s_p|`.

        Active set: a binding cell ``p`` takes the sign :math:`\sigma_p` of
        :math:`-\nabla_p \Phi` and the linear term :math:`\gamma_p \sigma_p s_p`, the
        others stay at 0; after each smooth solve a cell whose dual crossed 0 is
        released and a released cell whose bound fails binds again.
        """
        sigma = np.where(np.abs(u0) > gamma + atol, -np.sign(u0), 0.0)
        s = np.where(sigma != 0, self._s_r[batch], 0.0)
        s = np.where(s * sigma > 0, s, 0.0)
        L = None
        for _ in range(MAX_ROUNDS):
            s, L = self._minimize(s, h, batch, gamma * sigma, sigma != 0)
            crossed = (sigma != 0) & (s * sigma < 0)
            _, _, grad, _ = self._evaluate(s, h, batch)
            fails = (sigma == 0) & (np.abs(grad) > gamma + atol)
            if not (crossed.any() or fails.any()):
                break
            sigma = np.where(crossed, 0.0, np.where(fails, -np.sign(grad), sigma))
            s = np.where(sigma != 0, np.where(crossed, 0.0, s), 0.0)
        assert L is not None
        return s, L

    def _stacked(self, k: int, index: np.ndarray) -> CellsOTF0:
        costs, mask, own = (np.repeat(a, k, axis=0) for a in (self.costs, self.mask, self.own))
        return CellsOTF0(costs, mask, own, index, self.V, self.eps, k, k * self.n_rows)
