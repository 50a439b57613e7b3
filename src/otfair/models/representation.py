r"""Building blocks of the fair-representation baselines (docs/baselines.md).

* :class:`EncoderClassifier` — an MLP encoder :math:`z = f(x)` and a classifier head
  :math:`g(z)` (LAFTR, sIPM-LFR, CFair; FTM paper App. D: "MLP encoder, then a
  classifier");
* :class:`SigmoidCritic` — the discriminator :math:`\sigma(\theta^\top z + \mu)` of the
  sigmoid IPM (Kim et al. 2022, §3);
* :class:`GroupFlows` — one invertible coupling flow per group, :math:`z = T_s(x)`
  (Fair Normalizing Flows, Balunovic et al. 2022, §4).

* :class:`PerLabelAdversaries` — CFair's two adversaries :math:`h_0, h_1`, one per label
  (Zhao et al. 2020, §3.2).

The other adversaries on :math:`z` are plain :class:`~otfair.models.mlp.MLP` s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import torch
from torch import nn

from otfair.models.flows import CouplingFlow
from otfair.models.mlp import MLP

__all__ = ["EncoderClassifier", "GroupFlows", "PerLabelAdversaries", "SigmoidCritic"]


class EncoderClassifier(nn.Module):
    r"""Encoder :math:`f: \mathbb R^d \to \mathbb R^k` followed by a classifier head.

    Parameters
    ----------
    in_features : int
        Input dimension :math:`d`.
    latent_dim : int, default=8
        Representation dimension :math:`k` (LAFTR's Adult setting).
    encoder_hidden : sequence of int, default=(64,)
        Hidden widths of the encoder (ReLU).
    head_hidden : sequence of int, default=()
        Hidden widths of the classifier head; ``()`` is a logistic regression on ``z``.

    Examples
    --------
    >>> net = EncoderClassifier(5, latent_dim=3)
    >>> z, logit = net(torch.zeros(4, 5))
    >>> tuple(z.shape), tuple(logit.shape)
    ((4, 3), (4,))
    """

    def __init__(
        self,
        in_features: int,
        latent_dim: int = 8,
        encoder_hidden: Sequence[int] = (64,),
        head_hidden: Sequence[int] = (),
    ) -> None:
        super().__init__()
        if int(latent_dim) < 1:
            raise ValueError(f"`latent_dim` must be >= 1, got {latent_dim}.")
        self.encoder = MLP(in_features, hidden=encoder_hidden, out_features=int(latent_dim))
        self.head = MLP(int(latent_dim), hidden=head_hidden, out_features=1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Return ``(z, logit)`` of shapes (n, k) and (n,)."""
        z = self.encoder(x)
        return z, self.head(z)[:, 0]


class SigmoidCritic(nn.Module):
    r"""Sigmoid discriminator :math:`\sigma(\theta^\top z + \mu)` (Kim et al. 2022, §3).

    Parameters
    ----------
    latent_dim : int
        Dimension of :math:`z`.
    """

    def __init__(self, latent_dim: int) -> None:
        super().__init__()
        self.theta = nn.Parameter(torch.randn(int(latent_dim)) / max(1, int(latent_dim)) ** 0.5)
        self.mu = nn.Parameter(torch.zeros(()))

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        r"""Return :math:`\sigma(z\theta + \mu)`, shape (n,)."""
        return torch.sigmoid(z @ self.theta + self.mu)


class PerLabelAdversaries(nn.Module):
    r"""CFair's adversaries :math:`h_0, h_1`: two separate MLPs on :math:`z`.

    ``forward`` returns the (n, 2) logits whose column ``y`` is :math:`h_y(z)`, the
    layout of :func:`otfair.penalties._representation_losses.conditional_adversary_loss`
    (each head is scored on the rows of its label only). The hidden units are leaky
    ReLUs: under the reversed gradient the encoder drives ReLU adversaries into dead
    units, their output turns constant (balanced CE at :math:`\log 2` while a fresh
    adversary still recovers the group) and the game stops aligning (docs/baselines.md).

    Parameters
    ----------
    latent_dim : int
        Dimension of :math:`z`.
    hidden : sequence of int, default=(16, 8)
        Hidden widths of each head (AdapFair paper App. D).

    Examples
    --------
    >>> PerLabelAdversaries(3, (4,))(torch.zeros(5, 3)).shape
    torch.Size([5, 2])
    """

    def __init__(self, latent_dim: int, hidden: Sequence[int] = (16, 8)) -> None:
        super().__init__()
        self.heads = nn.ModuleList(
            MLP(int(latent_dim), hidden=hidden, activation="leaky_relu") for _ in range(2)
        )

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        """Return ``[h_0(z), h_1(z)]``, shape (n, 2)."""
        return torch.cat([head(z) for head in self.heads], dim=1)


class GroupFlows(nn.Module):
    r"""One :class:`~otfair.models.flows.CouplingFlow` per group: :math:`z = T_s(x)`.

    Parameters
    ----------
    n_features : int
    n_groups : int, default=2
    n_blocks, hidden : see :class:`~otfair.models.flows.CouplingFlow`.
    random_state : int, default=0
        Seed of the coordinate partitions (group ``g`` uses ``random_state + g``).

    Examples
    --------
    >>> flows = GroupFlows(3)
    >>> x, s = torch.randn(4, 3), torch.tensor([0, 1, 0, 1])
    >>> z, logdet = flows(x, s)
    >>> torch.allclose(z, x)  # identity at initialization
    True
    """

    def __init__(
        self,
        n_features: int,
        n_groups: int = 2,
        n_blocks: int = 4,
        hidden: Sequence[int] = (20, 20),
        random_state: int = 0,
    ) -> None:
        super().__init__()
        self.flows = nn.ModuleList(
            CouplingFlow(
                n_features, n_blocks=n_blocks, hidden=hidden, random_state=random_state + g
            )
            for g in range(int(n_groups))
        )

    def forward(self, x: torch.Tensor, s: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Return ``(z, log|det J_{T_s}(x)|)``, each row through its group's flow."""
        z = torch.empty_like(x)
        logdet = x.new_zeros(x.shape[0])
        for g, flow in enumerate(self.flows):
            rows = s == g
            if bool(rows.any()):
                z[rows], logdet[rows] = flow(x[rows])
        return z, logdet

    def group(self, g: int) -> CouplingFlow:
        """Return the flow of group ``g``."""
        return cast(CouplingFlow, self.flows[g])
