r"""Adversaries on the joint (representation, target) of regression nets (accuracy parity).

Both follow the :class:`~otfair.penalties.RepresentationAdversary` protocol: the
adversary reads the batch representation :math:`Z = g(X)` and the target (``labels``),
and ``adversary(z, sensitive, labels)`` returns the *adversary's own loss* :math:`L_f`.
The estimator adds it to the task loss behind a gradient-reversal layer of scale
:math:`\lambda`, so one step moves the adversary down :math:`L_f` and the encoder up
:math:`\lambda L_f` (accuracy-disparity paper §3.2, the minimax
:math:`\min_{g,h}\max_f \mathrm{MSE} - \lambda L_f`). Unlike the score penalties, the
value is the adversary's objective, not a non-negative fairness gap (the Wasserstein
critic's is :math:`\le 0`).
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import ClassVar

import torch
import torch.nn.functional as F
from torch import nn

from otfair.models.adversarial import JointAdversary, clip_weights_, gradient_penalty
from otfair.penalties._adversaries import RepresentationAdversary


class _JointAdversaryPenalty(RepresentationAdversary):
    """An adversary network ``f(Z, Y)`` (``JointAdversary(latent_dim, hidden)``) on ``(Z, Y)``."""

    requires_labels = True
    #: FairnessCV's default grid of the strength lambda of MSE + lambda adversary (CENet,
    #: WassersteinNet): half-decades to 100
    strength_grids: ClassVar[dict[str, tuple[float, ...]]] = {
        "additive": (0.0, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
    }

    def __init__(self, latent_dim: int, hidden: Sequence[int] = (60,)) -> None:
        super().__init__()
        self.adversary = JointAdversary(latent_dim, hidden=hidden)

    def loss(self, z, sensitive, labels=None) -> torch.Tensor | None:
        """Return the adversary's loss on ``(z, labels)`` (see :meth:`joint_loss`)."""
        return self.joint_loss(self.adversary, z, labels, sensitive)

    @abc.abstractmethod
    def joint_loss(
        self, adversary: nn.Module, z: torch.Tensor, y: torch.Tensor, sensitive: torch.Tensor
    ) -> torch.Tensor | None:
        """Return the loss :math:`L_f` of ``adversary`` (``f(z, y)``, one score per row).

        ``z`` of shape (n, latent_dim) gives a scalar; K stacked adversaries
        (:class:`otfair.models.stacked.StackedJointAdversary`) with ``z`` of shape
        (K, n, latent_dim) on one batch (``y``, ``sensitive`` of shape (n,)) give the K
        losses, shape (K,).
        """

    def after_step(self, adversary: nn.Module | None = None) -> None:
        """Constrain the adversary (default: ``self.adversary``) after an optimizer step."""


class JointDiscriminatorPenalty(_JointAdversaryPenalty):
    r"""CENet's discriminator: cross-entropy of predicting the group from ``(Z, Y)``.

    .. math:: L_f = \mathrm{CE}\big(a,\ f(Z, Y)\big)

    (accuracy-disparity paper §3.2, CENet, eq. 2).

    Parameters
    ----------
    latent_dim : int
        Width of ``Z``.
    hidden : sequence of int, default=(60,)
        Hidden widths of the discriminator.
    """

    def joint_loss(self, adversary, z, y, sensitive) -> torch.Tensor:
        """Return the discriminator's cross-entropy on ``(z, y)`` (one per model if stacked)."""
        logits = adversary(z, y)
        target = sensitive.to(logits.dtype)
        if logits.dim() == 1:
            return F.binary_cross_entropy_with_logits(logits, target)
        if logits.shape[0] == 1:  # one stacked model: the built-in loss, as its own fit
            return F.binary_cross_entropy_with_logits(logits.squeeze(0), target)[None]
        return _RowMeanBCE.apply(logits, target)


class _RowMeanBCE(torch.autograd.Function):
    r"""Mean logistic loss of each row of (K, n) logits, as K separate calls compute it.

    ``F.binary_cross_entropy_with_logits(x_k, t)`` (mean reduction) differentiates to
    :math:`(\sigma(x_k) - t) g_k / n` in this order; the mean of an unreduced loss would
    scale by :math:`g_k / n` first and round differently.
    """

    @staticmethod
    def forward(ctx, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:  # noqa: D102
        ctx.save_for_backward(logits, target)
        loss = F.binary_cross_entropy_with_logits(
            logits, target.expand_as(logits), reduction="none"
        )
        return loss.mean(dim=-1)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor, None]:  # noqa: D102
        logits, target = ctx.saved_tensors
        return (logits.sigmoid() - target) * grad[:, None] / logits.shape[-1], None


class JointCriticPenalty(_JointAdversaryPenalty):
    r"""WassersteinNet's critic: negative Kantorovich-Rubinstein estimate on ``(Z, Y)``.

    .. math::

        L_f = -\big|\,\mathbb E_{A=0} f(Z, Y) - \mathbb E_{A=1} f(Z, Y)\big|
              \;+\; \gamma\,\mathrm{GP}(f)

    with :math:`f` kept 1-Lipschitz by weight clipping (``clip``, WGAN) and/or the
    gradient penalty of weight :math:`\gamma` (WGAN-GP) (accuracy-disparity paper §3.2,
    eq. 3). A batch with one group only has no estimate:
    :meth:`~otfair.penalties.RepresentationAdversary.loss` returns ``None``.

    Parameters
    ----------
    latent_dim, hidden
        As in :class:`JointDiscriminatorPenalty` (``hidden``: the critic's widths).
    clip : float or None, default=0.01
        Weight clipping bound applied after each step (:meth:`after_step`).
    gradient_penalty : float, default=0.0
        :math:`\gamma`.
    """

    def __init__(
        self,
        latent_dim: int,
        hidden: Sequence[int] = (60,),
        clip: float | None = 0.01,
        gradient_penalty: float = 0.0,
    ) -> None:
        super().__init__(latent_dim, hidden)
        self.clip = clip
        self.gradient_penalty = float(gradient_penalty)
        #: the fit's generator of the gradient penalty's draws (None: torch's global one)
        self.generator: torch.Generator | None = None

    def joint_loss(self, adversary, z, y, sensitive) -> torch.Tensor | None:
        """Return the critic's loss on ``(z, y)``, or ``None`` (one group in the batch)."""
        in1 = sensitive == 1
        if bool(in1.all()) or not bool(in1.any()):
            return None
        out = adversary(z, y)
        loss = -torch.abs(out[..., ~in1].mean(dim=-1) - out[..., in1].mean(dim=-1))
        if self.gradient_penalty:
            gp = gradient_penalty(
                adversary,
                z[..., ~in1, :],
                y[~in1],
                z[..., in1, :],
                y[in1],
                generator=self.generator,
            )
            loss = loss + self.gradient_penalty * gp
        return loss

    def after_step(self, adversary: nn.Module | None = None) -> None:
        """Clip the critic's weights (WGAN), when ``clip`` is set."""
        if self.clip is not None:
            clip_weights_(self.adversary if adversary is None else adversary, self.clip)
