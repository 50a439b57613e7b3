"""Reading raw files: cached parsing and clear errors for malformed files."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from otfair.datasets._errors import MalformedFileError
from otfair.datasets._fetch import DataHome, fetch_file

__all__ = [
    "MalformedFileError",
    "categorical_columns",
    "check_choice",
    "read_table",
    "require_columns",
]


@functools.lru_cache(maxsize=32)
def _read_cached(path: str, mtime_ns: int, size: int, kwargs: tuple) -> pd.DataFrame:
    del mtime_ns, size  # part of the cache key only: a changed file is parsed again
    try:
        return pd.read_csv(path, **dict(kwargs))
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError, EOFError, OSError) as exc:
        raise MalformedFileError(f"{path} could not be parsed: {exc}") from exc


def read_table(
    relpath: str,
    data_home: DataHome,
    *,
    columns: Sequence[str] | None = None,
    **read_csv_kwargs: Any,
) -> pd.DataFrame:
    """Fetch ``relpath`` and parse it with :func:`pandas.read_csv` (cached in-process).

    Parameters
    ----------
    relpath : str
        File path relative to the data directory.
    data_home : path or None
        See :func:`otfair.datasets.get_data_home`.
    columns : sequence of str, optional
        Columns the parsed frame must contain.
    **read_csv_kwargs
        Passed to :func:`pandas.read_csv` (values must be hashable).

    Returns
    -------
    pandas.DataFrame
        A copy: callers may modify it.
    """
    path = fetch_file(relpath, data_home)
    stat = path.stat()
    key = tuple(sorted((k, _freeze(v)) for k, v in read_csv_kwargs.items()))
    frame = _read_cached(str(path), stat.st_mtime_ns, stat.st_size, key)
    if columns is not None:
        require_columns(frame, columns, path)
    return frame.copy()


def require_columns(frame: pd.DataFrame, columns: Iterable[str], path: str | Path) -> None:
    """Raise :class:`MalformedFileError` naming ``path`` if ``columns`` are missing."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise MalformedFileError(
            f"{path} is malformed: expected columns {missing} are missing "
            f"(found {list(frame.columns)[:8]}{'...' if frame.shape[1] > 8 else ''})."
        )


def _freeze(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(value)
    if isinstance(value, dict):
        return tuple(sorted(value.items()))
    return value


def check_choice(value: Any, name: str, choices: Sequence[Any]) -> Any:
    """Return ``value`` if it is one of ``choices``, else raise a ValueError listing them."""
    if value not in choices:
        raise ValueError(f"`{name}` must be one of {list(choices)}; got {value!r}.")
    return value


def categorical_columns(frame: pd.DataFrame) -> list[str]:
    """Return the columns of ``frame`` that are not numeric (one-hot encoded later)."""
    return [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
