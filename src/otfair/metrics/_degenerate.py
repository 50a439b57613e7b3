"""The one rule that calls a run's predictions degenerate ("constant").

A model that predicts the same class for every test row, or whose scores do not vary,
has trivially small fairness gaps and an uninformative accuracy (the majority rate): a
trade-off plot or a comparison that shows it as a fair point misleads. Sweep stores,
reports, ``otfair fit`` and the reproduction reports mark such a run ``constant`` with
this function, so that one rule decides everywhere.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "CONSTANT_STD",
    "DegeneratePredictorWarning",
    "UndefinedMetricWarning",
    "degenerate_warnings",
    "is_constant_prediction",
]

#: Scores whose standard deviation is below this are constant.
CONSTANT_STD = 1e-6


def is_constant_prediction(y_pred_or_scores: Any, *, threshold: float | None = 0.5) -> bool:
    r"""Return whether predictions or scores are degenerate: one class, or constant.

    With scores :math:`f(x_i)` of the test rows, the run is *constant* when

    .. math:: \operatorname{std}_i f(x_i) < 10^{-6}
       \quad\text{or}\quad
       \mathbf{1}[f(x_i) \ge \tau] \text{ is the same for every } i,

    the second condition applying to classification scores (``threshold`` :math:`\tau`,
    the estimators' convention :math:`P(y=1) \ge 0.5`). Hard labels (0/1, or any two
    values, such as 1/2) are constant when only one value occurs; pass ``threshold=None`` for
    regression predictions (only the spread is tested).

    Parameters
    ----------
    y_pred_or_scores : array-like of shape (n_samples,)
        Predicted labels, positive-class scores, or regression predictions.
    threshold : float or None, default=0.5
        Decision threshold of classification scores; ``None`` tests the spread only.

    Returns
    -------
    bool
        ``True`` for a degenerate prediction; ``False`` for an empty input.

    Examples
    --------
    >>> is_constant_prediction([0.2, 0.3, 0.45])  # every row below 0.5: one class
    True
    >>> is_constant_prediction([0.2, 0.7])
    False
    >>> is_constant_prediction([1.5, 1.5 + 1e-9], threshold=None)
    True
    """
    values = np.asarray(y_pred_or_scores)
    if values.size == 0:
        return False
    if values.dtype.kind not in "biuf":  # string labels: one distinct value
        return bool(np.unique(values.ravel()).size < 2)
    values = values.astype(float).ravel()
    finite = values[np.isfinite(values)]  # NaN predictions (a diverged model): degenerate
    if finite.size == 0 or float(np.std(finite)) < CONSTANT_STD:
        return True
    if threshold is None:
        return False
    if np.unique(values).size == 2 and (values.min() < 0 or values.max() > 1):
        return False  # hard labels of two values (1/2): not scores to threshold
    labels = values >= threshold
    return bool(labels.all() or not labels.any())


class DegeneratePredictorWarning(UserWarning):
    """A classifier's scores carry no usable signal, so its fairness gaps mislead.

    Raised by :func:`fairness_report` when the predictor puts every row in one class at
    the threshold (:func:`is_constant_prediction`: the gaps are then trivially 0 and the
    accuracy is a base rate), or when its scores rank no better than chance (ROC AUC at
    or below 0.5: an uninformative or inverted model). A sweep that records such runs
    as ``constant`` may silence it with :func:`warnings.filterwarnings`.

    Examples
    --------
    >>> import warnings
    >>> from otfair.metrics import fairness_report
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = fairness_report([0, 1, 0, 1], [0.2, 0.3, 0.2, 0.4],
    ...                         sensitive_features=[0, 0, 1, 1], min_group_size=0)
    >>> [w.category.__name__ for w in caught]
    ['DegeneratePredictorWarning']
    """


class UndefinedMetricWarning(UserWarning):
    """A measure of the panel is undefined on this sample and reported as NaN.

    Raised by :func:`fairness_report` when ``y_true`` holds a single class: the ROC AUC
    (and the TPR or FPR gaps) need both classes.

    Examples
    --------
    >>> import warnings
    >>> from otfair.metrics import UndefinedMetricWarning, fairness_report
    >>> with warnings.catch_warnings():  # e.g. a one-class test fold, expected
    ...     warnings.simplefilter("ignore", UndefinedMetricWarning)
    ...     rep = fairness_report([1, 1, 1, 1], [0.2, 0.7, 0.3, 0.9],
    ...                           sensitive_features=[0, 0, 1, 1], min_group_size=0)
    >>> rep.summary["auc"], rep.notes[0].startswith("`y_true` holds one class")
    (nan, True)
    """


def degenerate_warnings(
    y: np.ndarray, score: np.ndarray, tau: float, auc: float
) -> list[tuple[str, type[UserWarning]]]:
    """Return the warnings a classification panel is due (one-class labels, a bad model)."""
    found: list[tuple[str, type[UserWarning]]] = []
    if y.min() == y.max():
        found.append(
            (
                f"`y_true` holds one class only (every label is {int(y[0])}): the ROC AUC is "
                "undefined (NaN), and so is the TPR or the FPR gap",
                UndefinedMetricWarning,
            )
        )
    reasons = []
    if is_constant_prediction(score, threshold=tau):
        side = "positive" if score.min() >= tau else "negative"
        reasons.append(
            f"it predicts the {side} class for every row at threshold {tau:g} (the gaps "
            "are trivially 0 and the accuracy is the base rate)"
        )
    if not np.isnan(auc) and auc <= 0.5:
        reasons.append(f"its scores rank no better than chance (ROC AUC {auc:.3f} <= 0.5)")
    if reasons:
        found.append(
            (
                "degenerate predictor: "
                + "; ".join(reasons)
                + ". Its fairness gaps say nothing about a useful model",
                DegeneratePredictorWarning,
            )
        )
    return found
