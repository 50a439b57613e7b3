r"""FairClassifier's two batch schemes, for K stacked models (K = 1: a single fit).

Every fit of :class:`~otfair.estimators.FairClassifier` runs here: a single strength is
a curve of one model. The K models differ only in the penalty strength :math:`a_k`;
they share the seed, hence
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
the one engine :func:`otfair.estimators._training.run_epochs`, which also makes the
adversaries' steps (``adv``: one Adam over the K adversaries, their losses summed,
which is K separate Adams since nothing couples them). Model k of a curve ends where a
separate fit (a curve of one) with the same seed and strength ends: to float rounding
for the logistic model (~1e-8 in probabilities); an MLP drifts further over a fit
(``benchmarks/curve_drift.py``, docs/stacking.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from otfair.estimators._training import (
    AdversaryStep,
    StepResult,
    TrainData,
    TrainLoop,
    batches_complete,
    epoch_losses,
    stratified_batches,
)
from otfair.models.stacked import StackedMLP
from otfair.penalties import penalty_values


@dataclass
class TrainingProblem:
    """One fit of K stacked FairClassifier models (K = 1: a single fit), as one value.

    Built once by :meth:`FairClassifier.fit <otfair.estimators.FairClassifier.fit>` (or
    its path) and handed to :func:`train`, which reads nothing else.

    Attributes
    ----------
    model : StackedMLP
        The K models, stacked.
    data : TrainData
        Training tensors (features, labels, group codes, strata, constraint matrix).
    loop : TrainLoop
        Epochs, optimizer, scheduler, batch generator, verbosity.
    strengths : list of float
        The strength of each model.
    penalties : list or None
        Plain scheme: one fitted penalty per model with a positive strength (None when
        no model is penalized). Matched scheme: one penalty per model.
    convex : bool
        Convex mixing ``(1 - a) CE + a R`` (else additive ``CE + a R``).
    batch_size : int
        Batch size of the plain scheme.
    fixed_batches : bool
        Keep the first epoch's batches (plain scheme).
    adversary_optimizer : torch.optim.Optimizer or None
        The adversaries' optimizer (a penalty with ``has_adversary``).
    group_codes : ndarray or None
        Plain scheme: the group of each training row (a batch missing a group trains on
        the cross-entropy alone).
    pool : ndarray or None
        Matched scheme (a penalty with ``requires_pairs``): the cached pairings
        (P, 2, m); None trains the plain scheme.
    group_weights : tuple of float
        Matched scheme: the groups' shares of the training set.
    steps_per_epoch : int or None
        Matched scheme: steps per epoch.
    """

    model: StackedMLP
    data: TrainData
    loop: TrainLoop
    strengths: list[float]
    penalties: list[Any] | None
    convex: bool = True
    batch_size: int = 1000
    fixed_batches: bool = False
    adversary_optimizer: torch.optim.Optimizer | None = None
    group_codes: np.ndarray | None = None
    pool: np.ndarray | None = None
    group_weights: tuple[float, float] = (0.5, 0.5)
    steps_per_epoch: int | None = None


def train(problem: TrainingProblem) -> list[list[float]]:
    """Train the problem's K models; return each model's mean loss per epoch (K lists).

    The matched scheme when the problem has a pairing ``pool``, else the plain one.
    """
    if problem.pool is not None:
        return train_matched(
            problem.model,
            problem.data,
            problem.pool,
            problem.loop,
            strengths=problem.strengths,
            group_weights=problem.group_weights,
            steps_per_epoch=problem.steps_per_epoch,
            penalties=problem.penalties,
        )
    return train_penalized(
        problem.model,
        problem.data,
        problem.loop,
        penalties=problem.penalties,
        strengths=problem.strengths,
        convex=problem.convex,
        batch_size=problem.batch_size,
        adversary_optimizer=problem.adversary_optimizer,
        group_codes=problem.group_codes,
        fixed_batches=problem.fixed_batches,
    )


def _per_model(losses: torch.Tensor) -> dict[str, torch.Tensor]:
    """Return the per-model log of a step: the (K,) losses (none for one model)."""
    return {"losses": losses} if losses.dim() and losses.shape[0] > 1 else {}


def _run(loop: TrainLoop, batches, step, adversary, tag: str, K: int) -> list[list[float]]:
    """Run the K models on the engine; return each model's mean loss per epoch (K lists)."""
    label = f" ({tag}curve of {K})" if K > 1 else (f" ({tag.strip()})" if tag else "")
    history = loop.run(batches, step, adversary, label)
    if K == 1:  # one model: its loss is the engine's "loss" log
        return [cast(list[float], epoch_losses(history))]
    per_epoch = cast(list[list[float]], epoch_losses(history, "losses"))  # per epoch: K floats
    return [[float(epoch[k]) for epoch in per_epoch] for k in range(K)]


def train_penalized(
    model: StackedMLP,
    data: TrainData,
    loop: TrainLoop,
    *,
    penalties: Sequence[Any] | None,
    strengths: Sequence[float],
    convex: bool,
    batch_size: int,
    adversary_optimizer: torch.optim.Optimizer | None = None,
    group_codes: np.ndarray | None = None,
    fixed_batches: bool = False,
) -> list[list[float]]:
    r"""Mini-batch training of K models on their mixed losses; returns K loss histories.

    Each step takes a stratified batch, evaluates the K models and minimizes
    :math:`\sum_k L_k` (module docstring). A batch in which a sensitive group is missing
    (possible only for tiny data or batches) is trained on the cross-entropy alone (the
    penalties raise on such batches); the inputs were validated once by the estimator,
    so the penalties are called unchecked (:func:`otfair.penalties.penalty_values`) and
    all index bookkeeping is done once per epoch: a step makes no host-device sync.

    ``penalties`` holds one fitted penalty per model with a positive strength (in the
    order of those models), or None when no model is penalized; an adversary penalty
    (``has_adversary``) gets one step of ``adversary_optimizer`` (over every
    adversary's parameters) after each model step. With ``fixed_batches``
    the first epoch's stratified batches are kept and every later epoch visits them in
    a new random order, each with a cache dict the penalty keeps its per-batch data
    work in across epochs (OTF's class-reduced cost); the default redraws the batches
    every epoch.
    """
    n = data.X.shape[0]
    K = model.n_models
    one = K == 1  # one model (a single fit): (n,) scores, Python-number strengths
    device = data.X.device
    a: torch.Tensor | float  # (K,) strengths; one model: a Python number
    a = torch.tensor([float(v) for v in strengths], dtype=data.X.dtype, device=device)
    if one:
        a = float(strengths[0])
    keep = 1 - a  # the cross-entropy's weight under convex mixing
    active = [k for k, v in enumerate(strengths) if v > 0]
    pens = list(penalties) if penalties and active else None
    if pens is not None and len(pens) != len(active):
        raise ValueError("`penalties` must hold one penalty per model with strength > 0.")
    active_t = torch.tensor(active, dtype=torch.long, device=device)
    every_active = len(active) == K  # no gather / scatter of the penalized models
    codes = None if group_codes is None else np.unique(group_codes, return_inverse=True)[1]
    n_codes = 0 if codes is None else int(codes.max()) + 1
    first = None if pens is None else pens[0]
    pen_arg = first if one else pens  # one instance scores (n,); K instances a (K, n) block
    needs_features = data.features is not None and getattr(first, "requires_features", False)
    has_adversary = bool(first is not None and first.has_adversary and adversary_optimizer)

    fixed: list[tuple[torch.Tensor, bool, dict | None]] = []

    def epoch_batches(epoch: int) -> Iterable[tuple[torch.Tensor, bool, dict | None]]:
        if fixed:
            return [fixed[i] for i in loop.rng.permutation(len(fixed))]
        parts = stratified_batches(data.strata, batch_size, loop.rng, n=n)
        complete = batches_complete(codes, parts, n_codes)
        index = torch.from_numpy(np.concatenate(parts)).to(device)
        split = torch.split(index, [len(p) for p in parts])
        caches: list[dict | None] = [{} if fixed_batches else None for _ in parts]
        out = list(zip(split, complete, caches, strict=True))
        if fixed_batches:
            fixed.extend(out)
        return out

    state: dict[str, Any] = {}

    def step(batch: tuple[torch.Tensor, bool, dict | None]) -> StepResult:
        it, use_pen, cache = batch
        # index_select: ~3x cheaper than advanced indexing (X[it]) for a row gather
        yb = data.y.index_select(0, it)
        Xb = data.X.index_select(0, it)
        if one:
            logits = model.forward_one(Xb)[:, 0]  # (b,)
            ce = F.binary_cross_entropy_with_logits(logits, yb)
        else:
            logits = model(Xb)  # (K, b)
            ce = F.binary_cross_entropy_with_logits(
                logits, yb.expand_as(logits), reduction="none"
            ).mean(dim=1)
        if has_adversary:
            state.clear()
        if not (use_pen and pens is not None):
            return (ce if one else ce.sum()), _per_model(ce), float(len(it))
        scores = torch.sigmoid(logits if every_active else logits[active_t])
        sb = None if data.s is None else data.s.index_select(0, it)
        G = None if data.G is None else data.G.index_select(1, it)
        feats = cast(torch.Tensor, data.features).index_select(0, it) if needs_features else None
        assert pen_arg is not None  # pens is not None
        values = penalty_values(pen_arg, scores, sb, yb, feats, G=G, cache=cache)
        pen = values if every_active else ce.new_zeros(K).index_copy(0, active_t, values)
        losses = keep * ce + a * pen if convex else ce + a * pen
        if has_adversary:
            state.update(scores=scores, s=sb, y=yb)
        return (losses if one else losses.sum()), _per_model(losses), float(len(it))

    def adversary_loss(batch: Any) -> torch.Tensor | None:
        if not state:  # the batch missed a group: no penalty, no adversary step
            return None
        assert pens is not None  # has_adversary: the models have penalties
        scores, sb, yb = state["scores"], state["s"], state["y"]
        rows = [scores] if one else scores
        pairs = zip(pens, rows, strict=True)  # the data was checked once: unchecked calls
        losses = (p.adversary_loss(h, sb, yb, checked=False) for p, h in pairs)
        return cast(torch.Tensor, sum(losses))

    adversary = (
        AdversaryStep(adversary_loss, adversary_optimizer)
        if has_adversary and adversary_optimizer is not None  # has_adversary needs one
        else None
    )
    return _run(loop, epoch_batches, step, adversary, "", K)


def train_matched(
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
    r"""FTM training on matched group batches (Kim et al., TMLR 2024, §4.3, Eq. (7)).

    Returns K loss histories. Each step takes one pairing ``(D_0, D_1, pi)`` of the
    cached ``pool`` (shape (P, 2, m)), runs the K models once on the ``2m`` points and
    minimizes, for each model with its :math:`\lambda_k`,

    .. math::

        \sum_{s \in \{0, 1\}} w_s \frac{1}{m}\sum_{(x, y) \in D_s} \mathrm{CE}(y, f(x))
        + \lambda_k \frac{1}{m}\sum_i |f(x^{(0)}_i) - f(x^{(1)}_{\pi(i)})|

    with :math:`f` the probability of the positive class and :math:`w_s = n_s / n` the
    group proportions of the training set, i.e. the cross-entropy on the two group
    batches themselves, re-weighted to the population as in the paper's code (an
    unweighted mean over the ``2m`` points would train on a 50/50 group mix). The
    penalty is :class:`otfair.penalties.MatchedDemographicParity` (``requires_pairs``;
    default) on the batch laid out as ``[D_0; partners]``. An epoch is
    ``steps_per_epoch`` steps (the paper's code: one pass over the larger group,
    ``ceil(max(n_0, n_1) / m)``; default ``ceil(n / 2m)``); pairings are visited in a
    random order, reshuffled each time the pool is exhausted. The pairings depend on the
    data only and are shared by the K models.
    """
    from otfair.penalties import MatchedDemographicParity

    K = model.n_models
    if penalties is None:
        penalties = [MatchedDemographicParity() for _ in range(K)]
    pens = list(penalties)
    X_pool, y_pool, codes, ce_weight, epoch_batches = ftm_batches(
        data, pool, loop.rng, group_weights, steps_per_epoch
    )
    lam: torch.Tensor | float  # (K,) strengths; one model: a Python number
    lam = torch.tensor([float(v) for v in strengths], dtype=data.X.dtype, device=data.X.device)
    any_active = bool((lam > 0).any())
    one = K == 1  # one model (a single fit): (2m,) scores, a Python-number strength
    if one:
        lam, pens = float(strengths[0]), pens[0]

    def step(p: int) -> StepResult:
        yb = y_pool[p]
        if one:
            logits = model.forward_one(X_pool[p])[:, 0]  # (2m,)
            losses = F.binary_cross_entropy_with_logits(
                logits, yb, weight=ce_weight, reduction="sum"
            )
        else:
            logits = model(X_pool[p])  # (K, 2m)
            losses = F.binary_cross_entropy_with_logits(
                logits, yb.expand_as(logits), weight=ce_weight, reduction="none"
            ).sum(dim=1)
        if any_active:
            losses = losses + lam * penalty_values(pens, torch.sigmoid(logits), codes, yb)
        return (losses if one else losses.sum()), _per_model(losses), 1.0

    return _run(loop, epoch_batches, step, None, "FTM ", K)


def ftm_batches(
    data: TrainData,
    pool: np.ndarray,
    rng: np.random.Generator,
    group_weights: tuple[float, float],
    steps_per_epoch: int | None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, Callable[[int], Iterable[int]]]:
    """Gather what FTM's steps need once per fit; return it and the pairing schedule.

    Returns the rows ``X_pool`` (P, 2m, d) and labels ``y_pool`` (P, 2m) of every
    pairing, the group codes ``[0]*m + [1]*m`` of a matched batch, the per-point CE
    weights ``w_s / m`` and ``epoch_batches(epoch)``: ``steps_per_epoch`` pairing
    indices (default ``ceil(n / 2m)``), visited in a random order reshuffled each time
    the pool is exhausted.
    """
    n = data.X.shape[0]
    m = pool.shape[2]
    steps = steps_per_epoch or max(1, math.ceil(n / (2 * m)))
    device = data.X.device
    pool_t = torch.tensor(pool, dtype=torch.int64, device=device).reshape(pool.shape[0], -1)
    X_pool = data.X[pool_t]
    y_pool = data.y[pool_t]
    codes = torch.cat([torch.zeros(m), torch.ones(m)]).to(device=device, dtype=torch.int64)
    ce_weight = torch.cat(
        [torch.full((m,), group_weights[0] / m), torch.full((m,), group_weights[1] / m)]
    ).to(device=device, dtype=data.X.dtype)
    order: list[int] = []

    def epoch_batches(epoch: int) -> Iterable[int]:
        for _ in range(steps):
            if not order:
                order.extend(rng.permutation(pool.shape[0]).tolist())
            yield order.pop()

    return X_pool, y_pool, codes, ce_weight, epoch_batches


class FullBatchObjective:
    r"""FairClassifier's training objective on the whole training set, for L-BFGS.

    :math:`(1 - a)\,\mathrm{CE} + a R` (convex) or :math:`\mathrm{CE} + a R`
    (additive), plus :math:`\frac{l_2}{2n}\lVert W\rVert^2` on the weights, with
    :math:`R` the fitted penalty on the model's scores (:func:`penalty_values`, as the
    batch schemes call it; the full batch's data work, OTF's class-reduced cost, is
    kept in one cache across evaluations).

    Parameters
    ----------
    model : torch.nn.Module
        The model (logits).
    data : TrainData
        The training tensors (features, labels, group codes, constraint matrix).
    penalty : FairnessPenalty or None
        The fitted penalty (``None``: the cross-entropy alone).
    strength : float
        :math:`a`.
    convex : bool
        Convex mixing (else additive).
    l2 : float
        The coefficient :math:`l_2 / (2n)` of the squared weights.
    """

    def __init__(
        self,
        model: nn.Module,
        data: TrainData,
        penalty: Any,
        *,
        strength: float,
        convex: bool,
        l2: float,
    ) -> None:
        self.model = model
        self.data = data
        self.penalty = penalty
        self.strength = strength
        self.convex = convex
        self.l2 = l2
        self.weights = [m.weight for m in model.modules() if isinstance(m, nn.Linear)]
        wants = getattr(penalty, "requires_features", False)
        self.features = data.features if wants else None
        self.cache: dict[Any, Any] = {}

    def __call__(self) -> torch.Tensor:
        """Return the objective at the model's current parameters."""
        data, a = self.data, self.strength
        logits = self.model(data.X)[:, 0]
        loss = F.binary_cross_entropy_with_logits(logits, data.y)
        if self.penalty is not None:
            scores = torch.sigmoid(logits)
            value = penalty_values(
                self.penalty, scores, data.s, data.y, self.features, G=data.G, cache=self.cache
            )
            loss = (1 - a) * loss + a * value if self.convex else loss + a * value
        if self.l2:
            loss = loss + self.l2 * sum((w * w).sum() for w in self.weights)
        return loss
