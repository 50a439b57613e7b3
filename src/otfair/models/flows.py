r"""Invertible affine-coupling flows (RealNVP style) used as fair preprocessors.

AdapFair (Huang et al., 2024, §III-A) places an invertible map :math:`T: \mathbb{R}^d \to
\mathbb{R}^d` in front of a frozen classifier. The map is a stack of affine coupling
layers (Dinh et al., "Density estimation using Real NVP", 2017): with a binary mask
:math:`b \in \{0, 1\}^d`,

.. math::

    y = b \odot x + (1 - b) \odot \bigl(x \odot e^{s(b \odot x)} + t(b \odot x)\bigr),
    \qquad
    \log \lvert \det J \rvert = \sum_j (1 - b_j)\, s_j(b \odot x),

and the exact inverse :math:`x = b \odot y + (1 - b) \odot (y - t(b \odot y))
\odot e^{-s(b \odot y)}`. The log-scale is bounded, :math:`s = c \tanh(h / c)`, so that a
single layer can neither explode nor collapse a coordinate, and the last layer of every
conditioner starts at zero, so a freshly built flow is exactly the identity (training
starts from the classifier's own behaviour, as the paper requires).

Each block holds two coupling layers with complementary masks; every block draws its own
random half/half partition of the coordinates (seeded), so after a few blocks every
coordinate has been conditioned on every other one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import torch
from torch import nn

from otfair.models.mlp import MLP

__all__ = ["AffineCoupling", "CouplingFlow"]


class AffineCoupling(nn.Module):
    r"""One affine coupling layer with a fixed binary mask.

    Parameters
    ----------
    mask : torch.Tensor of shape (d,)
        1 for the coordinates that pass through unchanged and condition the others,
        0 for the coordinates that are scaled and shifted.
    hidden : sequence of int, default=(20, 20)
        Hidden widths of the conditioner MLP (the paper's blocks use two layers of 20).
    scale_bound : float, default=2.0
        Bound :math:`c` of the log-scale, :math:`s = c \tanh(h / c)`; one layer scales a
        coordinate by at most :math:`e^{\pm c}`.
    activation : str, default="relu"
        Hidden non-linearity of the conditioner.

    Notes
    -----
    The conditioner's output layer is zero-initialized, so the layer is the identity map
    at construction (with :math:`\log\lvert\det J\rvert = 0`).
    """

    mask: torch.Tensor

    def __init__(
        self,
        mask: torch.Tensor,
        hidden: Sequence[int] = (20, 20),
        scale_bound: float = 2.0,
        activation: str = "relu",
    ) -> None:
        super().__init__()
        mask = torch.as_tensor(mask, dtype=torch.float32).flatten()
        if mask.numel() < 1:
            raise ValueError("`mask` must have at least one coordinate.")
        if not bool(((mask == 0) | (mask == 1)).all()):
            raise ValueError("`mask` must contain only 0 and 1.")
        if float(scale_bound) <= 0:
            raise ValueError(f"`scale_bound` must be > 0, got {scale_bound}.")
        self.register_buffer("mask", mask)
        d = mask.numel()
        self.conditioner = MLP(d, hidden=hidden, out_features=2 * d, activation=activation)
        last = self.conditioner.net[-1]
        assert isinstance(last, nn.Linear)  # MLP ends with its output nn.Linear
        nn.init.zeros_(last.weight)
        nn.init.zeros_(last.bias)
        self.scale_bound = float(scale_bound)

    def _scale_shift(self, x_masked: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.conditioner(x_masked)
        raw_s, t = h.chunk(2, dim=-1)
        c = self.scale_bound
        free = 1.0 - self.mask
        return c * torch.tanh(raw_s / c) * free, t * free

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Return ``(y, log|det J|)`` with ``y`` of shape (n, d) and log-det of shape (n,)."""
        s, t = self._scale_shift(x * self.mask)
        y = x * torch.exp(s) + t  # s = t = 0 on the masked (pass-through) coordinates
        return y, s.sum(dim=-1)

    def inverse(self, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Return ``(x, log|det J^{-1}|)``, the exact inverse of :meth:`forward`."""
        s, t = self._scale_shift(y * self.mask)  # masked coordinates are unchanged by forward
        x = (y - t) * torch.exp(-s)
        return x, -s.sum(dim=-1)


class CouplingFlow(nn.Module):
    r"""A stack of affine coupling blocks: an invertible map of :math:`\mathbb{R}^d`.

    Parameters
    ----------
    n_features : int
        Dimension :math:`d` of the inputs.
    n_blocks : int, default=4
        Number of blocks; each block is two coupling layers with complementary masks, so
        every coordinate is transformed once per block. The paper (App. A-D2) uses 10
        masked-autoregressive blocks; coupling blocks are cheaper (one conditioner pass
        instead of :math:`d` for the inverse) and 4 suffice on the tabular benchmarks.
    hidden : sequence of int, default=(20, 20)
        Hidden widths of every conditioner.
    scale_bound : float, default=2.0
        Bound of each layer's log-scale (see :class:`AffineCoupling`).
    activation : str, default="relu"
        Hidden non-linearity of the conditioners.
    random_state : int or None, default=0
        Seed of the random coordinate partitions (conditioner weights use the global
        torch generator; build it inside :func:`otfair.utils.use_generator`).

    Examples
    --------
    >>> import torch
    >>> flow = CouplingFlow(3, n_blocks=2)
    >>> x = torch.randn(5, 3)
    >>> y, logdet = flow(x)
    >>> bool(torch.equal(y, x)), bool((logdet == 0).all())  # identity at initialization
    (True, True)
    >>> torch.allclose(flow.inverse(y)[0], x)
    True
    """

    def __init__(
        self,
        n_features: int,
        n_blocks: int = 4,
        hidden: Sequence[int] = (20, 20),
        scale_bound: float = 2.0,
        activation: str = "relu",
        random_state: int | None = 0,
    ) -> None:
        super().__init__()
        d = int(n_features)
        if d < 1:
            raise ValueError(f"`n_features` must be >= 1, got {n_features}.")
        if int(n_blocks) < 1:
            raise ValueError(f"`n_blocks` must be >= 1, got {n_blocks}.")
        gen = torch.Generator()
        gen.manual_seed(0 if random_state is None else int(random_state))
        layers: list[AffineCoupling] = []
        for _ in range(int(n_blocks)):
            mask = torch.zeros(d)
            mask[torch.randperm(d, generator=gen)[: d // 2]] = 1.0
            for m in (mask, 1.0 - mask):
                layers.append(AffineCoupling(m, hidden, scale_bound, activation))
        self.layers = nn.ModuleList(layers)
        self.n_features = d

    def _check(self, x: torch.Tensor, name: str) -> None:
        if x.ndim != 2 or x.shape[1] != self.n_features:
            raise ValueError(
                f"`{name}` must have shape (n, {self.n_features}); got {tuple(x.shape)}."
            )

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Return ``(T(x), log|det J_T(x)|)`` of shapes (n, d) and (n,)."""
        self._check(x, "x")
        logdet = x.new_zeros(x.shape[0])
        for layer in self.layers:
            x, ld = layer(x)
            logdet = logdet + ld
        return x, logdet

    def inverse(self, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Return ``(T^{-1}(y), log|det J_{T^{-1}}(y)|)``."""
        self._check(y, "y")
        logdet = y.new_zeros(y.shape[0])
        for layer in reversed(self.layers):
            y, ld = cast(AffineCoupling, layer).inverse(y)
            logdet = logdet + ld
        return y, logdet
