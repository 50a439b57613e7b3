"""Input preparation shared by the metric functions.

Every public metric goes through these helpers so that bad input (mismatched lengths,
NaN, a single group, labels outside {0, 1}, scores outside [0, 1] where probabilities
are required) raises a ``ValueError`` that names the offending argument.
"""

from __future__ import annotations

import warnings
from typing import Any, Literal, NamedTuple

import numpy as np

from otfair.utils import (
    MIN_GROUP_SIZE,
    check_binary_labels,
    check_consistent_length,
    check_finite_1d,
    check_predictions,
    check_sensitive_features,
    encode_groups,
)
from otfair.utils._sensitive import split_sensitive
from otfair.utils._validation import describe_groups, small_groups


def _length(x: Any, name: str) -> int:
    """Return the number of samples of an array-like (first dimension)."""
    if x is None:
        raise ValueError(f"`{name}` is required but got None.")
    try:
        return len(x)
    except TypeError as exc:
        raise TypeError(f"`{name}` must be array-like; got {type(x).__name__}.") from exc


def check_lengths(**arrays: Any) -> int:
    """Check that all arguments have the same number of samples and return it.

    ``y_true``, when given, must hold no NaN/None even for measures that do not use the
    labels (DP, WDP, PDP...): a label column with holes is a data error either way.
    """
    for name, arr in arrays.items():
        _length(arr, name)
    if "y_true" in arrays:
        _check_no_missing(arrays["y_true"], "y_true")
    return check_consistent_length(**arrays)


def _check_no_missing(values: Any, name: str) -> None:
    """Raise if ``values`` holds NaN, infinity or None."""
    import pandas as pd

    arr = np.asarray(values.detach().cpu() if hasattr(values, "detach") else values)
    if arr.dtype.kind in "fc":
        bad = int(np.sum(~np.isfinite(arr)))
    elif arr.dtype.kind == "O":
        bad = int(np.sum(pd.isna(arr)))
    else:
        bad = 0
    if bad:
        raise ValueError(f"`{name}` contains {bad} NaN, infinite or missing value(s).")


def check_min_group_size(min_group_size: Any) -> int:
    """Return ``min_group_size`` as an int >= 0 (a ``ValueError`` otherwise)."""
    if (
        isinstance(min_group_size, bool)
        or not isinstance(min_group_size, (int, np.integer))
        or min_group_size < 0
    ):
        raise ValueError(f"`min_group_size` must be an integer >= 0; got {min_group_size!r}.")
    return int(min_group_size)


def small_group_rule(
    codes: np.ndarray,
    groups: np.ndarray,
    min_group_size: int,
    *,
    what: str = "the gap",
    flagged: str = "",
) -> tuple[np.ndarray, str | None, bool]:
    """Apply the one small-group rule of the max-gap measures and ``fairness_report``.

    A group with fewer than ``min_group_size`` rows is small. When at least two groups
    reach the size, the small ones are left out of the gaps (a rate of 2 or 6 people
    moves by 17-50 points per person, so the largest pairwise gap would be theirs);
    when fewer than two reach it, every group is kept (there is nothing else to
    compare). Either way a message names each small group and its size.

    Returns
    -------
    small : ndarray of bool, shape (n_groups,)
        Whether each group is small.
    message : str or None
        The warning's text (``None`` when no group is small).
    exclude : bool
        Whether the small groups are left out.
    """
    counts = np.bincount(np.asarray(codes, dtype=np.int64), minlength=len(groups))
    small = counts < min_group_size
    if not small.any():
        return small, None, False
    named = describe_groups(small_groups(codes, groups, min_group_size))
    head = f"group(s) {named} have fewer than min_group_size={min_group_size} samples"
    if (~small).sum() >= 2:
        return small, f"{head}: left out of {what} ({flagged}min_group_size=0 keeps them)", True
    return (
        small,
        (
            f"{head}; fewer than two groups reach it, so every group is kept in {what} "
            "(computed on small samples)"
        ),
        False,
    )


def encode_metric_groups(
    sensitive_features: Any, min_group_size: int = MIN_GROUP_SIZE
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Encode the groups of a max-gap metric call under the small-group rule.

    :func:`small_group_rule` decides, as in :func:`otfair.metrics.fairness_report`:
    a ``UserWarning`` names the groups under ``min_group_size``, left out when at least
    two groups reach it.

    Returns
    -------
    codes : ndarray of int, shape (n_kept,)
        Group code of each kept row (renumbered over the kept groups).
    groups : ndarray
        The kept groups.
    rows : ndarray of bool, shape (n,)
        Which rows are kept.
    """
    size = check_min_group_size(min_group_size)
    codes, groups = encode_groups(sensitive_features, "sensitive_features")
    small, message, exclude = small_group_rule(codes, groups, size, what="the gap")
    if message is not None:
        warnings.warn(message, UserWarning, stacklevel=4)
    if exclude:
        return drop_groups(codes, groups, small)
    return codes, groups, np.ones(len(codes), dtype=bool)


def drop_groups(
    codes: np.ndarray, groups: np.ndarray, drop: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Leave out the groups flagged in ``drop`` (bool, one per group) and their rows.

    Returns
    -------
    codes : ndarray of int, shape (n_kept,)
        Group code of each kept row, renumbered over the kept groups.
    groups : ndarray
        The kept groups.
    rows : ndarray of bool, shape (n,)
        Which rows are kept.
    """
    keep = np.flatnonzero(~drop)
    remap = np.full(len(groups), -1, dtype=np.int64)
    remap[keep] = np.arange(len(keep))
    rows = ~drop[codes]
    return remap[codes[rows]], groups[keep], rows


class MetricInput(NamedTuple):
    """The validated arrays of a metric call (:func:`validate_metric_input`).

    Attributes
    ----------
    y : ndarray of shape (n,)
        Labels in {0, 1} (``labels="binary"``) or real targets (``"real"``); empty for
        ``"length"`` (the measure does not read the labels).
    score : ndarray of float, shape (n,)
        Scores or predictions.
    codes, groups : ndarray
        Group code of each row and the group values (``groups="max_gap"``; empty
        otherwise).
    columns : ndarray of float, shape (n, k)
        Numeric sensitive columns (``groups="columns"``; empty otherwise).
    """

    y: np.ndarray
    score: np.ndarray
    codes: np.ndarray
    groups: np.ndarray
    columns: np.ndarray


def validate_metric_input(
    y_true: Any,
    y_score: Any,
    sensitive_features: Any = None,
    pos_label: Any = None,
    min_group_size: int = MIN_GROUP_SIZE,
    *,
    labels: Literal["binary", "real", "length"] = "binary",
    probabilities: bool = False,
    groups: Literal["max_gap", "columns", "none"] = "max_gap",
    score_name: str = "y_score",
) -> MetricInput:
    """Validate the arguments of a metric call and return the clean arrays.

    The one prologue of the public metrics (fairlearn's
    ``_validate_and_reformat_input``): equal lengths and a ``y_true`` without holes;
    then the labels, the scores and the sensitive attribute, each error naming the
    argument.

    Parameters
    ----------
    y_true, y_score, sensitive_features
        The metric's arguments (``y_score`` is named ``score_name`` in messages).
    pos_label : int, float, bool or str, optional
        The positive class of ``y_true`` and of predicted labels passed as ``y_score``
        (:func:`otfair.utils.check_predictions`, the one rule of every metric).
    min_group_size : int, default=30
        The small-group rule's size (``groups="max_gap"``).
    labels : {"binary", "real", "length"}, default="binary"
        ``"binary"``: two classes mapped to 0/1 with ``pos_label`` (0/1 without it);
        ``"real"``: finite targets, and ``y_score`` finite predictions (never labels);
        ``"length"``: ``y_true`` is not read (with ``pos_label`` it must still be two
        classes, one of them ``pos_label``).
    probabilities : bool, default=False
        Whether the scores must lie in [0, 1].
    groups : {"max_gap", "columns", "none"}, default="max_gap"
        ``"max_gap"``: encode the groups under the small-group rule
        (:func:`encode_metric_groups`; the rows of left-out groups are dropped from
        ``y`` and ``score``); ``"columns"``: numeric sensitive columns;
        ``"none"``: no sensitive attribute.
    score_name : str, default="y_score"
        Name of ``y_score`` in messages (``"y_pred"`` for regression).

    Returns
    -------
    MetricInput
    """
    arrays = {"y_true": y_true, score_name: y_score}
    if groups != "none":
        arrays["sensitive_features"] = sensitive_features
    n = check_lengths(**arrays)
    y = np.empty(0, dtype=np.int64)
    if labels == "real":
        y = check_finite_1d(y_true, "y_true")
        score = check_finite_1d(y_score, score_name)
    else:
        if labels == "binary" or pos_label is not None:
            checked = check_binary_labels(y_true, "y_true", pos_label=pos_label)
            y = checked if labels == "binary" else y
        score = check_predictions(
            y_score, score_name, y_true=y_true, pos_label=pos_label, probabilities=probabilities
        )
    none = np.empty(0, dtype=np.int64)
    if groups == "columns":  # the report's columns: categories one-hot, numbers as they are
        try:
            columns = split_sensitive(sensitive_features).linear  # its length checked above
        except ValueError:  # e.g. one constant column: numbers, which contribute 0
            columns = check_sensitive_features(sensitive_features, n)
        return MetricInput(y, score, none, none, columns)
    if groups == "none":
        return MetricInput(y, score, none, none, none)
    codes, kept, rows = encode_metric_groups(sensitive_features, min_group_size)
    return MetricInput(y[rows] if y.size else y, score[rows], codes, kept, none)


def encode_two_groups(sensitive_features: Any) -> tuple[np.ndarray, np.ndarray]:
    """Encode a sensitive attribute that must define exactly two groups (codes 0 and 1)."""
    codes, groups = encode_groups(sensitive_features)
    if len(groups) != 2:
        raise ValueError(
            f"`sensitive_features` must define exactly two groups; got {len(groups)}."
        )
    return codes, groups


def check_threshold(threshold: float) -> float:
    """Return ``threshold`` as a float in [0, 1]."""
    try:
        value = float(threshold)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`threshold` must be a number; got {threshold!r}.") from exc
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"`threshold` must lie in [0, 1]; got {value}.")
    return value


def group_means(
    values: np.ndarray, codes: np.ndarray, n_groups: int, mask: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per-group mean of ``values`` (restricted to ``mask``) and per-group counts.

    Groups without any sample get a NaN mean.
    """
    if mask is not None:
        values, codes = values[mask], codes[mask]
    counts = np.bincount(codes, minlength=n_groups).astype(np.float64)
    sums = np.bincount(codes, weights=values.astype(np.float64), minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.where(counts > 0, counts, 1.0), np.nan)
    return means, counts.astype(np.int64)


def max_pairwise_gap(values: np.ndarray) -> float:
    r"""Largest absolute difference between any two entries: :math:`\max_g v_g - \min_g v_g`.

    Returns NaN when any entry is NaN (the gap is then undefined).
    """
    values = np.asarray(values, dtype=np.float64)
    if np.any(np.isnan(values)):
        return float("nan")
    return float(values.max() - values.min())


def require_defined(
    values: np.ndarray, groups: np.ndarray, what: str, argument: str = "sensitive_features"
) -> None:
    """Raise a ``ValueError`` listing the groups for which ``what`` is undefined."""
    bad = [str(g) for g, v in zip(groups, values, strict=True) if np.isnan(v)]
    if bad:
        raise ValueError(f"{what} is undefined for group(s) {bad} of `{argument}`: no samples.")


def check_matrix(X: Any, name: str) -> np.ndarray:
    """Return ``X`` as a finite float (n, d) array (a 1-D input becomes one column)."""
    if hasattr(X, "to_numpy"):
        X = X.to_numpy()
    try:
        x = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"`{name}` must be a numeric array of shape (n, d).") from exc
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[0] == 0:
        raise ValueError(f"`{name}` must have shape (n, d) with n > 0; got {x.shape}.")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"`{name}` contains NaN or infinite values.")
    return x
