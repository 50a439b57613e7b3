"""Group-parity gaps: demographic parity, equalized odds and accuracy parity.

Binary sensitive attributes give the two-group gaps of the papers; with more groups (a
categorical attribute, or several columns combined into intersectional groups) every gap
is the largest pairwise difference, i.e. ``max_g r_g - min_g r_g`` of the group rates.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from otfair.metrics._checks import (
    check_threshold,
    group_means,
    max_pairwise_gap,
    prepare_binary,
    prepare_regression,
    prepare_scores_groups,
    require_defined,
)
from otfair.metrics._constraints import AGG, GROUP_SIZE, THRESHOLD
from otfair.utils import MIN_GROUP_SIZE, validate_params


@validate_params({"threshold": THRESHOLD, "min_group_size": GROUP_SIZE})
def demographic_parity_gap(
    y_true: Any,
    y_score: Any,
    *,
    sensitive_features: Any,
    threshold: float = 0.5,
    pos_label: Any = None,
    min_group_size: int = MIN_GROUP_SIZE,
) -> float:
    r"""Demographic parity gap of hard predictions :math:`\hat Y = 1[f(X) \ge \tau]`.

    .. math::

        \mathrm{DP} = \max_{a, b}\;
        \bigl| P(\hat Y = 1 \mid S = a) - P(\hat Y = 1 \mid S = b) \bigr|,

    the two-group form :math:`|P(\hat Y=1|S=0) - P(\hat Y=1|S=1)|` used by all four papers
    (FTM paper §5, "DP").

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels in {0, 1}. Not used by the measure; validated for a uniform
        calling convention (fairlearn's).
    y_score : array-like of shape (n,)
        Probability scores in [0, 1]; hard labels 0/1 are scores too.
    sensitive_features : array-like of shape (n,) or (n, k)
        Group membership; several columns define intersectional groups.
    threshold : float, default=0.5
        Decision threshold :math:`\tau`.
    pos_label : int, float, bool or str, optional
        The positive class of ``y_true`` (e.g. ``"yes"``), and of predicted labels passed
        as ``y_score`` (``pipe.predict``'s strings are mapped to 1 where equal to it);
        without it labels must be 0/1.
    min_group_size : int, default=30
        A group with fewer rows is left out of the gap when at least two groups reach
        the size, as in :func:`~otfair.metrics.fairness_report` (a ``UserWarning``
        names it); 0 keeps every group. Default ``otfair.utils.MIN_GROUP_SIZE``.

    Returns
    -------
    float
        The gap, in [0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> y = np.repeat([1, 0, 1, 0, 1, 0, 1, 0], 10)  # each row ten times: groups of 40
    >>> p = np.repeat([0.9, 0.6, 0.8, 0.3, 0.7, 0.2, 0.4, 0.1], 10)
    >>> s = np.repeat([0, 0, 0, 0, 1, 1, 1, 1], 10)
    >>> demographic_parity_gap(y, p, sensitive_features=s)  # selection rates 0.75 and 0.25
    0.5
    >>> labels = np.where(p >= 0.5, "yes", "no")  # predicted labels, e.g. pipe.predict(X)
    >>> demographic_parity_gap(np.where(y == 1, "yes", "no"), labels, sensitive_features=s,
    ...                        pos_label="yes")
    0.5
    """
    _, score, codes, groups = prepare_binary(
        y_true, y_score, sensitive_features, pos_label=pos_label, min_group_size=min_group_size
    )
    tau = check_threshold(threshold)
    rates, _ = group_means((score >= tau).astype(np.float64), codes, len(groups))
    return max_pairwise_gap(rates)


@validate_params({"min_group_size": GROUP_SIZE})
def mean_score_gap(
    y_true: Any,
    y_score: Any,
    *,
    sensitive_features: Any,
    pos_label: Any = None,
    min_group_size: int = MIN_GROUP_SIZE,
) -> float:
    r"""Gap between the groups' mean scores ("soft DP", :math:`\Delta\mathrm{DP}` in FTM §5).

    .. math::

        \Delta\mathrm{DP} = \max_{a, b}\; \bigl| E[f(X) \mid S = a] - E[f(X) \mid S = b] \bigr|.

    Scores are not range-checked, so the measure also applies to regression outputs.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Targets (only their length is checked).
    y_score : array-like of shape (n,)
        Scores or predictions.
    sensitive_features : array-like of shape (n,) or (n, k)
        Group membership; several columns define intersectional groups.
    pos_label : int, float, bool or str, optional
        The positive class of ``y_true`` (e.g. ``"yes"``), and of predicted labels passed
        as ``y_score`` (``pipe.predict``'s strings are mapped to 1 where equal to it);
        without it labels must be 0/1.
    min_group_size : int, default=30
        A group with fewer rows is left out of the gap when at least two groups reach
        the size, as in :func:`~otfair.metrics.fairness_report` (a ``UserWarning``
        names it); 0 keeps every group. Default ``otfair.utils.MIN_GROUP_SIZE``.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> y = np.repeat([1, 0, 1, 0, 1, 0, 1, 0], 10)  # each row ten times: groups of 40
    >>> p = np.repeat([0.9, 0.6, 0.8, 0.3, 0.7, 0.2, 0.4, 0.1], 10)
    >>> s = np.repeat([0, 0, 0, 0, 1, 1, 1, 1], 10)
    >>> round(mean_score_gap(y, p, sensitive_features=s), 6)  # mean scores 0.65 and 0.35
    0.3
    """
    score, codes, groups = prepare_scores_groups(
        y_true, y_score, sensitive_features, pos_label=pos_label, min_group_size=min_group_size
    )
    means, _ = group_means(score, codes, len(groups))
    return max_pairwise_gap(means)


def _conditional_rates(
    y: np.ndarray, score: np.ndarray, codes: np.ndarray, n_groups: int, tau: float, label: int
) -> np.ndarray:
    """Per-group P(Yhat = 1 | S = g, Y = label); NaN for groups without such samples."""
    rates, _ = group_means((score >= tau).astype(np.float64), codes, n_groups, mask=y == label)
    return rates


def _rate_gap(
    y: np.ndarray, score: np.ndarray, codes: np.ndarray, groups: np.ndarray, tau: float, label: int
) -> float:
    """Gap of P(Yhat = 1 | S = g, Y = label) over the groups of prepared arrays."""
    rates = _conditional_rates(y, score, codes, len(groups), tau, label)
    name = "true positive rate" if label == 1 else "false positive rate"
    bad = [str(g) for g, r in zip(groups, rates, strict=True) if np.isnan(r)]
    if bad:
        raise ValueError(
            f"The {name} is undefined for group(s) {bad} of `sensitive_features`: "
            f"no samples with y_true={label}."
        )
    return max_pairwise_gap(rates)


def _label_rate_gap(
    y_true: Any,
    y_score: Any,
    sensitive_features: Any,
    threshold: float,
    label: int,
    pos_label: Any = None,
    min_group_size: int = MIN_GROUP_SIZE,
) -> float:
    y, score, codes, groups = prepare_binary(
        y_true, y_score, sensitive_features, pos_label=pos_label, min_group_size=min_group_size
    )
    return _rate_gap(y, score, codes, groups, check_threshold(threshold), label)


@validate_params({"threshold": THRESHOLD, "min_group_size": GROUP_SIZE})
def true_positive_rate_gap(
    y_true: Any,
    y_score: Any,
    *,
    sensitive_features: Any,
    threshold: float = 0.5,
    pos_label: Any = None,
    min_group_size: int = MIN_GROUP_SIZE,
) -> float:
    r"""True-positive-rate gap, i.e. the equal-opportunity (EOpp) gap.

    Also exported as ``equal_opportunity_gap``.

    .. math::

        \max_{a, b}\; \bigl| P(\hat Y = 1 \mid S = a, Y = 1) - P(\hat Y = 1 \mid S = b, Y = 1)
        \bigr|.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels; every group needs at least one positive.
    y_score : array-like of shape (n,)
        Probability scores in [0, 1].
    sensitive_features : array-like of shape (n,) or (n, k)
        Group membership.
    threshold : float, default=0.5
        Decision threshold.
    pos_label : int, float, bool or str, optional
        The positive class of ``y_true`` (e.g. ``"yes"``), and of predicted labels passed
        as ``y_score`` (``pipe.predict``'s strings are mapped to 1 where equal to it);
        without it labels must be 0/1.
    min_group_size : int, default=30
        A group with fewer rows is left out of the gap when at least two groups reach
        the size, as in :func:`~otfair.metrics.fairness_report` (a ``UserWarning``
        names it); 0 keeps every group. Default ``otfair.utils.MIN_GROUP_SIZE``.

    Returns
    -------
    float
        The gap, in [0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> y = np.repeat([1, 0, 1, 0, 1, 0, 1, 0], 10)  # each row ten times: groups of 40
    >>> p = np.repeat([0.9, 0.6, 0.8, 0.3, 0.7, 0.2, 0.4, 0.1], 10)
    >>> s = np.repeat([0, 0, 0, 0, 1, 1, 1, 1], 10)
    >>> true_positive_rate_gap(y, p, sensitive_features=s)  # TPRs 1.0 and 0.5
    0.5
    """
    return _label_rate_gap(
        y_true, y_score, sensitive_features, threshold, 1, pos_label, min_group_size
    )


#: The equal-opportunity (EOpp) gap is the true-positive-rate gap.
equal_opportunity_gap = true_positive_rate_gap


@validate_params({"threshold": THRESHOLD, "min_group_size": GROUP_SIZE})
def false_positive_rate_gap(
    y_true: Any,
    y_score: Any,
    *,
    sensitive_features: Any,
    threshold: float = 0.5,
    pos_label: Any = None,
    min_group_size: int = MIN_GROUP_SIZE,
) -> float:
    r"""False-positive-rate gap.

    .. math::

        \max_{a, b}\; \bigl| P(\hat Y = 1 \mid S = a, Y = 0) - P(\hat Y = 1 \mid S = b, Y = 0)
        \bigr|.

    Parameters
    ----------
    y_true, y_score, sensitive_features, threshold, pos_label, min_group_size
        See :func:`true_positive_rate_gap`; here every group needs at least one negative.

    Returns
    -------
    float
        The gap, in [0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> y = np.repeat([1, 0, 1, 0, 1, 0, 1, 0], 10)  # each row ten times: groups of 40
    >>> p = np.repeat([0.9, 0.6, 0.8, 0.3, 0.7, 0.2, 0.4, 0.1], 10)
    >>> s = np.repeat([0, 0, 0, 0, 1, 1, 1, 1], 10)
    >>> false_positive_rate_gap(y, p, sensitive_features=s)  # FPRs 0.5 and 0.0
    0.5
    """
    return _label_rate_gap(
        y_true, y_score, sensitive_features, threshold, 0, pos_label, min_group_size
    )


@validate_params({"threshold": THRESHOLD, "agg": AGG, "min_group_size": GROUP_SIZE})
def equalized_odds_gap(
    y_true: Any,
    y_score: Any,
    *,
    sensitive_features: Any,
    threshold: float = 0.5,
    agg: Literal["mean", "worst_case"] = "mean",
    pos_label: Any = None,
    min_group_size: int = MIN_GROUP_SIZE,
) -> float:
    r"""Equalized-odds gap in the FTM paper's "1/2 sum" form (or the worst case).

    With :math:`\Delta_y = \max_{a,b} |P(\hat Y=1|S=a,Y=y) - P(\hat Y=1|S=b,Y=y)|`,

    .. math::

        \mathrm{EO} = \tfrac12 (\Delta_0 + \Delta_1) \quad (\texttt{agg="mean"}),
        \qquad
        \mathrm{maxEO} = \max(\Delta_0, \Delta_1) \quad (\texttt{agg="worst_case"}).

    These coincide with fairlearn's ``equalized_odds_difference(agg="mean")`` and
    ``agg="worst_case"`` (FTM paper §5.3.1).

    Parameters
    ----------
    y_true, y_score, sensitive_features, threshold, pos_label, min_group_size
        See :func:`true_positive_rate_gap`; here every group needs positives and
        negatives.
    agg : {"mean", "worst_case"}, default="mean"
        How the two label-conditional gaps are combined.

    Returns
    -------
    float
        The gap, in [0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> y = np.repeat([1, 0, 1, 0, 1, 0, 1, 0], 10)  # each row ten times: groups of 40
    >>> p = np.repeat([0.9, 0.6, 0.8, 0.3, 0.7, 0.2, 0.4, 0.1], 10)
    >>> s = np.repeat([0, 0, 0, 0, 1, 1, 1, 1], 10)
    >>> equalized_odds_gap(y, p, sensitive_features=s)  # (TPR gap 0.5 + FPR gap 0.5) / 2
    0.5
    >>> equalized_odds_gap(y, p, sensitive_features=s, threshold=0.65, agg="worst_case")
    0.5
    """
    y, score, codes, groups = prepare_binary(
        y_true, y_score, sensitive_features, pos_label=pos_label, min_group_size=min_group_size
    )
    tau = check_threshold(threshold)
    tpr = _rate_gap(y, score, codes, groups, tau, 1)
    fpr = _rate_gap(y, score, codes, groups, tau, 0)
    return 0.5 * (tpr + fpr) if agg == "mean" else max(tpr, fpr)


@validate_params({"threshold": THRESHOLD, "min_group_size": GROUP_SIZE})
def max_equalized_odds_gap(
    y_true: Any,
    y_score: Any,
    *,
    sensitive_features: Any,
    threshold: float = 0.5,
    pos_label: Any = None,
    min_group_size: int = MIN_GROUP_SIZE,
) -> float:
    r"""Worst-case equalized-odds gap :math:`\max(\Delta_0, \Delta_1)` (max-EO).

    Parameters
    ----------
    y_true, y_score, sensitive_features, threshold, pos_label, min_group_size
        See :func:`equalized_odds_gap`.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> y = np.repeat([1, 0, 1, 0, 1, 0, 1, 0], 10)  # each row ten times: groups of 40
    >>> p = np.repeat([0.9, 0.6, 0.8, 0.3, 0.7, 0.2, 0.4, 0.1], 10)
    >>> s = np.repeat([0, 0, 0, 0, 1, 1, 1, 1], 10)
    >>> max_equalized_odds_gap(y, p, sensitive_features=s, threshold=0.65)  # TPR gap 0.5, FPR 0
    0.5
    """
    return equalized_odds_gap(
        y_true,
        y_score,
        sensitive_features=sensitive_features,
        threshold=threshold,
        agg="worst_case",
        pos_label=pos_label,
        min_group_size=min_group_size,
    )


@validate_params({"min_group_size": GROUP_SIZE})
def error_gap(
    y_true: Any,
    y_pred: Any,
    *,
    sensitive_features: Any,
    min_group_size: int = MIN_GROUP_SIZE,
) -> float:
    r"""Accuracy-parity gap for regression: the largest difference of group MSEs.

    .. math::

        \max_{a, b}\; \bigl| E[(\hat Y - Y)^2 \mid S = a] - E[(\hat Y - Y)^2 \mid S = b] \bigr|,

    the two-group :math:`|\mathrm{MSE}_0 - \mathrm{MSE}_1|` of the accuracy-disparity paper.

    Parameters
    ----------
    y_true, y_pred
        See :func:`~otfair.metrics.mean_squared_error`.
    sensitive_features : array-like of shape (n,) or (n, k)
        Group membership.
    min_group_size : int, default=30
        A group with fewer rows is left out of the gap when at least two groups reach
        the size, as in :func:`~otfair.metrics.fairness_report` (a ``UserWarning``
        names it); 0 keeps every group. Default ``otfair.utils.MIN_GROUP_SIZE``.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> y = np.repeat([1.0, 2.0, 3.0, 4.0], 15)
    >>> pred = np.repeat([1.5, 2.0, 3.0, 3.0], 15)
    >>> s = np.repeat([0, 0, 1, 1], 15)
    >>> error_gap(y, pred, sensitive_features=s)  # group MSEs 0.125 and 0.5
    0.375
    """
    y, pred, codes, groups = prepare_regression(y_true, y_pred, sensitive_features, min_group_size)
    assert codes is not None and groups is not None  # sensitive_features is given
    mses, _ = group_means((pred - y) ** 2, codes, len(groups))
    require_defined(mses, groups, "The group MSE")
    return max_pairwise_gap(mses)
