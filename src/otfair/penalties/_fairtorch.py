"""FairTorch's demographic-parity constraint penalty (the FTM paper's "Reduction").

:class:`FairTorchDP` holds the setting (``rows``) and builds
:class:`FairTorchDemographicParity`.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import torch

from otfair.notions import Notion, as_notion
from otfair.penalties._base import FairnessPenalty, PenaltyBatch, PenaltyObject
from otfair.penalties._checks import check_binary_groups
from otfair.utils._constraints import StrOptions

#: Which constraint rows the penalty sums (see :class:`FairTorchDemographicParity`).
FairTorchRows = Literal["released", "per-group"]
_ROWS = ("released", "per-group")


class FairTorchDP(PenaltyObject):
    """FairTorch's demographic-parity constraint penalty (the FTM paper's "Reduction").

    Parameters
    ----------
    rows : {"released", "per-group"}, default="released"
        Which of FairTorch's two constraint-row conventions to use
        (:class:`FairTorchDemographicParity`).
    """

    name = "fairtorch-dp"
    #: the lab's sweep: FTM paper App. D.2, Table 7, the "Reduction" row (the multiplier
    #: of FairTorch's DemographicParityLoss)
    paper_strengths = (0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 20.0, 30.0, 40.0, 50.0,
                       60.0, 80.0, 100.0, 150.0, 200.0, 300.0, 500.0)  # fmt: skip
    notions = ("dp",)

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "rows": [StrOptions({"released", "per-group"})],
    }

    def __init__(self, rows: str = "released") -> None:
        self.rows = rows

    def make(self, notion: Notion) -> FairTorchDemographicParity:
        """Return :class:`FairTorchDemographicParity` (demographic parity)."""
        return FairTorchDemographicParity(notion, **self.factory_options())


class FairTorchDemographicParity(FairnessPenalty):
    r"""FairTorch's ``DemographicParityLoss``: squared positive parts of the DP moments.

    The "Reduction" baseline of the FTM paper (Kim et al., TMLR 2024, App. D.2
    and Table 7) is Agarwal et al.'s reduction "for the MLP model architecture" as
    implemented by FairTorch (``github.com/wbawakate/fairtorch``, package ``fairtorch``
    0.1.2, ``constraint.py``): the network is trained on
    ``CE + lambda * DemographicParityLoss``, a *fixed-multiplier* penalty (no Lagrange
    game, no randomized classifier; the FTM paper, App. D.2). On a batch with
    scores :math:`h_i = \sigma(z_i)`, FairTorch forms the moments

    .. math::

        \mu = \big(\mu_0, \mu_1, \bar\mu\big), \qquad
        \mu_a = \frac{1}{n_a}\sum_{i: s_i = a} h_i, \qquad
        \bar\mu = \frac1n \sum_i h_i,

    the constraint residuals :math:`r = \mathrm{relu}(M\mu - c)` with :math:`c = 0` and
    returns :math:`\alpha\, r^\top r` (``p_norm=2``; the sum, not the mean, of the squared
    residuals; FairTorch's ``alpha`` is 1 here, the strength ``lambda`` multiplies it).

    ``rows="released"`` (default) uses the matrix :math:`M` the released package builds:
    its 4 rows are :math:`\pm(\mu_0 - \bar\mu)` twice (row ``i`` writes column
    ``i % 2``'s entry into column 0 for both parities, so the group-1 column is never
    used), hence

    .. math::

        R_{\text{released}}(h) = 2\,(\mu_0 - \bar\mu)^2
            = 2\,\pi_1^2\,(\mu_0 - \mu_1)^2, \qquad \pi_1 = n_1 / n,

    the penalty the FTM paper trained with. ``rows="per-group"`` is the matrix
    FairTorch documents (one :math:`\pm(\mu_a - \bar\mu)` pair per group, as in
    fairlearn's ``DemographicParity`` moment):
    :math:`R_{\text{per-group}}(h) = \sum_a (\mu_a - \bar\mu)^2
    = (\pi_0^2 + \pi_1^2)(\mu_0 - \mu_1)^2`. Both vanish exactly when the groups' mean
    scores are equal; they differ by a batch-dependent factor of the strength.

    Parameters
    ----------
    notion : {"dp"} or Notion, default="dp"
        Only demographic parity (FairTorch's ``EqualiedOddsLoss`` is not reproduced).
    rows : {"released", "per-group"}, default="released"
        The constraint rows summed (above).

    Shapes: ``scores`` (n,) probabilities (FairTorch takes logits and applies the
    sigmoid itself); ``sensitive`` (n,) binary 0/1. Both groups must be present in the
    batch (FairTorch returns NaN otherwise; here a ``ValueError``).

    Examples
    --------
    >>> import torch
    >>> h, s = torch.tensor([0.2, 0.4, 0.9]), torch.tensor([0, 0, 1])
    >>> FairTorchDemographicParity()(h, s)  # 2 * (0.3 - 0.5)^2
    tensor(0.0800)
    >>> FairTorchDemographicParity(rows="per-group")(h, s)  # 0.2^2 + 0.4^2
    tensor(0.2000)
    """

    batchable = True
    draws = False  # deterministic: trains outside the generator mode

    def __init__(self, notion: str | Notion = "dp", *, rows: FairTorchRows = "released") -> None:
        super().__init__()
        self.notion = as_notion(notion, allowed=("dp",))
        if rows not in _ROWS:
            raise ValueError(f"`rows` must be one of {', '.join(_ROWS)}; got {rows!r}.")
        self.rows = rows

    def check(self, batch: PenaltyBatch) -> PenaltyBatch:
        """Check the batch: one binary attribute, both groups present."""
        batch = super().check(batch)
        in1 = check_binary_groups(batch.sensitive, batch.scores.shape[0])[1]
        return batch._replace(sensitive=in1.to(torch.int64))

    def evaluate(self, batch: PenaltyBatch) -> torch.Tensor:
        r"""Return the penalty; ``scores`` may also be a (K, n) block (returns K values).

        The closed forms above as contrasts (no boolean indexing, which syncs a device):
        :math:`\mu_a - \bar\mu = h^\top (1[s = a] / n_a - 1 / n)`.
        """
        scores = batch.scores
        s = batch.sensitive.to(scores.dtype)
        n = scores.shape[-1]
        d0 = scores @ ((1 - s) / (1 - s).sum() - 1.0 / n)
        if self.rows == "released":
            return 2 * d0 * d0
        d1 = scores @ (s / s.sum() - 1.0 / n)
        return d0 * d0 + d1 * d1

    def constraint_matrix(
        self, dtype: torch.dtype = torch.float32, device: torch.device | str | None = None
    ) -> torch.Tensor:
        r"""Return the (4, 3) matrix :math:`M` acting on :math:`(\mu_0, \mu_1, \bar\mu)`."""
        M = torch.zeros(4, 3, dtype=dtype, device=device)
        for i in range(4):
            sign = 1.0 if i % 2 == 0 else -1.0
            column = 0 if self.rows == "released" else i // 2
            M[i, column], M[i, 2] = sign, -sign
        return M
