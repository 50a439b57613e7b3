"""The store's row check: every stored row reads back whole (its JSON, its key metrics).

SQLite's own checks (:mod:`otfair_lab.experiments._store_files`) look at the B-trees, not the
values; :func:`check_rows` decodes every row and compares its panel with its key-metric
columns, so a damaged or edited row is found before a sweep or a report trusts it.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from otfair_lab.experiments._store_files import (
    SOUND_STORES,
    StoreError,
    connect_read_only,
    damaged_message,
    file_state,
    store_error,
)

#: Panel entries that also get their own column (for SQL queries and CSV readers).
KEY_METRICS = (
    "accuracy",
    "auc",
    "r2",
    "mse",
    "dp_gap",
    "mean_score_gap",
    "wdp",
    "eo_gap",
    "error_gap",
    "pdp_violation",
    "peo_violation",
)


def _as_float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _row_damage(key: str, config: str, metrics: str | None, columns: Sequence[Any]) -> str:
    """Say what is wrong with one stored row (empty when nothing is)."""
    try:
        json.loads(config)
        panel = json.loads(metrics) if metrics else {}
    except ValueError as exc:
        return f"row {key}: a column is not JSON ({exc})"
    if not isinstance(panel, dict):
        return f"row {key}: its panel is not a JSON object"
    for metric, column in zip(KEY_METRICS, columns, strict=True):
        value = _as_float(panel.get(metric))
        if value != column and not (value is None and column is None):
            return (
                f"row {key}: its panel's {metric} {value!r} is not its {metric} column "
                f"{column!r} (an edited or damaged row)"
            )
    return ""


def check_rows(path: Path) -> None:
    """Raise :class:`StoreError` unless every row of the store ``path`` reads back whole.

    SQLite's checks pass a page whose text bytes were overwritten (64 random bytes in a
    data page): they check the B-trees, not the values. Every row's text is decoded
    here, its ``config`` and panel parsed as JSON, and the panel's key metrics compared
    with their columns (written from the same value, so one edited digit shows). Read
    only; a store found sound is not read again in this process until its file changes.
    """
    if not path.is_file() or path.stat().st_size == 0:
        return
    state = file_state(path)
    if state in SOUND_STORES:
        return
    conn = connect_read_only(path)
    try:
        have = {r[1] for r in conn.execute("PRAGMA table_info(runs)")}
        if {"key", "config", "metrics", *KEY_METRICS} <= have:  # else: an older store
            query = f"SELECT key, config, metrics, {', '.join(KEY_METRICS)} FROM runs"
            for key, config, metrics, *columns in conn.execute(query):
                damage = _row_damage(key, config, metrics, columns)
                if damage:
                    raise StoreError(damaged_message(path, damage))
    except sqlite3.Error as exc:
        raise store_error(path, exc) from None
    finally:
        conn.close()
    SOUND_STORES.add(state)
