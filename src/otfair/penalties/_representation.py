r"""Adversaries on a learned representation :math:`Z` (LAFTR, sIPM-LFR, CFair).

Adversaries of the :class:`~otfair.penalties.RepresentationAdversary` protocol (called
as ``adversary(z, sensitive, labels)``; :meth:`loss` is the *adversary's own loss*
:math:`L_f`, minimized by the adversary). The estimator adds it behind a
gradient-reversal layer of scale :math:`\lambda`
(:func:`otfair.models.adversarial.grad_reverse`), so one step moves the adversary down
:math:`L_f` and the encoder up :math:`\lambda L_f`, the gradient descent-ascent of the
methods' minimax games; :meth:`distance` is the fairness distance the encoder sees (for
logging).

* :class:`LAFTRAdversary` — :math:`L_f = -L_{adv}` with LAFTR's group-normalized L1
  objective, DP or EO variant (Madras et al. 2018, §3, Eqs. 4-5); the EO adversary also
  reads the label, :math:`h(z, y)`, as in the paper.
* :class:`SigmoidIPMCritic` — :math:`L_f = -d_{\theta,\mu}(P_0, P_1)`, the ascent on the
  sigmoid IPM's parameters (Kim et al. 2022, §3).
* :class:`ConditionalAlignment` — CFair's per-label group-balanced cross-entropies
  (Zhao et al. 2020, §3.2), one adversary network per label.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import torch

from otfair.models.adversarial import JointAdversary
from otfair.models.mlp import MLP
from otfair.models.representation import PerLabelAdversaries, SigmoidCritic
from otfair.notions import Notion, as_notion
from otfair.penalties._adversaries import RepresentationAdversary
from otfair.penalties._representation_losses import (
    conditional_adversary_loss,
    laftr_adversary_objective,
    sigmoid_ipm,
)

__all__ = ["ConditionalAlignment", "LAFTRAdversary", "SigmoidIPMCritic"]


def _check_z(z: torch.Tensor | None, latent_dim: int) -> torch.Tensor:
    if z is None or z.ndim != 2 or z.shape[1] != latent_dim:
        shape = None if z is None else tuple(z.shape)
        raise ValueError(f"`z` must be the representation (n, {latent_dim}); got {shape}.")
    return z


class LAFTRAdversary(RepresentationAdversary):
    r"""LAFTR's adversary :math:`h` predicting the group from :math:`z` (EO: from (z, y)).

    Its loss is :math:`L_f = -L_{adv}(h)`, :func:`laftr_adversary_objective`.

    Parameters
    ----------
    latent_dim : int
    notion : {"dp", "eo"} or Notion, default="dp"
    hidden : sequence of int, default=(64,)
        Hidden widths of the adversary (ReLU MLP).
    """

    #: FairnessCV's default grid of gamma (``LAFTRClassifier``): 0, then Madras et al.'s
    #: sweep (2018, §5) to 4 (a larger gamma makes the game less stable, not fairer)
    strength_grids: ClassVar[dict[str, tuple[float, ...]]] = {
        "additive": (0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0)
    }

    def __init__(
        self, latent_dim: int, notion: str | Notion = "dp", hidden: Sequence[int] = (64,)
    ):
        super().__init__()
        self.notion = as_notion(notion, allowed=("dp", "eo"))
        self.latent_dim = int(latent_dim)
        self.requires_labels = self.notion.requires_labels
        self.adversary = (
            JointAdversary(latent_dim, hidden=hidden)
            if self.requires_labels
            else MLP(latent_dim, hidden=hidden)
        )

    def _prob(self, z: torch.Tensor, y: torch.Tensor | None) -> torch.Tensor:
        if self.requires_labels:
            return torch.sigmoid(self.adversary(z, y))
        return torch.sigmoid(self.adversary(z)[:, 0])

    def distance(self, z, sensitive, labels=None) -> torch.Tensor:
        """Return :math:`L_{adv}` (the encoder minimizes it)."""
        z = _check_z(z, self.latent_dim)
        return laftr_adversary_objective(
            self._prob(z, labels), sensitive, labels, notion=self.notion
        )

    def loss(self, z, sensitive, labels=None) -> torch.Tensor:
        """Return the adversary's loss :math:`-L_{adv}`."""
        return -self.distance(z, sensitive, labels)


class SigmoidIPMCritic(RepresentationAdversary):
    r"""The sigmoid discriminator of sIPM-LFR; its loss is :math:`-d_{\theta,\mu}`.

    Parameters
    ----------
    latent_dim : int
    """

    #: FairnessCV's default grid of lambda (``SIPMClassifier``): half-decades to 10, where
    #: the encoder is near a constant on Adult
    strength_grids: ClassVar[dict[str, tuple[float, ...]]] = {
        "additive": (0.0, 0.1, 0.3, 1.0, 3.0, 10.0)
    }

    def __init__(self, latent_dim: int) -> None:
        super().__init__()
        self.latent_dim = int(latent_dim)
        self.critic = SigmoidCritic(latent_dim)

    def distance(self, z, sensitive, labels=None) -> torch.Tensor:
        r"""Return :math:`d_{\theta,\mu}(P_{z|s=0}, P_{z|s=1})`."""
        z = _check_z(z, self.latent_dim)
        return sigmoid_ipm(z, sensitive, self.critic.theta, self.critic.mu)

    def loss(self, z, sensitive, labels=None) -> torch.Tensor:
        r"""Return the critic's loss :math:`-d_{\theta,\mu}`."""
        return -self.distance(z, sensitive, labels)


class ConditionalAlignment(RepresentationAdversary):
    r"""CFair's two adversaries :math:`h_0, h_1` (one per label) on :math:`z`.

    Their loss is :func:`conditional_adversary_loss`; the encoder maximizes it. As in
    the paper each label has its own adversary network (:class:`PerLabelAdversaries`),
    trained on the rows of its label only.

    Parameters
    ----------
    latent_dim : int
    hidden : sequence of int, default=(16, 8)
        Hidden widths of each adversary (AdapFair paper App. D: 16 and 8 units).
    """

    #: FairnessCV's default grid of mu (``CFairClassifier``): 0, then half-decades over
    #: Zhao et al.'s sweep (2020, §5: 0.1 to 1000) to 100
    strength_grids: ClassVar[dict[str, tuple[float, ...]]] = {
        "additive": (0.0, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
    }

    requires_labels = True

    def __init__(self, latent_dim: int, hidden: Sequence[int] = (16, 8)) -> None:
        super().__init__()
        self.latent_dim = int(latent_dim)
        self.adversaries = PerLabelAdversaries(latent_dim, hidden)

    def distance(self, z, sensitive, labels=None) -> torch.Tensor:
        """Return the adversaries' loss (higher = better aligned)."""
        z = _check_z(z, self.latent_dim)
        if labels is None:
            raise ValueError("`labels` are required by CFair's conditional alignment.")
        return conditional_adversary_loss(self.adversaries(z), sensitive, labels)

    def loss(self, z, sensitive, labels=None) -> torch.Tensor:
        """Return the adversaries' loss."""
        return self.distance(z, sensitive, labels)
