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
    drop_groups,
    group_means,
    max_pairwise_gap,
    small_group_rule,
    validate_metric_input,
)
from otfair.metrics._constraints import GROUP_SIZE, THRESHOLD
from otfair.metrics._degenerate import UndefinedMetricWarning, degenerate_warnings
from otfair.metrics._distribution import (
    ks_distance,
    max_pairwise_distance,
    tv_histogram,
    wasserstein_1d,
)
from otfair.metrics._linear import abs_pearson_columns, peo_columns
from otfair.metrics._performance import accuracy_unchecked, log_loss_unchecked, roc_auc
from otfair.metrics._sensitive import SensitiveColumns, split_sensitive
from otfair.utils import (
    MIN_GROUP_SIZE,
    StrOptions,
    to_jsonable,
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
        groups (``None`` for classification, or when it does not apply; see ``notes``),
        its ``groups`` the two labels as in ``by_group`` (group 0, of ``n_0`` and
        ``mse_0``, first).
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

        JSON friendly (``json.dumps(..., allow_nan=False)`` takes it): ``"by_group"`` is
        a list of records; for regression the ``"accuracy_disparity"`` dict (or
        ``None``) is included; an undefined value (NaN in ``summary``) is ``None``
        and numpy scalars are Python numbers.
        """
        out: dict[str, Any] = dict(self.summary)
        out["by_group"] = self.by_group.reset_index().to_dict(orient="records")
        if self.task == "regression":
            out["accuracy_disparity"] = self.accuracy_disparity
        return to_jsonable(out)


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

    Classification (scores in [0, 1], :math:`\hat Y = 1[f \ge \tau]`): accuracy, ROC AUC,
    log loss, DP, mean score, WDP, KSDP, TVDP (100 bins), TPR (EOpp), FPR, EO
    :math:`= \tfrac12(\Delta_{TPR}+\Delta_{FPR})` and max-EO gaps, PDP and PEO. Regression:
    MSE, :math:`R^2`, error gap, WDP, KSDP, mean prediction gap, PDP, and with two groups
    :func:`accuracy_disparity_audit` in ``.accuracy_disparity``. Multi-group gaps are the
    largest pairwise gap; formulas in ``docs/metrics.md`` and the metric functions.

    Sensitive columns follow :func:`split_sensitive`: group measures use the groups of
    the categorical columns, PDP/PEO every column. Groups under ``min_group_size`` are
    flagged in ``by_group["small"]`` and left out of the max gaps when two groups reach
    it (a ``UserWarning``). An undefined value is NaN (:class:`UndefinedMetricWarning`);
    a one-class or chance-level predictor raises :class:`DegeneratePredictorWarning`.

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
        Most distinct values for which an undeclared numeric column is categorical.
    sensitive_type : {"categorical", "continuous"}, mapping, sequence or None
        Declared kind of every column, of named columns (``{"age": "continuous"}``) or
        of each column in order; ``None`` follows the rule.
    min_group_size : int, default=30
        Groups with fewer samples are flagged and left out of the max gaps; 0 keeps
        every group. Default ``otfair.utils.MIN_GROUP_SIZE``.
    pos_label : int, float, bool or str, optional
        Classification: the positive class of ``y_true`` and of predicted labels passed
        as ``y_score``; without it the labels must be 0/1.

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
    check_lengths(y_true=y_true, y_score=y_score, sensitive_features=sensitive_features)
    sens = split_sensitive(
        sensitive_features, max_categories=max_categories, sensitive_type=sensitive_type
    )
    small, (size_notes, exclude) = _small_groups(sens, min_group_size)
    y, score, tau = _panel_input(y_true, y_score, task, threshold, pos_label)
    summary, by_group = _panel(task, y, score, sens, tau, small, exclude)
    audit, notes = _panel_notes(task, y, score, sens, tau, summary)
    if size_notes:
        warnings.warn(size_notes[0], UserWarning, stacklevel=2)
    return FairnessReport(summary, by_group, task, tau, sens, audit, (*size_notes, *notes))


def _panel_input(
    y_true: Any, y_score: Any, task: str, threshold: float, pos_label: Any
) -> tuple[np.ndarray, np.ndarray, float]:
    """Return the validated labels (targets), scores (predictions) and threshold."""
    if task == "classification":
        y, score, *_ = validate_metric_input(
            y_true, y_score, pos_label=pos_label, probabilities=True, groups="none"
        )
        return y, score, check_threshold(threshold)
    y, score, *_ = validate_metric_input(y_true, y_score, labels="real", groups="none")
    return y, score, float(threshold)


def _panel(
    task: str,
    y: np.ndarray,
    score: np.ndarray,
    sens: SensitiveColumns,
    tau: float,
    small: np.ndarray,
    exclude: bool,
) -> tuple[dict[str, float], pd.DataFrame]:
    """Return the summary (the task's keys) and the ``by_group`` table of a panel.

    The max gaps leave out the ``small`` groups when ``exclude``; ``by_group["small"]``
    flags them.
    """

    def measure(
        y: np.ndarray, score: np.ndarray, sens: SensitiveColumns
    ) -> tuple[dict[str, float], pd.DataFrame]:
        if task == "classification":
            return _classification(y, score, sens, tau)
        return _regression(y, score, sens)

    summary, by_group = measure(y, score, sens)
    gap_names = _CLASSIFICATION_GAPS if task == "classification" else _REGRESSION_GAPS
    if exclude:
        rows, kept = _without_groups(sens, small)
        gaps = measure(y[rows], score[rows], kept)[0]
        summary.update({k: gaps[k] for k in gap_names})
    if sens.groups is not None:
        by_group["small"] = small
    summary["n"] = len(y)
    summary["n_groups"] = 0 if sens.groups is None else len(sens.groups)
    keys = CLASSIFICATION_KEYS if task == "classification" else REGRESSION_KEYS
    return {k: summary[k] for k in keys}, by_group


def _panel_notes(
    task: str,
    y: np.ndarray,
    score: np.ndarray,
    sens: SensitiveColumns,
    tau: float,
    summary: dict[str, float],
) -> tuple[dict[str, Any] | None, tuple[str, ...]]:
    """Return the regression audit (or ``None``) and its notes, or warn a degenerate panel.

    Regression: the accuracy-disparity audit and why it was skipped. Classification: the
    one-class and degenerate-predictor warnings, issued here and returned as notes.
    """
    if task == "regression":
        return _accuracy_disparity(y, score, sens)
    found = degenerate_warnings(y, score, tau, summary["auc"])
    undefined = _undefined_gaps(y, sens, summary)
    found += [(message, UndefinedMetricWarning) for message in undefined]
    for message, category in found:
        warnings.warn(message, category, stacklevel=3)
    return None, tuple(message for message, _ in found)


def _undefined_gaps(y: np.ndarray, sens: SensitiveColumns, summary: dict[str, float]) -> list[str]:
    """Say why a classification panel's TPR or FPR gap is NaN (both classes present).

    A group without a row of a class: its TPR (no ``y_true = 1``) or FPR (no ``y_true =
    0``) is undefined, and so are the gaps that read it. (Every column continuous: the
    group measures are NaN by design, and ``sensitive`` records the reading.)
    """
    if y.min() == y.max() or sens.codes is None or sens.groups is None:
        return []  # one class: degenerate_warnings says so
    notes = []
    for label, rate in ((1, "tpr_gap"), (0, "fpr_gap")):
        if not np.isnan(summary[rate]):
            continue
        present = np.bincount(sens.codes[y == label], minlength=len(sens.groups)) > 0
        missing = [str(g) for g in np.asarray(sens.groups)[~present][:5]]
        if missing:
            notes.append(
                f"{rate} and the equalized-odds gaps are NaN: group(s) {', '.join(missing)} "
                f"have no row with y_true = {label}, so their rate is undefined."
            )
    return notes


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
    codes, groups, rows = drop_groups(sens.codes, sens.groups, drop)
    return rows, replace(sens, codes=codes, groups=groups, linear=sens.linear[rows])


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
        audit = accuracy_disparity_audit(y, pred, sensitive_features=sens.codes)
    except ValueError as exc:
        return None, (f"accuracy-disparity audit skipped: {str(exc).splitlines()[0]}",)
    assert sens.groups is not None  # two groups, above
    audit["groups"] = to_jsonable(list(sens.groups))  # the labels, group 0 (``n_0``) first
    return audit, ()


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
        "peo_violation": peo_columns(y, score, sens.linear),
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
