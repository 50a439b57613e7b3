r"""The pieces of :class:`~otfair.estimators.FairnessCV` that hold no estimator state.

* :func:`select_strength`, the selection rule on a ``cv_results_`` table: the most
  accurate strength whose upper bound of the held-out violation is within the budget
  and which is not below the best constant predictor (the table's ``reference`` row),

  .. math::

      k^\star = \operatorname*{arg\,max}_{k:\ u_k \le b,\
      \bar a_k \ge \bar a_{\mathrm{const}},\ \bar\ell_k \le \bar\ell_{\mathrm{const}}}
      \ \bar a_k,
      \qquad u_k = \bar v_k + m\,\mathrm{se}_k,
      \qquad \text{ties to the smallest } s_k;

* :func:`resolve_metric`, the violation measures by name (defined in
  :mod:`otfair.estimators._violation_metrics`, re-exported here);
* :func:`fold_key` and :func:`make_splits`, folds stratified by label and group;
* :func:`cv_results`, the ``GridSearchCV``-like table of the per-fold measurements.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.model_selection import KFold, StratifiedKFold, check_cv

from otfair.estimators._violation_metrics import (
    CLASSIFICATION_METRICS,
    METRIC_NAMES,
    REGRESSION_METRICS,
    chosen_metric,
    default_violation_metric,
    get_violation_metric,
    get_violation_metric_names,
    resolve_metric,
)
from otfair.utils._warnings import user_stacklevel

__all__ = [
    "CLASSIFICATION_METRICS",
    "FoldMeasures",
    "REGRESSION_METRICS",
    "METRIC_NAMES",
    "default_violation_metric",
    "chosen_metric",
    "cv_results",
    "eligible",
    "fold_key",
    "get_violation_metric",
    "get_violation_metric_names",
    "make_splits",
    "resolve_metric",
    "select_strength",
    "standard_error",
]


# ----------------------------------------------------------------------------- rule
def _column(results: Mapping[str, Any], key: str, default: Any) -> np.ndarray:
    """``results[key]`` as an array, or ``default`` broadcast to the table's length."""
    n = len(results["strength"])
    if key in results:
        return np.asarray(results[key])
    return np.full(n, default)


def _upper(results: Mapping[str, Any]) -> np.ndarray:
    """Return the violation the budget is checked on: the upper bound if there is one."""
    key = "upper_test_violation" if "upper_test_violation" in results else "mean_test_violation"
    return np.asarray(results[key], dtype=float)


def eligible(
    results: Mapping[str, Any], max_violation: float, *, require_above: bool = True
) -> np.ndarray:
    """Mask of the rows :func:`select_strength` may choose.

    A row is eligible when it is a strength (not the ``reference`` row), its violation
    bound (``upper_test_violation``, else ``mean_test_violation``) is within
    ``max_violation`` and it is not below the best constant predictor
    (``above_reference``; ``require_above=False``: below it too, as
    ``below_constant="warn"`` allows); a table without those columns has no reference
    row and every row is above it.
    """
    bound = _upper(results)
    feasible = ~np.isnan(bound) & (bound <= max_violation)
    reference = _column(results, "reference", False).astype(bool)
    above = _column(results, "above_reference", True).astype(bool)
    return feasible & ~reference & (above if require_above else True)


def select_strength(
    results: Mapping[str, Any], max_violation: float, *, below_constant: str = "raise"
) -> int:
    r"""Return the index of the strength chosen from a ``cv_results_`` table.

    With :math:`\bar a_k` = ``mean_test_score[k]``, :math:`u_k` =
    ``upper_test_violation[k]`` (``mean_test_violation[k]`` when the table has no upper
    bound) and :math:`b` = ``max_violation``, the rule is
    :math:`\operatorname{arg\,max}_{k:\ u_k \le b,\ k \text{ above the constant}}
    \bar a_k`, ties to the smaller ``strength``. The ``reference`` row (the best
    constant predictor) is not chosen, nor a strength below it (``above_reference``
    False). A NaN violation (undefined on some fold) is never feasible and a NaN score
    never wins. When no strength can be chosen (none is feasible, or every feasible
    one is below the constant), ``below_constant="raise"`` raises; ``"warn"`` warns
    (``UserWarning``) and, where some strength is feasible, chooses among the feasible
    strengths as if there were no reference row (none feasible: it raises);
    ``"constant"`` warns and returns the ``reference`` row's index, when the
    constant's own violation bound is within the budget (a classifier's always is: it
    treats every group alike), else raises.

    Raises
    ------
    ValueError
        When no strength is feasible (the message names the lowest violation bound
        reached and the strength reaching it), or, with ``below_constant="raise"``, when
        every feasible strength is below the best constant predictor (the message gives
        both scores); never with ``"constant"`` when the constant is within the budget.
    """
    strengths = np.asarray(results["strength"], dtype=float)
    score = np.asarray(results["mean_test_score"], dtype=float)
    bound = _upper(results)
    reference = _column(results, "reference", False).astype(bool)
    feasible = ~np.isnan(bound) & (bound <= max_violation) & ~reference
    candidates = np.flatnonzero(eligible(results, max_violation) & ~np.isnan(score))
    if candidates.size == 0:
        if not feasible.any():
            message = _infeasible_message(results, max_violation)
        elif np.isnan(score[feasible]).all():
            raise ValueError("The held-out score is undefined at every feasible strength.")
        else:
            message = _below_constant_message(results, max_violation)
        constant = np.flatnonzero(reference & ~np.isnan(bound) & (bound <= max_violation))
        if below_constant == "constant" and constant.size:
            warnings.warn(
                message + " Returning the best constant predictor instead "
                "(below_constant='constant'): it is within the budget.",
                UserWarning,
                stacklevel=user_stacklevel(),
            )
            return int(constant[0])
        if below_constant != "warn" or not feasible.any():
            raise ValueError(message)
        warnings.warn(
            message + " Chosen anyway (below_constant='warn').", stacklevel=user_stacklevel()
        )
        candidates = np.flatnonzero(feasible & ~np.isnan(score))
    best_score = score[candidates].max()
    ties = candidates[score[candidates] == best_score]
    return int(ties[np.argmin(strengths[ties])])


def _infeasible_message(results: Mapping[str, Any], max_violation: float) -> str:
    """Return the words of :func:`select_strength` when no strength is within the budget."""
    strengths = np.asarray(results["strength"], dtype=float)
    bound = _upper(results)
    reference = _column(results, "reference", False).astype(bool)
    point_key = "test_violation" if "test_violation" in results else "mean_test_violation"
    is_upper = not np.array_equal(
        bound, np.asarray(results[point_key], dtype=float), equal_nan=True
    )
    if is_upper:
        what = "upper bound of the held-out violation"
    elif "pooled_test_violation" in results:
        what = "held-out violation (pooled folds)"
    else:
        what = "mean held-out violation"
    rows = np.flatnonzero(~reference & ~np.isnan(bound))
    larger = ", or add larger `strengths`"
    if rows.size == 0:
        reached = "the held-out violation is undefined at every strength"
    else:
        low = rows[np.argmin(bound[rows])]
        reached = f"the lowest {what} is {bound[low]:.4g} (strength={strengths[low]:g})"
        if strengths[low] < np.nanmax(strengths[rows]):  # larger ones measured: no lower
            larger = f" (the strengths above {strengths[low]:g} violate more)"
    margin = " or lower `margin`" if is_upper else ""
    return (
        f"No strength meets max_violation={max_violation:g}: {reached}. Raise "
        f"`max_violation`{margin}{larger}."
    )


def _below_constant_message(results: Mapping[str, Any], max_violation: float) -> str:
    """Return the words of :func:`select_strength` when all in budget are below the constant."""
    strengths = np.asarray(results["strength"], dtype=float)
    score = np.asarray(results["mean_test_score"], dtype=float)
    bound = _upper(results)
    reference = _column(results, "reference", False).astype(bool)
    feasible = ~np.isnan(bound) & (bound <= max_violation) & ~reference
    ref = np.flatnonzero(reference)
    best = np.flatnonzero(feasible)[np.nanargmax(score[feasible])]
    constant = f" (the constant's held-out score is {score[ref[0]]:.4g})" if ref.size else ""
    scores = f"scores {score[best]:.4g}"
    if ref.size and score[best] >= score[ref[0]]:  # its held-out score ties: the loss did it
        loss = _column(results, "mean_train_loss", np.nan).astype(float)
        scores += (
            f" as well, but its training loss ({loss[best]:.4g}) is above the constant's "
            f"({loss[ref[0]]:.4g}): it did not learn from the labels"
        )
    return (
        f"Every strength within max_violation={max_violation:g} is below the best "
        f"constant predictor{constant}: the best of them (strength="
        f"{strengths[best]:g}) {scores}. The constant predictor is "
        "perfectly fair and better; a model worth returning needs smaller `strengths`, "
        "more training (epochs) or a larger `max_violation`."
    )


def rank_strengths(results: Mapping[str, Any], max_violation: float) -> np.ndarray:
    """``rank_test_score``: eligible strengths first, each part by score then strength.

    Rank 1 is the strength :func:`select_strength` chooses (when one is eligible); the
    ``reference`` row (never chosen) ranks among the ineligible rows.
    """
    strengths = np.nan_to_num(np.asarray(results["strength"], dtype=float), nan=np.inf)
    score = np.nan_to_num(np.asarray(results["mean_test_score"], dtype=float), nan=-np.inf)
    ineligible = ~eligible(results, max_violation)
    order = np.lexsort((strengths, -score, ineligible))
    rank = np.empty(len(strengths), dtype=np.int32)
    rank[order] = np.arange(1, len(strengths) + 1)
    return rank


def rank_first(rank: np.ndarray, k: int) -> None:
    """Move row ``k`` to rank 1 in place; the rows ranked before it move one down.

    The refit check or ``below_constant`` may choose another row than the ranking's
    first (:func:`rank_strengths`); the chosen one is rank 1 all the same.

    >>> rank = np.array([2, 1, 3])
    >>> rank_first(rank, 2)
    >>> rank.tolist()
    [3, 2, 1]
    """
    rank[rank < rank[k]] += 1
    rank[k] = 1


def standard_error(values: np.ndarray) -> np.ndarray:
    """Return the standard error of the fold mean (axis 0): ``std(ddof=1) / sqrt(F)``."""
    n = values.shape[0]
    if n < 2:
        return np.full(values.shape[1:], np.nan)
    return np.asarray(values.std(axis=0, ddof=1) / np.sqrt(n))


def cv_results(
    strengths: np.ndarray,
    scores: np.ndarray,
    violations: np.ndarray,
    param: str,
    max_violation: float,
    *,
    losses: np.ndarray | None = None,
    reference: Mapping[str, Any] | None = None,
    margin: float = 0.0,
    pooled: np.ndarray | None = None,
) -> dict[str, Any]:
    r"""Build ``cv_results_`` from ``(n_splits, K)`` held-out scores and violations.

    ``losses``: the ``(n_splits, K)`` losses on the training folds (log-loss or squared
    error), or ``None``. ``reference``: the best constant predictor's per-fold ``score``,
    ``violation`` and ``loss`` (arrays of length ``n_splits``) and its ``params``; it
    becomes the last row (``strength`` NaN, ``reference`` True). A strength is
    ``above_reference`` when its mean held-out score is at least the constant's and its
    mean training-fold loss at most the constant's. ``pooled``: the ``K`` violations
    of the pooled held-out predictions of all folds (the reference's under
    ``reference["pooled"]``), or ``None``. ``test_violation`` is the pooled violation
    when given, else the fold mean :math:`\bar v_k`; ``upper_test_violation`` is
    ``test_violation`` :math:`+ \text{margin}\cdot \mathrm{se}_k` (the standard error
    of the fold mean); ``feasible`` compares it with ``max_violation``.
    """
    n_splits, n_strengths = scores.shape
    strengths = np.asarray(strengths, dtype=float)
    params: list[dict[str, Any]] = [{param: float(s)} for s in strengths]
    if losses is None:
        losses = np.full_like(scores, np.nan)
    if pooled is not None:
        pooled = np.asarray(pooled, dtype=float)
        if reference is not None:
            pooled = np.append(pooled, float(reference["pooled"]))
    if reference is not None:
        strengths = np.append(strengths, np.nan)
        params.append(dict(reference.get("params", {"constant": True})))
        scores = np.column_stack([scores, np.asarray(reference["score"], dtype=float)])
        violations = np.column_stack([violations, np.asarray(reference["violation"], dtype=float)])
        losses = np.column_stack([losses, np.asarray(reference["loss"], dtype=float)])
    results: dict[str, Any] = {"strength": strengths, "params": params}
    for k in range(n_splits):
        results[f"split{k}_test_score"] = scores[k]
    for k in range(n_splits):
        results[f"split{k}_test_violation"] = violations[k]
    results["mean_test_score"] = scores.mean(axis=0)
    results["std_test_score"] = scores.std(axis=0)
    results["mean_test_violation"] = violations.mean(axis=0)
    results["std_test_violation"] = violations.std(axis=0)
    if pooled is not None:
        results["pooled_test_violation"] = pooled
    point = results["mean_test_violation"] if pooled is None else pooled
    results["test_violation"] = point
    spread = standard_error(violations)
    bound = point + (margin * spread if margin > 0 else 0.0)
    results["upper_test_violation"] = bound
    results["mean_train_loss"] = losses.mean(axis=0)
    is_reference = np.zeros(len(strengths), dtype=bool)
    above = np.ones(len(strengths), dtype=bool)
    if reference is not None:
        is_reference[-1] = True
        ref_score = results["mean_test_score"][-1]
        ref_loss = results["mean_train_loss"][-1]
        score = results["mean_test_score"]
        loss = results["mean_train_loss"]
        above = ~np.isnan(score) & (score >= ref_score)
        if not np.isnan(ref_loss):  # a NaN loss (not measured) does not exclude
            above &= ~(loss > ref_loss)
        above[-1] = False
    results["reference"] = is_reference
    results["above_reference"] = above
    results["feasible"] = ~np.isnan(bound) & (bound <= max_violation)
    results["rank_test_score"] = rank_strengths(results, max_violation)
    return results


@dataclass
class FoldMeasures:
    """What FairnessCV measures on the folds: one row a fold, one column a strength.

    ``reference`` holds the best constant predictor's row (``score``, ``violation``,
    ``loss`` per fold, ``params``, and ``pooled`` with ``pooled_violation``).
    """

    scores: np.ndarray
    violations: np.ndarray
    losses: np.ndarray
    reference: dict[str, Any]
    metric_name: str
    fit_time: float = 0.0
    pooled: np.ndarray | None = None

    @classmethod
    def empty(cls, n_folds: int, n_strengths: int, metric_name: str, task: str) -> FoldMeasures:
        scores = np.empty((n_folds, n_strengths))
        reference: dict[str, Any] = {
            key: np.empty(n_folds) for key in ("score", "violation", "loss")
        }
        reference["params"] = {"constant": "prior" if task == "classification" else "mean"}
        return cls(scores, np.empty_like(scores), np.empty_like(scores), reference, metric_name)

    def record(self, fold: int, k: int, score: float, violation: float, loss: float) -> None:
        """Store fold ``fold``'s row of model ``k`` (``k`` past the strengths: the constant)."""
        if k < self.scores.shape[1]:
            self.scores[fold, k], self.violations[fold, k], self.losses[fold, k] = (
                score,
                violation,
                loss,
            )
        else:
            for key, value in zip(
                ("score", "violation", "loss"), (score, violation, loss), strict=True
            ):
                self.reference[key][fold] = value


# ---------------------------------------------------------------------------- folds
def _codes(values: Any) -> np.ndarray:
    """Integer codes of the distinct rows of ``values`` (1-D or 2-D), by first appearance.

    Each column is read as text (``1`` and ``"1"`` are one value) and factorized; the
    columns' codes are combined in mixed radix and factorized again: vectorized (a
    row-wise join of the texts cost ~0.6 s per call on 20,000 rows, several times a
    whole fairlearn ``GridSearch``).
    """
    table = np.asarray(values, dtype=object).reshape(len(values), -1)
    combined = np.zeros(len(table), dtype=np.int64)
    for column in table.T:
        codes = pd.factorize(pd.Series(column).astype(str))[0]
        combined = pd.factorize(combined * (int(codes.max(initial=0)) + 1) + codes)[0]
    return np.asarray(combined)


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


#: the seed of the shuffle before an integer ``cv`` cuts the rows into folds
FOLD_SEED = 0


def make_splits(
    cv: Any, X: Any, y: Any, sensitive_features: Any, task: str
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Train/test indices: an integer ``cv`` stratifies by :func:`fold_key`.

    The rows are shuffled (seed ``FOLD_SEED``: the same folds every call) before they are
    cut into folds: data stored in time order (Bank's rows by call date, the order the
    loaders keep) would otherwise put different periods in different folds, and a model
    of one period scores like a guess on another (Bank's last two folds: accuracy ~0.59
    for every strength, below the majority class). A splitter or an iterable of
    ``(train, test)`` is used as given, split on ``(X, y)``.
    """
    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        key = fold_key(y, sensitive_features, task, int(cv))
        if key is None:
            return KFold(int(cv), shuffle=True, random_state=FOLD_SEED).split(X)
        return StratifiedKFold(int(cv), shuffle=True, random_state=FOLD_SEED).split(X, key)
    return check_cv(cv, y, classifier=task == "classification").split(X, y)


def folds_with_every_group(
    splits: Iterable[tuple[np.ndarray, np.ndarray]], sensitive_features: Any
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Return ``splits`` as a list; ValueError when a held-out fold has only one group.

    A group measure compares the groups a held-out fold holds; with one group left it
    fails deep in the metric ("found only 1 group"), so this names the fold, the missing
    group and its size first. A fold that lacks a group but keeps two or more is
    measured on those, as before. An attribute of more than
    :data:`~otfair.utils._sensitive.MAX_CATEGORIES` distinct values (a continuous one,
    measured by correlation, or many intersections) is not checked.
    """
    from otfair.utils._sensitive import MAX_CATEGORIES

    splits = list(splits)
    codes = _codes(sensitive_features)
    values = np.asarray(sensitive_features, dtype=object).reshape(len(codes), -1)
    n_groups = int(codes.max(initial=-1)) + 1
    if n_groups > MAX_CATEGORIES:
        return splits
    sizes = np.bincount(codes, minlength=n_groups)
    for f, (_, test) in enumerate(splits):
        present = np.unique(codes[np.asarray(test)])
        if n_groups >= 2 and len(present) < 2:
            g = int(np.setdiff1d(np.arange(n_groups), present)[0])
            group = values[np.flatnonzero(codes == g)[0]].tolist()
            raise ValueError(
                f"Held-out fold {f} has no row of the sensitive group "
                f"{group[0] if len(group) == 1 else tuple(group)!r} ({sizes[g]} rows in "
                f"all, for {len(splits)} folds), so no second group to compare. Merge or "
                "drop that group, collect more rows, or lower `cv`."
            )
    return splits
