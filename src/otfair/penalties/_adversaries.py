r"""The second penalty protocol: adversaries on a learned representation.

A *score penalty* (:class:`~otfair.penalties.FairnessPenalty`) is a fairness value of
the model's scores, added to the task loss. A *representation adversary* is a network
of its own (a discriminator or a critic) that reads a representation :math:`z` of the
batch (and the target where its notion conditions on it) and has its own loss
:math:`L_f`, minimized by its own parameters; the encoder sees :math:`L_f` through a
gradient-reversal layer of scale :math:`\lambda`
(:func:`otfair.models.adversarial.grad_reverse`), so one step moves the adversary down
:math:`L_f` and the encoder up :math:`\lambda L_f`: the gradient descent-ascent of the
methods' minimax games. The training engine makes every one of those optimizer steps
(:class:`otfair.estimators._training.AdversaryStep` for extra adversary-only steps).

The protocol, called as ``adversary(z, sensitive, labels=None)``:

* :meth:`RepresentationAdversary.loss` (abstract): :math:`L_f` on the batch, a 0-dim
  tensor (or ``None`` when the batch cannot give one, e.g. one group only);
* :meth:`RepresentationAdversary.after_step`: a constraint applied after each optimizer
  step (the Wasserstein critic's weight clipping); nothing by default;
* ``requires_labels``: whether ``labels`` must be passed.

Implementations: LAFTR's adversary, sIPM-LFR's critic, CFair's conditional adversaries
(:mod:`otfair.penalties._representation`), CENet's discriminator and WassersteinNet's
critic (:mod:`otfair.penalties._critics`).
"""

from __future__ import annotations

import abc

import torch
from torch import nn

__all__ = ["RepresentationAdversary"]


class RepresentationAdversary(nn.Module, abc.ABC):
    """An adversary on a representation ``z``: ``adversary(z, sensitive, labels)`` -> its loss.

    See the module docstring. Subclasses implement :meth:`loss`.
    """

    requires_labels: bool = False  # a class default; LAFTR sets it per notion

    def forward(
        self, z: torch.Tensor, sensitive: torch.Tensor, labels: torch.Tensor | None = None
    ) -> torch.Tensor | None:
        """Return the adversary's loss :math:`L_f` on the batch (:meth:`loss`)."""
        return self.loss(z, sensitive, labels)

    @abc.abstractmethod
    def loss(
        self, z: torch.Tensor, sensitive: torch.Tensor, labels: torch.Tensor | None = None
    ) -> torch.Tensor | None:
        """Return :math:`L_f`, minimized by the adversary (``None``: no value on this batch).

        Parameters
        ----------
        z : tensor of shape (n, latent_dim)
            The batch representation (through a gradient-reversal layer when the encoder
            trains against the adversary).
        sensitive : tensor of shape (n,)
            Group codes 0/1.
        labels : tensor of shape (n,), optional
            The batch targets (required when ``requires_labels``).
        """

    def after_step(self) -> None:
        """Constrain the adversary after an optimizer step (default: nothing)."""
