r"""AdapFair's fairness term: OT distance between the groups' score distributions.

For scores :math:`r = f(T_s(x)) \in [0, 1]` and a notion with conditioning cells
:math:`c` (Huang et al., 2024, §III-D, Table A.1),

.. math::

    \mathcal{L}_{fair} = \sum_{c} \mathcal{W}\bigl(p(r \mid S=0, c),\; p(r \mid S=1, c)\bigr),

with one cell (all samples) for demographic parity (``"dp"``), the cell :math:`Y=1` for
equal opportunity (``"eopp"``) and both cells :math:`Y=1, Y=0` for equalized odds
(``"eo"``). :math:`\mathcal{W}` is the optimal-transport cost with the squared-distance
cost :math:`m_{ij} = (r^i_0 - r^j_1)^2` (Algorithm 1, line 10), i.e. :math:`W_2^2`:

- ``"w2"`` (default): exact, by sorting (:func:`otfair.ot.wasserstein_1d_power`), in
  :math:`O(n \log n)`; the paper approximates this very quantity;
- ``"sharp_sinkhorn"``: the paper's sharp Sinkhorn value
  :math:`\langle P^\star_\varepsilon, M\rangle` (§III-B, Theorem 1) with its closed-form
  gradient (:func:`otfair.ot.sharp_sinkhorn`), biased by the entropic blur.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import torch

from otfair.notions import Notion, as_notion
from otfair.penalties._base import FairnessPenalty, PenaltyBatch, TrainingPlan

Distance = Literal["w2", "sharp_sinkhorn"]

DISTANCES: tuple[str, ...] = ("w2", "sharp_sinkhorn")


def score_distance(
    u: torch.Tensor,
    v: torch.Tensor,
    *,
    distance: str | Callable[[torch.Tensor, torch.Tensor], torch.Tensor] = "w2",
    eps: float = 0.01,
) -> torch.Tensor:
    r"""OT cost :math:`W_2^2` between two 1-D score samples (sizes may differ).

    Parameters
    ----------
    u, v : torch.Tensor of shape (n0,) and (n1,)
        Scores of the two groups.
    distance : {"w2", "sharp_sinkhorn"} or callable, default="w2"
        Exact sorting-based :math:`W_2^2`, or the sharp Sinkhorn value with uniform
        weights and cost :math:`M_{ij} = (u_i - v_j)^2`, or any differentiable
        ``distance(u, v) -> 0-d tensor`` (e.g. POT's ``ot.sinkhorn2`` in the benchmark).
    eps : float, default=0.01
        Entropic regularization of the sharp Sinkhorn option. Scores lie in [0, 1], so
        costs lie in [0, 1] and ``eps`` is on that absolute scale.
    """
    if callable(distance):
        return distance(u, v)
    if distance == "w2":
        from otfair.ot import wasserstein_1d_power

        return wasserstein_1d_power(u, v, p=2)
    if distance == "sharp_sinkhorn":
        from otfair.ot import sharp_sinkhorn

        cost = (u[:, None] - v[None, :]).square()
        # 1e-9 marginal error is out of float32's reach (the solver would run to max_iter)
        tol = 1e-9 if cost.dtype == torch.float64 else 1e-6
        return sharp_sinkhorn(None, None, cost, eps, tol=tol)
    raise ValueError(f"`distance` must be one of {DISTANCES}; got {distance!r}.")


def fairness_loss(
    scores: torch.Tensor,
    groups: torch.Tensor,
    y: torch.Tensor,
    *,
    notion: str | Notion = "dp",
    distance: str | Callable[[torch.Tensor, torch.Tensor], torch.Tensor] = "w2",
    eps: float = 0.01,
) -> torch.Tensor:
    """Sum over the notion's cells of the OT cost between group 0 and group 1 scores.

    Parameters
    ----------
    scores : torch.Tensor of shape (n,)
        Scores :math:`f(T_s(x))` in [0, 1].
    groups : torch.Tensor of shape (n,)
        Group codes 0/1.
    y : torch.Tensor of shape (n,)
        Labels 0/1.
    notion : {"dp", "eopp", "eo"}
        Fairness notion.
    distance, eps
        See :func:`score_distance`.

    Raises
    ------
    ValueError
        If a group is empty in a cell the notion needs (e.g. no positive of group 1 in
        the batch for ``"eopp"``).
    """
    notion = as_notion(notion)
    total = scores.new_zeros(())
    for label in notion.label_cells:
        cell = torch.ones_like(groups, dtype=torch.bool) if label is None else y == label
        u = scores[cell & (groups == 0)]
        v = scores[cell & (groups == 1)]
        if u.numel() == 0 or v.numel() == 0:
            where = "" if label is None else f" with y={label}"
            raise ValueError(
                f"`sensitive_features`: a group has no sample{where} in this batch; "
                f"notion={notion.name!r} needs both groups."
            )
        total = total + score_distance(u, v, distance=distance, eps=eps)
    return total


class GroupWassersteinLoss(FairnessPenalty):
    r"""AdapFair's fairness term as a penalty: ``fairness_loss`` of the batch.

    :math:`\sum_c \mathcal W(p(r \mid S=0, c), p(r \mid S=1, c))` over the notion's label
    cells (Huang et al., 2024, §III-D); see the module docstring. Trained by AdapFair as
    ``lam * CE + (1 - lam) * loss`` (convex mixing).

    Parameters
    ----------
    notion : {"dp", "eopp", "eo"} or Notion, default="dp"
    distance : {"w2", "sharp_sinkhorn"} or callable, default="w2"
    eps : float, default=0.01
        Entropic regularization of ``"sharp_sinkhorn"``.
    """

    plan = TrainingPlan(mixing="convex")

    def __init__(
        self,
        notion: str | Notion = "dp",
        distance: str | Callable[[torch.Tensor, torch.Tensor], torch.Tensor] = "w2",
        eps: float = 0.01,
    ) -> None:
        super().__init__()
        self.notion = as_notion(notion)
        self.requires_labels = self.notion.requires_labels
        if not callable(distance) and distance not in DISTANCES:
            raise ValueError(f"`distance` must be one of {DISTANCES}; got {distance!r}.")
        self.distance = distance
        self.eps = float(eps)

    def check(self, batch: PenaltyBatch) -> PenaltyBatch:
        """Check that a label notion's batch has labels (``fairness_loss`` checks the rest)."""
        if self.requires_labels and batch.labels is None:
            raise ValueError(f"`labels` are required for notion={self.notion.name!r}.")
        return batch

    def evaluate(self, batch: PenaltyBatch) -> torch.Tensor:
        """Return the summed group distance of the batch (0-d tensor)."""
        scores, labels = batch.scores, batch.labels
        y = torch.zeros_like(scores) if labels is None else labels
        assert batch.sensitive is not None  # the group codes
        return fairness_loss(
            scores, batch.sensitive, y, notion=self.notion, distance=self.distance, eps=self.eps
        )
