r"""FairClassifier's two batch schemes for K stacked models (one trade-off curve).

The K models differ only in the penalty strength :math:`a_k`; they share the seed, hence
the batches, the constraint slices, the OTF costs and FTM's matchings. A step evaluates
all K models on the batch (:class:`otfair.models.StackedMLP`), their penalties on the
(K, n) block of scores (:func:`otfair.penalties.penalty_values`, the call of the single
trainer: a ``batchable`` penalty computes the K values at once), and minimizes

.. math::

    \sum_k L_k, \qquad L_k = (1 - a_k)\,\mathrm{CE}_k + a_k R_k \ \text{(convex)}
    \quad\text{or}\quad \mathrm{CE}_k + a_k R_k \ \text{(additive)},

whose gradient in model k's parameters is :math:`\nabla L_k` alone; with Adam (an
elementwise update) one optimizer over the stacked tensors is K separate optimizers.
Models with :math:`a_k = 0` skip the penalty, as a separate fit does. The loops run on
the one engine :func:`otfair.estimators._training.run_epochs` and mirror
:func:`~otfair.estimators._training.train_plain` and
:func:`~otfair.estimators._training.train_ftm` step for step, so model k ends where a
separate fit with the same seed and strength ends (up to float rounding).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import torch
from torch.nn import functional as F

from otfair.estimators._training import (
    StepResult,
    TrainData,
    TrainLoop,
    batches_complete,
    epoch_losses,
    ftm_batches,
    stratified_batches,
)
from otfair.models.stacked import StackedMLP
from otfair.penalties import penalty_values


def _per_model_logs(losses: torch.Tensor) -> dict[str, torch.Tensor]:
    return {f"loss_{k}": losses[k] for k in range(losses.shape[0])}


def _run(loop: TrainLoop, batches, step, after_step, tag: str, K: int) -> list[list[float]]:
    """Run a curve on the engine; return each model's mean loss per epoch (K lists)."""
    history = loop.run(batches, step, after_step, f" ({tag}curve of {K})")
    return [epoch_losses(history, f"loss_{k}") for k in range(K)]


def train_plain_stacked(
    model: StackedMLP,
    data: TrainData,
    loop: TrainLoop,
    *,
    penalties: Sequence[Any] | None,
    strengths: Sequence[float],
    convex: bool,
    batch_size: int,
    adversary_optimizers: Sequence[torch.optim.Optimizer] | None = None,
    group_codes: np.ndarray | None = None,
    fixed_batches: bool = False,
) -> list[list[float]]:
    """Stacked :func:`~otfair.estimators._training.train_plain`; returns K loss histories.

    ``penalties`` holds one fitted penalty per model with a positive strength (in the
    order of those models), or None when no model is penalized. With ``fixed_batches``
    the first epoch's stratified batches are kept and every later epoch visits them in
    a new random order, each with a cache dict the penalty keeps its per-batch data
    work in across epochs (OTF's class-reduced cost); the default redraws the batches
    every epoch.
    """
    n = data.X.shape[0]
    K = model.n_models
    device = data.X.device
    a = torch.tensor([float(v) for v in strengths], dtype=data.X.dtype, device=device)
    active = [k for k, v in enumerate(strengths) if v > 0]
    pens = list(penalties) if penalties and active else None
    if pens is not None and len(pens) != len(active):
        raise ValueError("`penalties` must hold one penalty per model with strength > 0.")
    active_t = torch.tensor(active, dtype=torch.long, device=device)
    codes = None if group_codes is None else np.unique(group_codes, return_inverse=True)[1]
    n_codes = 0 if codes is None else int(codes.max()) + 1
    first = None if pens is None else pens[0]
    needs_features = data.features is not None and getattr(first, "requires_features", False)
    adversary = first is not None and first.has_adversary and adversary_optimizers

    fixed: list[tuple[torch.Tensor, bool, dict | None]] = []

    def epoch_batches(epoch: int) -> Iterable[tuple[torch.Tensor, bool, dict | None]]:
        if fixed:
            return [fixed[i] for i in loop.rng.permutation(len(fixed))]
        parts = stratified_batches(data.strata, batch_size, loop.rng, n=n)
        complete = batches_complete(codes, parts, n_codes)
        index = torch.from_numpy(np.concatenate(parts)).to(device)
        split = torch.split(index, [len(p) for p in parts])
        caches = [{} if fixed_batches else None for _ in parts]
        out = list(zip(split, complete, caches, strict=True))
        if fixed_batches:
            fixed.extend(out)
        return out

    state: dict[str, Any] = {}

    def step(batch: tuple[torch.Tensor, bool, dict | None]) -> StepResult:
        it, use_pen, cache = batch
        logits = model(data.X[it])  # (K, b)
        yb = data.y[it]
        ce = F.binary_cross_entropy_with_logits(
            logits, yb.expand_as(logits), reduction="none"
        ).mean(dim=1)
        state.clear()
        if not (use_pen and pens is not None):
            return ce.sum(), _per_model_logs(ce), float(len(it))
        scores = torch.sigmoid(logits[active_t])
        sb = None if data.s is None else data.s[it]
        G = None if data.G is None else data.G[:, it]
        feats = data.features[it] if needs_features else None
        values = penalty_values(pens, scores, sb, yb, feats, G=G, cache=cache)
        pen = ce.new_zeros(K).index_copy(0, active_t, values)
        losses = (1 - a) * ce + a * pen if convex else ce + a * pen
        state.update(scores=scores, s=sb, y=yb)
        return losses.sum(), _per_model_logs(losses), float(len(it))

    def adversary_step(batch: Any) -> None:
        if not state:
            return
        for j, (p, opt) in enumerate(zip(pens, adversary_optimizers, strict=True)):
            adv_loss = p.adversary_loss(state["scores"][j], state["s"], state["y"])
            opt.zero_grad(set_to_none=True)
            adv_loss.backward()
            opt.step()

    return _run(loop, epoch_batches, step, adversary_step if adversary else None, "", K)


def train_ftm_stacked(
    model: StackedMLP,
    data: TrainData,
    pool: np.ndarray,
    loop: TrainLoop,
    *,
    strengths: Sequence[float],
    group_weights: tuple[float, float] = (0.5, 0.5),
    steps_per_epoch: int | None = None,
    penalties: Sequence[Any] | None = None,
) -> list[list[float]]:
    """Stacked :func:`~otfair.estimators._training.train_ftm`; returns K loss histories.

    The matched pairings (``pool``) depend on the data only and are shared by the K
    models; ``penalties`` (one per model, default matched DP) are evaluated together.
    """
    from otfair.penalties import MatchedDemographicParity

    K = model.n_models
    if penalties is None:
        penalties = [MatchedDemographicParity() for _ in range(K)]
    pens = list(penalties)
    X_pool, y_pool, codes, ce_weight, epoch_batches = ftm_batches(
        data, pool, loop.rng, group_weights, steps_per_epoch
    )
    lam = torch.tensor([float(v) for v in strengths], dtype=data.X.dtype, device=data.X.device)
    any_active = bool((lam > 0).any())

    def step(p: int) -> StepResult:
        logits = model(X_pool[p])  # (K, 2m)
        yb = y_pool[p]
        losses = (
            F.binary_cross_entropy_with_logits(
                logits, yb.expand_as(logits), weight=ce_weight, reduction="none"
            )
        ).sum(dim=1)
        if any_active:
            losses = losses + lam * penalty_values(pens, torch.sigmoid(logits), codes, yb)
        return losses.sum(), _per_model_logs(losses), 1.0

    return _run(loop, epoch_batches, step, None, "FTM ", K)
