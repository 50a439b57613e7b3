"""Adversarial debiasing (Zhang et al. 2018): an adversary predicts S from the score.

:class:`Adversary` holds the settings (the adversary's width and learning rate) and
builds :class:`AdversaryPenalty`.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar

import torch
from torch import nn
from torch.nn import functional as F

from otfair.notions import Notion, as_notion
from otfair.penalties._base import FairnessPenalty, PenaltyBatch, PenaltyObject, TrainingPlan
from otfair.penalties._checks import check_binary_groups
from otfair.utils._constraints import positive_int, positive_real

_LOGIT_CLAMP = 1e-6


class Adversary(PenaltyObject):
    """Adversarial debiasing (Zhang et al. 2018): an adversary predicts S from the score.

    Parameters
    ----------
    hidden : int, default=32
        Width of the adversary's hidden layer.
    lr : float, optional
        Adam learning rate of the adversary; ``None`` uses the classifier's ``lr``.
    """

    name = "adv"
    #: the lab's sweep: the FTM paper's Table 7 for the adversary, extended to 100
    paper_strengths = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.5,
                       2.0, 3.0, 5.0, 10.0, 15.0, 20.0, 30.0, 50.0, 100.0)  # fmt: skip
    notions = ("dp", "eo")
    training_settings = ("lr",)

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "hidden": [positive_int()],
        "lr": [None, positive_real()],
    }

    def __init__(self, hidden: int = 32, *, lr: float | None = None) -> None:
        self.hidden = hidden
        self.lr = lr

    def adversary_lr(self, default: float) -> float:
        """``lr`` when set, else the classifier's learning rate ``default``."""
        return float(self.lr or default)

    def training_plan(self, penalty: FairnessPenalty) -> TrainingPlan:
        """Return the penalty's plan with the adversary's learning rate ``lr``."""
        return dataclasses.replace(penalty.plan, adversary_lr=self.lr)

    def make(self, notion: Notion) -> AdversaryPenalty:
        """Return :class:`AdversaryPenalty` for ``notion`` (DP or EO)."""
        return AdversaryPenalty(notion=notion, **self.factory_options())


class AdversaryPenalty(FairnessPenalty):
    r"""Adversary of Zhang et al. (2018) that predicts the sensitive group from the score.

    The adversary :math:`a_\theta` reads the predictor's logit (and the label for
    ``notion="eo"``) and outputs :math:`P(S=1)`. Its own loss (minimized by its own
    optimizer, see :meth:`~otfair.penalties.FairnessPenalty.adversary_objective`) is the
    cross-entropy
    :math:`L_A = \mathrm{CE}(s, a_\theta(\mathrm{logit}\,h))`. The penalty seen by the
    predictor is how much better than a constant guess the adversary does:

    .. math::

        \mathrm{Adv}(h) = \big(H(\bar s) - L_A\big)_+ ,

    with :math:`H(\bar s)` the binary entropy of the group share in the batch (the loss
    of the best constant adversary). Up to that constant and the clipping at 0 this is
    the predictor's ``-lambda * L_A`` term of Zhang et al. / the Adv baseline of
    Kim et al., TMLR 2024, App. D.2 (``CE + lambda * Adv``); the constant keeps
    the penalty >= 0 and 0 when the adversary learns nothing. The projection term of
    Zhang et al. is not used (as in the FTM paper's baseline).

    The estimator alternates: one predictor step on ``CE + lambda * Adv`` (adversary
    frozen), then one adversary step on
    :meth:`~otfair.penalties.FairnessPenalty.adversary_objective` with detached scores.

    Parameters
    ----------
    hidden : int, default=32
        Width of the adversary's hidden layer (one ReLU layer).
    notion : {"dp", "eo"}, default="dp"
        ``"eo"`` also feeds the label to the adversary (Zhang et al. §4).

    Shapes: ``scores`` (n,), ``sensitive`` (n,) binary 0/1, ``labels`` (n,) for "eo".
    """

    plan = TrainingPlan(full_batch=False, adversary=True)

    def __init__(self, hidden: int = 32, notion: str | Notion = "dp") -> None:
        super().__init__()
        self.notion = as_notion(notion, allowed=("dp", "eo"))
        if int(hidden) < 1:
            raise ValueError(f"`hidden` must be >= 1; got {hidden}.")
        self.requires_labels = self.notion.requires_labels
        n_in = 2 if self.requires_labels else 1
        self.adversary = nn.Sequential(
            nn.Linear(n_in, int(hidden)), nn.ReLU(), nn.Linear(int(hidden), 1)
        )

    def check(self, batch: PenaltyBatch) -> PenaltyBatch:
        """Check the batch: one binary attribute, both groups present (and labels)."""
        batch = super().check(batch)
        in1 = check_binary_groups(batch.sensitive, batch.scores.shape[0])[1]
        return batch._replace(sensitive=in1.to(torch.int64))

    def _adversary_ce(self, batch: PenaltyBatch) -> tuple[torch.Tensor, torch.Tensor]:
        """Return the adversary's cross-entropy and the batch's group-1 share.

        ``scores`` (n,), ``sensitive`` 0/1 codes (n,), binary ``labels`` (a checked
        batch, or one of the engine, which validated the training set once per fit).
        """
        scores, labels = batch.scores, batch.labels
        logit = torch.logit(scores.clamp(_LOGIT_CLAMP, 1 - _LOGIT_CLAMP))[:, None]
        if self.requires_labels:
            assert labels is not None  # a label notion's batch has labels
            logit = torch.cat([logit, labels[:, None].to(logit)], dim=1)
        target = (batch.sensitive == 1).to(scores.dtype)
        ce = F.binary_cross_entropy_with_logits(self.adversary(logit)[:, 0], target)
        return ce, target.mean()

    def adversary_objective(self, batch: PenaltyBatch) -> torch.Tensor:
        """Return the adversary's cross-entropy (what its optimizer minimizes)."""
        return self._adversary_ce(batch)[0]

    def evaluate(self, batch: PenaltyBatch) -> torch.Tensor:
        """Return ``max(H(share) - CE_adversary, 0)`` (0-dim tensor)."""
        return self._penalty(*self._adversary_ce(batch))

    @staticmethod
    def _penalty(ce: torch.Tensor, share: torch.Tensor) -> torch.Tensor:
        p = float(share)
        prior = -(p * math.log(p) + (1 - p) * math.log(1 - p))
        return torch.clamp(prior - ce, min=0.0)
