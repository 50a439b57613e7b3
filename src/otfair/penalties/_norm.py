"""Norm baseline: L1 norm of the batch's linear fairness constraints."""

from __future__ import annotations

from typing import Any

import torch

from otfair.notions import LinearConstraints
from otfair.penalties._base import FairnessPenalty, check_scores


class NormPenalty(FairnessPenalty):
    r"""L1 norm of the linear constraint vector on a batch.

    .. math::

        \mathrm{Norm}(h) = \frac{1}{n}\,\lVert G\mathbf h\rVert_1
                         = \sum_c \Big|\frac{1}{n}\sum_j G_{cj} h_j\Big|

    i.e. the sum over constraints of the absolute batch estimate of
    :math:`E[g_c(Z)\,h(X)]` (otf-optimal-transport-to-fairness.txt §5.1, the "Norm"
    baseline; trained as ``(1 - alpha) CE + alpha Norm``).

    Parameters
    ----------
    constraints : LinearConstraints
        A fitted constraint builder (PDP or PEO; binary, several or continuous
        attributes).

    Shapes: ``scores`` (n,), ``sensitive`` (n,) or (n, k), ``labels`` (n,) for PEO.
    A batch in which a group is empty is allowed: the rows use training-set
    expectations, so they stay finite (the group's terms are simply absent).
    """

    requires_binary_groups = False
    linear = True
    default_mixing = "convex"

    def __init__(self, constraints: LinearConstraints) -> None:
        super().__init__()
        if not isinstance(constraints, LinearConstraints):
            raise TypeError(
                f"`constraints` must be a LinearConstraints; got {type(constraints).__name__}."
            )
        self.constraints = constraints
        self.notion = constraints.notion_
        self.requires_labels = constraints.requires_labels

    def fit(self, sensitive: Any, labels: Any = None) -> FairnessPenalty:
        """Fit the constraint rows' expectations on the training set (unless fitted)."""
        if not hasattr(self.constraints, "rows_"):
            self.constraints.fit(sensitive, labels)
        return self

    def forward(
        self,
        scores: torch.Tensor,
        sensitive: torch.Tensor,
        labels: torch.Tensor | None = None,
        features: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Return ``|G h|_1 / n`` (0-dim tensor)."""
        scores = check_scores(scores)
        G = self.constraints.matrix(sensitive, labels, device=scores.device, dtype=scores.dtype)
        if G.shape[1] != scores.shape[0]:
            raise ValueError(
                f"`sensitive` has {G.shape[1]} rows but `scores` has {scores.shape[0]}."
            )
        return self.from_matrix(scores, G)

    def from_matrix(
        self, scores: torch.Tensor, G: torch.Tensor, features: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Penalty for a precomputed constraint matrix ``G`` (d_F, n) of the batch.

        The estimator slices ``G`` of the whole training set once per batch instead of
        rebuilding it from the sensitive attributes at every step.
        """
        return (G @ scores).abs().sum() / scores.shape[0]
