r"""How AdapFair's flows (and its base classifier) are trained: seeds, batches, stopping.

Every generator of a fit derives from one seed (:func:`fit_seed`); the batches are
stratified by (group, label) cell with every cell in every batch
(:func:`train_stratified`).

**Early stopping** (``early_stopping=True``, the default of
:class:`~otfair.estimators.AdapFairPreprocessor` and
:class:`~otfair.estimators.AdapFairClassifier`): the flows are trained on the paper's
objective (AdapFair eq. (1))

.. math::

    L(T) = \lambda\,\mathrm{CE}\big(f(T_s(x)), y\big)
    + (1 - \lambda)\, D\big(f(T_0(x))\,|\,s=0,\ f(T_1(x))\,|\,s=1\big),

whose flows are expressive enough to fit the training rows' noise: on wide one-hot
data (Diabetes) the test accuracy falls as the epochs go while the training objective
keeps improving (docs/adapfair.md). A stratified
``validation_fraction`` of the rows (by group x label cell, each cell on both sides;
:func:`otfair.estimators._early_stopping.validation_split`) is held out, :math:`L` is
measured on it after each epoch, the training stops once it has not improved by ``tol``
for ``n_iter_no_change`` epochs, and the flows end with the parameters of its best
epoch (scikit-learn's ``MLPClassifier(early_stopping=True)``). :math:`L` is measured on
the whole held-out set or, above ``HELD_OUT_CHUNK`` rows, as the size-weighted mean over
fixed stratified chunks of it (every cell in each; the same chunks every epoch: the
sharp Sinkhorn distance holds a dense cost matrix). ``epochs`` is the cap;
reaching it while :math:`L` still improves warns (``ConvergenceWarning``). Data too
small to hold out a row of every cell train on all rows for ``epochs``, as
``early_stopping=False`` (the paper's protocol, the lab's setting) does.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from otfair.estimators._early_stopping import StopOnHeldOut, validation_split
from otfair.estimators._training import EpochLogs, run_epochs, stratified_batches
from otfair.utils import draw_seed, torch_generator

__all__ = [
    "check_preprocessed_fit",
    "fit_generators",
    "fit_seed",
    "held_out_stop",
    "train_stratified",
]

#: held-out rows measured at once: a larger held-out set is cut into fixed stratified
#: chunks of about this size (the sharp Sinkhorn distance holds a dense n0 x n1 cost)
HELD_OUT_CHUNK = 4096


def fit_seed(random_state: Any) -> int:
    """Return the seed of an AdapFair fit: an int as is, otherwise one drawn by it.

    An int (the recorded runs' seeding) is the seed itself; ``None``, a ``RandomState``
    or a ``Generator`` gives :func:`otfair.utils.draw_seed` of it. Every generator of the
    fit derives from this seed: the batch orders, the flows' masks and initial weights.
    """
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return int(random_state)
    return draw_seed(random_state)


def fit_generators(random_state: Any) -> tuple[int, np.random.Generator]:
    """Return the fit's seed (:func:`fit_seed`) and the generator of its batch orders."""
    seed = fit_seed(random_state)
    gen = torch_generator(seed)
    return seed, np.random.default_rng(int(torch.randint(2**31, (1,), generator=gen)))


def train_stratified(
    cells: np.ndarray,
    rng: np.random.Generator,
    step: Callable[[np.ndarray], Any],
    optimizer: torch.optim.Optimizer,
    *,
    epochs: int,
    batch_size: int,
    verbose: bool,
    desc: str,
    stop: Callable[[EpochLogs], bool] | None = None,
) -> list[EpochLogs]:
    """Run ``epochs`` of ``step`` on batches stratified by ``cells``, each in every batch.

    ``step`` receives a batch's positions in ``cells``; ``stop(logs)`` after each epoch
    may end the training early (:class:`~otfair.estimators._early_stopping.StopOnHeldOut`).
    """
    return run_epochs(
        epochs,
        lambda epoch: stratified_batches(cells, batch_size, rng, every_stratum=True),
        step,
        optimizer=optimizer,
        stop=stop,
        verbose=verbose,
        desc=desc,
    )


def held_out_stop(
    module: torch.nn.Module,
    objective: Callable[[torch.Tensor], torch.Tensor],
    cells: np.ndarray,
    settings: Any,
    rng: np.random.Generator,
    device: torch.device,
) -> tuple[np.ndarray, StopOnHeldOut | None]:
    """Return the training rows and the early stop on the held-out rows (module docstring).

    ``objective(rows)`` is the training objective on the rows ``rows`` (a tensor of
    indices); ``settings`` has ``early_stopping``, ``validation_fraction``, ``tol`` and
    ``n_iter_no_change``. Without early stopping, or when ``cells`` cannot spare a row of
    every cell, every row trains and the stop is None; ``rng`` is drawn from (the split's
    seed) only when early stopping is on, so that ``early_stopping=False`` draws the
    batches of the fits before it existed.
    """
    rows = np.arange(len(cells))
    if not settings.early_stopping:
        return rows, None
    seed = int(rng.integers(2**31))
    split = validation_split(cells, float(settings.validation_fraction), seed)
    if split is None:
        return rows, None
    rows, held = split
    chunks = [held]  # a large held-out set: fixed stratified chunks (dense distances)
    if len(held) > HELD_OUT_CHUNK:
        parts = stratified_batches(
            cells[held], HELD_OUT_CHUNK, np.random.default_rng(seed), every_stratum=True
        )
        chunks = [held[part] for part in parts]
    held_t = [torch.as_tensor(chunk, device=device) for chunk in chunks]

    def score() -> float:
        with torch.no_grad():
            total = sum(len(idx) * float(objective(idx)) for idx in held_t)
        return total / len(held)

    stop = StopOnHeldOut(module, score, float(settings.tol), int(settings.n_iter_no_change))
    return rows, stop


def check_preprocessed_fit(
    model: Any,
    X: np.ndarray,
    y: np.ndarray,
    codes: np.ndarray,
    *,
    strength: float,
    raw_scale: bool,
) -> None:
    """Hold a fitted preprocessor's pipeline (flows, frozen classifier) against the constant.

    :func:`~otfair.estimators._torch_base.check_against_constant` on the training rows
    (``y`` 0/1, ``codes`` the group codes of ``model.groups_``): a training accuracy or
    cross-entropy below the base rate's, or one predicted class for every row, warns
    (``FitQualityWarning``), naming the features' scale first when ``raw_scale``. When
    the frozen classifier alone, on the untouched features, is no more accurate than the
    constant, the message says so: the flows cannot teach it the labels.
    """
    from otfair.estimators._torch_base import check_against_constant, constant_baseline

    p1 = model.predict_proba(X, sensitive_features=model.groups_[codes])[:, 1]
    y = np.asarray(y, dtype=np.float64)
    alone = _frozen_accuracy(model, X, y)
    weak = alone <= constant_baseline(y)[1] + 1e-12
    model.fit_quality_warning_ = check_against_constant(
        _logits(p1),
        y,
        owner=type(model).__name__,
        strength=strength,
        penalized=strength > 0 and not weak,
        classes=model.classes_,
        remedy=(
            f"its frozen `classifier` alone is no better on these rows, accuracy {alone:.4f}:"
            " train it first, e.g. with train_base_classifier"
            if weak
            else "raise `epochs`"
        ),
        raw_scale=raw_scale,
    )


def _logits(p1: np.ndarray) -> np.ndarray:
    """Logits of probabilities, saturated ones clipped to 1e-15 from 0 and 1."""
    p1 = np.clip(np.asarray(p1, dtype=np.float64), 1e-15, 1.0 - 1e-15)
    return np.log(p1) - np.log1p(-p1)


def _frozen_accuracy(model: Any, X: np.ndarray, y: np.ndarray) -> float:
    """Training accuracy of the frozen classifier on the features without the flows."""
    from otfair.estimators.preprocessing.adapfair_scorer import frozen

    device = next(model.flows_.parameters()).device
    with torch.no_grad(), frozen(model.scorer_):  # eval mode: batch-norm statistics stay
        scores = model.scorer_(torch.as_tensor(X, dtype=torch.float32, device=device))
    predicted = (scores.double().cpu().numpy().reshape(-1) >= 0).astype(np.float64)
    return float(np.mean(predicted == y))
