"""Wasserstein-barycenter penalty of Jiang et al. (2020), exact in 1-D (object and penalty)."""

from __future__ import annotations

import torch

from otfair.notions import Notion
from otfair.penalties._base import FairnessPenalty, PenaltyBatch, PenaltyObject, TrainingPlan
from otfair.penalties._checks import check_binary_groups
from otfair.penalties._plan import OTF_ALPHAS


class Barycenter(PenaltyObject):
    """W1 of each group's scores to the groups' barycenter (Jiang et al. 2020; DP only).

    No settings; builds :class:`BarycenterPenalty`.
    """

    name = "barycenter"
    paper_strengths = OTF_ALPHAS
    notions = ("dp",)

    def make(self, notion: Notion) -> BarycenterPenalty:
        """Return :class:`BarycenterPenalty` (demographic parity)."""
        return BarycenterPenalty(**self.factory_options())


class BarycenterPenalty(FairnessPenalty):
    r"""Distance of each group's score distribution to their Wasserstein barycenter.

    .. math::

        \mathrm{Bary}(h) = \sum_{s} p_s\, W_1\big(h_\#\mu_s, \bar\nu\big),
        \qquad F^{-1}_{\bar\nu}(t) = \sum_s p_s F^{-1}_{h_\#\mu_s}(t)

    with :math:`p_s` the share of group :math:`s` in the batch. In one dimension the
    barycenter's quantile function is the weighted mean of the groups' quantile
    functions, so everything is exact: the quantile functions are step functions on the
    merged cumulative-weight grid and the integral over :math:`t \in (0, 1)` is a finite
    sum (Jiang et al. 2020, "Wasserstein fair classification"; the OT Barycenter
    baseline of Buyl & De Bie, NeurIPS 2022, §5.1). Demographic parity and a
    binary sensitive attribute only, as in the reference implementation. For two groups
    the value equals :math:`2 p_0 p_1 W_1(h_\#\mu_0, h_\#\mu_1)`.

    Shapes: ``scores`` (n,), ``sensitive`` (n,) binary 0/1, both groups present.
    Cost: one sort per group, O(n log n); differentiable through sort/gather.
    """

    plan = TrainingPlan(mixing="convex", kink_at_constant=True)  # |q - bary| at the constant
    draws = False  # deterministic: trains outside the generator mode

    def check(self, batch: PenaltyBatch) -> PenaltyBatch:
        """Check the batch: one binary attribute, both groups present."""
        batch = super().check(batch)
        in1 = check_binary_groups(batch.sensitive, batch.scores.shape[0])[1]
        return batch._replace(sensitive=in1.to(torch.int64))

    def evaluate(self, batch: PenaltyBatch) -> torch.Tensor:
        """Return the penalty of one model's (n,) scores (``sensitive``: 0/1 codes (n,))."""
        in1 = batch.sensitive == 1
        return self._barycenter(batch.scores, (~in1, in1))

    @staticmethod
    def _barycenter(
        scores: torch.Tensor, masks: tuple[torch.Tensor, torch.Tensor]
    ) -> torch.Tensor:
        n = scores.shape[0]
        sorted_groups = [torch.sort(scores[m]).values for m in masks]
        # merged breakpoints of the groups' empirical quantile functions
        breaks = torch.cat(
            [
                torch.arange(1, v.shape[0] + 1, dtype=torch.float64, device=scores.device)
                / v.shape[0]
                for v in sorted_groups
            ]
        )
        breaks = torch.unique(torch.cat([breaks, breaks.new_zeros(1)]))  # sorted, from 0
        widths = (breaks[1:] - breaks[:-1]).to(scores.dtype)
        mids = 0.5 * (breaks[1:] + breaks[:-1])
        quantiles = []
        for v in sorted_groups:
            idx = torch.clamp(torch.ceil(mids * v.shape[0]).long() - 1, 0, v.shape[0] - 1)
            quantiles.append(v[idx])
        shares = [v.shape[0] / n for v in sorted_groups]
        bary = sum(p * q for p, q in zip(shares, quantiles, strict=True))
        return sum(
            p * (widths * (q - bary).abs()).sum() for p, q in zip(shares, quantiles, strict=True)
        )
