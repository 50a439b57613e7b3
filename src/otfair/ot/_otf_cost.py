r"""The class-reduced Euclidean cost of one batch in two fused passes (the OTF penalty's).

For features :math:`x_1, \dots, x_n` sorted by column class (``counts[k]`` rows of class
``k`` in a row), the OTF penalty solves on the class reduction
(:mod:`otfair.ot._otf_problem`) of the mean-normalized Euclidean cost

.. math::

    C_{ij} = \lVert x_i - x_j \rVert_2 / s \quad (C_{ii} = 0), \qquad
    s = \frac{1}{n^2} \sum_{ij} \lVert x_i - x_j \rVert_2, \qquad
    \tilde C_{ik} = -\varepsilon \log \sum_{j:\, k(j) = k} e^{-C_{ij}/\varepsilon}
    = \frac{m_{ik}}{s} - \varepsilon \log \sum_{j:\, k(j) = k}
      e^{(m_{ik} - \lVert x_i - x_j \rVert) / (s \varepsilon)},

with :math:`m_{ik} = \min_{j:\, k(j) = k} \lVert x_i - x_j \rVert` (the shift that keeps
every exponent :math:`\le 0`). The distances come from one matrix product
(:math:`\lVert x\rVert^2 + \lVert y\rVert^2 - 2 x^\top y`, the formula of
``torch.cdist``'s ``use_mm_for_euclid_dist`` mode, i.e.
:func:`~otfair.ot.euclidean_cost` with ``exact=False``). Computed as
``euclidean_cost``, ``fill_diagonal_(0)``, ``C.mean()`` and
:func:`~otfair.ot._lse.lse_rows_by_class` it takes eleven passes over the ``n x n``
matrix, each a separate ``n x n`` temporary; here each chunk of rows (a cache-sized
block) is produced and reduced while it is in cache: the first pass takes the square
root, the total and the row-class minima, the second (once :math:`s` is known) the
exponentials (performance.md: the sum of elementwise passes, not the arithmetic, sets
the cost at ``n = 1000``). The answer is that of the unfused route up to float32
rounding of the exponents (measured: 4e-7 absolute on Adult's normalized costs).
"""

from __future__ import annotations

import math

import torch

from otfair.ot._lse import EXP_FLOOR

#: entries of one chunk of rows (1 MB of float32: the block stays in a core's L2 cache)
CHUNK_ELEMENTS = 1 << 18
#: features whose largest magnitude lies outside [2**-RANGE_EXPONENT, 2**RANGE_EXPONENT]
#: are rescaled by a power of two before their squared norms are formed
RANGE_EXPONENT = 50


def in_float_range(X: torch.Tensor) -> torch.Tensor:
    r"""Return ``X`` divided by a power of two if its squared norms would over- or underflow.

    The OTF penalty's cost is normalized by its mean distance, so it does not depend on
    the features' scale; but :math:`\lVert x\rVert^2` of raw features overflows float32
    above about 1e19 (every cost ``inf``, then NaN) and underflows below about 1e-19
    (every cost 0). Where the largest finite magnitude lies outside
    :math:`[2^{-50}, 2^{50}]`, ``X`` is divided by the power of two nearest it: an
    exact rescaling (no rounding), so the normalized cost is the one of unit-scale
    features. Inside that range ``X`` is returned as it is (the same object).
    """
    if X.numel() == 0:
        return X
    top = float(X.detach().abs().max())
    if not 0.0 < top < float("inf"):  # all zero, or not finite: the caller's checks
        return X
    exponent = math.frexp(top)[1]
    if -RANGE_EXPONENT <= exponent <= RANGE_EXPONENT:
        return X
    return X * math.ldexp(1.0, -exponent)


def euclidean_class_cost(
    X: torch.Tensor, counts: list[int], eps: float, *, chunk_elements: int = CHUNK_ELEMENTS
) -> tuple[torch.Tensor, float]:
    r"""Class-reduced mean-normalized Euclidean cost of ``X`` at ``eps`` (see module).

    Parameters
    ----------
    X : tensor of shape (n, p)
        Features, rows sorted by class: the first ``counts[0]`` rows are class 0, ...
    counts : list of int
        Rows per class (positive, summing to ``n``).
    eps : float
        Entropic smoothing relative to the mean cost.
    chunk_elements : int, default=CHUNK_ELEMENTS
        Entries of the ``n x n`` distance matrix per chunk of rows.

    Returns
    -------
    (tensor of shape (n, K) in float64, float)
        :math:`\tilde C` and the mean distance :math:`s` (0 distances: ``s`` is raised
        to 1e-12), of the features as :func:`in_float_range` scales them.
    """
    n = X.shape[0]
    if sum(counts) != n or min(counts) <= 0:
        raise ValueError(f"`counts` must be positive and sum to n = {n}; got {counts}.")
    X = in_float_range(X.detach())
    sq = (X * X).sum(dim=1, keepdim=True)
    ones = torch.ones_like(sq)
    left = torch.cat([-2.0 * X, sq, ones], dim=1)  # cdist's padded product
    right = torch.cat([X, ones, sq], dim=1).T
    blocks, start = [], 0
    for c in counts:
        blocks.append(slice(start, start + c))
        start += c
    rows = max(1, min(n, chunk_elements // max(n, 1)))
    dist = X.new_empty(n, n)
    mins = X.new_empty(len(counts), n)  # (K, n): contiguous per class
    totals = []
    for start in range(0, n, rows):
        stop = min(start + rows, n)
        chunk = torch.mm(left[start:stop], right, out=dist[start:stop])
        chunk.clamp_min_(1e-30).sqrt_()
        chunk.diagonal(offset=start).zero_()
        totals.append(chunk.sum())
        for k, cols in enumerate(blocks):
            torch.amin(chunk[:, cols], dim=1, out=mins[k, start:stop])
    # the one host read: the scale of the exponents
    scale = max(float(torch.stack(totals).to(torch.float64).sum()) / (n * n), 1e-12)
    factor = -1.0 / (eps * scale)
    sums = X.new_empty(len(counts), n)
    buf = X.new_empty(rows * max(counts))
    for start in range(0, n, rows):
        stop = min(start + rows, n)
        chunk = dist[start:stop]
        for k, cols in enumerate(blocks):
            b = buf[: (stop - start) * (cols.stop - cols.start)].view(stop - start, -1)
            shift = (mins[k, start:stop] * -factor)[:, None]
            torch.add(shift, chunk[:, cols], alpha=factor, out=b)
            b.clamp_(min=EXP_FLOOR).exp_()
            torch.sum(b, dim=1, out=sums[k, start:stop])
    reduced = (mins.to(torch.float64) / scale) - eps * sums.log_().to(torch.float64)
    return reduced.T.contiguous(), scale
