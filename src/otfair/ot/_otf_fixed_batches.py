"""What the vectorized fixed-batch OTF0 solvers share: stacking one batch, the mean over batches.

:class:`otfair.ot._otf_two_groups.TwoGroupOTF0` (two groups, DP) and
:class:`otfair.ot._otf_cells.CellsOTF0` (two groups, EO and equal opportunity) solve
the OTF0 problems of ``B`` padded batches at once (:meth:`FixedBatchOTF0.batch_values`);
this base turns those into the mean over the batches (the L-BFGS path's penalty) and
into one value per copy of a single batch (the stacked Adam step's ``K`` models).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TypeVar

import numpy as np
import torch

from otfair.ot._otf_problem import euclidean_class_problem

__all__ = ["FixedBatchOTF0", "padded", "reduced_batches"]

_S = TypeVar("_S", bound="FixedBatchOTF0")


class FixedBatchOTF0(ABC):
    """Base of the fixed-batch solvers: ``index`` (B, m), ``mask`` (B, m), ``costs`` (B, ...).

    Subclasses set ``index``, ``mask``, ``costs``, ``rows`` (the training row of each
    real entry, in ``mask`` order), ``n_batches`` and ``n_rows``, and implement
    :meth:`batch_values` and :meth:`_stacked`.
    """

    index: np.ndarray
    mask: np.ndarray
    costs: np.ndarray
    rows: np.ndarray
    n_batches: int
    n_rows: int

    @abstractmethod
    def batch_values(self, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return OTF0 of each complete batch (B,) and its gradient in the masses (B, m)."""

    @abstractmethod
    def _stacked(self: _S, k: int, index: np.ndarray) -> _S:
        """Return this one batch ``k`` times (its per-batch arrays repeated), on ``index``."""

    def repeated(self: _S, k: int) -> _S:
        """Return this one batch ``k`` times, copy ``j`` reading scores ``j m .. (j+1) m - 1``.

        For ``k`` models on one batch of ``m`` rows (a stacked Adam step):
        :meth:`block_values` then solves the ``k`` problems at once.
        """
        if self.costs.shape[0] != 1 or self.n_batches != 1:
            raise ValueError("`repeated` takes a solver of one batch.")
        index = self.index + (np.arange(k, dtype=np.int64) * self.n_rows)[:, None]
        return self._stacked(k, index)

    def block_values(self, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return each problem's OTF0 (B,) and its gradient in ``scores`` (n_rows,), unaveraged."""
        values, grad = self.batch_values(scores)
        out = np.zeros(self.n_rows)
        out[self.rows] = grad[self.mask]
        return values, out

    def value_and_grad(self, scores: np.ndarray) -> tuple[float, np.ndarray]:
        """Return the mean OTF0 over the batches and its gradient in ``scores`` (n,)."""
        values, grad = self.block_values(scores)
        return float(values.sum()) / self.n_batches, grad / self.n_batches


def padded(
    costs: list[np.ndarray], rows: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stack each batch's class-reduced costs (m_b, K) and training rows (m_b,), padded.

    Returns ``(costs (B, m, K), mask (B, m), index (B, m))`` with ``m`` the largest batch;
    padding entries have cost 0, ``mask`` False and index 0.
    """
    B, m, K = len(rows), max(len(r) for r in rows), costs[0].shape[1]
    cost = np.zeros((B, m, K))
    mask = np.zeros((B, m), dtype=bool)
    index = np.zeros((B, m), dtype=np.int64)
    for b, (D, r) in enumerate(zip(costs, rows, strict=True)):
        cost[b, : len(r)], mask[b, : len(r)], index[b, : len(r)] = D, True, r
    return cost, mask, index


def reduced_batches(
    features: torch.Tensor, G: torch.Tensor, batches: list[np.ndarray], eps: float
) -> tuple[list[np.ndarray], list[np.ndarray]] | None:
    """Return each batch's class-reduced cost (m_b, K_b) and its training rows, class-sorted.

    The normalized Euclidean cost of the batch's ``features`` reduced to the column
    classes of its slice of ``G`` (:func:`otfair.ot._otf_problem.euclidean_class_problem`),
    computed once per batch; None when a batch is too small for the reduction (more
    classes than a quarter of its rows).
    """
    costs, rows = [], []
    for idx in batches:
        t = torch.as_tensor(idx, dtype=torch.long, device=G.device)
        found = euclidean_class_problem(features[t], G[:, t], eps)
        if found is None:
            return None
        order, problem = found
        costs.append(problem.matrices(eps)[0].cpu().numpy())
        rows.append(idx[order.cpu().numpy()])
    return costs, rows
