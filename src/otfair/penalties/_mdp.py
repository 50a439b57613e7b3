"""Matched demographic parity (MDP), the penalty of FTM."""

from __future__ import annotations

import warnings

import torch

from otfair.notions import Notion, as_notion
from otfair.penalties._base import FairnessPenalty, PenaltyBatch, check_scores


class MatchedDemographicParity(FairnessPenalty):
    r"""Mean absolute score difference between matched individuals of two groups.

    .. math::

        \mathrm{MDP}(f, T) = \frac{1}{m}\sum_{i=1}^{m}
            \big|f(x^{(0)}_i) - f(x^{(1)}_{\pi(i)})\big|

    where :math:`\pi` is a transport map from a batch of group 0 to an equal-size batch
    of group 1 (Kim et al., TMLR 2024, §3.2, Eq. (7); the marginal or joint OT
    map of §4). By Theorem 3.7 of the paper, ``MDP <= delta`` implies ``DP <= delta``
    for any transport map. The matching itself never depends on ``f``, so it is part of
    the batch (``requires_pairs``: see :class:`otfair.estimators.FTMMatchingCache`); the
    notion is DP (the joint map of §4 targets EO through the matching, not the penalty).

    Shapes: ``scores`` (2m,) the scores of the group-0 batch followed by those of their
    partners in group 1, in matched order; ``sensitive`` (2m,) the group codes
    (``m`` zeros then ``m`` ones); the unchecked :meth:`value` also takes a (K, 2m)
    block of K models (``batchable``). The old call ``mdp(scores, matched_scores)`` with two
    (m,) float tensors still works (deprecated).

    Examples
    --------
    >>> import torch
    >>> mdp = MatchedDemographicParity()
    >>> mdp(torch.tensor([0.1, 0.5, 0.3, 0.5]), torch.tensor([0, 0, 1, 1]))
    tensor(0.1000)
    """

    requires_pairs = True
    batchable = True

    def __init__(self, notion: str | Notion = "dp") -> None:
        super().__init__()
        self.notion = as_notion(notion, allowed=("dp",))

    def evaluate(self, batch: PenaltyBatch) -> torch.Tensor:
        """Return the MDP value (0-dim tensor)."""
        scores, sensitive = batch.scores, batch.sensitive
        old_call = isinstance(sensitive, torch.Tensor) and sensitive.is_floating_point()
        if old_call and not bool(((sensitive == 0) | (sensitive == 1)).all()):
            warnings.warn(
                "MatchedDemographicParity()(scores, matched_scores) is deprecated; pass "
                "the 2m scores [group 0; matched partners] and their group codes.",
                DeprecationWarning,
                stacklevel=4,
            )
            matched = check_scores(sensitive, "matched_scores")
            if matched.shape != scores.shape:
                raise ValueError(
                    "`scores` and `matched_scores` must have the same shape (one partner "
                    f"per point); got {tuple(scores.shape)} and {tuple(matched.shape)}."
                )
            return (scores - matched).abs().mean()
        codes = torch.as_tensor(sensitive).reshape(-1)
        n = scores.shape[0]
        m = n // 2
        expected = torch.cat([torch.zeros(m), torch.ones(n - m)]).to(codes.device)
        if n % 2 or codes.shape[0] != n or not bool((codes.to(expected) == expected).all()):
            raise ValueError(
                "`scores` must hold an even number 2m of matched scores (group-0 batch, then "
                "its partners) with `sensitive` = m zeros then m ones; got "
                f"{n} scores and sensitive of shape {tuple(codes.shape)}."
            )
        return self.evaluate_unchecked(PenaltyBatch(scores, codes))

    def evaluate_unchecked(self, batch: PenaltyBatch) -> torch.Tensor:
        """Unchecked value on a matched batch laid out as ``[group 0; partners]``.

        ``scores`` (2m,) or a (K, 2m) block of K models (K values, row-wise).
        """
        scores = batch.scores
        m = scores.shape[-1] // 2
        return (scores[..., :m] - scores[..., m:]).abs().mean(dim=-1)
