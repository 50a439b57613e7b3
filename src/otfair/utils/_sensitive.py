"""The one rule for sensitive columns: categorical groups unless declared continuous.

Used by every estimator, penalty, metric and command that reads sensitive attributes
(``FairClassifier``, :func:`otfair.metrics.fairness_report`, ``otfair audit``,
``otfair fit``):

- a column is *categorical*: its values name groups (strings, booleans, categories, or
  numbers such as 0/1/2 - three groups, not a quantity);
- a column is *continuous* only when declared so (``sensitive_type="continuous"``, a
  per-column mapping or sequence, ``otfair audit --continuous COL``), or when it is
  numeric with more than ``max_categories`` (default 10) distinct values and not declared
  categorical: as groups it would split the data into more than ten groups of a few
  people each (ages, incomes, scaled scores);
- group measures and group penalties use the intersectional groups of the categorical
  columns; linear measures and penalties (PDP/PEO, OTF, Norm) use every column: a
  two-level categorical column becomes one 0/1 indicator (of its second level in sorted
  order: 1 for a 0/1 column, so 0/1 data is used unchanged), a categorical column with
  more levels is one-hot encoded (one column per level), continuous columns are used as
  they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from otfair.utils._validation import _check_one_kind, encode_groups

#: Declared kinds of a sensitive column.
SENSITIVE_TYPES = ("categorical", "continuous")
#: A numeric column with more distinct values than this is continuous unless declared.
MAX_CATEGORIES = 10


@dataclass(frozen=True)
class SensitiveColumns:
    """Sensitive attributes split into discrete groups and numeric linear columns.

    Attributes
    ----------
    codes : ndarray of int of shape (n,) or None
        Intersectional group code of each sample (None without categorical columns).
    groups : ndarray or None
        Group labels; ``groups[codes[i]]`` is the group of sample ``i``.
    linear : ndarray of shape (n, k)
        Numeric columns for the PDP/PEO correlations.
    linear_names : list of str
        Names of the linear columns (``"race=Black"`` for one-hot levels).
    categorical : list of str
        Names of the columns that define the groups.
    continuous : list of str
        Names of the continuous columns.
    """

    codes: np.ndarray | None
    groups: np.ndarray | None
    linear: np.ndarray
    linear_names: list[str]
    categorical: list[str]
    continuous: list[str]


def as_frame(sensitive_features: Any, name: str = "sensitive_features") -> pd.DataFrame:
    """Return the sensitive attributes as a DataFrame with string column names."""
    if sensitive_features is None:
        raise ValueError(f"`{name}` is required but got None.")
    if isinstance(sensitive_features, pd.DataFrame):
        frame = sensitive_features.reset_index(drop=True)
    elif isinstance(sensitive_features, pd.Series):
        frame = sensitive_features.reset_index(drop=True).to_frame(
            name=sensitive_features.name if sensitive_features.name is not None else "s"
        )
    else:
        x = sensitive_features
        if hasattr(x, "detach") and hasattr(x, "cpu"):
            x = x.detach().cpu().numpy()
        arr = np.asarray(x)
        _check_one_kind(x, arr, name)
        if arr.ndim == 1:
            frame = pd.DataFrame({"s": arr})
        elif arr.ndim == 2:
            cols = ["s"] if arr.shape[1] == 1 else [f"s{j}" for j in range(arr.shape[1])]
            frame = pd.DataFrame(arr, columns=cols)
        else:
            raise ValueError(f"`{name}` must have shape (n,) or (n, k); got {arr.shape}.")
    if frame.shape[0] == 0 or frame.shape[1] == 0:
        raise ValueError(f"`{name}` is empty (shape {frame.shape}).")
    for col in frame.columns:
        if frame[col].dtype == object:
            _check_one_kind(None, frame[col].to_numpy(), name)
    if frame.isna().to_numpy().any():
        bad = [str(c) for c in frame.columns if frame[c].isna().any()]
        raise ValueError(f"`{name}` contains missing values (NaN/None) in column(s) {bad}.")
    frame.columns = [str(c) for c in frame.columns]
    return frame


def _declared_types(sensitive_type: Any, columns: list[str], name: str) -> dict[str, str]:
    """``{column: kind}`` of the declared columns (see :func:`split_sensitive`)."""
    if sensitive_type is None:
        return {}
    if isinstance(sensitive_type, str):
        declared = dict.fromkeys(columns, sensitive_type)
    elif isinstance(sensitive_type, Mapping):
        declared = {str(k): v for k, v in sensitive_type.items()}
        unknown = [c for c in declared if c not in columns]
        if unknown:
            raise ValueError(
                f"`sensitive_type` names column(s) {unknown} that `{name}` does not have; "
                f"its columns: {columns}."
            )
    else:
        kinds = list(sensitive_type)
        if len(kinds) != len(columns):
            raise ValueError(
                f"`sensitive_type` gives {len(kinds)} kind(s) for the {len(columns)} "
                f"column(s) of `{name}`."
            )
        declared = dict(zip(columns, kinds, strict=True))
    for col, kind in declared.items():
        if kind not in SENSITIVE_TYPES:
            raise ValueError(
                f"`sensitive_type` must be 'categorical' or 'continuous' (or a mapping / "
                f"sequence of them); got {kind!r} for column {col!r}."
            )
    return declared


def _is_categorical(col: pd.Series, max_categories: int) -> bool:
    if not pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
        return True
    return col.nunique() <= max_categories


def split_sensitive(
    sensitive_features: Any,
    *,
    max_categories: int = MAX_CATEGORIES,
    sensitive_type: Any = None,
    name: str = "sensitive_features",
) -> SensitiveColumns:
    """Split sensitive attributes into groups and linear columns (see module docstring).

    Parameters
    ----------
    sensitive_features : array-like of shape (n,) or (n, k), Series or DataFrame
        Sensitive attributes.
    max_categories : int, default=10
        An undeclared numeric column with more distinct values is continuous.
    sensitive_type : {"categorical", "continuous"}, mapping, sequence or None
        Declared kind of every column (a string), of named columns (a mapping
        ``{column: kind}``; others follow the default rule) or of each column in order
        (a sequence). ``None``: the default rule.
    name : str
        Argument name for error messages.

    Raises
    ------
    ValueError
        On NaN, an empty input, non-finite or non-numeric continuous values, an unknown
        kind or column in ``sensitive_type``, or categorical columns that define only one
        group.

    Examples
    --------
    >>> import numpy as np
    >>> cols = split_sensitive(np.c_[[0, 1, 1, 0], [20.0, 35.5, 41.0, 63.0]], max_categories=3)
    >>> cols.groups.tolist(), cols.linear.shape  # column 0: groups; column 1: continuous
    ([0.0, 1.0], (4, 2))
    """
    if (
        isinstance(max_categories, bool)
        or not isinstance(max_categories, (int, np.integer))
        or max_categories < 1
    ):
        raise ValueError(f"`max_categories` must be an integer >= 1; got {max_categories!r}.")
    frame = as_frame(sensitive_features, name)
    declared = _declared_types(sensitive_type, list(frame.columns), name)
    categorical = [
        c
        for c in frame.columns
        if declared.get(c) == "categorical"
        or (declared.get(c) is None and _is_categorical(frame[c], max_categories))
    ]
    continuous = [c for c in frame.columns if c not in categorical]
    linear_cols, linear_names = _linear_columns(frame, continuous, name)
    codes = groups = None
    if categorical:
        codes, groups = _intersectional_groups(frame[categorical], name)
    return SensitiveColumns(
        codes=codes,
        groups=groups,
        linear=np.column_stack(linear_cols),
        linear_names=linear_names,
        categorical=categorical,
        continuous=continuous,
    )


def _linear_columns(
    frame: pd.DataFrame, continuous: list[str], name: str
) -> tuple[list[np.ndarray], list[str]]:
    """Return the numeric columns of PDP/PEO and their names, in the frame's order.

    A continuous column stays as it is (numeric and finite, or a ValueError); a
    categorical one becomes 0/1 indicators, one for a two-level column (its last level)
    and one per level otherwise.
    """
    for col in continuous:
        if not pd.api.types.is_numeric_dtype(frame[col]) or pd.api.types.is_bool_dtype(frame[col]):
            raise ValueError(
                f"`{name}` column {col!r} is declared continuous but holds "
                f"{frame[col].dtype} values; a continuous attribute must be numeric."
            )
    linear_cols: list[np.ndarray] = []
    linear_names: list[str] = []
    for col in frame.columns:
        values = frame[col]
        if col in continuous:
            arr = values.to_numpy(dtype=np.float64)
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"`{name}` column {col!r} contains infinite values.")
            linear_cols.append(arr)
            linear_names.append(col)
            continue
        inv, levels = _factorize_as_text(values)
        kept = [len(levels) - 1] if len(levels) == 2 else range(len(levels))
        for j in kept:
            linear_cols.append((inv == j).astype(np.float64))
            linear_names.append(f"{col}={levels[j]}")
    return linear_cols, linear_names


def _factorize_as_text(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """``pd.factorize(values.astype(str), sort=True)``, the text made of the distinct values only.

    Numeric columns are factorized on their values and only the distinct values are
    turned into text (converting every row cost ~5 ms on 20,000 rows, per fit); the
    levels and codes are the same whenever distinct values have distinct texts and no
    zero is negative (else the rows' texts are factorized, as before).
    """
    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        raw = values.to_numpy()
        codes, uniques = pd.factorize(raw)
        texts = pd.Series(uniques, dtype=values.dtype).astype(str).to_numpy()
        negative_zero = np.any((uniques == 0) & np.signbit(uniques))
        if len(set(texts)) == len(texts) and not negative_zero:
            order = np.argsort(texts, kind="stable")
            rank = np.empty(len(order), dtype=np.intp)
            rank[order] = np.arange(len(order))
            return rank[codes], texts[order]
    inv, levels = pd.factorize(values.astype(str), sort=True)
    return inv, np.asarray(levels)


def _intersectional_groups(frame: pd.DataFrame, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Encode the rows of categorical columns as groups.

    One column: the group labels are its values. Several columns: their intersectional
    groups, labelled ``"sex=0,race=1"`` (column names with the values as they appear in
    the data). The codes come from :func:`otfair.utils.encode_groups` (vectorized).
    """
    codes, groups = encode_groups(frame.to_numpy(), name)
    if frame.shape[1] == 1:
        return codes, groups
    _, first = np.unique(codes, return_index=True)
    labels = [
        ",".join(f"{col}={_value_text(frame[col].iloc[i])}" for col in frame.columns)
        for i in first
    ]
    return codes, np.asarray(labels, dtype=object)


def _value_text(value: Any) -> str:
    """``1.0`` -> ``"1"``; other values as ``str``."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)
