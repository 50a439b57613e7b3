r"""OTF0 of many fixed batches at once, for two groups under demographic parity (NumPy).

The OTF penalty's class-reduced problem of a batch (:mod:`otfair.ot._otf_problem`) has
``m`` rows with masses :math:`h_i` (the scores), two column classes (the groups) with the
reduced cost :math:`\tilde C_{ik}` and a constraint matrix whose distinct columns are
multiples of one vector :math:`g = (g_0, g_1)` (:func:`rank_one_direction`: two-group
DP). The constraints of OTF and of its relaxation OTFR then read :math:`g^\top M = 0`
and :math:`|g^\top M| \le \gamma = |\sum_i h_i g_{k(i)}|` on the class masses :math:`M`
of the plan, and each dual has one variable :math:`s` (Buyl & De Bie, NeurIPS 2022,
§3.2-3.4 and App. A):

.. math::

    \Phi(s) = \varepsilon \sum_i h_i\, L_i(s), \quad
    L_i(s) = \log \sum_k e^{(s g_k - \tilde C_{ik})/\varepsilon}, \qquad
    \mathrm{OTF}^0 = \Phi(s_R) + \gamma |s_R| - \Phi(s^\star),

up to terms common to OTF and OTFR, which cancel. :math:`\Phi'(s) = g^\top M(s)` is
increasing: :math:`s^\star` solves :math:`g^\top M(s) = 0`; :math:`s_R = 0` when
:math:`|g^\top M(0)| \le \gamma` (to the roots' tolerance: at a small
:math:`\varepsilon` the plan at 0 keeps each row in its class and meets the bound with
equality) and else solves :math:`g^\top M(s) = \pm\gamma`. In
:math:`x = s (g_1 - g_0)` each root is the monotone scalar equation
:math:`\sum_i h_i \sigma((x - \Delta_i)/\varepsilon) = R`, :math:`\Delta_i = \tilde
C_{i1} - \tilde C_{i0}`, solved for all ``B`` batches at once on a padded ``(B, m)``
layout: the root's step is found among the sorted :math:`\Delta` (the
:math:`\varepsilon \to 0` root, a weighted quantile), solved on that step in closed
form and polished by a bracketed Newton iteration over the rows around it. By the
envelope theorem the gradient in the masses
is, at the solved duals,

.. math::

    \frac{\partial\, \mathrm{OTF}^0}{\partial h_i} = \varepsilon\,(L_i(s_R) - L_i(s^\star))
    + |s_R|\, \mathrm{sign}\big(\textstyle\sum_j h_j g_{k(j)}\big)\, g_{k(i)},

so one evaluation is a few vectorized passes over the ``B x m`` masses, in float64, and
needs no autograd: what a full-batch quasi-Newton solver of the logistic model needs
(:class:`otfair.penalties.OTFPenalty`'s ``fixed_batch_objective``). The general solver
(:func:`otfair.ot.otf0`) gives the same value and gradient to its tolerance
(``tests/ot/test_otf_two_groups.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from otfair.ot._otf_fixed_batches import FixedBatchOTF0, padded, reduced_batches

__all__ = ["TwoGroupOTF0", "rank_one_direction"]

#: Newton steps at most per root (each at least halves the bracket)
MAX_STEPS = 100
#: a root is solved when the residual is below this fraction of the batch's mass
RTOL = 1e-8
#: the masses are clipped below at this value, as the penalty clips the scores
MIN_MASS = 1e-6
#: rows on each side of a root's step that its Newton iteration sums over (the others'
#: steps lie at least ``TAIL`` eps away: each is 0 or 1 to float64, else all rows are)
WINDOW = 48
TAIL = 36.0


def rank_one_direction(cols: np.ndarray, *, rtol: float = 1e-5) -> np.ndarray | None:
    """Return the unit ``g`` (2,) of which every row of ``cols`` (d, 2) is a multiple, or None.

    None when ``cols`` has other than two columns, a row without entries of both signs,
    or two rows that are not proportional to ``rtol`` (the rows of a float32 two-group
    DP matrix agree to ~1e-7).
    """
    c = np.asarray(cols, dtype=np.float64)
    if c.ndim != 2 or c.shape[1] != 2 or c.shape[0] == 0:
        return None
    norms = np.linalg.norm(c, axis=1)
    if not np.all(c[:, 0] * c[:, 1] < 0):
        return None
    g = c[int(np.argmax(norms))] / norms.max()
    cross = np.abs(c[:, 0] * g[1] - c[:, 1] * g[0])
    if np.any(cross > rtol * norms):
        return None
    return g


def _two_classes(G: torch.Tensor) -> tuple[np.ndarray | None, np.ndarray]:
    """Return the distinct columns (d, 2) of ``G`` by class, and the class of each column.

    ``(None, codes)`` unless the columns take exactly two values. Class 1 is the column
    that comes second in lexicographic order (the order of the batch problems' classes,
    :func:`otfair.ot._otf_problem.column_classes`). Two classes are found by comparing
    every column with the first and with the first that differs (a pass over ``G``;
    ``np.unique(axis=0)`` sorts the columns: 11 ms on 16,000).
    """
    M = G.cpu().numpy()
    first = M[:, :1]
    other = ~(first == M).all(axis=0)
    if other.any():
        second = M[:, [int(np.argmax(other))]]
        if (other == ~(second == M).all(axis=0)).all():  # every column is one of the two
            pair = np.hstack([first, second])
            flip = tuple(first.ravel().tolist()) > tuple(second.ravel().tolist())
            codes = (other != flip).astype(np.int64)
            return (pair[:, ::-1] if flip else pair), codes
    cols, codes = np.unique(M.T, axis=0, return_inverse=True)
    codes = codes.reshape(-1)
    if len(cols) != 2:
        return None, codes
    return cols.T, codes


class TwoGroupOTF0(FixedBatchOTF0):
    r"""The mean OTF0 of fixed batches, :math:`\frac1B \sum_b \mathrm{OTF}^0(h_b)`, with gradient.

    Build it with :meth:`from_batches`; call :meth:`value_and_grad` with the scores of
    all training rows.

    Parameters
    ----------
    costs : ndarray of shape (B, m, 2)
        The class-reduced costs of each complete batch (rows padded to ``m``).
    mask : bool ndarray of shape (B, m)
        The real rows (padding rows carry no mass).
    second : bool ndarray of shape (B, m)
        The rows of the second column class.
    index : int ndarray of shape (B, m)
        The training row of each entry (0 on padding).
    g : ndarray of shape (2,)
        The constraint direction (:func:`rank_one_direction`).
    eps : float
        The entropic smoothing the costs were reduced at.
    n_batches : int
        :math:`B` of the mean: every batch, those that miss a group (no penalty) too.
    n_rows : int
        The number of training rows (the length of the scores).
    """

    def __init__(
        self,
        costs: np.ndarray,
        mask: np.ndarray,
        second: np.ndarray,
        index: np.ndarray,
        g: np.ndarray,
        eps: float,
        n_batches: int,
        n_rows: int,
    ) -> None:
        self.costs = np.asarray(costs, dtype=np.float64)
        self.mask = np.asarray(mask, dtype=bool)
        self.second = np.asarray(second, dtype=bool) & self.mask
        self.index = np.asarray(index, dtype=np.int64)
        self.g = np.asarray(g, dtype=np.float64)
        self.eps = float(eps)
        self.n_batches = int(n_batches)
        self.n_rows = int(n_rows)
        self.dg = float(self.g[1] - self.g[0])
        self.diff = np.where(self.mask, self.costs[..., 1] - self.costs[..., 0], 0.0)
        self.rows = self.index[self.mask]  # each training row lies in one batch at most
        self._sig0 = 0.5 - 0.5 * np.tanh(0.5 * self.diff / self.eps)  # the plan's at s = 0
        self._softplus0 = self._softplus_at(np.zeros(len(self.diff)))
        # the rows by increasing step (padding last, its step at infinity: no mass)
        self.order = np.argsort(np.where(self.mask, self.diff, np.inf), axis=1)
        self.sorted_diff = np.take_along_axis(
            np.where(self.mask, self.diff, np.inf), self.order, axis=1
        )

    @classmethod
    def from_batches(
        cls,
        features: torch.Tensor,
        G: torch.Tensor,
        batches: Sequence[np.ndarray],
        eps: float,
    ) -> TwoGroupOTF0 | None:
        """Reduce each batch's cost once; None unless every batch is two-group rank one.

        ``features`` (n, d) and ``G`` (d_F, n) are the training set's inputs and
        constraint matrix; ``batches`` the row indices of each batch. A batch that misses
        a group carries no penalty (as in a batch scheme's epoch) but counts in the mean.
        """
        G = G.detach()
        cols, codes = _two_classes(G)
        if cols is None:
            return None
        g = rank_one_direction(cols)
        if g is None:
            return None
        kept = [
            np.asarray(idx)
            for idx in batches
            if len(np.unique(codes[np.asarray(idx)])) == 2  # a batch missing a group: none
        ]
        if not kept:
            return None
        found = reduced_batches(features, G, kept, eps)
        if found is None:  # a batch under 8 rows: two classes are no reduction
            return None
        cost, mask, index = padded(*found)
        second = (codes[index] == 1) & mask
        return cls(cost, mask, second, index, g, eps, len(batches), features.shape[0])

    def _root(
        self,
        sorted_h: np.ndarray,
        cum: np.ndarray,
        target: np.ndarray,
        batch: np.ndarray | None = None,
    ) -> np.ndarray:
        r"""Solve :math:`\sum_i h_i \sigma((x - \Delta_i)/\varepsilon)` = target for ``x`` (B,).

        ``sorted_h`` and ``cum`` are the masses in the order of :math:`\Delta` and their
        cumulative sums. The :math:`\varepsilon \to 0` root is the step of the row
        ``k`` where ``cum`` passes the target; on that step alone the equation reads
        :math:`c_{k-1} + h_k \sigma((x - \Delta_k)/\varepsilon) = R`, solved in closed
        form; a bracketed Newton iteration over the ``2 WINDOW`` rows around ``k`` (the
        steps farther than ``TAIL`` eps are 0 or 1 to float64) then adds the
        neighbours' steps, in one or two steps. A batch whose neighbours crowd the
        window is solved on all its rows (:meth:`_root_all_rows`). ``batch``: the batch of
        each problem (row of ``sorted_h``) when the problems are not the batches in order
        (both roots of every batch in one iteration).
        """
        eps = self.eps
        B, m = sorted_h.shape
        diff = self.sorted_diff if batch is None else self.sorted_diff[batch]
        width = min(2 * WINDOW, m)
        k = np.minimum((cum < target[:, None]).sum(axis=1), m - 1)
        first = np.clip(k - WINDOW, 0, m - width)
        cols = first[:, None] + np.arange(width)
        ds = np.take_along_axis(diff, cols, axis=1)
        hs = np.take_along_axis(sorted_h, cols, axis=1)
        rows = np.arange(B)
        below = np.where(first > 0, cum[rows, np.maximum(first - 1, 0)], 0.0)
        before_k = np.where(k > 0, cum[rows, np.maximum(k - 1, 0)], 0.0)
        h_k = np.maximum(sorted_h[rows, k], 1e-300)
        p = np.clip((target - before_k) / h_k, 1e-15, 1 - 1e-15)
        d_k = diff[rows, k]
        x = d_k + eps * np.log(p / (1 - p))
        lo, hi = d_k - TAIL * eps, d_k + TAIL * eps
        x = self._newton(x, lo, hi, ds, hs, target - below)
        # the window held every step within TAIL eps of the root, else solve on all rows
        left = np.where(first > 0, diff[rows, np.maximum(first - 1, 0)], -np.inf)
        right = np.where(first + width < m, diff[rows, np.minimum(first + width, m - 1)], np.inf)
        crowded = (left > x - TAIL * eps) | (right < x + TAIL * eps)
        if crowded.any():
            x[crowded] = self._root_all_rows(sorted_h[crowded], target[crowded], diff[crowded])
        return x

    def _newton(
        self,
        x: np.ndarray,
        lo: np.ndarray,
        hi: np.ndarray,
        ds: np.ndarray,
        hs: np.ndarray,
        target: np.ndarray,
    ) -> np.ndarray:
        r"""Bracketed Newton on :math:`\sum_i h_i \sigma((x - d_i)/\varepsilon)` = target (B,)."""
        # sigma(u) = (1 + tanh(u/2)) / 2: F = sum(h)/2 + sum(h t)/2 - target and
        # F' = (sum(h) - sum(h t^2)) / (4 eps), with t = tanh((x - d) / (2 eps))
        scale = 0.5 / self.eps
        x, lo, hi = (np.array(a, dtype=np.float64) for a in (x, lo, hi))
        mass = hs.sum(axis=1)
        atol = RTOL * np.maximum(mass + target, 1.0)
        offset = 0.5 * mass - target
        active = np.arange(len(x))  # the batches not solved yet
        for _ in range(MAX_STEPS):
            xa = x[active]
            t = np.tanh((xa[:, None] - ds) * scale)  # overflow-free
            ht = hs * t
            F = offset[active] + 0.5 * ht.sum(axis=1)
            open_ = np.abs(F) > atol[active]
            if not open_.any():
                break
            dF = (mass[active] - (ht * t).sum(axis=1)) * (0.5 * scale)
            la = np.where(F < 0, xa, lo[active])
            ha = np.where(F > 0, xa, hi[active])
            with np.errstate(divide="ignore", invalid="ignore"):
                step = xa - F / dF
            bisect = ~np.isfinite(step) | (step <= la) | (step >= ha)
            lo[active], hi[active] = la, ha
            x[active] = np.where(open_, np.where(bisect, 0.5 * (la + ha), step), xa)
            if not open_.all():  # go on with the open batches only
                active, hs, ds = active[open_], hs[open_], ds[open_]
        return x

    def _softplus_at(self, x: np.ndarray) -> np.ndarray:
        r""":math:`\log(1 + e^{(x_b - \Delta_i)/\varepsilon})` (B, m) at each batch's root."""
        u = (x[:, None] - self.diff) / self.eps
        return np.maximum(u, 0.0) + np.log1p(np.exp(-np.abs(u)))

    def _root_all_rows(
        self, sorted_h: np.ndarray, target: np.ndarray, ds: np.ndarray
    ) -> np.ndarray:
        """Return the roots on all the rows (``ds``: sorted differences), from the quantile."""
        cum = np.cumsum(sorted_h, axis=1)
        k = np.minimum((cum < target[:, None]).sum(axis=1), ds.shape[1] - 1)
        x = ds[np.arange(len(k)), k]
        finite = np.where(np.isfinite(ds), ds, 0.0)
        lo = finite.min(axis=1) - 2 * TAIL * self.eps
        hi = finite.max(axis=1) + 2 * TAIL * self.eps
        return self._newton(x, lo, hi, finite, sorted_h, target)

    def batch_values(self, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return OTF0 of each complete batch (B,) and its gradient in the masses (B, m)."""
        raw = np.asarray(scores, dtype=np.float64)[self.index]
        h = np.where(self.mask, np.maximum(raw, MIN_MASS), 0.0)
        g0, g1, dg = self.g[0], self.g[1], self.dg
        total = h.sum(axis=1)
        sorted_h = np.take_along_axis(h, self.order, axis=1)
        cum = np.cumsum(sorted_h, axis=1)
        # g^T M at s = 0; where it is 0, s = 0 solves OTF (and OTFR): Phi is flat there
        u0 = g0 * total + dg * (h * self._sig0).sum(axis=1)
        atol = RTOL * np.maximum(total, 1.0) * abs(dg)  # the roots' residual, in g^T M
        at_zero = np.abs(u0) <= atol
        # OTFR: s = 0 when the plan at s = 0 keeps |g^T M| <= gamma, else the nearer bound.
        # At a small eps the plan at s = 0 keeps each row in its own class (its cost to
        # itself is 0), so |g^T M(0)| = gamma up to rounding: an excess below the roots'
        # tolerance is s = 0 too. Solved instead, the root lies where the class masses are
        # flat in s, anywhere between the steps around 0 and on either side of 0, and the
        # value jumped under 1e-8 changes of the scores (a line search on that stopped
        # above the minimum, where the rounding of the costs led it).
        signed = g0 * total + dg * (h * self.second).sum(axis=1)
        gamma = np.abs(signed)
        outside = np.abs(u0) > gamma + atol
        # both roots (OTF's of every batch, OTFR's of those outside) in one iteration
        relaxed = np.flatnonzero(outside)
        batch = np.concatenate([np.arange(len(total)), relaxed])
        targets = np.concatenate(
            [-g0 * total / dg, (np.sign(u0[relaxed]) * gamma[relaxed] - g0 * total[relaxed]) / dg]
        )
        roots = self._root(sorted_h[batch], cum[batch], targets, batch)
        x_star = np.where(at_zero, 0.0, roots[: len(total)])
        x_r = np.zeros_like(total)
        x_r[relaxed] = roots[len(total) :]
        s_r = x_r / dg
        # eps (L_i(s_R) - L_i(s*)): L_i(s) = a_i + softplus((x - Delta_i) / eps)
        softplus_r = np.where(outside[:, None], self._softplus_at(x_r), self._softplus0)
        change = (g0 * (s_r - x_star / dg))[:, None] + self.eps * (
            softplus_r - self._softplus_at(x_star)
        )
        values = (h * change).sum(axis=1) + gamma * np.abs(s_r)
        g_row = np.where(self.second, g1, g0)
        grad = change + (np.abs(s_r) * np.sign(signed))[:, None] * g_row
        grad = np.where(self.mask & (raw > MIN_MASS), grad, 0.0)
        positive = values > 0
        return np.where(positive, values, 0.0), np.where(positive[:, None], grad, 0.0)

    def _stacked(self, k: int, index: np.ndarray) -> TwoGroupOTF0:
        costs, mask, second = (
            np.repeat(a, k, axis=0) for a in (self.costs, self.mask, self.second)
        )
        return TwoGroupOTF0(costs, mask, second, index, self.g, self.eps, k, k * self.n_rows)
