"""What a penalty's training plan names beside its flags: batches and strength grids.

:class:`TrainBatch`, :class:`BatchSchedule` and :class:`BatchScheme` are the types of a
penalty's own batches (:attr:`otfair.penalties.TrainingPlan.batches`: FTM's matched
group batches); :class:`StrengthGrids` gives each penalty object its default strength
range and FairnessCV's default grid (the one home of the grids: the estimators'
:mod:`~otfair.estimators._strength_grids` and the lab's method registry read them).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar, NamedTuple, Protocol

import numpy as np
import torch

#: FairnessCV's default search under convex mixing ``(1 - a) CE + a R``: log-spaced to
#: 0.3, evenly spaced to 0.9 (Norm's DP gap on COMPAS moves between 0.3 and 0.9), then
#: log-spaced in 1 - a (the penalty objects' ``strength_grids``; docs in
#: :mod:`otfair.estimators._strength_grids`)
CONVEX_GRID: tuple[float, ...] = (0.0, 0.01, 0.03, 0.1, 0.3, 0.5, 0.7, 0.9, 0.97, 0.99)
#: ... under additive mixing ``CE + a R`` (FTM, GapReg, adversary, FairTorch DP):
#: half-decades to 1000
ADDITIVE_GRID: tuple[float, ...] = (0.0, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0)

#: FTM's (``CE + lambda FTM``): the penalty's subgradient at a constant model is bounded,
#: so past a data-dependent lambda (a few units with the logistic model on the shipped
#: data) the constant is the optimum, as a lasso's zero is past its ``alpha_max``; the
#: grid is dense below that, where the trade-off lives, and stops at the FTM paper's
#: largest (Table 7), not at 1000 (tests/estimators/test_fit_quality.py)
FTM_GRID: tuple[float, ...] = (0.0, 0.1, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0)

_GRIDS = {"convex": CONVEX_GRID, "additive": ADDITIVE_GRID}
#: the OTF paper's alphas of its baselines (Norm, Barycenter; App. C.3): the lab's sweep
OTF_ALPHAS: tuple[float, ...] = (0.1, 0.3, 0.5, 0.7, 0.9)


class TrainBatch(NamedTuple):
    """One training step's batch, as a penalty's own batch scheme draws it.

    ``X`` (b, d) and ``y`` (b,) the rows, ``sensitive`` what the penalty reads as the
    groups, ``ce_weight`` per-row weights of a summed cross-entropy (``None``: the mean),
    ``weight`` the step's weight in the epoch's mean logs.
    """

    X: torch.Tensor
    y: torch.Tensor
    sensitive: torch.Tensor
    ce_weight: torch.Tensor | None
    weight: float


class BatchSchedule(Protocol):
    """A penalty's own batches for one fit (drawn by ``TrainingPlan.batches``)."""

    #: the scheme's name, shown by the progress bar
    name: str
    #: fitted attributes the estimator sets from it (FTM: ``n_pairings_``)
    fitted: dict[str, Any]

    def epoch(self, epoch: int) -> Iterable[TrainBatch]:
        """Return the batches of one epoch."""


class FixedBatchPenalty(Protocol):
    """A penalty averaged over fixed batches as one NumPy function of all the scores.

    What a full-batch quasi-Newton solver needs of a penalty whose work is per batch
    (OTF: :meth:`otfair.penalties.FairnessPenalty.fixed_batch_objective`).
    """

    def value_and_grad(self, scores: np.ndarray) -> tuple[float, np.ndarray]:
        """Return the mean penalty over the batches and its gradient in ``scores`` (n,)."""


class FitRows(NamedTuple):
    """The training set a batch scheme draws from: host arrays and device tensors."""

    X: np.ndarray  # (n, d) inputs
    y: np.ndarray  # (n,) labels 0/1
    groups: np.ndarray  # (n,) codes 0/1 of the two groups
    Xt: torch.Tensor  # X on the fit's device
    yt: torch.Tensor  # y as floats on the fit's device
    batch_size: int  # the estimator's batch size (the steps of an epoch)


class BatchScheme(Protocol):
    """How a penalty draws its own training batches (FTM's matched group batches)."""

    def schedule(self, rows: FitRows, rng: np.random.Generator) -> BatchSchedule:
        """Draw the fit's batches of ``rows`` (batch order from ``rng``)."""


class StrengthGrids:
    """A penalty object's default strengths: FairnessCV's grid and its paper's sweep."""

    #: FairnessCV's default grids by mixing (:meth:`strength_grid`; missing: the shared
    #: ``CONVEX_GRID`` / ``ADDITIVE_GRID``)
    strength_grids: ClassVar[dict[str, tuple[float, ...]]] = {}
    #: the strengths the penalty's paper sweeps (the lab's default sweep; ``()``: none)
    paper_strengths: ClassVar[tuple[float, ...]] = ()

    @classmethod
    def strength_grid(cls, mixing: str) -> tuple[float, ...]:
        """Return the strengths FairnessCV searches by default under ``mixing``.

        The unpenalized model (0) followed by a (mostly) log grid from where the penalty
        starts to move the model to where it is close to a constant
        (:mod:`otfair.estimators._strength_grids`). The grid of the penalty's own mixing
        is its ``strength_grids`` entry; the other mixing's is the shared default.
        """
        if mixing not in ("convex", "additive"):
            raise ValueError(f"`mixing` must be 'convex' or 'additive'; got {mixing!r}.")
        return cls.strength_grids.get(mixing, _GRIDS[mixing])

    @classmethod
    def strength_range(cls, mixing: str) -> tuple[float, float]:
        """Return the strengths ``mixing`` admits: ``[0, 1)`` convex, ``[0, inf)`` additive."""
        return (0.0, 1.0) if mixing == "convex" else (0.0, float("inf"))
