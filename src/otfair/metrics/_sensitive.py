"""How a report interprets its sensitive columns: discrete groups vs. linear columns.

Rule (used by :func:`otfair.metrics.fairness_report` and ``otfair audit``):

- a column is *categorical* when it is non-numeric (strings, booleans, categories) or has
  at most ``max_categories`` distinct values (default 10); otherwise it is *continuous*;
- group measures (DP, TPR/FPR, WDP, ... and the per-group table) use the intersectional
  groups of the categorical columns only; when every column is continuous they are
  undefined and reported as NaN (no arbitrary binning);
- linear measures (PDP/PEO) use every column: a two-level categorical column becomes one
  0/1 indicator, a categorical column with more levels is one-hot encoded (one column
  per level), continuous columns are used as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from otfair.utils import encode_groups


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
        if arr.ndim == 1:
            frame = pd.DataFrame({"s": arr})
        elif arr.ndim == 2:
            cols = ["s"] if arr.shape[1] == 1 else [f"s{j}" for j in range(arr.shape[1])]
            frame = pd.DataFrame(arr, columns=cols)
        else:
            raise ValueError(f"`{name}` must have shape (n,) or (n, k); got {arr.shape}.")
    if frame.shape[0] == 0 or frame.shape[1] == 0:
        raise ValueError(f"`{name}` is empty (shape {frame.shape}).")
    if frame.isna().to_numpy().any():
        bad = [str(c) for c in frame.columns if frame[c].isna().any()]
        raise ValueError(f"`{name}` contains missing values (NaN/None) in column(s) {bad}.")
    frame.columns = [str(c) for c in frame.columns]
    return frame


def _is_categorical(col: pd.Series, max_categories: int) -> bool:
    if not pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
        return True
    return col.nunique() <= max_categories


def split_sensitive(
    sensitive_features: Any, *, max_categories: int = 10, name: str = "sensitive_features"
) -> SensitiveColumns:
    """Split sensitive attributes into groups and linear columns (see module docstring).

    Raises
    ------
    ValueError
        On NaN, an empty input, non-finite continuous values, or categorical columns that
        define only one group.
    """
    if (
        isinstance(max_categories, bool)
        or not isinstance(max_categories, (int, np.integer))
        or max_categories < 1
    ):
        raise ValueError(f"`max_categories` must be an integer >= 1; got {max_categories!r}.")
    frame = as_frame(sensitive_features, name)
    categorical = [c for c in frame.columns if _is_categorical(frame[c], max_categories)]
    continuous = [c for c in frame.columns if c not in categorical]
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
        inv, levels = pd.factorize(values.astype(str), sort=True)
        kept = [len(levels) - 1] if len(levels) == 2 else range(len(levels))
        for j in kept:
            linear_cols.append((inv == j).astype(np.float64))
            linear_names.append(f"{col}={levels[j]}")
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
