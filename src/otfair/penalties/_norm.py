"""Norm baseline: L1 norm of the batch's linear fairness constraints (object and penalty)."""

from __future__ import annotations

import copy

import torch
from torch import Tensor

from otfair.notions import LinearConstraints, Notion
from otfair.penalties._base import LinearPenalty, PenaltyObject, TrainingPlan
from otfair.penalties._plan import OTF_ALPHAS

#: the smoothing of |v| under a full-batch solver (:meth:`NormPenalty.full_batch_variant`)
SMOOTHING = 1e-3


class Norm(PenaltyObject):
    r"""L1 norm of the linear constraints, :math:`\lVert G h\rVert_1 / n` (OTF paper §5.1).

    No settings; builds :class:`NormPenalty` for any notion (linear constraints).
    """

    name = "norm"
    paper_strengths = OTF_ALPHAS

    def make(self, notion: Notion) -> NormPenalty:
        """Return :class:`NormPenalty` on the notion's linear constraints."""
        return NormPenalty(LinearConstraints(notion), **self.factory_options())


class NormPenalty(LinearPenalty):
    r"""L1 norm of the linear constraint vector on a batch.

    .. math::

        \mathrm{Norm}(h) = \frac{1}{n}\,\lVert G\mathbf h\rVert_1
                         = \sum_c \Big|\frac{1}{n}\sum_j G_{cj} h_j\Big|

    i.e. the sum over constraints of the absolute batch estimate of
    :math:`E[g_c(Z)\,h(X)]` (Buyl & De Bie, NeurIPS 2022, §5.1, the "Norm"
    baseline; trained as ``(1 - alpha) CE + alpha Norm``).

    Parameters
    ----------
    constraints : LinearConstraints
        A fitted constraint builder (PDP or PEO; binary, several or continuous
        attributes).

    Shapes: ``scores`` (n,) or a (K, n) block of K models (``batchable``: K values by
    one product), ``sensitive`` (n,) or (n, k), ``labels`` (n,) for PEO. A batch in
    which a group is empty is allowed: the rows use training-set expectations, so they
    stay finite (the group's terms are simply absent).

    Under a full-batch quasi-Newton solver (the logistic model's L-BFGS,
    :meth:`full_batch_variant`) each :math:`|v|` is smoothed to
    :math:`\sqrt{v^2 + \mu^2} - \mu` with :math:`\mu` = ``SMOOTHING`` = 1e-3 (a gap of
    mean scores of 1e-3; the two differ by at most :math:`\mu`): L-BFGS on the kink
    ended far from the minimum (Adult, alpha 0.9: a training cross-entropy above the
    constant predictor's), smoothed it reaches the exact penalty's plateau
    (``tests/estimators/test_fit_quality.py``).
    Adam, on batches, takes the kink's subgradient as the papers do.
    """

    batchable = True
    draws = False  # deterministic: trains outside the generator mode
    #: the absolute value has its kink at the L-BFGS start (``kink_at_constant``)
    plan = TrainingPlan(mixing="convex", constraints=True, kink_at_constant=True)
    #: the absolute values' smoothing: 0 (batch schemes) or SMOOTHING (full batch)
    smoothing: float = 0.0

    def full_batch_variant(self) -> NormPenalty:
        """Return a copy whose absolute values are smoothed by ``SMOOTHING``."""
        smooth = copy.copy(self)
        smooth.smoothing = SMOOTHING
        return smooth

    def from_matrix(
        self, scores: Tensor, G: Tensor, features: Tensor | None = None, cache: dict | None = None
    ) -> Tensor:
        """Penalty for a precomputed constraint matrix ``G`` (d_F, n) of the batch.

        The estimator slices ``G`` of the whole training set once per batch instead of
        rebuilding it from the sensitive attributes at every step. ``scores`` (n,) or
        (K, n): ``G h`` is (d_F,) or (d_F, K), summed over the constraints.
        """
        Gh = G @ (scores if scores.dim() == 1 else scores.T)
        if self.smoothing > 0:
            v, mu = Gh / scores.shape[-1], self.smoothing
            return (torch.sqrt(v * v + mu * mu) - mu).sum(dim=0)
        return Gh.abs().sum(dim=0) / scores.shape[-1]
