"""The one training engine of otfair: mini-batch epochs and full-batch L-BFGS.

:func:`run_epochs` is the only loop over epochs in ``src/otfair``, and with the
full-batch quasi-Newton minimization of :mod:`otfair.estimators._lbfgs` (SciPy's
L-BFGS-B, the default solver of FairClassifier's logistic model) it makes every
optimizer step: each
torch estimator (:class:`FairClassifier`, the regression nets, the representation
classifiers and their density models, AdapFair's flows and its base
classifier) describes an epoch by its *batches*, the *loss* of one step on a batch and,
for an adversary, the adversary's own loss (:class:`AdversaryStep`), and the engine runs
them with the shared conventions:

* one seeding rule: an estimator draws ``seed = otfair.utils.draw_seed(random_state)``
  once per fit, and every generator of the fit derives from it (batch orders, initial
  weights built inside ``otfair.utils.use_generator(otfair.utils.torch_generator(seed))``);
  the global python / numpy / torch generators are never seeded, drawn from or restored;
* one batcher: :func:`stratified_batches` spreads the strata (sensitive group x label
  cell of the notion) evenly over the batches (``every_stratum=True``: every stratum in
  every batch, exactly);
* hooks: ``after_step`` (weight clipping), ``adversary`` (:class:`AdversaryStep`: the
  adversary-only steps after each step), ``on_epoch_end``;
* the epoch's logs (loss and any named terms) averaged with the step weights;
* ``verbose=True`` shows a progress bar (rich) with the running loss;
* the threshold convention of the estimators: predict 1 iff ``P(y=1) >= 0.5``
  (logit >= 0), :func:`predict_from_proba`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import torch

from otfair.utils._progress import EpochProgress


@dataclass(frozen=True)
class TrainData:
    """Training tensors on the target device (built once per fit)."""

    X: torch.Tensor  # (n, d) model inputs
    y: torch.Tensor  # (n,) float 0/1
    s: torch.Tensor | None = None  # (n,) group codes of a group penalty
    strata: np.ndarray | None = None  # (n,) codes used to stratify batches (groups [x labels])
    G: torch.Tensor | None = None  # (d_F, n) constraint matrix of a constraint penalty


def forget_fit(est: Any) -> None:
    """Remove the fitted attributes (``name_``) of an earlier fit from ``est``.

    A refit replaces the earlier fit whole.
    """
    for name in [n for n in vars(est) if n.endswith("_") and not n.startswith("_")]:
        delattr(est, name)


def _stratified_positions(
    strata: np.ndarray | None, n: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray | None]:
    """Return the interleaved order and its sorted positions in [0, 1) (``None``: no strata)."""
    if strata is None:
        return rng.permutation(n), None
    pos = np.empty(n)
    for code in np.unique(strata):
        members = np.flatnonzero(strata == code)
        pos[rng.permutation(members)] = (np.arange(len(members)) + rng.random()) / len(members)
    order = np.argsort(pos)  # positions are a.s. distinct: no stable sort needed
    return order, pos[order]


def batches(order: np.ndarray, batch_size: int) -> list[np.ndarray]:
    """Split ``order`` into ``ceil(n / batch_size)`` near-equal consecutive batches."""
    n_batches = max(1, math.ceil(len(order) / batch_size))
    return np.array_split(order, n_batches)


def stratified_batches(
    strata: np.ndarray | None,
    batch_size: int,
    rng: np.random.Generator,
    *,
    n: int | None = None,
    every_stratum: bool = False,
) -> list[np.ndarray]:
    r"""Return one epoch's batches of ``range(n)``: the one stratified batcher of otfair.

    Each stratum (sensitive group x the notion's label cell) of size :math:`m` is shuffled
    and its members get the positions :math:`(r + U)/m`, :math:`r = 0..m-1`, with one
    uniform :math:`U` per stratum: sorting by position interleaves the strata, so any run
    of consecutive samples holds them in (close to) their overall proportions.

    * ``every_stratum=False`` (FairClassifier, the representation methods): the order is
      cut into :math:`B = \lceil n / \text{batch\_size} \rceil` near-equal batches; a
      batch holds every stratum whenever ``batch_size >= n / min_stratum_size`` (the
      engine checks each batch with :func:`batches_complete`).
    * ``every_stratum=True`` (AdapFair, whose loss needs every cell in every batch): the
      number of batches is capped at the smallest stratum's size and the order is cut
      at the positions :math:`k / B`; an interval of length :math:`1/B \ge 1/m` holds
      one of the equally spaced positions of every stratum, so **every batch holds every
      stratum**, exactly.

    Parameters
    ----------
    strata : ndarray of shape (n,) or None
        Stratum code of each sample; ``None``: a plain shuffle (then ``n`` is required).
    batch_size : int
        Target batch size.
    rng : numpy.random.Generator
        The fit's generator (the one seeding rule: derived from ``random_state``).
    n : int, optional
        Number of samples when ``strata`` is None.
    every_stratum : bool, default=False
        Guarantee every stratum in every batch (see above).

    Returns
    -------
    list of ndarray
        Index arrays; together a permutation of ``range(n)``.
    """
    if strata is not None:
        n = len(strata)
    elif n is None:
        raise ValueError("`n` is required when `strata` is None.")
    order, positions = _stratified_positions(strata, n, rng)
    if not every_stratum or positions is None:
        return batches(order, batch_size)
    assert strata is not None  # positions are None without strata
    smallest = int(np.bincount(np.unique(strata, return_inverse=True)[1]).min())
    n_batches = max(1, min(math.ceil(n / batch_size), smallest))
    cuts = np.searchsorted(positions, np.arange(1, n_batches) / n_batches)
    return np.split(order, cuts)


def batches_complete(
    codes: np.ndarray | None, parts: list[np.ndarray], n_codes: int
) -> list[bool]:
    """Whether each batch of ``parts`` holds every one of the ``n_codes`` codes.

    One vectorized count per epoch (``np.add.reduceat`` over the concatenated batches)
    instead of a ``np.unique`` per step.
    """
    if codes is None:
        return [True] * len(parts)
    order = np.concatenate(parts)
    starts = np.cumsum([0] + [len(p) for p in parts[:-1]])
    onehot = np.zeros((len(order), n_codes), dtype=np.int64)
    onehot[np.arange(len(order)), codes[order]] = 1
    counts = np.add.reduceat(onehot, starts, axis=0)
    return cast(list[bool], (counts > 0).all(axis=1).tolist())


EpochLogs = dict[str, float | list[float]]  # per epoch: floats, lists for (K,) logs
StepResult = torch.Tensor | tuple[torch.Tensor, dict[str, torch.Tensor], float]


def predict_from_proba(p1: np.ndarray) -> np.ndarray:
    """Return labels by the threshold convention: 1 iff ``P(y=1) >= 0.5``."""
    return (np.asarray(p1) >= 0.5).astype(np.int64)


def _epoch_mean(total: torch.Tensor, weight: float) -> float | list[float]:
    """Weighted epoch mean of a log: a float, or one float per model of a (K,) log."""
    if total.dim() == 0:
        return float(total) / max(weight, 1e-300)
    return [v / max(weight, 1e-300) for v in total.tolist()]


@dataclass
class AdversaryStep:
    """Adversary-only optimizer steps that the engine runs after each training step.

    The second protocol of otfair's penalties (:mod:`otfair.penalties`): a score penalty
    is a value in the training loss; an *adversary* (a discriminator or critic on scores
    or representations) also has a loss of its own, minimized by its own steps. The
    engine owns those steps as it owns the main one: after the main step (and
    ``after_step``), it runs ``steps`` times ``loss(batch)`` -> ``zero_grad``,
    ``backward``, ``optimizer.step()`` -> ``after``.

    Attributes
    ----------
    loss : callable
        ``loss(batch)`` -> the adversary's loss on the batch (a 0-dim tensor; K
        adversaries of a curve return the sum of their losses, which trains each on its
        own since nothing couples them), or ``None`` to skip this step.
    optimizer : torch.optim.Optimizer
        Optimizer of the adversary's parameters (it may hold others: parameters without
        a gradient are skipped by torch's optimizers).
    steps : int, default=1
        Adversary steps per training step.
    after : callable, optional
        Run after each adversary step (the critic's weight clipping).
    """

    loss: Callable[[Any], torch.Tensor | None]
    optimizer: torch.optim.Optimizer
    steps: int = 1
    after: Callable[[], None] | None = None

    def run(self, batch: Any) -> None:
        """Run this training step's adversary steps on ``batch``."""
        for _ in range(self.steps):
            loss = self.loss(batch)
            if loss is None:
                continue
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()
            if self.after is not None:
                self.after()


def _epoch(
    batches: Iterable[Any],
    step: Callable[[Any], StepResult],
    optimizer: torch.optim.Optimizer,
    after_step: Callable[[Any], None] | None,
    adversary: AdversaryStep | None,
) -> EpochLogs:
    """Run one epoch's steps; return its logs (weighted means over the steps)."""
    sums: dict[str, torch.Tensor] = {}
    total_weight = 0.0
    for batch in batches:
        out = step(batch)
        loss, logs, weight = (out, {}, 1.0) if isinstance(out, torch.Tensor) else out
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if after_step is not None:
            after_step(batch)
        if adversary is not None:
            adversary.run(batch)
        for key, value in {"loss": loss, **logs}.items():
            if key in sums:
                sums[key].add_(value.detach(), alpha=weight)
            else:
                sums[key] = value.detach() * weight
        total_weight += weight
    return {k: _epoch_mean(v, total_weight) for k, v in sums.items()}


def run_epochs(
    epochs: int,
    batches: Callable[[int], Iterable[Any]],
    step: Callable[[Any], StepResult],
    *,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler | None = None,
    after_step: Callable[[Any], None] | None = None,
    adversary: AdversaryStep | None = None,
    on_epoch_end: Callable[[int, EpochLogs], None] | None = None,
    stop: Callable[[EpochLogs], bool] | None = None,
    verbose: bool = False,
    desc: str = "training",
) -> list[EpochLogs]:
    """Run ``epochs`` passes of mini-batch training; return the logs of each epoch.

    Every optimizer step of otfair's torch estimators is made here: the main step on
    each batch and, with ``adversary``, the adversary's own steps after it.

    Parameters
    ----------
    epochs : int
        Number of epochs.
    batches : callable
        ``batches(epoch)`` -> iterable of batches (anything ``step`` understands).
    step : callable
        ``step(batch)`` -> the loss to minimize, or ``(loss, logs, weight)`` with named
        0-dim tensors to report and the batch's weight in the epoch mean (default: 1).
        A log of shape (K,) (one value per stacked model) is reported as a list.
        The engine then runs ``zero_grad``, ``backward`` and ``optimizer.step()``.
    optimizer : torch.optim.Optimizer
    scheduler : LRScheduler, optional
        Stepped once per epoch.
    after_step : callable, optional
        ``after_step(batch)`` after each main optimizer step (weight clipping).
    adversary : AdversaryStep, optional
        Adversary-only steps run after ``after_step`` on the same batch.
    on_epoch_end : callable, optional
        ``on_epoch_end(epoch, logs)``.
    stop : callable, optional
        ``stop(logs)`` after each epoch: ``True`` ends the training (convergence,
        :class:`StopOnPlateau`); the history then holds fewer than ``epochs`` entries.
    verbose : bool, default=False
        Show a progress bar with the epoch's mean loss.
    desc : str
        Label of the progress bar.

    Returns
    -------
    list of dict
        Per epoch: ``"loss"`` and the step's named logs (weighted means over the
        epoch's steps; lists for (K,) logs) and ``"time_s"`` (wall seconds).
    """
    history: list[EpochLogs] = []
    with EpochProgress(verbose, int(epochs), desc) as progress:
        for epoch in range(int(epochs)):
            start = time.perf_counter()
            logs_epoch = _epoch(batches(epoch), step, optimizer, after_step, adversary)
            if scheduler is not None:
                scheduler.step()
            logs_epoch["time_s"] = time.perf_counter() - start
            history.append(logs_epoch)
            progress.advance(logs_epoch)
            if on_epoch_end is not None:
                on_epoch_end(epoch, logs_epoch)
            if stop is not None and stop(logs_epoch):
                break
    return history


class StopOnPlateau:
    """Convergence of mini-batch training: scikit-learn's ``MLPClassifier`` rule.

    After each epoch, a model's epoch-mean objective that is not below its best so far by
    at least ``tol`` counts one epoch without improvement; an improvement resets the
    count. Training stops when every model (one, or the K of a stacked curve: the
    ``"losses"`` log) has counted ``n_iter_no_change`` such epochs in a row.
    ``every_epoch[k]`` True exempts model ``k`` (it trains every epoch, so the training
    runs to its cap): a minimax objective (a penalty with an adversary) rises while the
    adversary catches up, and the rule stopped such fits mid-game, below the constant.

    A model of a stacked curve that converges before the others is done: ``converged_at``
    records its epoch (1-based; None while it trains) and ``on_converged(k, epoch)``, when
    set, is called then, so that the curve can keep the model as it is at that epoch,
    where a separate fit of it stops, while the others train on (the estimators' curves
    also freeze it there, :meth:`otfair.models.stacked.StackedLayers.freeze`, so that its
    later epochs cost no products).

    Examples
    --------
    >>> stop = StopOnPlateau(tol=0.1, n_iter_no_change=2)
    >>> [stop({"loss": v}) for v in (1.0, 0.5, 0.45, 0.44)]
    [False, False, False, True]
    >>> curve = StopOnPlateau(tol=0.1, n_iter_no_change=1)
    >>> [curve({"losses": v}) for v in ([1.0, 1.0], [0.95, 0.5], [0.9, 0.45])]
    [False, False, True]
    >>> curve.converged_at
    [2, 3]
    """

    def __init__(
        self,
        tol: float,
        n_iter_no_change: int,
        on_converged: Callable[[int, int], object] | None = None,
        every_epoch: Sequence[bool] = (),
    ) -> None:
        self.tol = float(tol)
        self.n_iter_no_change = int(n_iter_no_change)
        self.on_converged = on_converged
        #: models that train every epoch, never "converged": a game's objective (a
        #: penalty with an adversary rises as the adversary learns), which no plateau reads
        self.every_epoch = tuple(bool(v) for v in every_epoch)
        self.best: list[float] = []
        self.count: list[int] = []
        self.converged_at: list[int | None] = []
        self.epoch = 0

    def __call__(self, logs: EpochLogs) -> bool:
        """Record an epoch's logs; return whether the training has converged."""
        losses = logs["losses"] if "losses" in logs else logs["loss"]
        values = [float(v) for v in (losses if isinstance(losses, list) else [losses])]
        if not self.best:
            self.best = [math.inf] * len(values)
            self.count = [0] * len(values)
            self.converged_at = [None] * len(values)
        self.epoch += 1
        for k, value in enumerate(values):
            if (
                self.converged_at[k] is not None
                or k < len(self.every_epoch)
                and self.every_epoch[k]
            ):
                continue  # done (its later epochs are not its fit's), or a game's
            self.count[k] = self.count[k] + 1 if value > self.best[k] - self.tol else 0
            self.best[k] = min(self.best[k], value)
            if self.count[k] >= self.n_iter_no_change:
                self.converged_at[k] = self.epoch
                if self.on_converged is not None:
                    self.on_converged(k, self.epoch)
        return all(epoch is not None for epoch in self.converged_at)


@dataclass(frozen=True)
class TrainLoop:
    """How FairClassifier optimizes one fit or one stacked curve (built once per fit).

    The settings every batch scheme of :class:`FairClassifier` shares, run on the one
    engine :func:`run_epochs`.
    """

    epochs: int
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LRScheduler | None
    rng: np.random.Generator  # the fit's generator: batch orders, FTM's pairing order
    verbose: bool = False
    stop: Callable[[EpochLogs], bool] | None = None  # convergence (StopOnPlateau)

    def run(
        self,
        batches: Callable[[int], Iterable[Any]],
        step: Callable[[Any], StepResult],
        adversary: AdversaryStep | None = None,
        tag: str = "",
    ) -> list[EpochLogs]:
        """Run the epochs on the engine; return the epoch logs (progress bar tagged)."""
        return run_epochs(
            self.epochs,
            batches,
            step,
            optimizer=self.optimizer,
            scheduler=self.scheduler,
            adversary=adversary,
            stop=self.stop,
            verbose=self.verbose,
            desc=f"FairClassifier{tag}",
        )


def epoch_losses(history: list[EpochLogs], key: str = "loss") -> list[float | list[float]]:
    """Return the ``key`` log of each epoch of a :meth:`TrainLoop.run` history."""
    return [h[key] for h in history]
