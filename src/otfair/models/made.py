r"""An autoregressive density over a product of categorical variables (MADE).

Germain et al. 2015, *MADE: Masked Autoencoder for Distribution Estimation*, with one
softmax per categorical variable. For variables :math:`c = (c_1, \dots, c_m)`,
:math:`c_j \in \{0, \dots, K_j - 1\}`, given as the concatenated one-hot vector
:math:`x \in \{0, 1\}^{K_1 + \dots + K_m}`,

.. math::

    \log p(c) = \sum_{j=1}^m \log \operatorname{softmax}\big(f_j(x_{<j})\big)_{c_j},

where the masks make the logits :math:`f_j` of variable :math:`j` depend on the one-hot
blocks of variables :math:`1, \dots, j-1` only. The density is therefore normalized over
the finite product space by construction (Fair Normalizing Flows, Balunović et al. 2022,
§5 use a MADE over the one-hot bits and renormalize; a softmax per variable makes that
step unnecessary).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["CategoricalMADE"]


class _MaskedLinear(nn.Linear):
    """``nn.Linear`` whose weight is multiplied by a fixed 0/1 mask."""

    mask: torch.Tensor

    def __init__(self, mask: torch.Tensor) -> None:
        super().__init__(mask.shape[1], mask.shape[0])
        self.register_buffer("mask", mask)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return :meth:`log_prob` of ``x``."""
        return F.linear(x, self.weight * self.mask, self.bias)


class CategoricalMADE(nn.Module):
    r"""Autoregressive categorical density :math:`p(c)` over :math:`\prod_j \{0..K_j-1\}`.

    Parameters
    ----------
    cardinalities : sequence of int
        :math:`K_1, \dots, K_m`, the number of levels of each variable (in the
        autoregressive order).
    hidden : sequence of int, default=(50, 50)
        Widths of the masked hidden layers (ReLU).

    Examples
    --------
    >>> made = CategoricalMADE([2, 3])
    >>> cells = torch.eye(6)[[0, 0, 0, 1, 1, 1]][:, :2]  # first variable's one-hot
    >>> x = torch.cat([cells, torch.eye(3).repeat(2, 1)], dim=1)
    >>> round(made.log_prob(x).exp().sum().item(), 5)  # normalized over the 6 cells
    1.0
    """

    _offsets: torch.Tensor

    def __init__(self, cardinalities: Sequence[int], hidden: Sequence[int] = (50, 50)) -> None:
        super().__init__()
        cards = [int(k) for k in cardinalities]
        if not cards or min(cards) < 1:
            raise ValueError(f"`cardinalities` must be positive ints; got {list(cardinalities)}.")
        self.cardinalities = cards
        m = len(cards)
        # degree of each input / output unit: its variable's position, 1..m
        var_of_unit = torch.as_tensor(np.repeat(np.arange(1, m + 1), cards))
        degrees = [var_of_unit]
        span = max(1, m - 1)
        for width in hidden:
            # hidden degrees cycle through 1..m-1 (a unit of degree k sees variables <= k)
            if m > 1:
                degrees.append(1 + torch.arange(int(width)) % span)
            else:  # one variable: its softmax has no input
                degrees.append(torch.full((int(width),), m))
        layers: list[nn.Module] = []
        for d_in, d_out in zip(degrees[:-1], degrees[1:], strict=True):
            layers += [_MaskedLinear((d_out[:, None] >= d_in[None, :]).float()), nn.ReLU()]
        # output block j (degree j) may see hidden units of degree < j only
        layers.append(_MaskedLinear((var_of_unit[:, None] > degrees[-1][None, :]).float()))
        self.net = nn.Sequential(*layers)
        self.register_buffer("_offsets", torch.as_tensor(np.cumsum([0, *cards])))

    def log_prob(self, x: torch.Tensor) -> torch.Tensor:
        r"""Return :math:`\log p(c)` of one-hot rows ``x`` (shape (n, sum K_j)), shape (n,)."""
        logits = self.net(x)
        total = torch.zeros(x.shape[0], dtype=logits.dtype, device=x.device)
        for j in range(len(self.cardinalities)):
            lo, hi = int(self._offsets[j]), int(self._offsets[j + 1])
            total = total + (F.log_softmax(logits[:, lo:hi], dim=1) * x[:, lo:hi]).sum(1)
        return total

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return :meth:`log_prob` of ``x``."""
        return self.log_prob(x)
