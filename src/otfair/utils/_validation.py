"""Input validation shared by metrics, penalties and estimators.

Every check raises a ``ValueError`` (or ``TypeError``) whose message names the argument
that is wrong and what was expected, so that users never see a deep numpy or torch
traceback for a malformed input.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

#: Fewest rows of a sensitive group for which a measured rate or gap is reported without a
#: warning. With 30 rows one person moves a group's rate by at most 3.3 points and the
#: standard error of a rate is at most 0.5 / sqrt(30) = 0.09, the usual floor for a normal
#: approximation of a proportion. Metrics warn below it; ``fairness_report`` also leaves
#: such groups out of its max gaps when at least two groups reach it.
MIN_GROUP_SIZE = 30

#: Fewest rows of a sensitive group that a fairness penalty can be trained with: every
#: penalty estimates a per-group quantity (a rate, a distribution, a matching) from the
#: group's rows, and a single row gives no estimate (and cannot sit in every batch).
MIN_TRAIN_GROUP_SIZE = 2


def _to_numpy(x: Any, name: str) -> np.ndarray:
    """Convert array-likes (lists, pandas, torch tensors) to a numpy array."""
    if x is None:
        raise ValueError(f"`{name}` is required but got None.")
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # torch tensor, without importing torch
        x = x.detach().cpu().numpy()
    if isinstance(x, (pd.Series, pd.DataFrame)):
        x = x.to_numpy()
    try:
        return np.asarray(x)
    except Exception as exc:  # pragma: no cover - exotic inputs
        raise TypeError(f"`{name}` must be array-like; got {type(x).__name__}.") from exc


def _column(arr: np.ndarray) -> np.ndarray:
    """Flatten a column vector of shape (n, 1) to shape (n,); leave other arrays as they are."""
    return arr[:, 0] if arr.ndim == 2 and arr.shape[1] == 1 else arr


def _nonempty_1d(arr: np.ndarray, name: str) -> np.ndarray:
    """``arr`` as a non-empty 1-D array (a column vector is flattened), or a ValueError."""
    arr = _column(arr)
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D (n,), got shape {arr.shape}.")
    if arr.size == 0:
        raise ValueError(f"`{name}` is empty.")
    return arr


def check_finite_1d(x: Any, name: str, *, dtype: type = np.float64) -> np.ndarray:
    """Return ``x`` as a finite 1-D array.

    Parameters
    ----------
    x : array-like of shape (n,)
        Values to check. A column vector of shape (n, 1) is accepted and flattened.
    name : str
        Argument name used in error messages.
    dtype : type, default=np.float64
        Output dtype.

    Returns
    -------
    numpy.ndarray of shape (n,)

    Raises
    ------
    ValueError
        If ``x`` is empty, not 1-D, not numeric or contains NaN/inf.
    """
    arr = _nonempty_1d(_to_numpy(x, name), name)
    try:
        arr = arr.astype(dtype)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"`{name}` must be numeric; got dtype {arr.dtype}.") from exc
    if not np.all(np.isfinite(arr)):
        bad = int(np.sum(~np.isfinite(arr)))
        raise ValueError(f"`{name}` contains {bad} NaN or infinite value(s).")
    return arr


def _n_rows(a: Any) -> int:
    """Return the first dimension of an array-like (``shape[0]``, sparse too), else len."""
    shape = getattr(a, "shape", None)
    return int(shape[0]) if shape is not None and len(shape) else len(a)


def check_consistent_length(**arrays: Any) -> int:
    """Check that all named arrays have the same first dimension and return it.

    Examples
    --------
    >>> check_consistent_length(y_true=[0, 1], y_pred=[1, 1])
    2
    """
    lengths = {name: _n_rows(a) for name, a in arrays.items() if a is not None}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"`{k}` has {v}" for k, v in lengths.items())
        raise ValueError(f"Inconsistent numbers of samples: {desc}.")
    return next(iter(lengths.values())) if lengths else 0


def check_binary_labels(y: Any, name: str = "y_true", *, pos_label: Any = None) -> np.ndarray:
    """Return binary labels as an int array of 0/1.

    Without ``pos_label``: booleans and numbers equal to 0 or 1. With ``pos_label``: any
    two label values (strings too, e.g. ``"yes"``/``"no"``); ``pos_label`` becomes 1 and
    the other value 0. Anything else raises a ``ValueError`` naming ``name``.

    Examples
    --------
    >>> check_binary_labels(["yes", "no", "yes"], pos_label="yes")
    array([1, 0, 1])
    """
    if pos_label is not None:
        return _labels_with_positive(y, name, pos_label)
    arr = _to_numpy(y, name)
    if arr.dtype.kind in "OUS":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            shown = pd.unique(arr.ravel())[:5].tolist()
            raise ValueError(
                f"`{name}` holds non-numeric labels {shown}: pass `pos_label` (the value "
                "of the positive class) to use them."
            ) from None
    arr = check_finite_1d(arr, name)
    bad = ~np.isin(arr, (0.0, 1.0))
    if np.any(bad):
        shown = np.unique(arr[bad])[:5].tolist()
        raise ValueError(
            f"`{name}` must contain binary labels in {{0, 1}}; found other values {shown}."
        )
    return arr.astype(np.int64)


def _labels_with_positive(y: Any, name: str, pos_label: Any) -> np.ndarray:
    """0/1 labels from two label values, 1 where ``y == pos_label``."""
    arr = _nonempty_1d(_to_numpy(y, name), name)
    if bool(np.any(pd.isna(arr))):
        raise ValueError(f"`{name}` contains missing values (None/NaN).")
    values = pd.unique(arr)
    if len(values) > 2:
        raise ValueError(
            f"`{name}` must hold two classes; found {len(values)} ({values[:5].tolist()})."
        )
    positive = arr == pos_label
    if len(values) == 2 and not positive.any():
        raise ValueError(
            f"`pos_label`={pos_label!r} is not one of the labels of `{name}` ({values.tolist()})."
        )
    return np.asarray(positive, dtype=np.int64)


def _is_numeric_array(arr: np.ndarray) -> bool:
    """Whether an array holds numbers (booleans too), not strings or other objects."""
    if arr.dtype.kind in "biuf":
        return True
    if arr.dtype.kind != "O":
        return False
    kind = pd.api.types.infer_dtype(arr, skipna=False)
    return kind in ("integer", "floating", "mixed-integer-float", "boolean", "decimal")


def small_groups(
    codes: np.ndarray, groups: np.ndarray, minimum: int = MIN_GROUP_SIZE
) -> list[tuple[Any, int]]:
    """``(group, rows)`` of every group with fewer than ``minimum`` rows, in group order."""
    counts = np.bincount(np.asarray(codes, dtype=np.int64), minlength=len(groups))
    return [(groups[g], int(counts[g])) for g in np.flatnonzero(counts < minimum)]


def describe_groups(found: list[tuple[Any, int]]) -> str:
    """``"F (n=1), M (n=3)"``: groups and their sizes, as messages name them."""
    return ", ".join(f"{group!s} (n={size})" for group, size in found)


def warn_small_groups(
    codes: np.ndarray,
    groups: np.ndarray,
    minimum: int = MIN_GROUP_SIZE,
    name: str = "sensitive_features",
    *,
    stacklevel: int = 3,
) -> None:
    """Warn (``UserWarning``) naming the groups with fewer than ``minimum`` rows."""
    found = small_groups(codes, groups, minimum)
    if found:
        warnings.warn(
            f"`{name}` group(s) {describe_groups(found)} have fewer than {minimum} rows: "
            "their rates rest on a handful of samples, so the gap is unreliable.",
            UserWarning,
            stacklevel=stacklevel,
        )


def check_group_sizes(
    codes: np.ndarray,
    groups: np.ndarray,
    minimum: int = MIN_TRAIN_GROUP_SIZE,
    name: str = "sensitive_features",
) -> None:
    """Refuse training data in which a sensitive group has fewer than ``minimum`` rows.

    Called before the first epoch of a fairness-penalized fit, so that a one-row group
    fails at once with its name and size (not deep inside the penalty).

    Raises
    ------
    ValueError
        Naming each small group and its number of rows.

    Examples
    --------
    >>> check_group_sizes(np.array([0, 0, 1]), np.array(["F", "M"]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: `sensitive_features` group(s) M (n=1) have fewer than 2 rows: ...
    """
    found = small_groups(codes, groups, minimum)
    if found:
        raise ValueError(
            f"`{name}` group(s) {describe_groups(found)} have fewer than {minimum} rows: "
            "a fairness penalty cannot be trained on them; merge them into another group, "
            "drop their rows, or collect more data."
        )


def check_probabilities(p: Any, name: str = "y_score") -> np.ndarray:
    """Return scores as a float array, checking that they lie in [0, 1]."""
    arr = check_finite_1d(p, name)
    if arr.min() < 0.0 or arr.max() > 1.0:
        raise ValueError(
            f"`{name}` must be probabilities in [0, 1]; got range "
            f"[{arr.min():.4g}, {arr.max():.4g}]. Pass scores, not logits."
        )
    return arr


def encode_groups(
    sensitive_features: Any, name: str = "sensitive_features", *, min_groups: int = 2
) -> tuple[np.ndarray, np.ndarray]:
    """Encode a discrete sensitive attribute as integer group codes.

    Several columns (an (n, k) array or DataFrame) are combined into one group per
    distinct row, as fairlearn does for intersectional groups.

    Parameters
    ----------
    sensitive_features : array-like of shape (n,) or (n, k)
        Group membership, any hashable values (strings, ints, booleans).
    name : str
        Argument name for error messages.
    min_groups : int, default=2
        Minimum number of distinct groups required.

    Returns
    -------
    codes : numpy.ndarray of shape (n,)
        Integer code in ``range(len(groups))`` for every sample.
    groups : numpy.ndarray
        The distinct group values (rows joined by ``","`` for several columns),
        in sorted order; ``groups[codes[i]]`` is the group of sample ``i``.
    """
    arr = _to_numpy(sensitive_features, name)
    _check_one_kind(sensitive_features, arr, name)
    arr = _column(arr)
    if arr.ndim == 2:
        if arr.shape[0] == 0:
            raise ValueError(f"`{name}` is empty.")
        _check_no_nan(arr, name)
        return _encode_intersectional(arr, name, min_groups)
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must have shape (n,) or (n, k); got {arr.shape}.")
    if arr.size == 0:
        raise ValueError(f"`{name}` is empty.")
    _check_no_nan(arr, name)
    groups, codes = np.unique(arr, return_inverse=True)
    if len(groups) < min_groups:
        raise ValueError(
            f"`{name}` must contain at least {min_groups} groups; found only "
            f"{len(groups)} ({groups.tolist()})."
        )
    return codes.astype(np.int64), groups


def _encode_intersectional(
    arr: np.ndarray, name: str, min_groups: int
) -> tuple[np.ndarray, np.ndarray]:
    """Encode the distinct rows of an (n, k) array as groups labelled ``"a,b"``.

    Each column is factorized on its own and the codes are combined with
    ``numpy.ravel_multi_index``: O(n k) vectorized work instead of joining strings row
    by row (6-8x faster at n = 50,000). Groups are ordered lexicographically by column.
    """
    levels, per_column = [], []
    for j in range(arr.shape[1]):
        inv, lev = pd.factorize(pd.Series(arr[:, j]).astype(str), sort=True)
        levels.append(np.asarray(lev))
        per_column.append(inv)
    dims = tuple(len(lev) for lev in levels)
    present, codes = np.unique(np.ravel_multi_index(tuple(per_column), dims), return_inverse=True)
    parts = np.unravel_index(present, dims)
    groups = np.array(
        [
            ",".join(str(levels[j][parts[j][g]]) for j in range(len(dims)))
            for g in range(len(present))
        ],
        dtype=object,
    )
    if len(groups) < min_groups:
        raise ValueError(
            f"`{name}` must contain at least {min_groups} groups; found only "
            f"{len(groups)} ({groups.tolist()})."
        )
    return codes.astype(np.int64), groups


def _check_one_kind(x: Any, arr: np.ndarray, name: str) -> None:
    """Refuse group values that mix text with numbers (``[1, "1"]``).

    numpy would sort such an object array with a ``TypeError`` (``'<' not supported``),
    and silently turn a mixed list into strings, merging ``1`` and ``"1"`` into one
    group; neither names the argument.
    """
    if arr.dtype == object:
        values = arr
    elif arr.dtype.kind == "U" and isinstance(x, (list, tuple)):
        values = np.asarray(x, dtype=object)
    else:
        return
    columns = values.T if values.ndim == 2 else values.reshape(1, -1)  # one kind per column
    for column in columns:
        types = {type(v) for v in column if not _is_missing(v)}  # missing: said below
        text = {t for t in types if issubclass(t, (str, bytes))}
        if text and len(text) < len(types):
            shown = ", ".join(sorted(t.__name__ for t in types))
            raise ValueError(
                f"`{name}` mixes value types ({shown}), e.g. 1 and '1': give every group "
                "value one type (all strings or all numbers)."
            )


def _is_missing(value: Any) -> bool:
    """Whether a group value is missing: None, pandas' NA or a float NaN."""
    return value is None or value is pd.NA or (isinstance(value, float) and value != value)


def _check_no_nan(arr: np.ndarray, name: str) -> None:
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"`{name}` contains NaN or infinite values.")
    elif arr.dtype == object and any(
        _is_missing(v) or (isinstance(v, float) and not np.isfinite(v)) for v in arr.ravel()
    ):
        raise ValueError(f"`{name}` contains missing values (None/NaN).")


def check_sensitive_features(
    sensitive_features: Any, n_samples: int | None = None, name: str = "sensitive_features"
) -> np.ndarray:
    """Return sensitive attributes as a finite 2-D float array of shape (n, k).

    Used where sensitive attributes enter arithmetic (OTF constraint rows, Pearson
    violations): binary, one-hot and continuous columns are all allowed. A 1-D input
    becomes one column. Non-numeric input raises a ``ValueError`` suggesting
    one-hot encoding.
    """
    arr = _to_numpy(sensitive_features, name)
    _check_one_kind(sensitive_features, arr, name)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"`{name}` must have shape (n,) or (n, k); got {arr.shape}.")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"`{name}` is empty (shape {arr.shape}).")
    try:
        arr = arr.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"`{name}` must be numeric (one-hot encode categorical attributes); "
            f"got dtype {arr.dtype}."
        ) from exc
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"`{name}` contains NaN or infinite values.")
    if n_samples is not None and arr.shape[0] != n_samples:
        raise ValueError(f"`{name}` has {arr.shape[0]} rows but {n_samples} samples expected.")
    return arr
