r"""Tabular features as a point of a finite product space (for the discrete FNF encoder).

Fair Normalizing Flows on categorical data (Balunović et al. 2022, §5, "categorical
datasets") work on a finite input space: every feature is categorical, so the input is a
cell :math:`c = (c_1, \dots, c_m)` of :math:`\prod_j \{0, \dots, K_j - 1\}` and the space
can be enumerated. :class:`DiscreteCoding` builds that space from a preprocessed numeric
matrix (otfair's loaders: standardized numeric columns, then one one-hot block per
categorical column):

* a **one-hot block** is a run of consecutive 0/1 columns whose sum is exactly 1 in
  every training row; it becomes one variable with one level per column (a row with no
  level set, a category unseen at fit, takes the block's most frequent training level);
  blocks with more than ``max_levels`` levels are dropped (the authors drop Adult's
  native country);
* every other column is cut at its training quantiles :math:`1/k, \dots, (k-1)/k` into at
  most ``n_bins`` = :math:`k` levels (the authors' ``_discretize_continuous``, k = 4;
  tied quantiles merge, so a column with few values keeps them), or dropped when
  ``n_bins`` is None (the authors' Adult: categorical columns only).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["DiscreteCoding"]


@dataclass
class DiscreteCoding:
    r"""Map rows of a numeric matrix to cells of a finite product space.

    Parameters
    ----------
    n_bins : int or None, default=4
        Quantile levels per non-one-hot column; None drops those columns.
    max_levels : int, default=20
        One-hot blocks with more levels are dropped.

    Attributes
    ----------
    cardinalities_ : list of int
        :math:`K_j` of each kept variable.
    n_cells_ : int
        :math:`\prod_j K_j`.
    n_one_hot_ : int
        How many of the variables (the first ones) are one-hot blocks; the others are
        binned columns.
    """

    n_bins: int | None = 4
    max_levels: int = 20
    _blocks: list[np.ndarray] = field(default_factory=list, init=False, repr=False)
    _modes: list[int] = field(default_factory=list, init=False, repr=False)
    _binned: list[tuple[int, np.ndarray]] = field(default_factory=list, init=False, repr=False)

    def fit(self, X: np.ndarray) -> DiscreteCoding:
        """Find the one-hot blocks and the bin edges of the other columns of ``X``."""
        X = np.asarray(X, dtype=np.float64)
        binary = np.all((X == 0) | (X == 1), axis=0)
        self._blocks, self._modes, self._binned = [], [], []
        j, d = 0, X.shape[1]
        while j < d:
            end = _one_hot_block_end(X, binary, j)
            if end is not None:
                if end - j <= self.max_levels:
                    self._blocks.append(np.arange(j, end))
                    self._modes.append(int(np.argmax(X[:, j:end].sum(axis=0))))
                j = end
                continue
            if self.n_bins is not None:
                self._binned.append((j, _bin_edges(X[:, j], int(self.n_bins))))
            j += 1
        self.cardinalities_ = [len(b) for b in self._blocks] + [
            len(edges) + 1 for _, edges in self._binned
        ]
        if not self.cardinalities_:
            raise ValueError(
                "No discrete variable is left: `X` has no one-hot block with at most "
                f"`max_levels`={self.max_levels} levels and `n_bins` is None."
            )
        self.n_cells_ = int(np.prod(self.cardinalities_, dtype=np.float64))
        self.n_one_hot_ = len(self._blocks)
        self._strides = np.cumprod([1, *self.cardinalities_[::-1]])[:-1][::-1].astype(np.int64)
        return self

    def codes(self, X: np.ndarray) -> np.ndarray:
        """Return each row's levels, an int array of shape (n, m)."""
        X = np.asarray(X, dtype=np.float64)
        cols = []
        for block, mode in zip(self._blocks, self._modes, strict=True):
            part = X[:, block]
            level = np.argmax(part, axis=1)
            cols.append(np.where(part.max(axis=1) > 0.5, level, mode))
        for j, edges in self._binned:
            cols.append(np.searchsorted(edges, X[:, j], side="left"))
        return np.column_stack(cols).astype(np.int64)

    def cell_index(self, codes: np.ndarray) -> np.ndarray:
        """Row-major index of each cell in ``0 .. n_cells_ - 1``."""
        return codes @ self._strides

    def cells(self, index: np.ndarray) -> np.ndarray:
        """Return the levels of the cells of row-major ``index``, shape (len(index), m)."""
        grid = np.unravel_index(np.asarray(index, dtype=np.int64), self.cardinalities_)
        return np.column_stack(grid).astype(np.int64)

    def all_cells(self) -> np.ndarray:
        """Every cell's levels in index order, shape (n_cells_, m)."""
        return self.cells(np.arange(self.n_cells_))

    def one_hot(self, codes: np.ndarray) -> np.ndarray:
        """Concatenated one-hot vectors of ``codes``, float32, shape (n, sum K_j)."""
        offsets = np.cumsum([0, *self.cardinalities_[:-1]])
        out = np.zeros((len(codes), int(sum(self.cardinalities_))), dtype=np.float32)
        rows = np.arange(len(codes))[:, None]
        out[rows, codes + offsets[None, :]] = 1.0
        return out


def _one_hot_block_end(X: np.ndarray, binary: np.ndarray, start: int) -> int | None:
    """End (exclusive) of the one-hot block starting at ``start``, or None."""
    total = np.zeros(len(X))
    end = start
    while end < X.shape[1] and binary[end]:
        total += X[:, end]
        end += 1
        if np.any(total > 1):
            return None
        if end - start >= 2 and np.all(total == 1):
            return end
    return None


def _bin_edges(x: np.ndarray, n_bins: int) -> np.ndarray:
    """Interior quantile edges (levels: x <= e_1, e_1 < x <= e_2, ...), ties merged."""
    if n_bins < 1:
        raise ValueError(f"`n_bins` must be a positive int or None; got {n_bins}.")
    values = np.unique(x)
    if len(values) <= n_bins:
        return values[:-1]
    return np.unique(np.quantile(x, np.arange(1, n_bins) / n_bins))
