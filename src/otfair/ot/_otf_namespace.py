"""The array operations of the OTF semi-dual, for numpy and for torch (POT's ``ot.backend`` style).

:class:`otfair.ot._otf_semidual.SemiDual` is written once over a :class:`Namespace`:
the operators ``+ - * / @`` and indexing are common to numpy arrays and torch
tensors (a transpose is not: numpy < 2 has no ``.mT``), and the operations that are
spelled differently (reductions, in-place ``exp``, casts, the layout of a chunk, a
transpose) are its methods: :class:`Namespace` holds them in
numpy, ``_Torch`` overrides every one in torch. :data:`NUMPY` serves the host solves of
class-reduced problems (a few columns: numpy's ~2 us per operation against torch's
~10 us dispatch), :data:`TORCH` the dense host solves and the batched device solves.

The layout of a chunk of the plan's logits is the namespace's: torch's is ``(..., rows,
m)`` (``C``'s own, with ``-C / eps`` added chunk by chunk: no second ``n x n`` matrix),
numpy's ``(..., m, rows)`` (it keeps ``(-C / eps)^T`` of a reduced problem, so that the
reductions over its few columns run along contiguous rows: 20x faster than across an
``n x 3`` array). The semi-dual touches a chunk only through :meth:`Namespace.chunk_logits`,
:meth:`~Namespace.softmax_stats`, :meth:`~Namespace.row_matrix`,
:meth:`~Namespace.gram` and :meth:`~Namespace.col_sums`, which know the layout.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from otfair.ot._lse import EXP_FLOOR

Array = Any  # a numpy array or a torch tensor, as the namespace


class Namespace:
    """The array operations of the semi-dual, in numpy: :data:`NUMPY` (``_Torch``: torch's).

    A *chunk* holds the plan's logits (then exponentials) of some rows: shape
    ``(..., rows, m)`` in torch, ``(..., m, rows)`` in numpy; a *row matrix* holds ``k``
    numbers per row of a chunk (shape ``(..., rows, k)``, ``(..., k, rows)``). Leading
    axes are batch axes.
    """

    name = "numpy"

    def logits(self, C: Array, eps: float) -> Array:
        """Return the cost in the form :meth:`chunk_logits` reads."""
        return np.ascontiguousarray((-C / eps).T)  # (m, n): a column's entries contiguous

    def logits64(self, L: Array) -> Array:
        """:meth:`logits` in float64."""
        return L  # float64 already (the host solves convert once)

    def chunk_logits(self, L: Array, rows: slice, w: Array) -> Array:
        """Return the chunk ``-C[rows] / eps + w`` for column weights ``w`` (..., m), new."""
        return L[:, rows] + w[..., :, None]

    def softmax_stats(self, z: Array) -> tuple[Array, Array, Array]:
        """``(exp(z - max), max, sum)`` over the columns of a chunk; ``z`` is overwritten.

        Exponent arguments are clamped at ``EXP_FLOOR`` (no denormals); the max and the
        sum have shape (..., rows).
        """
        mx = z.max(axis=-2)
        z -= mx[..., None, :]
        np.maximum(z, EXP_FLOOR, out=z)
        e = np.exp(z, out=z)
        return e, mx, e.sum(axis=-2)

    def vectors(self, V: Array) -> Array:
        """``k`` vectors over the columns, ``V`` (k, m), in the form :meth:`row_matrix` reads."""
        return np.ascontiguousarray(V)

    def row_matrix(self, e: Array, V: Array) -> Array:
        r"""Return the row matrix :math:`R_{ik} = \sum_j e_{ij} V_{kj}` of a chunk ``e``."""
        return V @ e

    def row_part(self, R: Array, k: int) -> Array:
        """Column ``k`` of a row matrix: (..., rows)."""
        return R[..., k, :]

    def gram(self, R: Array, a: Array) -> Array:
        r""":math:`\sum_i a_i R_i R_i^\top` (..., k, k) for a row matrix and ``a`` (..., rows)."""
        return (R * a[..., None, :]) @ np.swapaxes(R, -1, -2)  # numpy < 2 has no .mT

    def col_sums(self, e: Array, a: Array) -> Array:
        r""":math:`\sum_i a_i e_{ij}` (..., m) for a chunk and ``a`` (..., rows)."""
        return (e @ a[..., :, None])[..., 0]

    def amax(self, x: Array) -> Array:
        """Maximum over the last axis."""
        return x.max(axis=-1)

    def spread(self, x: Array) -> Array:
        """``max - min`` over the last axis."""
        return x.max(axis=-1) - x.min(axis=-1)

    def clamp_min_(self, x: Array, low: float) -> Array:
        """``max(x, low)`` elementwise, in place."""
        return np.maximum(x, low, out=x)

    def float64(self, x: Array) -> Array:
        """``x`` as float64 (no copy when it is)."""
        return x if x.dtype == np.float64 else np.asarray(x, dtype=np.float64)

    def mean64(self, x: Array) -> Array:
        """Return the mean of all entries, summed in float64 (no float64 copy of ``x``)."""
        return x.mean(dtype=np.float64)

    def like(self, x: Array, ref: Array) -> Array:
        """``x`` in the dtype of ``ref``."""
        return np.asarray(x, dtype=ref.dtype)

    def zeros(self, shape: tuple[int, ...], ref: Array) -> Array:
        """float64 zeros on the device of ``ref``."""
        return np.zeros(shape)

    def log(self, x: Array) -> Array:
        """Elementwise natural logarithm."""
        return np.log(x)

    def stack(self, arrays: list[Array], axis: int) -> Array:
        """Stack along a new ``axis``."""
        return np.array(arrays) if axis == 0 else np.stack(arrays, axis=axis)

    def concat(self, arrays: list[Array], axis: int) -> Array:
        """Concatenate along ``axis``."""
        return np.concatenate(arrays, axis=axis)

    def dot(self, a: Array, b: Array) -> Array:
        """Sum over the last axis of ``a * b``."""
        return a @ b if a.ndim == 1 else (a * b).sum(-1)


class _Torch(Namespace):
    name = "torch"

    def logits(self, C, eps):
        return (C.detach(), -1.0 / float(eps))  # -C / eps added chunk by chunk

    def logits64(self, L):
        return (L[0].to(torch.float64), L[1])

    def chunk_logits(self, L, rows, w):
        C, scale = L
        return torch.add(w[..., None, :], C[rows], alpha=scale)

    def softmax_stats(self, z):
        mx = z.amax(dim=-1, keepdim=True)
        e = z.sub_(mx).clamp_(min=EXP_FLOOR).exp_()
        return e, mx[..., 0], e.sum(dim=-1)

    def vectors(self, V):
        return V.T.contiguous()

    def row_matrix(self, e, V):
        return e @ V

    def row_part(self, R, k):
        return R[..., k]

    def gram(self, R, a):
        return (R * a[..., None]).mT @ R

    def col_sums(self, e, a):
        return (a[..., None, :] @ e)[..., 0, :]

    def amax(self, x):
        return x.amax(dim=-1)

    def spread(self, x):
        return x.amax(dim=-1) - x.amin(dim=-1)

    def clamp_min_(self, x, low):
        return x.clamp_(min=low)

    def float64(self, x):
        return x.detach().to(torch.float64)

    def mean64(self, x):
        return x.detach().mean(dtype=torch.float64)

    def like(self, x, ref):
        return x.detach().to(ref.dtype)

    def zeros(self, shape, ref):
        return torch.zeros(shape, dtype=torch.float64, device=ref.device)

    def log(self, x):
        return torch.log(x)

    def stack(self, arrays, axis):
        return torch.stack(arrays, dim=axis)

    def concat(self, arrays, axis):
        return torch.cat(arrays, dim=axis)


NUMPY: Namespace = Namespace()
TORCH: Namespace = _Torch()
