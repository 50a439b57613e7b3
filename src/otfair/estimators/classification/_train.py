r"""FairClassifier's training, for K stacked models (K = 1: a single fit).

Every fit of :class:`~otfair.estimators.FairClassifier` runs here: a single strength is
a curve of one model. The K models differ only in the penalty strength :math:`a_k`;
they share the seed, hence
the batches, the constraint slices, the OTF costs and FTM's matchings. A step evaluates
all K models on the batch (:class:`otfair.models.StackedMLP`), their penalties on the
(K, n) block of scores (:class:`otfair.penalties.PenaltyStack`, which computes the K
values at once where the penalty's formula serves a block), and minimizes

.. math::

    \sum_k L_k, \qquad L_k = (1 - a_k)\,\mathrm{CE}_k + a_k R_k \ \text{(convex)}
    \quad\text{or}\quad \mathrm{CE}_k + a_k R_k \ \text{(additive)},

whose gradient in model k's parameters is :math:`\nabla L_k` alone; with Adam (an
elementwise update) one optimizer over the stacked tensors is K separate optimizers.
Models with :math:`a_k = 0` skip the penalty, as a separate fit does. The batches are
the engine's stratified ones (:class:`StratifiedBatches`) or the penalty's own, which
its training plan draws (:attr:`otfair.penalties.TrainingPlan.batches`: FTM's matched
group batches, with a group-weighted cross-entropy); one step serves both. The loops run on
the one engine :func:`otfair.estimators._training.run_epochs`, which also makes the
adversaries' steps (``adv``: one Adam over the K adversaries, their losses summed,
which is K separate Adams since nothing couples them). Model k of a curve ends where a
separate fit (a curve of one) with the same seed and strength ends: to float rounding
for the logistic model (~1e-8 in probabilities); an MLP drifts further over a fit
(``benchmarks/curve_drift.py``, docs/stacking.md).

Under L-BFGS a single model is trained on its whole objective: :class:`FullBatchObjective`
(torch, any full-batch penalty) or, for the logistic model with a penalty whose work is
per batch (OTF), :class:`otfair.estimators.classification._logistic.LogisticObjective`
(NumPy, the penalty averaged over fixed batches). A full-batch penalized fit never ends
with its objective above the best constant predictor's (:func:`keep_constant_if_lower`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple, cast

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from otfair.estimators._torch_base import base_rate_log_odds
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
from otfair.penalties import BatchSchedule, FixedBatchPenalty, PenaltyBatch, PenaltyStack


class _Batch(NamedTuple):
    """A step's batch: rows, labels, what the penalty reads, CE weights, log weight."""

    X: torch.Tensor
    y: torch.Tensor
    s: torch.Tensor | None
    G: torch.Tensor | None
    cache: dict | None
    ce_weight: torch.Tensor | None  # a weighted, summed cross-entropy (None: the mean)
    penalized: bool  # False: the batch misses a group, the CE alone
    weight: float


@dataclass(frozen=True)
class StratifiedBatches:
    """The engine's batch scheme: stratified batches of the training set.

    Attributes
    ----------
    batch_size : int
        Target batch size.
    fixed : bool
        Keep the first epoch's batches, visited in a new order every epoch, each with a
        cache dict the penalty keeps its per-batch data work in (OTF's class-reduced
        cost); otherwise new batches every epoch.
    group_codes : ndarray or None
        The group of each training row: a batch missing a group trains on the
        cross-entropy alone (the penalties are undefined there).
    """

    batch_size: int
    fixed: bool = False
    group_codes: np.ndarray | None = None


@dataclass(frozen=True)
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
    strengths : tuple of float
        The strength of each model.
    batches : StratifiedBatches or BatchSchedule
        The engine's stratified batches, or the penalty's own (its plan drew them).
    penalty : PenaltyStack or None
        The fitted penalties of the models with a positive strength, in their order
        (``None``: no model is penalized).
    convex : bool
        Convex mixing ``(1 - a) CE + a R`` (else additive ``CE + a R``).
    constraints : bool
        The penalty reads the constraint matrix ``G`` and the inputs as features.
    adversary_optimizer : torch.optim.Optimizer or None
        The adversaries' optimizer (a plan with an adversary), stepped after each step.
    """

    model: StackedMLP
    data: TrainData
    loop: TrainLoop
    strengths: tuple[float, ...]
    batches: StratifiedBatches | BatchSchedule
    penalty: PenaltyStack | None = None
    convex: bool = False
    constraints: bool = False
    adversary_optimizer: torch.optim.Optimizer | None = None


def train(problem: TrainingProblem) -> list[list[float]]:
    r"""Train the problem's K models; return each model's mean loss per epoch (K lists).

    Each step takes a batch of the problem's scheme, evaluates the K models and
    minimizes :math:`\sum_k L_k` (module docstring). The inputs were validated once by
    the estimator, so the penalties are evaluated unchecked
    (:meth:`otfair.penalties.PenaltyStack.evaluate`) and the index bookkeeping of the
    stratified batches is done once per epoch: a step makes no host-device sync. A
    penalty with an adversary gets one step of ``adversary_optimizer`` (over every
    adversary's parameters) after each model step.
    """
    K = problem.model.n_models
    if isinstance(problem.batches, StratifiedBatches):
        epoch_batches = _stratified(problem.data, problem.batches, problem.loop.rng)
        tag = ""
    else:
        epoch_batches = _scheduled(problem.batches)
        tag = f"{problem.batches.name} "
    state: dict[str, Any] = {}
    step = _step(problem, state)
    adversary = None
    if problem.adversary_optimizer is not None and problem.penalty is not None:
        adversary = AdversaryStep(
            _adversary_loss(problem.penalty, state), problem.adversary_optimizer
        )
    label = f" ({tag}curve of {K})" if K > 1 else (f" ({tag.strip()})" if tag else "")
    history = problem.loop.run(epoch_batches, step, adversary, label)
    if K == 1:  # one model: its loss is the engine's "loss" log
        return [cast(list[float], epoch_losses(history))]
    per_epoch = cast(list[list[float]], epoch_losses(history, "losses"))  # per epoch: K floats
    return [[float(epoch[k]) for epoch in per_epoch] for k in range(K)]


def _stratified(
    data: TrainData, scheme: StratifiedBatches, rng: np.random.Generator
) -> Callable[[int], Iterable[_Batch]]:
    """Return the epochs of stratified batches (gathered lazily, step by step)."""
    n = data.X.shape[0]
    groups = scheme.group_codes
    codes = None if groups is None else np.unique(groups, return_inverse=True)[1]
    n_codes = 0 if codes is None else int(codes.max()) + 1
    fixed: list[tuple[torch.Tensor, bool, dict | None]] = []

    def parts(epoch: int) -> list[tuple[torch.Tensor, bool, dict | None]]:
        if fixed:
            return [fixed[i] for i in rng.permutation(len(fixed))]
        split = stratified_batches(data.strata, scheme.batch_size, rng, n=n)
        complete = batches_complete(codes, split, n_codes)
        index = torch.from_numpy(np.concatenate(split)).to(data.X.device)
        rows = torch.split(index, [len(p) for p in split])
        caches: list[dict | None] = [{} if scheme.fixed else None for _ in split]
        out = list(zip(rows, complete, caches, strict=True))
        if scheme.fixed:
            fixed.extend(out)
        return out

    def gather(it: torch.Tensor, complete: bool, cache: dict | None) -> _Batch:
        # index_select: ~3x cheaper than advanced indexing (X[it]) for a row gather
        s = None if data.s is None else data.s.index_select(0, it)
        G = None if data.G is None else data.G.index_select(1, it)
        Xb, yb = data.X.index_select(0, it), data.y.index_select(0, it)
        return _Batch(Xb, yb, s, G, cache, None, complete, float(len(it)))

    return lambda epoch: (gather(*part) for part in parts(epoch))


def _scheduled(schedule: BatchSchedule) -> Callable[[int], Iterable[_Batch]]:
    """Return the epochs of a penalty's own batches (FTM's matched pairs)."""

    def epoch_batches(epoch: int) -> Iterable[_Batch]:
        for b in schedule.epoch(epoch):
            yield _Batch(b.X, b.y, b.sensitive, None, None, b.ce_weight, True, b.weight)

    return epoch_batches


def _cross_entropy(logits: torch.Tensor, y: torch.Tensor, weight: torch.Tensor | None):
    """Return the models' cross-entropies: 0-dim for (b,) logits, (K,) for (K, b)."""
    target = y if logits.dim() == 1 else y.expand_as(logits)
    if weight is None:
        if logits.dim() == 1:
            return F.binary_cross_entropy_with_logits(logits, target)
        return F.binary_cross_entropy_with_logits(logits, target, reduction="none").mean(dim=1)
    if logits.dim() == 1:
        return F.binary_cross_entropy_with_logits(logits, target, weight=weight, reduction="sum")
    ce = F.binary_cross_entropy_with_logits(logits, target, weight=weight, reduction="none")
    return ce.sum(dim=1)


def _per_model(losses: torch.Tensor) -> dict[str, torch.Tensor]:
    """Return the per-model log of a step: the (K,) losses (none for one model)."""
    return {"losses": losses} if losses.dim() and losses.shape[0] > 1 else {}


def _step(problem: TrainingProblem, state: dict[str, Any]) -> Callable[[_Batch], StepResult]:
    """Return the step of the K models on one batch: their mixed losses, summed."""
    model, strengths = problem.model, problem.strengths
    one = model.n_models == 1  # one model (a single fit): (n,) scores, Python numbers
    device = problem.data.X.device
    a: torch.Tensor | float  # (K,) strengths; one model: a Python number
    a = (
        float(strengths[0])
        if one
        else torch.tensor(strengths, dtype=problem.data.X.dtype, device=device)
    )
    keep = 1 - a  # the cross-entropy's weight under convex mixing
    active = [k for k, v in enumerate(strengths) if v > 0]
    penalty = problem.penalty if active else None
    active_t = torch.tensor(active, dtype=torch.long, device=device)
    every_active = len(active) == model.n_models  # no gather / scatter of the models
    adversary = problem.adversary_optimizer is not None

    def step(batch: _Batch) -> StepResult:
        logits = model.forward_one(batch.X)[:, 0] if one else model(batch.X)  # (b,) / (K, b)
        ce = _cross_entropy(logits, batch.y, batch.ce_weight)
        if adversary:
            state.clear()
        if not (batch.penalized and penalty is not None):
            return (ce if one else ce.sum()), _per_model(ce), batch.weight
        scores = torch.sigmoid(logits if every_active else logits[active_t])
        features = batch.X if problem.constraints else None
        s = cast(torch.Tensor, batch.s)  # None only where G stands in for it
        pb = PenaltyBatch(scores, s, batch.y, features, batch.G, batch.cache)
        values = penalty.evaluate(pb)
        pen = (
            values
            if every_active
            else ce.new_zeros(len(strengths)).index_copy(0, active_t, values)
        )
        losses = keep * ce + a * pen if problem.convex else ce + a * pen
        if adversary:
            state["batch"] = pb
        return (losses if one else losses.sum()), _per_model(losses), batch.weight

    return step


def _adversary_loss(
    penalty: PenaltyStack, state: dict[str, Any]
) -> Callable[[Any], torch.Tensor | None]:
    """Return the adversaries' loss on the step's batch (none when it missed a group)."""

    def loss(batch: Any) -> torch.Tensor | None:
        if not state:  # the batch missed a group: no penalty, no adversary step
            return None
        return penalty.adversary_objective(state["batch"])

    return loss


@dataclass(frozen=True)
class FullBatchObjective:
    r"""FairClassifier's training objective on the whole training set, for L-BFGS.

    :math:`(1 - a)\,\mathrm{CE} + a R` (convex) or :math:`\mathrm{CE} + a R`
    (additive), plus :math:`\frac{l_2}{2n}\lVert W\rVert^2` on the weights, with
    :math:`R` the fitted penalty on the model's scores (evaluated as the batch schemes
    evaluate it; the full batch's data work, OTF's class-reduced cost, is kept in one
    cache across evaluations).

    Attributes
    ----------
    model : torch.nn.Module
        The model (logits).
    data : TrainData
        The training tensors (features, labels, group codes, constraint matrix).
    penalty : PenaltyStack or None
        The fitted penalty (``None``: the cross-entropy alone).
    strength : float
        :math:`a`.
    convex : bool
        Convex mixing (else additive).
    l2 : float
        The coefficient :math:`l_2 / (2n)` of the squared weights.
    constraints : bool
        The penalty reads the constraint matrix ``G`` and the inputs as features.
    batched : FixedBatchPenalty or None
        :math:`R` as the mean over fixed batches (OTF of two groups: the NumPy solver
        the logistic model's objective calls too), in place of ``penalty``: the MLP's
        L-BFGS fit of that objective (:func:`fixed_batch_value`).
    """

    model: nn.Module
    data: TrainData
    penalty: PenaltyStack | None
    strength: float
    convex: bool
    l2: float
    constraints: bool = False
    cache: dict[Any, Any] = field(default_factory=dict)
    batched: FixedBatchPenalty | None = None

    def __call__(self) -> torch.Tensor:
        """Return the objective at the model's current parameters."""
        data, a = self.data, self.strength
        logits = self.model(data.X)[:, 0]
        loss = F.binary_cross_entropy_with_logits(logits, data.y)
        if self.batched is not None and a > 0:
            value = fixed_batch_value(torch.sigmoid(logits), self.batched)
            loss = (1 - a) * loss + a * value if self.convex else loss + a * value
        elif self.penalty is not None:
            features = data.X if self.constraints else None
            s = cast(torch.Tensor, data.s)  # None only where G stands in for it
            batch = PenaltyBatch(torch.sigmoid(logits), s, data.y, features, data.G, self.cache)
            value = self.penalty.evaluate(batch)
            loss = (1 - a) * loss + a * value if self.convex else loss + a * value
        if self.l2:
            weights = [m.weight for m in self.model.modules() if isinstance(m, nn.Linear)]
            loss = loss + self.l2 * sum((w * w).sum() for w in weights)
        return loss

    def value(self) -> float:
        """Return the objective's value at the model's current parameters (no graph)."""
        with torch.no_grad():
            return float(self())


class _FixedBatchValue(torch.autograd.Function):
    """A :class:`FixedBatchPenalty` of the scores as a torch function (its own gradient)."""

    @staticmethod
    def forward(ctx: Any, scores: torch.Tensor, penalty: FixedBatchPenalty) -> torch.Tensor:
        value, grad = penalty.value_and_grad(scores.detach().cpu().double().numpy())
        ctx.save_for_backward(torch.from_numpy(grad).to(scores.device, scores.dtype))
        return scores.new_tensor(value)

    @staticmethod
    def backward(ctx: Any, *outputs: torch.Tensor) -> tuple[torch.Tensor, None]:
        (grad,) = ctx.saved_tensors
        return outputs[0] * grad, None


def fixed_batch_value(scores: torch.Tensor, penalty: FixedBatchPenalty) -> torch.Tensor:
    r"""Return ``penalty``'s mean over its fixed batches at ``scores`` (n,), differentiable.

    :math:`\frac1B \sum_b R(h_b)` and its gradient come from
    :meth:`FixedBatchPenalty.value_and_grad` (NumPy, float64; a solver that keeps
    state between calls, as the duals of OTF's, sees the calls in the order of the
    evaluations); autograd carries the gradient to the model's parameters.
    """
    return cast(torch.Tensor, _FixedBatchValue.apply(scores, penalty))


def _digest(t: torch.Tensor) -> tuple[float, ...]:
    """Two weighted column sums of a 1-D or 2-D tensor: a cheap digest of its values."""
    a = t.detach().cpu().numpy().reshape(t.shape[0], -1)
    if not np.issubdtype(a.dtype, np.floating):
        a = a.astype(np.float64)
    rows = np.arange(1, a.shape[0] + 1, dtype=np.float64)
    weights = np.stack([np.ones_like(rows), np.sin(rows)]).astype(a.dtype)
    return tuple((weights @ a).reshape(-1).tolist())  # in the data's own precision


def fixed_batch_key(data: TrainData, seed: int, batch_size: int, *settings: Any) -> tuple:
    """Return what a kept fixed-batch penalty belongs to: data, seed, batch size, settings.

    The data enter through their shapes and two weighted column sums of the inputs,
    labels and constraint matrix (a millisecond on 20,000 rows; a different data set
    that agrees on all of them is not a case a warm-started fit meets by chance).
    """
    G = data.G
    assert G is not None  # a constraint penalty's data
    return (
        tuple(data.X.shape),
        _digest(data.X),
        _digest(data.y),
        _digest(G.T),
        int(seed),
        int(batch_size),
        repr(settings),
    )


def _constant_state(model: nn.Module, y: np.ndarray) -> dict[str, torch.Tensor]:
    """Return ``model``'s state with the output layer made the best constant predictor."""
    state = {name: value.detach().clone() for name, value in model.state_dict().items()}
    last_name = [name for name, m in model.named_modules() if isinstance(m, nn.Linear)][-1]
    prefix = f"{last_name}." if last_name else ""
    state[prefix + "weight"].zero_()
    state[prefix + "bias"].fill_(base_rate_log_odds(y))
    return state


def keep_constant_if_lower(
    model: nn.Module, y: np.ndarray, objective_value: Callable[[], float]
) -> bool:
    r"""Load the best constant predictor into ``model`` if its objective is lower.

    A penalized objective :math:`(1 - a)\,\mathrm{CE} + a R` (or :math:`\mathrm{CE} + a R`)
    takes at the best constant predictor (the output bias at the training base rate's
    log-odds, every weight of the output layer zero) the value
    :math:`(1 - a)\,\mathrm{CE}_0 + a R_0`, with :math:`R_0` the penalty of identical scores,
    its minimum (the constant is perfectly fair) and :math:`\mathrm{CE}_0` the least
    cross-entropy of any constant. A quasi-Newton fit that stops on the penalty's kinks at a
    strength near 1 (Norm at alpha 0.9999 on 5,000 Adult rows: a training cross-entropy more
    than 0.05 above the constant's) can end *above* that value: then the constant is both
    the better minimizer of the fit's own objective and fair, and the fit returns it (its
    :class:`~otfair.estimators.FitQualityWarning` then says that it predicts one class for
    every row, and why). The comparison uses the objective the fit minimized, so a fit that
    ends below the constant's value is never touched.

    FairClassifier applies it to the full-batch objectives (Norm, GapReg, Barycenter,
    FairTorch's DP loss), not to OTF's fixed-batch one: OTF's entropic term is not least at
    identical scores (at alpha 0.9999 its fit has a lower objective than the constant and a
    higher cross-entropy, which the ``FitQualityWarning`` reports), and evaluating the
    constant would move the duals its solver carries to a warm-started fit.

    Parameters
    ----------
    model : torch.nn.Module
        The fitted model (logits; its last ``nn.Linear`` is the output layer).
    y : ndarray of shape (n,)
        Training labels, 0/1 (their mean is the constant's rate).
    objective_value : callable
        ``objective_value()`` -> the fit's training objective at ``model``'s current
        parameters.

    Returns
    -------
    bool
        Whether the constant replaced the fit.
    """
    fitted = {name: value.detach().clone() for name, value in model.state_dict().items()}
    fitted_value = objective_value()
    model.load_state_dict(_constant_state(model, y))
    constant_value = objective_value()
    if constant_value < fitted_value:
        return True
    model.load_state_dict(fitted)
    return False
