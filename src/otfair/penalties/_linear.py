"""Base of the linear-notion penalties (Norm, OTF): one constraint matrix per batch."""

from __future__ import annotations

import abc
from typing import Any

from torch import Tensor

from otfair.notions import LinearConstraints
from otfair.penalties._base import FairnessPenalty, PenaltyBatch


class LinearPenalty(FairnessPenalty):
    r"""A penalty of the batch scores through the linear constraint matrix ``G``.

    Linear fairness notions (OTF paper §3.1, Def. 1) are the rows of
    :math:`G \in \mathbb R^{d_F \times n}` with :math:`G\mathbf h = 0` for a fair score
    vector :math:`\mathbf h`. The training engine slices ``G`` of the whole training set
    once per batch and calls :meth:`from_matrix`; called directly, the penalty builds
    ``G`` of the batch from the sensitive attributes (and labels for PEO). The built-in
    linear penalties are ``batchable``: :meth:`from_matrix` takes scores of shape (n,)
    or a (K, n) block of K models (one slice ``G`` serves all of them).

    Parameters
    ----------
    constraints : LinearConstraints
        A constraint builder (PDP or PEO; binary, several or continuous attributes),
        fitted on the training set by :meth:`fit` unless already fitted.
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

    def evaluate(self, batch: PenaltyBatch) -> Tensor:
        """Build the batch's ``G`` (d_F, n) and return :meth:`from_matrix`."""
        scores = batch.scores
        G = self.constraints.matrix(
            batch.sensitive, batch.labels, device=scores.device, dtype=scores.dtype
        )
        if G.shape[1] != scores.shape[0]:
            raise ValueError(
                f"`sensitive` has {G.shape[1]} rows but `scores` has {scores.shape[0]}."
            )
        return self.from_matrix(scores, G, batch.features)

    @abc.abstractmethod
    def from_matrix(
        self, scores: Tensor, G: Tensor, features: Tensor | None = None, cache: dict | None = None
    ) -> Tensor:
        """Penalty for a precomputed constraint matrix ``G`` (d_F, n) of the batch.

        ``scores`` (n,) gives a 0-dim value, a (K, n) block (``batchable`` penalties)
        K values. ``cache`` is a dict the caller keeps for this batch across epochs
        (fixed batches), where the penalty may store the batch's data work.
        """
