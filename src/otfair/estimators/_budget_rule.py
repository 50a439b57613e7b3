r"""The pieces of :class:`~otfair.estimators.FairnessCV` that hold no estimator state.

* :func:`select_strength`, the selection rule on a ``cv_results_`` table: the most
  accurate strength whose mean held-out violation is within the budget,

  .. math::

      k^\star = \operatorname*{arg\,max}_{k:\ \bar v_k \le b}\ \bar a_k,
      \qquad \text{ties to the smallest } s_k;

* :func:`resolve_metric`, the violation measures by name (:mod:`otfair.metrics`);
* :func:`fold_key` and :func:`make_splits`, folds stratified by label and group;
* :func:`cv_results`, the ``GridSearchCV``-like table of the per-fold measurements.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np
import pandas as pd
from sklearn.model_selection import KFold, StratifiedKFold, check_cv

from otfair import metrics as M

__all__ = [
    "CLASSIFICATION_METRICS",
    "REGRESSION_METRICS",
    "cv_results",
    "fold_key",
    "make_splits",
    "resolve_metric",
    "select_strength",
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


def resolve_metric(metric: str | MetricFn, task: str) -> tuple[str, MetricFn]:
    """Return ``(name, function)`` of a violation measure for ``task``.

    A callable is used as it is: ``metric(y_true, y_score, *, sensitive_features)``
    returning a float, lower is fairer.
    """
    if callable(metric):
        return getattr(metric, "__name__", "metric"), metric
    table = CLASSIFICATION_METRICS if task == "classification" else REGRESSION_METRICS
    if metric not in table:
        raise ValueError(
            f"`metric`={metric!r} is not a {task} violation measure; choose one of "
            f"{sorted(table)} or pass a callable."
        )
    return metric, table[metric]


# ----------------------------------------------------------------------------- rule
def select_strength(results: Mapping[str, Any], max_violation: float) -> int:
    r"""Return the index of the strength chosen from a ``cv_results_`` table.

    With :math:`\bar a_k` = ``mean_test_score[k]``, :math:`\bar v_k` =
    ``mean_test_violation[k]`` and :math:`b` = ``max_violation``, the rule is
    :math:`\operatorname{arg\,max}_{k:\ \bar v_k \le b} \bar a_k`, ties to the smaller
    ``strength``. A NaN violation (undefined on some fold) is never feasible and a NaN
    score never wins.

    Raises
    ------
    ValueError
        When no strength is feasible; the message names the lowest mean violation reached
        and the strength reaching it.
    """
    strengths = np.asarray(results["strength"], dtype=float)
    score = np.asarray(results["mean_test_score"], dtype=float)
    violation = np.asarray(results["mean_test_violation"], dtype=float)
    feasible = ~np.isnan(violation) & (violation <= max_violation)
    if not feasible.any():
        if np.isnan(violation).all():
            reached = "the held-out violation is undefined at every strength"
        else:
            low = int(np.nanargmin(violation))
            reached = (
                f"the lowest mean held-out violation is {violation[low]:.4g} "
                f"(strength={strengths[low]:g})"
            )
        raise ValueError(
            f"No strength meets max_violation={max_violation:g}: {reached}. Raise "
            "`max_violation` or add larger `strengths`."
        )
    candidates = np.flatnonzero(feasible & ~np.isnan(score))
    if candidates.size == 0:
        raise ValueError("The held-out score is undefined at every feasible strength.")
    best = score[candidates].max()
    ties = candidates[score[candidates] == best]
    return int(ties[np.argmin(strengths[ties])])


def rank_strengths(results: Mapping[str, Any], max_violation: float) -> np.ndarray:
    """``rank_test_score``: feasible strengths first, each part by score then strength.

    Rank 1 is the strength :func:`select_strength` chooses (when one is feasible).
    """
    strengths = np.asarray(results["strength"], dtype=float)
    score = np.nan_to_num(np.asarray(results["mean_test_score"], dtype=float), nan=-np.inf)
    violation = np.asarray(results["mean_test_violation"], dtype=float)
    infeasible = ~(~np.isnan(violation) & (violation <= max_violation))
    order = np.lexsort((strengths, -score, infeasible))
    rank = np.empty(len(strengths), dtype=np.int32)
    rank[order] = np.arange(1, len(strengths) + 1)
    return rank


def cv_results(
    strengths: np.ndarray,
    scores: np.ndarray,
    violations: np.ndarray,
    param: str,
    max_violation: float,
) -> dict[str, Any]:
    """Build ``cv_results_`` from ``(n_splits, K)`` held-out scores and violations."""
    results: dict[str, Any] = {
        "strength": np.asarray(strengths, dtype=float),
        "params": [{param: float(s)} for s in strengths],
    }
    for k in range(scores.shape[0]):
        results[f"split{k}_test_score"] = scores[k]
    for k in range(violations.shape[0]):
        results[f"split{k}_test_violation"] = violations[k]
    results["mean_test_score"] = scores.mean(axis=0)
    results["std_test_score"] = scores.std(axis=0)
    results["mean_test_violation"] = violations.mean(axis=0)
    results["std_test_violation"] = violations.std(axis=0)
    viol = results["mean_test_violation"]
    results["feasible"] = ~np.isnan(viol) & (viol <= max_violation)
    results["rank_test_score"] = rank_strengths(results, max_violation)
    return results


# ---------------------------------------------------------------------------- folds
def _codes(values: Any) -> np.ndarray:
    """Integer codes of the distinct rows of ``values`` (1-D or 2-D)."""
    frame = pd.DataFrame(np.asarray(values, dtype=object).reshape(len(values), -1))
    keys = frame.astype(str).agg("\x1f".join, axis=1)
    return pd.factorize(keys)[0]


def fold_key(y: Any, sensitive_features: Any, task: str, n_splits: int) -> np.ndarray | None:
    """Return the finest stratification key whose every value fills ``n_splits`` folds.

    Tried in order: label x group, group, label (a regression target is cut at its
    quartiles); ``None`` (plain ``KFold``) when no key has ``n_splits`` rows in each of
    its values (e.g. a continuous sensitive attribute with a continuous target).
    """
    y = np.asarray(y)
    if task == "regression":
        edges = np.unique(np.quantile(y.astype(float), [0.25, 0.5, 0.75]))
        label = np.searchsorted(edges, y.astype(float), side="right")
    else:
        label = _codes(y)
    group = _codes(sensitive_features)
    for key in (_codes(np.column_stack([label, group])), group, label):
        counts = np.bincount(key)
        if len(counts) > 1 and counts.min() >= n_splits:
            return key
    return None


def make_splits(
    cv: Any, X: Any, y: Any, sensitive_features: Any, task: str
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Train/test indices: an integer ``cv`` stratifies by :func:`fold_key`.

    A splitter or an iterable of ``(train, test)`` is used as given, split on ``(X, y)``.
    """
    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        key = fold_key(y, sensitive_features, task, int(cv))
        if key is None:
            return KFold(int(cv)).split(X)
        return StratifiedKFold(int(cv)).split(X, key)
    return check_cv(cv, y, classifier=task == "classification").split(X, y)
