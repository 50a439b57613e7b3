"""Early stopping on held-out rows: scikit-learn's ``MLPClassifier(early_stopping=True)``.

An unpenalized Adam fit with ``early_stopping`` sets aside a stratified
``validation_fraction`` of the training rows (:func:`validation_split`), trains on the
rest, and after each epoch scores the model on the held-out rows
(:class:`StopOnValidation`): training stops when the held-out cross-entropy has not
improved by ``tol`` for ``n_iter_no_change`` epochs, and the model ends with the
parameters of its best epoch, as scikit-learn's ``MLPClassifier`` restores its best
coefficients. The held-out score is the cross-entropy (not the accuracy, scikit-learn's
choice for ``MLPClassifier``; ``HistGradientBoostingClassifier`` also stops on the
loss): it is smooth, so a small held-out set ranks the epochs reliably.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from sklearn.model_selection import train_test_split
from torch import nn
from torch.nn import functional as F

__all__ = ["StopOnHeldOut", "StopOnValidation", "validation_split"]


def validation_split(
    y: np.ndarray, fraction: float, seed: int
) -> tuple[np.ndarray, np.ndarray] | None:
    """Return ``(train, held_out)`` row indices, stratified by ``y``, or ``None``.

    ``held_out`` holds ``fraction`` of the rows, and at least one of each class, as
    scikit-learn's ``train_test_split`` with ``stratify=y``. ``None`` when the data are
    too small for that (a class with a single row, or no room for each class on both
    sides): such a fit trains on all its rows, without early stopping.

    Examples
    --------
    >>> train, held = validation_split(np.array([0, 1] * 10), 0.2, seed=0)
    >>> len(train), len(held), np.bincount(np.array([0, 1] * 10)[held]).tolist()
    (16, 4, [2, 2])
    >>> validation_split(np.array([0, 0, 0, 1]), 0.1, seed=0) is None
    True
    """
    counts = np.unique(y, return_counts=True)[1]
    n_held = max(int(round(fraction * len(y))), len(counts))
    if counts.min() < 2 or len(y) - n_held < len(counts):
        return None
    rows = np.arange(len(y))
    train, held = train_test_split(rows, test_size=n_held, stratify=y, random_state=seed)
    return np.sort(train), np.sort(held)


class StopOnHeldOut:
    """Stop when a held-out score stops improving; keep the best epoch's parameters.

    Called after each epoch (a ``stop`` of
    :func:`otfair.estimators._training.run_epochs`), it calls ``score()`` (lower is
    better: a loss on rows the training does not see), keeps a copy of ``module``'s
    parameters at the best epoch, and returns ``True`` once the score has not improved on
    the best by at least ``tol`` for ``n_iter_no_change`` epochs in a row (scikit-learn's
    ``MLPClassifier(early_stopping=True)`` rule). :meth:`restore` puts the best epoch's
    parameters back.

    Parameters
    ----------
    module : torch.nn.Module
        What is trained (its ``state_dict`` is what :meth:`restore` restores).
    score : callable
        ``score() -> float``, the held-out loss of ``module`` as it is now.
    tol : float
        Improvement of the score that resets the count.
    n_iter_no_change : int
        Epochs without such an improvement that end the training.

    Examples
    --------
    >>> m = torch.nn.Linear(1, 1)
    >>> values = iter([1.0, 0.5, 0.6, 0.7])
    >>> stop = StopOnHeldOut(m, lambda: next(values), tol=0.0, n_iter_no_change=2)
    >>> [stop(None) for _ in range(4)], stop.best_epoch
    ([False, False, False, True], 2)
    """

    def __init__(
        self, module: nn.Module, score: Callable[[], float], tol: float, n_iter_no_change: int
    ) -> None:
        self.model = module
        self._score = score
        self.tol = float(tol)
        self.n_iter_no_change = int(n_iter_no_change)
        self.best = float("inf")
        self.count = 0
        self.best_epoch = 0
        self.scores: list[float] = []
        self._best_state: dict[str, torch.Tensor] | None = None

    def score(self) -> float:
        """Return the held-out score of the module as it is now (lower is better)."""
        return float(self._score())

    @property
    def stopped(self) -> bool:
        """Whether the last call ended the training (the score stopped improving)."""
        return self.count >= self.n_iter_no_change

    def __call__(self, logs: Any) -> bool:
        """Score the epoch just trained; return whether the training should stop."""
        value = self.score()
        self.scores.append(value)
        if value < self.best:
            self._best_state = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
            self.best_epoch = len(self.scores)
        self.count = self.count + 1 if value > self.best - self.tol else 0
        self.best = min(self.best, value)
        return self.stopped

    def restore(self) -> None:
        """Load the parameters of the best epoch into the module (no-op before any epoch)."""
        if self._best_state is not None:
            self.model.load_state_dict(self._best_state)


class StopOnValidation(StopOnHeldOut):
    """Stop when the held-out cross-entropy stops improving; keep the best parameters.

    :class:`StopOnHeldOut` with the score of an unpenalized classifier: ``model``'s (one
    model: ``forward_one`` of a :class:`otfair.models.StackedMLP`) mean cross-entropy on
    the held-out rows.

    Parameters
    ----------
    model : torch.nn.Module
        The model being trained (its ``forward_one(X)`` returns logits of shape (n, 1)).
    X : torch.Tensor of shape (m, d)
        Held-out features.
    y : torch.Tensor of shape (m,)
        Held-out 0/1 labels (float).
    tol : float
        Improvement of the held-out cross-entropy that resets the count.
    n_iter_no_change : int
        Epochs without such an improvement that end the training.
    """

    def __init__(
        self, model: nn.Module, X: torch.Tensor, y: torch.Tensor, tol: float, n_iter_no_change: int
    ) -> None:
        super().__init__(model, self._cross_entropy, tol, n_iter_no_change)
        self.X = X
        self.y = y

    def _cross_entropy(self) -> float:
        """Return the model's mean cross-entropy on the held-out rows."""
        forward: Any = getattr(self.model, "forward_one", self.model)
        with torch.no_grad():
            logits = forward(self.X)[:, 0]
            return float(F.binary_cross_entropy_with_logits(logits, self.y))
