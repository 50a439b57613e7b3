r"""K penalties evaluated on the scores of K stacked models, sharing the batch's work.

The K models of a trade-off curve (:class:`otfair.models.StackedMLP`) see the same
batch; a penalty's data-dependent work (the OTF cost matrix, its class reduction, the
constraint slice ``G``, FTM's matching) is the same for all of them. :class:`StackedPenalty`
evaluates K penalties of one kind on scores of shape (K, n) and returns the K values:

* ``otf``: one cost matrix and one class-reduced cost per batch
  (:class:`otfair.ot.OTFProblem`), the dual solves batched over the K score vectors
  (``problem.otf0(H)``), each model keeping its own warm start;
* ``norm``: :math:`\lVert G h_k\rVert_1 / n` for all k as one product ``H G^T``;
* ``gapreg``: the contrast :math:`(h_k^\top c)^2` for all k as one product;
* ``ftm`` (matched DP): :math:`\frac1m\sum_i |h_{k,i} - h_{k,m+i}|` row-wise;
* ``fairtorch-dp``: its contrasts :math:`h_k^\top c_a` for all k as one product;
* any other penalty (``adv``, ``barycenter``, outside penalties): a loop over the K
  instances, each with its own state (an adversary's parameters).

Value ``k`` equals the single-model penalty of instance ``k`` on ``scores[k]`` up to
float rounding: the formulas are the same, only batched.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from otfair.penalties._base import FairnessPenalty
from otfair.penalties._fairtorch import FairTorchDemographicParity
from otfair.penalties._gap import GapPenalty
from otfair.penalties._mdp import MatchedDemographicParity
from otfair.penalties._norm import NormPenalty
from otfair.penalties._otf import OTFPenalty


class StackedPenalty:
    """K penalty instances of one kind, evaluated together on (K, n) scores.

    Parameters
    ----------
    penalties : sequence of FairnessPenalty
        One fitted instance per model (each holds its model's state: OTF warm starts,
        an adversary's parameters). All of one class.

    Examples
    --------
    >>> import torch
    >>> from otfair.penalties import GapPenalty
    >>> stacked = StackedPenalty([GapPenalty(), GapPenalty()])
    >>> H = torch.tensor([[0.2, 0.4, 0.9, 0.7], [0.5, 0.5, 0.5, 0.5]])
    >>> stacked.values(H, torch.tensor([0, 0, 1, 1]))
    tensor([0.2500, 0.0000])
    """

    def __init__(self, penalties: Sequence[FairnessPenalty]) -> None:
        if not penalties:
            raise ValueError("`penalties` must hold at least one penalty.")
        kinds = {type(p) for p in penalties}
        if len(kinds) != 1:
            raise ValueError(
                f"`penalties` must be of one class; got {sorted(k.__name__ for k in kinds)}."
            )
        self.penalties = list(penalties)
        self.kind = kinds.pop()
        self._problems: dict[Any, tuple[torch.Tensor | None, Any, float]] = {}

    def __len__(self) -> int:
        return len(self.penalties)

    def values(
        self,
        scores: torch.Tensor,
        sensitive: torch.Tensor | None,
        labels: torch.Tensor | None = None,
        features: torch.Tensor | None = None,
        G: torch.Tensor | None = None,
        batch_key: Any = None,
    ) -> torch.Tensor:
        """Return the K penalty values (shape (K,)) of ``scores`` (K, n).

        ``G`` is the batch slice of the constraint matrix for linear penalties (then
        ``sensitive`` is unused), as in ``penalty.from_matrix``. Unchecked, like
        :meth:`FairnessPenalty.value`: the training engine validated the data once.
        ``batch_key`` names a batch that training revisits (fixed batches): OTF then
        keeps the batch's class-reduced cost (:meth:`otfair.ot.OTFProblem.compact`)
        and later visits skip the cost matrix and its pass.
        """
        if scores.dim() != 2 or scores.shape[0] != len(self.penalties):
            raise ValueError(
                f"`scores` must have shape ({len(self.penalties)}, n); got {tuple(scores.shape)}."
            )
        first = self.penalties[0]
        if self.kind is OTFPenalty:
            return self._otf(scores, G, features, batch_key)
        if self.kind is NormPenalty and G is not None:
            return (scores @ G.T.to(scores.dtype)).abs().sum(dim=1) / scores.shape[1]
        if self.kind is GapPenalty and not first.requires_labels:
            s = sensitive.to(scores.dtype)
            gap = scores @ ((1 - s) / (1 - s).sum() - s / s.sum())
            return gap * gap
        if self.kind is FairTorchDemographicParity and len({p.rows for p in self.penalties}) == 1:
            return first.value(scores, sensitive)
        if self.kind is MatchedDemographicParity:
            m = scores.shape[1] // 2
            return (scores[:, :m] - scores[:, m:]).abs().mean(dim=1)
        if G is not None and hasattr(first, "from_matrix"):
            return torch.stack(
                [
                    p.from_matrix(h, G, features)
                    for p, h in zip(self.penalties, scores, strict=True)
                ]
            )
        return torch.stack(
            [
                p.value(h, sensitive, labels, features)
                for p, h in zip(self.penalties, scores, strict=True)
            ]
        )

    def _otf_problem(
        self, G: torch.Tensor, features: torch.Tensor, dtype: torch.dtype, batch_key: Any
    ) -> tuple[torch.Tensor | None, Any, float]:
        """Return the batch's class order, OTF problem and cost scale (cached per key)."""
        from otfair.ot import OTFProblem, euclidean_cost

        if batch_key is not None and batch_key in self._problems:
            return self._problems[batch_key]
        first = self.penalties[0]
        G = G.detach().to(dtype)
        features = features.detach().to(dtype)
        order = OTFProblem.class_order(G)
        if order is not None:  # sorted by class: the class reduction needs no gather
            G, features = G[:, order], features[order]
        with torch.no_grad():
            C = euclidean_cost(features, features, exact=False)
            C.fill_diagonal_(0.0)
            scale = float(C.mean().clamp_min(1e-12))
            problem = OTFProblem(C, G)
            if batch_key is not None and problem.classes is not None:
                problem = problem.compact(first.eps * scale)
                self._problems[batch_key] = (order, problem, scale)
        return order, problem, scale

    def _otf(
        self,
        scores: torch.Tensor,
        G: torch.Tensor | None,
        features: torch.Tensor | None,
        batch_key: Any = None,
    ) -> torch.Tensor:
        """OTF0 of K score vectors against one batch cost (see :class:`OTFPenalty`)."""
        if G is None or features is None:
            raise ValueError("the OTF penalty needs the batch's `G` and `features`.")
        first = self.penalties[0]
        order, problem, scale = self._otf_problem(G, features, scores.dtype, batch_key)
        if order is not None:
            scores = scores[:, order]
        warm = []
        for p in self.penalties:
            w = p._details
            if not p.warm_start or (w is not None and w.otf.mu.shape[0] != problem.d):
                w = None
            warm.append(w)
        value, details = problem.otf0(
            scores.clamp(min=1e-6),
            first.eps * scale,
            tol=first.tol,
            max_iter=first.max_iter,
            warm_start=warm,
            return_details=True,
            trusted=True,
        )
        for p, d in zip(self.penalties, details, strict=True):
            p._details = d
        return (value / scale).clamp_min(0.0)
