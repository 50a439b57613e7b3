"""The violation measures a budget is checked on, by name (:mod:`otfair.metrics`).

:func:`resolve_metric` turns a name (``fairness_report``'s) or a callable into the
measure :class:`~otfair.estimators.FairnessCV` budgets; :func:`default_violation_metric`
is its ``metric="auto"`` (the estimator's notion's measure) and :func:`chosen_metric`
applies it to an estimator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from otfair import metrics as M

__all__ = [
    "CLASSIFICATION_METRICS",
    "METRIC_NAMES",
    "NOTION_METRICS",
    "REGRESSION_METRICS",
    "MetricFn",
    "chosen_metric",
    "default_violation_metric",
    "get_violation_metric",
    "get_violation_metric_names",
    "resolve_metric",
]

MetricFn = Callable[..., float]

#: violation measures of a classifier's P(Y = 1 | x), by fairness_report's names
CLASSIFICATION_METRICS: dict[str, MetricFn] = {
    "dp_gap": M.demographic_parity_gap,
    "eo_gap": M.equalized_odds_gap,
    "max_eo_gap": M.max_equalized_odds_gap,
    "tpr_gap": M.true_positive_rate_gap,
    "fpr_gap": M.false_positive_rate_gap,
    "mean_score_gap": M.mean_score_gap,
    "wdp": M.wasserstein_demographic_parity,
    "ksdp": M.ks_demographic_parity,
    "tvdp": M.tv_demographic_parity,
    "pdp_violation": M.pdp_violation,
    "peo_violation": M.peo_violation,
}
#: violation measures of a regressor's predictions
REGRESSION_METRICS: dict[str, MetricFn] = {
    "error_gap": M.error_gap,
    "wdp": M.wasserstein_demographic_parity,
    "ksdp": M.ks_demographic_parity,
    "mean_score_gap": M.mean_score_gap,
    "pdp_violation": M.pdp_violation,
}


#: the violation measure a budget is checked on when none is named, by the notion's name
NOTION_METRICS: dict[str, str] = {"dp": "dp_gap", "eo": "max_eo_gap", "eopp": "tpr_gap"}


def default_violation_metric(task: str, notion: Any = None) -> str:
    """Return the measure a budget is checked on by default (``FairnessCV(metric="auto")``).

    Parameters
    ----------
    task : {"classification", "regression"}
        The estimator's task.
    notion : str or Notion, optional
        The estimator's fairness notion (its ``notion`` parameter); None: demographic
        parity.

    Returns
    -------
    str
        Classifiers: ``"dp_gap"``; ``"max_eo_gap"`` under equalized odds (the larger of
        the two label cells' gaps: fairlearn's ``equalized_odds_difference`` and the bound
        of its ``EqualizedOdds`` constraint, so the budget holds in each cell);
        ``"tpr_gap"`` under equal opportunity. Regressors: ``"error_gap"`` (accuracy
        parity). ``otfair fit --max-violation`` uses the same rule.

    See Also
    --------
    get_violation_metric : The measure of a name.
    FairnessCV : Chooses the strength whose violation stays within a budget.

    Examples
    --------
    >>> from otfair.estimators import default_violation_metric
    >>> default_violation_metric("classification", "eo")
    'max_eo_gap'
    >>> default_violation_metric("regression")
    'error_gap'
    """
    if task != "classification":
        return "error_gap"
    name = "dp" if notion is None else str(getattr(notion, "name", notion))
    return NOTION_METRICS.get(name, "dp_gap")


#: the names ``FairnessCV(metric=...)`` accepts
METRIC_NAMES = {"auto"} | set(CLASSIFICATION_METRICS) | set(REGRESSION_METRICS)


#: The measures that read the sensitive columns as numbers (correlations), not as groups
LINEAR_METRICS = {"pdp_violation": "dp", "peo_violation": "eo"}


def chosen_metric(
    metric: str | MetricFn, estimator: Any, task: str, sensitive_features: Any = None
) -> str | MetricFn:
    """``metric``, or under ``"auto"`` :func:`default_violation_metric` of the notion.

    A classifier's ``sensitive_features`` with a continuous column (the estimator's
    ``sensitive_type``, else otfair's rule: numeric with more than 10 distinct values)
    has no groups to compare: ``"auto"`` is then the correlation measure of the notion
    (``pdp_violation``, or ``peo_violation`` where labels enter), and a group measure
    such as ``"dp_gap"`` is refused (each value would be a group of one row).
    """
    notion = estimator.get_params(deep=False).get("notion")
    continuous = task == "classification" and _continuous_columns(sensitive_features, estimator)
    if isinstance(metric, str) and metric == "auto":
        if continuous:
            name = "dp" if notion is None else str(getattr(notion, "name", notion))
            return "pdp_violation" if name == "dp" else "peo_violation"
        return default_violation_metric(task, notion)
    if continuous and isinstance(metric, str) and metric not in LINEAR_METRICS:
        raise ValueError(
            f"`metric`={metric!r} compares groups, but `sensitive_features` has continuous "
            f"column(s) {continuous} (each value would be a group of its own): use "
            "metric='pdp_violation' or 'peo_violation' (the scores' correlation with the "
            "attribute), or bin the attribute into a few groups."
        )
    return metric


def _continuous_columns(sensitive_features: Any, estimator: Any) -> list[str]:
    """Names of the continuous columns of ``sensitive_features`` (none when not given)."""
    if sensitive_features is None:
        return []
    from otfair.utils._sensitive import split_sensitive

    kind = estimator.get_params(deep=False).get("sensitive_type")
    return list(split_sensitive(sensitive_features, sensitive_type=kind).continuous)


def resolve_metric(metric: str | MetricFn, task: str) -> tuple[str, MetricFn]:
    """Return ``(name, function)`` of a violation measure for ``task``.

    A callable is used as it is: ``metric(y_true, y_score, *, sensitive_features)``
    returning a float, lower is fairer.
    """
    if callable(metric):
        return getattr(metric, "__name__", "metric"), metric
    table = _table(task)
    if metric not in table:
        raise ValueError(
            f"`metric`={metric!r} is not a {task} violation measure; choose one of "
            f"{sorted(table)} or pass a callable."
        )
    return metric, table[metric]


def get_violation_metric(metric: str | MetricFn, task: str) -> MetricFn:
    """Return the violation measure that :class:`FairnessCV` uses for ``metric``.

    Parameters
    ----------
    metric : str or callable
        A name of :func:`get_violation_metric_names` (``fairness_report``'s names, e.g.
        ``"dp_gap"``), or a callable ``metric(y_true, y_score, *, sensitive_features)``
        returning a float (lower is fairer), returned as it is.
    task : {"classification", "regression"}
        The estimator's task: the names differ between the two.

    Returns
    -------
    callable
        The function of :mod:`otfair.metrics` measuring the violation.

    Raises
    ------
    ValueError
        ``metric`` is not a violation measure of ``task`` (the message lists them).

    See Also
    --------
    get_violation_metric_names : The names accepted for a task.
    FairnessCV : Chooses the strength whose violation stays within a budget.

    Examples
    --------
    >>> from otfair.estimators import get_violation_metric
    >>> get_violation_metric("dp_gap", "classification").__name__
    'demographic_parity_gap'
    """
    return resolve_metric(metric, task)[1]


def get_violation_metric_names(task: str) -> list[str]:
    """Return the names of the violation measures ``FairnessCV(metric=...)`` accepts.

    Parameters
    ----------
    task : {"classification", "regression"}

    Returns
    -------
    list of str
        The sorted names for ``task``.

    See Also
    --------
    get_violation_metric : The measure of a name.

    Examples
    --------
    >>> from otfair.estimators import get_violation_metric_names
    >>> get_violation_metric_names("regression")
    ['error_gap', 'ksdp', 'mean_score_gap', 'pdp_violation', 'wdp']
    """
    return sorted(_table(task))


def _table(task: str) -> dict[str, MetricFn]:
    """Return the measures of ``task`` (ValueError naming ``task`` for any other value)."""
    if task == "classification":
        return CLASSIFICATION_METRICS
    if task == "regression":
        return REGRESSION_METRICS
    raise ValueError(f"`task` must be 'classification' or 'regression'; got {task!r}.")
