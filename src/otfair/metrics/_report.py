"""The standard metric panel for (y_true, scores, sensitive): a flat dict plus a table."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
import pandas as pd
from sklearn import metrics as sk

from otfair.metrics._accuracy_disparity import accuracy_disparity_audit
from otfair.metrics._checks import (
    check_lengths,
    check_min_group_size,
    check_threshold,
    group_means,
    max_pairwise_gap,
    prepare_scores,
    small_group_rule,
)
from otfair.metrics._constraints import GROUP_SIZE, THRESHOLD
from otfair.metrics._degenerate import degenerate_warnings
from otfair.metrics._distribution import (
    ks_distance,
    max_pairwise_distance,
    tv_histogram,
    wasserstein_1d,
)
from otfair.metrics._linear import abs_pearson_columns
from otfair.metrics._performance import accuracy_unchecked, log_loss_unchecked, roc_auc
from otfair.metrics._sensitive import SensitiveColumns, split_sensitive
from otfair.utils import (
    MIN_GROUP_SIZE,
    StrOptions,
    check_binary_labels,
    check_finite_1d,
    validate_params,
)

#: The max-gap measures, computed without the small groups (see ``min_group_size``).
_CLASSIFICATION_GAPS = (
    "dp_gap",
    "mean_score_gap",
    "wdp",
    "ksdp",
    "tvdp",
    "tpr_gap",
    "fpr_gap",
    "eo_gap",
    "max_eo_gap",
)

CLASSIFICATION_KEYS: tuple[str, ...] = (
    "accuracy",
    "auc",
    "log_loss",
    *_CLASSIFICATION_GAPS,
    "pdp_violation",
    "peo_violation",
    "n",
    "n_groups",
)
"""Stable keys of :attr:`FairnessReport.summary` for ``task="classification"``."""

REGRESSION_KEYS: tuple[str, ...] = (
    "mse",
    "r2",
    "error_gap",
    "wdp",
    "ksdp",
    "mean_score_gap",
    "pdp_violation",
    "n",
    "n_groups",
)
"""Stable keys of :attr:`FairnessReport.summary` for ``task="regression"``."""

_REGRESSION_GAPS = ("error_gap", "mean_score_gap", "wdp", "ksdp")
_TVDP_BINS = np.linspace(0.0, 1.0, 101)
_CLASSIFICATION_COLUMNS = (
    "n",
    "base_rate",
    "selection_rate",
    "mean_score",
    "tpr",
    "fpr",
    "accuracy",
)
_REGRESSION_COLUMNS = ("n", "mean_target", "mean_prediction", "mse")


@dataclass(frozen=True)
class FairnessReport:
    """Result of :func:`fairness_report`.

    Attributes
    ----------
    summary : dict
        Flat ``{name: float | int}`` with the stable keys :data:`CLASSIFICATION_KEYS` or
        :data:`REGRESSION_KEYS` (undefined values are NaN).
    by_group : pandas.DataFrame
        One row per group (index ``group``); empty when no sensitive column is categorical.
    task : {"classification", "regression"}
    threshold : float
    sensitive : SensitiveColumns
        How the sensitive columns were interpreted (groups vs. linear columns).
    accuracy_disparity : dict or None
        Regression only: :func:`otfair.metrics.accuracy_disparity_audit` of the two
        groups (``None`` for classification, or when it does not apply; see ``notes``).
    notes : tuple of str
        Why a part of the panel was skipped (e.g. the accuracy-disparity audit needs
        exactly two groups).
    """

    summary: dict[str, float]
    by_group: pd.DataFrame
    task: str
    threshold: float
    sensitive: SensitiveColumns = field(repr=False)
    accuracy_disparity: dict[str, Any] | None = None
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Return the summary, ``"by_group"`` records and (regression) the audit.

        JSON friendly: ``"by_group"`` is a list of records; for regression the
        ``"accuracy_disparity"`` dict (or ``None``) is included.
        """
        out: dict[str, Any] = dict(self.summary)
        out["by_group"] = self.by_group.reset_index().to_dict(orient="records")
        if self.task == "regression":
            out["accuracy_disparity"] = self.accuracy_disparity
        return out


@validate_params(
    {
        "task": [StrOptions({"classification", "regression"})],
        "threshold": THRESHOLD,
        "min_group_size": GROUP_SIZE,
    }
)
def fairness_report(
    y_true: Any,
    y_score: Any,
    *,
    sensitive_features: Any,
    task: Literal["classification", "regression"] = "classification",
    threshold: float = 0.5,
    max_categories: int = 10,
    sensitive_type: Any = None,
    min_group_size: int = MIN_GROUP_SIZE,
    pos_label: Any = None,
) -> FairnessReport:
    r"""Compute the standard performance and fairness panel.

    Classification (scores are probabilities in [0, 1], :math:`\hat Y = 1[f \ge \tau]`):
    accuracy, ROC AUC, log loss, DP gap, mean score gap, WDP, KSDP, TVDP (100 bins on
    [0, 1]), TPR gap (= EOpp), FPR gap, EO :math:`= \tfrac12(\Delta_{TPR}+\Delta_{FPR})`,
    max-EO :math:`= \max(\Delta_{TPR}, \Delta_{FPR})`, PDP and PEO violations.
    Regression: MSE, :math:`R^2`, error gap :math:`|\mathrm{MSE}_a - \mathrm{MSE}_b|`, WDP,
    KSDP, mean prediction gap, PDP violation, and with exactly two groups the
    accuracy-disparity audit (:func:`accuracy_disparity_audit`, accuracy-disparity paper
    §3.1) in ``.accuracy_disparity``. Multi-group gaps are the largest pairwise
    gap. See ``docs/metrics.md`` and the individual metric functions for the formulas.

    Sensitive attributes: one binary column, several columns (one-hot or binary; group
    measures use their intersectional groups) or continuous columns, read by the one
    rule of otfair (:func:`otfair.metrics.split_sensitive`): a column is categorical (its
    values are groups, strings included) unless declared continuous with
    ``sensitive_type``, or numeric with more than ``max_categories`` distinct values and
    not declared categorical. Group measures and ``by_group`` use the categorical
    columns only and are NaN (``by_group`` empty) when there is none; PDP/PEO use every
    column (categorical ones as 0/1 indicators, continuous ones as they are).

    Small groups: a group with fewer than ``min_group_size`` samples is flagged in
    ``by_group["small"]``. When at least two groups reach the size, the small ones are
    left out of the max-gap measures (DP, mean score, WDP, KSDP, TVDP, TPR, FPR, EO
    gaps; regression: error and mean prediction gaps) and ``notes`` says so: a rate of 2
    or 6 people moves by 17-50 points per person, so the largest pairwise gap would be
    theirs. When fewer than two groups reach it, every group is kept (there is nothing
    else to compare) and ``notes`` says the gaps rest on small groups. Either way a
    ``UserWarning`` names each small group and its size (the note's text). PDP/PEO
    (correlations over all samples) are not affected. The max-gap metric functions
    (:func:`demographic_parity_gap`, ...) apply the same rule, so they agree with the
    report.

    A value that is undefined on this sample is NaN rather than an error: AUC with one
    class, TPR/FPR gaps when a group has no positives/negatives. Classification warns
    (and adds to ``notes``): an :class:`UndefinedMetricWarning` when ``y_true`` holds one
    class (AUC NaN), a :class:`DegeneratePredictorWarning` when the predictor puts every
    row in one class at the threshold (:func:`is_constant_prediction`) or its AUC is at
    or below 0.5; the gaps of such a predictor say nothing about its fairness.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Labels in {0, 1} (classification) or real targets (regression).
    y_score : array-like of shape (n,)
        Probability scores in [0, 1] (classification) or predictions (regression).
    sensitive_features : array-like of shape (n,) or (n, k), Series or DataFrame
        Sensitive attributes.
    task : {"classification", "regression"}, default="classification"
    threshold : float, default=0.5
        Decision threshold for the hard-prediction measures (classification).
    max_categories : int, default=10
        Largest number of distinct values for which an undeclared numeric column counts
        as categorical.
    sensitive_type : {"categorical", "continuous"}, mapping, sequence or None
        Declared kind of every column, of named columns (``{"age": "continuous"}``) or
        of each column in order; ``None`` follows the rule above.
    min_group_size : int, default=30
        Groups with fewer samples are flagged and left out of the max gaps (see above);
        0 keeps every group. Default ``otfair.utils.MIN_GROUP_SIZE`` (30): one person
        then moves a group's rate by at most 3.3 points and the standard error of a rate
        is at most 0.5 / sqrt(30) = 0.09, the usual floor for a normal approximation of
        a proportion.
    pos_label : int, float, bool or str, optional
        Classification: the positive class of ``y_true`` (e.g. ``"yes"`` for labels
        ``"yes"``/``"no"``), and of predicted labels passed as ``y_score`` (the strings
        ``pipe.predict`` returns are mapped to 1 where equal to it); without it the
        labels must be 0/1.

    Returns
    -------
    FairnessReport
        ``.summary`` (flat dict with stable keys) and ``.by_group`` (DataFrame).

    Examples
    --------
    >>> rep = fairness_report([0, 1, 1, 0], [0.2, 0.9, 0.6, 0.4], sensitive_features=[0, 0, 1, 1],
    ...                       min_group_size=0)  # groups of 2 rows: no small-group warning
    >>> rep.summary["dp_gap"], rep.summary["accuracy"]
    (0.0, 1.0)
    >>> y = ["yes", "no", "yes", "no"]
    >>> fairness_report(y, [0.9, 0.2, 0.7, 0.4], sensitive_features=[0, 0, 1, 1],
    ...                 pos_label="yes", min_group_size=0).summary["accuracy"]
    1.0
    """
    if task not in ("classification", "regression"):
        raise ValueError(f"`task` must be 'classification' or 'regression'; got {task!r}.")
    min_group_size = check_min_group_size(min_group_size)
    n = check_lengths(y_true=y_true, y_score=y_score, sensitive_features=sensitive_features)
    sens = split_sensitive(
        sensitive_features, max_categories=max_categories, sensitive_type=sensitive_type
    )
    small, (size_notes, exclude) = _small_groups(sens, min_group_size)
    if task == "classification":
        y = check_binary_labels(y_true, "y_true", pos_label=pos_label)
        score = prepare_scores(y_score, probabilities=True, y_true=y_true, pos_label=pos_label)
        tau = check_threshold(threshold)
        summary, by_group = _classification(y, score, sens, tau)
        if exclude:
            rows, kept = _without_groups(sens, small)
            gaps = _classification(y[rows], score[rows], kept, tau)[0]
            summary.update({k: gaps[k] for k in _CLASSIFICATION_GAPS})
    else:
        y = check_finite_1d(y_true, "y_true")
        score = check_finite_1d(y_score, "y_score")
        tau = float(threshold)
        summary, by_group = _regression(y, score, sens)
        if exclude:
            rows, kept = _without_groups(sens, small)
            gaps = _regression(y[rows], score[rows], kept)[0]
            summary.update({k: gaps[k] for k in _REGRESSION_GAPS})
    if sens.groups is not None:
        by_group["small"] = small
    summary["n"] = int(n)
    summary["n_groups"] = 0 if sens.groups is None else len(sens.groups)
    keys = CLASSIFICATION_KEYS if task == "classification" else REGRESSION_KEYS
    summary = {k: summary[k] for k in keys}
    audit: dict[str, Any] | None = None
    notes: tuple[str, ...] = ()
    if task == "regression":
        audit, notes = _accuracy_disparity(y, score, sens)
    if task == "classification":
        found = degenerate_warnings(y, score, tau, summary["auc"])
        for message, category in found:
            warnings.warn(message, category, stacklevel=2)
        notes = (*notes, *(message for message, _ in found))
    notes = (*size_notes, *notes)
    if size_notes:
        warnings.warn(size_notes[0], UserWarning, stacklevel=2)
    return FairnessReport(summary, by_group, task, tau, sens, audit, notes)


def _small_groups(
    sens: SensitiveColumns, min_size: int
) -> tuple[np.ndarray, tuple[tuple[str, ...], bool]]:
    """Flag the groups under ``min_size``: ``(flags, (notes, excluded))``.

    The rule of every max-gap measure (:func:`otfair.metrics._checks.small_group_rule`):
    ``excluded`` is True when at least two groups reach the size, so that the small
    ones are left out of the gaps (a warning is due either way).
    """
    if sens.groups is None or sens.codes is None:
        return np.zeros(0, dtype=bool), ((), False)
    small, message, exclude = small_group_rule(
        sens.codes,
        sens.groups,
        min_size,
        what="the max gaps",
        flagged="flagged in by_group['small']; ",
    )
    return small, (() if message is None else (message,), exclude)


def _without_groups(
    sens: SensitiveColumns, drop: np.ndarray
) -> tuple[np.ndarray, SensitiveColumns]:
    """Rows of the kept groups and ``sens`` restricted to them (codes renumbered)."""
    assert sens.groups is not None and sens.codes is not None  # callers check
    keep = np.flatnonzero(~drop)
    remap = np.full(len(sens.groups), -1, dtype=np.int64)
    remap[keep] = np.arange(len(keep))
    rows = ~drop[sens.codes]
    kept = replace(
        sens, codes=remap[sens.codes[rows]], groups=sens.groups[keep], linear=sens.linear[rows]
    )
    return rows, kept


def _accuracy_disparity(
    y: np.ndarray, pred: np.ndarray, sens: SensitiveColumns
) -> tuple[dict[str, Any] | None, tuple[str, ...]]:
    """Run the accuracy-disparity audit of two groups; else return ``None`` and why."""
    n_groups = 0 if sens.groups is None else len(sens.groups)
    if n_groups != 2:
        return None, (
            f"accuracy-disparity audit skipped: it needs exactly two sensitive groups, "
            f"found {n_groups}",
        )
    try:
        return accuracy_disparity_audit(y, pred, sensitive_features=sens.codes), ()
    except ValueError as exc:
        return None, (f"accuracy-disparity audit skipped: {str(exc).splitlines()[0]}",)


def _nan_dict(keys: tuple[str, ...]) -> dict[str, float]:
    return dict.fromkeys(keys, float("nan"))


def _distribution_gaps(score: np.ndarray, sens: SensitiveColumns) -> dict[str, float]:
    if sens.codes is None or sens.groups is None:
        return _nan_dict(("wdp", "ksdp"))
    k = len(sens.groups)
    return {
        "wdp": max_pairwise_distance(score, sens.codes, k, wasserstein_1d),
        "ksdp": max_pairwise_distance(score, sens.codes, k, ks_distance),
    }


def _classification(
    y: np.ndarray, score: np.ndarray, sens: SensitiveColumns, tau: float
) -> tuple[dict[str, float], pd.DataFrame]:
    pred = (score >= tau).astype(np.float64)
    out: dict[str, float] = {
        "accuracy": accuracy_unchecked(y, score, tau),
        "auc": _auc_or_nan(y, score),
        "log_loss": log_loss_unchecked(y, score),
        "pdp_violation": float(abs_pearson_columns(score, sens.linear).max()),
        "peo_violation": _peo(y, score, sens.linear),
    }
    out.update(_distribution_gaps(score, sens))
    if sens.codes is None or sens.groups is None:
        out.update(
            _nan_dict(("dp_gap", "mean_score_gap", "tvdp", "tpr_gap", "fpr_gap")),
            eo_gap=float("nan"),
            max_eo_gap=float("nan"),
        )
        return out, _empty_table(_CLASSIFICATION_COLUMNS)
    codes, k = sens.codes, len(sens.groups)
    sel, counts = group_means(pred, codes, k)
    mean_score, _ = group_means(score, codes, k)
    base, _ = group_means(y.astype(np.float64), codes, k)
    tpr, _ = group_means(pred, codes, k, mask=y == 1)
    fpr, _ = group_means(pred, codes, k, mask=y == 0)
    acc, _ = group_means((pred == y).astype(np.float64), codes, k)
    tpr_gap, fpr_gap = max_pairwise_gap(tpr), max_pairwise_gap(fpr)
    out.update(
        dp_gap=max_pairwise_gap(sel),
        mean_score_gap=max_pairwise_gap(mean_score),
        tvdp=max_pairwise_distance(score, codes, k, lambda u, v: tv_histogram(u, v, _TVDP_BINS)),
        tpr_gap=tpr_gap,
        fpr_gap=fpr_gap,
        eo_gap=0.5 * (tpr_gap + fpr_gap),
        max_eo_gap=max(tpr_gap, fpr_gap) if not np.isnan(tpr_gap + fpr_gap) else float("nan"),
    )
    table = pd.DataFrame(
        {
            "n": counts,
            "base_rate": base,
            "selection_rate": sel,
            "mean_score": mean_score,
            "tpr": tpr,
            "fpr": fpr,
            "accuracy": acc,
        },
        index=pd.Index(sens.groups, name="group"),
    )
    return out, table


def _regression(
    y: np.ndarray, pred: np.ndarray, sens: SensitiveColumns
) -> tuple[dict[str, float], pd.DataFrame]:
    sq = (pred - y) ** 2
    out: dict[str, float] = {
        "mse": float(sk.mean_squared_error(y, pred)),
        "r2": float(sk.r2_score(y, pred)) if np.any(y != y[0]) else float("nan"),
        "pdp_violation": float(abs_pearson_columns(pred, sens.linear).max()),
    }
    out.update(_distribution_gaps(pred, sens))
    if sens.codes is None or sens.groups is None:
        out.update(_nan_dict(("error_gap", "mean_score_gap")))
        return out, _empty_table(_REGRESSION_COLUMNS)
    codes, k = sens.codes, len(sens.groups)
    mse, counts = group_means(sq, codes, k)
    mean_pred, _ = group_means(pred, codes, k)
    mean_y, _ = group_means(y, codes, k)
    out.update(error_gap=max_pairwise_gap(mse), mean_score_gap=max_pairwise_gap(mean_pred))
    table = pd.DataFrame(
        {"n": counts, "mean_target": mean_y, "mean_prediction": mean_pred, "mse": mse},
        index=pd.Index(sens.groups, name="group"),
    )
    return out, table


def _empty_table(columns: tuple[str, ...]) -> pd.DataFrame:
    return pd.DataFrame(columns=list(columns), index=pd.Index([], name="group"))


def _auc_or_nan(y: np.ndarray, score: np.ndarray) -> float:
    if y.min() == y.max():
        return float("nan")
    return roc_auc(y, score)


def _peo(y: np.ndarray, score: np.ndarray, linear: np.ndarray) -> float:
    values = [
        abs_pearson_columns(score[y == label], linear[y == label]).max()
        for label in (0, 1)
        if np.sum(y == label) > 1
    ]
    return float(max(values)) if values else float("nan")
