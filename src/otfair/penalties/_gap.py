"""Gap regularizer (Gap Reg): the squared gap of the groups' mean scores (object and penalty)."""

from __future__ import annotations

from typing import cast

import torch

from otfair.notions import Notion, as_notion
from otfair.penalties._base import FairnessPenalty, PenaltyBatch, PenaltyObject
from otfair.penalties._checks import check_binary_groups


class GapReg(PenaltyObject):
    """Squared mean score gap between the groups (the FTM paper's Gap Reg baseline).

    No settings; builds :class:`GapPenalty` for any notion (summed over its label cells).
    """

    name = "gapreg"
    #: the lab's sweep: the FTM paper's Table 7 for Gap Reg, extended to 100
    paper_strengths = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.2, 1.5, 1.8, 2.0,
                       3.0, 5.0, 10.0, 20.0, 50.0, 100.0)  # fmt: skip

    def make(self, notion: Notion) -> GapPenalty:
        """Return :class:`GapPenalty` for ``notion``."""
        return GapPenalty(notion, **self.factory_options())


class GapPenalty(FairnessPenalty):
    r"""Squared demographic-parity gap of the scores in a batch.

    .. math::

        \mathrm{Gap}(h) = \Big(\frac{1}{n_0}\sum_{i: s_i=0} h_i
                         - \frac{1}{n_1}\sum_{i: s_i=1} h_i\Big)^2

    The "Reg" / "Gap Reg" baseline of the FTM paper (Kim et al., TMLR 2024,
    App. D.2; Chuang & Mroueh 2021), trained as ``CE + lambda * Gap``.

    For a label-conditioned notion (EO: cells :math:`Y=0` and :math:`Y=1`; equal
    opportunity: :math:`Y=1`) the squared gaps of the notion's label cells are summed.

    Parameters
    ----------
    notion : {"dp", "eopp", "eo"} or Notion, default="dp"

    Shapes: ``scores`` (n,), ``sensitive`` (n,) binary 0/1, ``labels`` (n,) for EO/EOpp;
    the unchecked :meth:`value` also takes a (K, n) block of K models (``batchable``:
    the contrast ``H @ c`` gives the K gaps at once). Both groups must be present in the
    batch (in each label cell) (``ValueError`` otherwise).

    Examples
    --------
    >>> import torch
    >>> GapPenalty()(torch.tensor([0.2, 0.4, 0.9, 0.7]), torch.tensor([0, 0, 1, 1]))
    tensor(0.2500)
    """

    batchable = True
    draws = False  # deterministic: trains outside the generator mode

    def __init__(self, notion: str | Notion = "dp") -> None:
        super().__init__()
        self.notion = as_notion(notion)
        self.requires_labels = self.notion.requires_labels

    def check(self, batch: PenaltyBatch) -> PenaltyBatch:
        """Check the batch: both groups present in each of the notion's label cells."""
        batch = super().check(batch)
        scores, sensitive = batch.scores, batch.sensitive
        for cell in self.notion.cell_masks(batch.labels, scores.shape[0]):
            check_binary_groups(sensitive[cell], scores[cell].shape[0])
        in1 = check_binary_groups(sensitive, scores.shape[0])[1]
        return batch._replace(sensitive=in1.to(torch.int64))

    def evaluate(self, batch: PenaltyBatch) -> torch.Tensor:
        """Return the squared mean-score gap(s), as a contrast ``h @ c``.

        ``c_i = (1 - s_i) / n_0 - s_i / n_1`` avoids boolean indexing (a device sync);
        a label-conditioned notion multiplies the contrast by each cell's indicator.
        ``scores`` (n,) or (K, n): ``scores @ c`` is the one formula of both.
        """
        scores, sensitive, labels = batch.scores, batch.sensitive, batch.labels
        if not self.requires_labels:
            return self._gap2(scores, sensitive)
        assert labels is not None  # a label-conditioned notion: the batch has labels
        total = scores.new_zeros(())
        for lab in cast(tuple[int, ...], self.notion.label_cells):  # a label notion: ints
            cell = (labels == lab).to(scores.dtype)
            s = sensitive.to(scores.dtype) * cell
            gap = scores @ (((1 - s) * cell) / ((1 - s) * cell).sum() - s / s.sum())
            total = total + gap * gap
        return total

    @staticmethod
    def _gap2(scores: torch.Tensor, sensitive: torch.Tensor) -> torch.Tensor:
        s = sensitive.to(scores.dtype)
        gap = scores @ ((1 - s) / (1 - s).sum() - s / s.sum())
        return gap * gap
