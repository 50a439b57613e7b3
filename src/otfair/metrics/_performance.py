r"""Predictive performance: accuracy, ROC AUC and log loss; MSE and R^2 for regression.

Thin wrappers of scikit-learn's ``accuracy_score``, ``roc_auc_score``, ``log_loss``,
``mean_squared_error`` and ``r2_score`` behind otfair's validation (the same errors as
the fairness measures, naming the argument) and conventions: a score is thresholded as
:math:`1[f \ge \tau]`, AUC with one class and R^2 of a constant target raise instead of
returning NaN or a warning.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn import metrics as sk

from otfair.metrics._checks import check_threshold, validate_metric_input
from otfair.metrics._constraints import THRESHOLD
from otfair.metrics._docs import fill_doc
from otfair.utils import validate_params


@fill_doc
@validate_params({"threshold": THRESHOLD})
def accuracy(y_true: Any, y_score: Any, *, threshold: float = 0.5, pos_label: Any = None) -> float:
    r"""Accuracy of the hard predictions :math:`1[f(x) \ge \tau]`.

    .. math::

        \mathrm{Acc} = \frac1n \sum_i 1\bigl[\,1[f(x_i) \ge \tau] = y_i\bigr].

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels in {0, 1}.
    y_score : array-like of shape (n,)
        Probability scores in [0, 1] (hard 0/1 predictions are valid scores).
    threshold : float, default=0.5
        Decision threshold :math:`\tau`.
    {pos_label}

    Returns
    -------
    float
        The share of correct hard predictions, in [0, 1].

    {examples_scores}
    >>> accuracy(y, p)  # 1[p >= 0.5] is right on 6 of every 8 rows
    0.75
    >>> accuracy(np.where(y == 1, "yes", "no"), p, pos_label="yes")
    0.75
    """
    y, score, *_ = validate_metric_input(
        y_true, y_score, pos_label=pos_label, probabilities=True, groups="none"
    )
    return accuracy_unchecked(y, score, check_threshold(threshold))


def accuracy_unchecked(y: np.ndarray, score: np.ndarray, threshold: float) -> float:
    """:func:`accuracy` of already validated arrays."""
    return float(sk.accuracy_score(y, (score >= threshold).astype(np.int64)))


@fill_doc
def roc_auc(y_true: Any, y_score: Any, *, pos_label: Any = None) -> float:
    r"""Area under the ROC curve (Mann-Whitney form, ties count one half).

    .. math::

        \mathrm{AUC} = \frac{1}{n_+ n_-} \sum_{i: y_i=1} \sum_{j: y_j=0}
        \Bigl(1[f_i > f_j] + \tfrac12 1[f_i = f_j]\Bigr)
        = \frac{R_+ - n_+(n_+ + 1)/2}{n_+ n_-},

    with :math:`R_+` the sum of the mid-ranks of the positives.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels; both classes must occur.
    y_score : array-like of shape (n,)
        Scores; only their order matters, any real values are accepted.
    {pos_label}

    Returns
    -------
    float
        The probability that a positive outranks a negative, in [0, 1].

    {examples_scores}
    >>> roc_auc(y, p)  # 15 of the 16 (positive, negative) pairs are ordered
    0.9375
    """
    y, score, *_ = validate_metric_input(y_true, y_score, pos_label=pos_label, groups="none")
    if y.min() == y.max():
        raise ValueError("ROC AUC is undefined: `y_true` contains only one class.")
    return float(sk.roc_auc_score(y, score))


@fill_doc
def log_loss(y_true: Any, y_score: Any, *, pos_label: Any = None) -> float:
    r"""Binary cross-entropy of the probability scores.

    .. math::

        \mathrm{LL} = -\frac1n \sum_i \bigl[y_i \log p_i + (1 - y_i) \log(1 - p_i)\bigr],

    with :math:`p_i` clipped to :math:`[\epsilon, 1 - \epsilon]`, :math:`\epsilon` the
    float64 machine epsilon (as scikit-learn does), so that a confident mistake costs
    about 36 instead of infinity.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels in {0, 1}.
    y_score : array-like of shape (n,)
        Probabilities of the positive class, in [0, 1].
    {pos_label}

    Returns
    -------
    float
        The mean cross-entropy (non-negative).

    Examples
    --------
    >>> round(log_loss([1, 0], [0.8, 0.4]), 4)  # -(log 0.8 + log 0.6) / 2
    0.367
    """
    y, p, *_ = validate_metric_input(
        y_true, y_score, pos_label=pos_label, probabilities=True, groups="none"
    )
    return log_loss_unchecked(y, p)


def log_loss_unchecked(y: np.ndarray, p: np.ndarray) -> float:
    """:func:`log_loss` of already validated arrays (float64 probabilities)."""
    return float(sk.log_loss(y, np.asarray(p, dtype=np.float64), labels=[0, 1]))


@fill_doc
def mean_squared_error(y_true: Any, y_pred: Any) -> float:
    r"""Mean squared error :math:`\frac1n \sum_i (\hat y_i - y_i)^2`.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Real targets.
    y_pred : array-like of shape (n,)
        Predictions.

    Returns
    -------
    float
        The mean squared error (non-negative).

    {examples_regression}
    >>> mean_squared_error(y, pred)  # (0.25 + 0 + 0 + 1) / 4
    0.3125
    """
    y, pred, *_ = validate_metric_input(
        y_true, y_pred, labels="real", groups="none", score_name="y_pred"
    )
    return float(sk.mean_squared_error(y, pred))


@fill_doc
def r2_score(y_true: Any, y_pred: Any) -> float:
    r"""Coefficient of determination.

    .. math::

        R^2 = 1 - \frac{\sum_i (y_i - \hat y_i)^2}{\sum_i (y_i - \bar y)^2}.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Real targets; they must not all be equal.
    y_pred : array-like of shape (n,)
        Predictions.

    Returns
    -------
    float
        At most 1 (negative when worse than predicting the mean).

    {examples_regression}
    >>> r2_score(y, pred)  # 1 - 0.3125 / 1.25
    0.75
    """
    y, pred, *_ = validate_metric_input(
        y_true, y_pred, labels="real", groups="none", score_name="y_pred"
    )
    if np.all(y == y[0]):
        raise ValueError("R^2 is undefined: `y_true` is constant.")
    return float(sk.r2_score(y, pred))
