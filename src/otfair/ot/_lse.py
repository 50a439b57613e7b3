r"""Memory-frugal log-sum-exp over scaled cost matrices (the inner loop of every solver).

The entropic solvers need, for a cost matrix ``C`` (n0 x n1), a scale ``s = -1/eps`` and
a vector added along one axis,

.. math::

    r_i = \log \sum_j \exp(s C_{ij} + w_j) \quad\text{or}\quad
    c_j = \log \sum_i \exp(s C_{ij} + w_i).

``torch.logsumexp`` materializes several n0 x n1 temporaries; here one buffer of
``chunk_size`` rows is reused and updated in place (max, subtract, clamp, exp, sum),
which is faster when the matrix is large and keeps the extra memory at
``chunk_size * n1`` floats, so that n = 8192 runs in a few hundred MB on top of ``C``.
Exponent arguments are clamped at ``-80`` so that float32 ``exp`` never produces
denormals (10-40x slower on CPU; performance.md); the resulting error is below
``n * 1.8e-35`` relative.
"""

from __future__ import annotations

import torch

EXP_FLOOR = -80.0
#: default number of rows per chunk: at most ~32 MB of float32 buffer per chunk.
DEFAULT_CHUNK_ELEMENTS = 1 << 23
#: chunk of :func:`lse_rows_by_class`: 256K entries (1 MB of float32)
SMALL_CHUNK_ELEMENTS = 1 << 18


def default_chunk_rows(n0: int, n1: int) -> int:
    """Rows per chunk so that a chunk holds about ``DEFAULT_CHUNK_ELEMENTS`` entries."""
    return max(1, min(n0, DEFAULT_CHUNK_ELEMENTS // max(n1, 1)))


def _chunks(n: int, size: int):
    for start in range(0, n, size):
        yield start, min(start + size, n)


def lse_rows(
    C: torch.Tensor, scale: float, w: torch.Tensor, *, chunk_rows: int | None = None
) -> torch.Tensor:
    r"""Row-wise :math:`\log \sum_j \exp(\text{scale}\, C_{ij} + w_j)`, shape (n0,).

    Parameters
    ----------
    C : tensor of shape (n0, n1)
    scale : float
        Multiplier of ``C`` (``-1/eps`` in the solvers).
    w : tensor of shape (n1,)
        Added to every row (may contain ``-inf`` for zero weights, not everywhere).
    chunk_rows : int, optional
        Rows per in-place chunk (default: about 8M entries per chunk).

    Returns
    -------
    torch.Tensor of shape (n0,)
    """
    n0, n1 = C.shape
    size = chunk_rows or default_chunk_rows(n0, n1)
    out = C.new_empty(n0)
    buf = C.new_empty(min(size, n0), n1)
    for start, stop in _chunks(n0, size):
        b = buf[: stop - start]
        torch.add(w, C[start:stop], alpha=scale, out=b)
        m = b.amax(dim=1, keepdim=True)
        b.sub_(m).clamp_(min=EXP_FLOOR).exp_()
        out[start:stop] = m[:, 0] + b.sum(dim=1).log()
    return out


def lse_cols(
    C: torch.Tensor, scale: float, w: torch.Tensor, *, chunk_rows: int | None = None
) -> torch.Tensor:
    r"""Column-wise :math:`\log \sum_i \exp(\text{scale}\, C_{ij} + w_i)`, shape (n1,).

    Chunks of rows are combined with the streaming (online) log-sum-exp update
    :math:`m \leftarrow \max(m, m_c)`,
    :math:`s \leftarrow s e^{m_{old} - m} + s_c e^{m_c - m}`.

    Parameters
    ----------
    C : tensor of shape (n0, n1)
    scale : float
        Multiplier of ``C``.
    w : tensor of shape (n0,)
        Added to every column.
    chunk_rows : int, optional
        Rows per in-place chunk.

    Returns
    -------
    torch.Tensor of shape (n1,)
    """
    n0, n1 = C.shape
    size = chunk_rows or default_chunk_rows(n0, n1)
    buf = C.new_empty(min(size, n0), n1)
    m_tot = s_tot = None
    for start, stop in _chunks(n0, size):
        b = buf[: stop - start]
        torch.add(w[start:stop, None], C[start:stop], alpha=scale, out=b)
        m = b.amax(dim=0)
        m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
        b.sub_(m).clamp_(min=EXP_FLOOR).exp_()
        s = b.sum(dim=0)
        if m_tot is None:
            m_tot, s_tot = m, s
        else:
            assert s_tot is not None  # set with m_tot
            m_new = torch.maximum(m_tot, m)
            s_tot = s_tot * torch.exp(m_tot - m_new) + s * torch.exp(m - m_new)
            m_tot = m_new
    assert m_tot is not None and s_tot is not None  # at least one chunk
    return m_tot + s_tot.log()


def lse_rows_by_class(
    C: torch.Tensor,
    scale: float,
    classes: torch.Tensor,
    n_classes: int,
    *,
    chunk_rows: int | None = None,
) -> torch.Tensor:
    r"""Row-wise log-sum-exp within column classes, shape (n0, n_classes).

    .. math::

        R_{ik} = \log \sum_{j:\, \text{classes}_j = k} \exp(\text{scale}\, C_{ij})

    One pass over ``C``: each chunk of rows is gathered with its columns sorted by class
    (no gather when ``classes`` is already sorted), then every class is a contiguous
    slice reduced in place. An empty class gives ``-inf``.

    Parameters
    ----------
    C : tensor of shape (n0, n1)
    scale : float
        Multiplier of ``C``.
    classes : integer tensor of shape (n1,)
        Class of each column, in ``[0, n_classes)``.
    n_classes : int
    chunk_rows : int, optional
        Rows per chunk.

    Returns
    -------
    torch.Tensor of shape (n0, n_classes)
    """
    n0, n1 = C.shape
    # one host read: the class sizes and whether the columns are sorted by class
    unsorted = (classes[1:] < classes[:-1]).any() if classes.numel() > 1 else classes.sum() < 0
    info = torch.cat([torch.bincount(classes, minlength=n_classes), unsorted[None]]).tolist()
    counts = info[:-1]
    order = torch.argsort(classes, stable=True) if info[-1] else None
    # small chunks: one cache-sized buffer reused (a matrix-sized temporary costs more in
    # page faults than the arithmetic at n = 1024)
    size = chunk_rows or max(1, min(n0, SMALL_CHUNK_ELEMENTS // max(n1, 1)))
    out = C.new_full((n0, n_classes), float("-inf"))
    buf = C.new_empty(min(size, n0), n1)
    for start, stop in _chunks(n0, size):
        b = buf[: stop - start]
        if order is None:
            torch.mul(C[start:stop], scale, out=b)
        else:
            torch.index_select(C[start:stop], 1, order, out=b).mul_(scale)
        offset = 0
        for k, count in enumerate(counts):
            if count:
                part = b[:, offset : offset + count]
                m = part.amax(dim=1, keepdim=True)
                part.sub_(m).clamp_(min=EXP_FLOOR).exp_()
                out[start:stop, k] = m[:, 0] + part.sum(dim=1).log()
            offset += count
    return out
