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
    require_defined,
    validate_metric_input,
)
from otfair.metrics._constraints import AGG, GROUP_SIZE, THRESHOLD
from otfair.metrics._docs import fill_doc
from otfair.utils import MIN_GROUP_SIZE, validate_params


@fill_doc
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
    {pos_label}
    {min_group_size}

    Returns
    -------
    float
        The largest gap between two groups' selection rates, in [0, 1].

    {examples_scores}
    >>> demographic_parity_gap(y, p, sensitive_features=s)  # selection rates 0.75 and 0.25
    0.5
    >>> labels = np.where(p >= 0.5, "yes", "no")  # predicted labels, e.g. pipe.predict(X)
    >>> demographic_parity_gap(np.where(y == 1, "yes", "no"), labels, sensitive_features=s,
    ...                        pos_label="yes")
    0.5
    """
    _, score, codes, groups, _ = validate_metric_input(
        y_true, y_score, sensitive_features, pos_label, min_group_size, probabilities=True
    )
    tau = check_threshold(threshold)
    rates, _ = group_means((score >= tau).astype(np.float64), codes, len(groups))
    return max_pairwise_gap(rates)


@fill_doc
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
    {pos_label}
    {min_group_size}

    Returns
    -------
    float
        The largest gap between two groups' mean scores.

    {examples_scores}
    >>> round(mean_score_gap(y, p, sensitive_features=s), 6)  # mean scores 0.65 and 0.35
    0.3
    """
    _, score, codes, groups, _ = validate_metric_input(
        y_true, y_score, sensitive_features, pos_label, min_group_size, labels="length"
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
    y, score, codes, groups, _ = validate_metric_input(
        y_true, y_score, sensitive_features, pos_label, min_group_size, probabilities=True
    )
    return _rate_gap(y, score, codes, groups, check_threshold(threshold), label)


@fill_doc
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
    {pos_label}
    {min_group_size}

    Returns
    -------
    float
        The largest gap between two groups' TPRs, in [0, 1].

    {examples_scores}
    >>> true_positive_rate_gap(y, p, sensitive_features=s)  # TPRs 1.0 and 0.5
    0.5
    """
    return _label_rate_gap(
        y_true, y_score, sensitive_features, threshold, 1, pos_label, min_group_size
    )


#: The equal-opportunity (EOpp) gap is the true-positive-rate gap.
equal_opportunity_gap = true_positive_rate_gap


@fill_doc
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
        The largest gap between two groups' FPRs, in [0, 1].

    {examples_scores}
    >>> false_positive_rate_gap(y, p, sensitive_features=s)  # FPRs 0.5 and 0.0
    0.5
    """
    return _label_rate_gap(
        y_true, y_score, sensitive_features, threshold, 0, pos_label, min_group_size
    )


@fill_doc
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
        The mean (or the larger) of the TPR and FPR gaps, in [0, 1].

    {examples_scores}
    >>> equalized_odds_gap(y, p, sensitive_features=s)  # (TPR gap 0.5 + FPR gap 0.5) / 2
    0.5
    >>> equalized_odds_gap(y, p, sensitive_features=s, threshold=0.65, agg="worst_case")
    0.5
    """
    y, score, codes, groups, _ = validate_metric_input(
        y_true, y_score, sensitive_features, pos_label, min_group_size, probabilities=True
    )
    tau = check_threshold(threshold)
    tpr = _rate_gap(y, score, codes, groups, tau, 1)
    fpr = _rate_gap(y, score, codes, groups, tau, 0)
    return 0.5 * (tpr + fpr) if agg == "mean" else max(tpr, fpr)


@fill_doc
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
        The larger of the TPR and FPR gaps, in [0, 1].

    {examples_scores}
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


@fill_doc
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
    {min_group_size}

    Returns
    -------
    float
        The largest gap between two groups' MSEs (non-negative).

    {examples_regression}
    >>> error_gap(y, pred, sensitive_features=s)  # group MSEs 0.125 and 0.5
    0.375
    """
    y, pred, codes, groups, _ = validate_metric_input(
        y_true,
        y_pred,
        sensitive_features,
        None,
        min_group_size,
        labels="real",
        score_name="y_pred",
    )
    mses, _ = group_means((pred - y) ** 2, codes, len(groups))
    require_defined(mses, groups, "The group MSE")
    return max_pairwise_gap(mses)
