"""The result store: one SQLite row per run, written atomically as each run finishes.

Design (why a sweep never loses or duplicates finished work):

- The database lives in the sweep's output directory (``results.sqlite``) in WAL mode
  with ``synchronous=FULL``; every finished run is one ``INSERT ... ON CONFLICT`` in its
  own transaction, so a process killed with SIGKILL leaves every committed row intact
  and no partial row.
- The primary key is the run key (a hash of dataset, options, method, strength, notion,
  seed, split and budget, see :meth:`RunConfig.key`), so a run can have only one row;
  a rerun of the same sweep skips the keys already present.
- Only the parent process of a sweep writes; workers return their results to it.
"""

from __future__ import annotations

import functools
import json
import math
import sqlite3
from collections import Counter
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any, ParamSpec, TypeVar, cast

import numpy as np
import pandas as pd

from otfair_lab.experiments._grid import identity_key
from otfair_lab.experiments._spec import RunConfig
from otfair_lab.experiments._store_check import KEY_METRICS as KEY_METRICS  # public here
from otfair_lab.experiments._store_check import _as_float, check_rows
from otfair_lab.experiments._store_files import (
    StoreError,
    check_store_file,
    connect_read_only,
    store_error,
)

_P = ParamSpec("_P")
_R = TypeVar("_R")

#: File name of the store inside a sweep's output directory.
STORE_FILENAME = "results.sqlite"

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS runs (
    key TEXT PRIMARY KEY,
    sweep TEXT,
    dataset TEXT NOT NULL,
    dataset_name TEXT NOT NULL,
    method TEXT NOT NULL,
    method_name TEXT NOT NULL,
    notion TEXT,
    strength REAL,
    seed INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'error')),
    error TEXT,
    traceback TEXT,
    config TEXT NOT NULL,
    metrics TEXT,
    fit_time_s REAL,
    predict_time_s REAL,
    wall_time_s REAL,
    {", ".join(f"{m} REAL" for m in KEY_METRICS)},
    otfair_version TEXT,
    git_revision TEXT,
    host TEXT,
    started_at REAL,
    finished_at REAL,
    attempts INTEGER NOT NULL DEFAULT 1,
    profile TEXT
);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def to_jsonable(obj: Any) -> Any:
    """Convert numpy scalars/arrays and nested containers to JSON types (NaN -> None).

    :func:`otfair.utils.to_jsonable` does the same; this copy keeps the store (and the
    CLI commands that read it) free of ``otfair.utils``, whose import loads torch.
    """
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    return str(obj)


def flatten(panel: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Flatten nested dicts with dotted keys (``baseline.accuracy``)."""
    out: dict[str, Any] = {}
    for key, value in panel.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten(value, f"{name}."))
        else:
            out[name] = value
    return out


def _guarded(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """Turn an SQLite error (or an undecodable JSON column) of a store method into one line.

    A :class:`StoreError` naming the store and the reason (a damaged page, a missing
    table, a column that is not JSON), or a :class:`StoreFullError` for a full disk:
    never a raw ``sqlite3`` traceback.
    """

    @functools.wraps(method)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(*args, **kwargs)
        except sqlite3.Error as exc:
            store = cast(ResultStore, args[0])
            if store.read_only and "readonly" in str(exc):
                raise  # a write through a read-only store: the caller's mistake
            raise store_error(store.path, exc) from None
        except json.JSONDecodeError as exc:
            reason = ValueError(f"a stored column is not JSON: {exc}")
            raise store_error(cast(ResultStore, args[0]).path, reason) from None

    return wrapper


class ResultStore:
    """SQLite store of sweep results (see the module docstring for the guarantees).

    Parameters
    ----------
    path : str or Path
        The database file (created with its parent directory when missing); use
        :func:`open_store` for a sweep output directory.
    read_only : bool, default=False
        Open an existing store for reading only (SQLite ``mode=ro``, and ``immutable=1``
        when no connection is writing it, i.e. no ``-wal`` file): nothing is created or
        written beside a closed store, so a read-only directory is fine, and every write
        raises. Readers (``otfair report``, :func:`make_report`) open stores this way.

    Examples
    --------
    >>> with open_store("sweep-out") as store:  # doctest: +SKIP
    ...     store.finished_keys()
    set()
    """

    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        path = Path(path)
        if path.is_dir():
            raise ValueError(f"`path` must be a database file, got the directory {path}.")
        check_store_file(path)
        check_rows(path)
        self.path = path
        self.read_only = bool(read_only)
        if self.read_only:
            self._conn = connect_read_only(path)
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(str(path), timeout=30.0)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=FULL")
            with self._conn:
                self._conn.executescript(_SCHEMA)
                columns = {row[1] for row in self._conn.execute("PRAGMA table_info(runs)")}
                if "profile" not in columns:  # a store written before profiles were recorded
                    self._conn.execute("ALTER TABLE runs ADD COLUMN profile TEXT")
        except (sqlite3.Error, OSError) as exc:  # a full disk is not a damaged store
            raise store_error(path, exc) from None

    # -- context manager ------------------------------------------------------------
    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing --------------------------------------------------------------------
    @_guarded
    def set_meta(self, name: str, value: Any) -> None:
        """Store ``value`` (JSON) under ``name`` in the meta table."""
        with self._conn:
            self._conn.execute(
                "INSERT INTO meta(name, value) VALUES (?, ?) "
                "ON CONFLICT(name) DO UPDATE SET value = excluded.value",
                (name, json.dumps(to_jsonable(value))),
            )

    @_guarded
    def get_meta(self, name: str, default: Any = None) -> Any:
        """Return the meta value ``name`` (or ``default``)."""
        row = self._conn.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
        return default if row is None else json.loads(row[0])

    @_guarded
    def write(
        self,
        config: RunConfig,
        record: Mapping[str, Any],
        *,
        sweep: str | None = None,
        versions: Mapping[str, Any] | None = None,
        profile: str | None = None,
    ) -> None:
        """Write one finished run in its own transaction.

        Parameters
        ----------
        config : RunConfig
            The run.
        record : mapping
            ``status`` (``"ok"``/``"error"``), ``result`` (the dict of
            :func:`run_single`, for ok runs), ``error`` and ``traceback`` (for errors),
            ``started_at``/``finished_at`` (UNIX seconds), ``host``.
        sweep : str, optional
            Name of the sweep.
        versions : mapping, optional
            ``otfair_version`` and ``git_revision``.
        profile : str, optional
            The profile of the sweep that ran it (column ``profile``; the meta entry
            ``profiles`` says which profiles are smoke tests).

        A second write of the same key replaces the row (used by ``--retry-failed``) and
        increments ``attempts``.
        """
        status = record["status"]
        if status not in ("ok", "error"):
            raise ValueError(f"`record['status']` must be 'ok' or 'error'; got {status!r}.")
        result = to_jsonable(record.get("result") or {})
        versions = versions or {}
        started, finished = record.get("started_at"), record.get("finished_at")
        values: dict[str, Any] = {
            "key": config.key(),
            "sweep": sweep,
            "dataset": config.dataset_label or config.dataset,
            "dataset_name": config.dataset,
            "method": config.method_label or config.method,
            "method_name": config.method,
            "notion": config.notion,
            "strength": config.strength,
            "seed": config.seed,
            "status": status,
            "error": record.get("error"),
            "traceback": record.get("traceback"),
            "config": json.dumps(to_jsonable(_stored_config(config)), sort_keys=True),
            "metrics": json.dumps(result) if status == "ok" else None,
            "fit_time_s": _as_float(result.get("fit_time_s")),
            "predict_time_s": _as_float(result.get("predict_time_s")),
            "wall_time_s": None
            if started is None
            else float(cast(float, finished)) - float(started),
            "otfair_version": versions.get("otfair_version"),
            "git_revision": versions.get("git_revision"),
            "host": record.get("host"),
            "started_at": started,
            "finished_at": finished,
            "profile": profile,
        }
        for metric in KEY_METRICS:
            values[metric] = _as_float(result.get(metric))
        cols = ", ".join(values)
        marks = ", ".join("?" for _ in values)
        updates = ", ".join(f"{c} = excluded.{c}" for c in values if c != "key")
        with self._conn:
            self._conn.execute(
                f"INSERT INTO runs ({cols}) VALUES ({marks}) ON CONFLICT(key) DO UPDATE SET "
                f"{updates}, attempts = runs.attempts + 1",
                tuple(values.values()),
            )

    # -- reading --------------------------------------------------------------------
    @_guarded
    def finished_keys(self, *, include_errors: bool = True) -> set[str]:
        """Keys with a row (only the successful ones with ``include_errors=False``)."""
        query = "SELECT key FROM runs" + ("" if include_errors else " WHERE status = 'ok'")
        return {row[0] for row in self._conn.execute(query)}

    @_guarded
    def count(self, status: str | None = None) -> int:
        """Return the number of rows (optionally only those with ``status``)."""
        if status is None:
            return int(self._conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0])
        query = "SELECT COUNT(*) FROM runs WHERE status = ?"
        return int(self._conn.execute(query, (status,)).fetchone()[0])

    @_guarded
    def outcomes(self, keys: Collection[str]) -> tuple[int, int, Counter[str]]:
        """Return the stored outcome of the runs ``keys``: ``(n_ok, n_failed, errors)``.

        The messages are the first line of each failed run's error, counted.
        """
        wanted = set(keys)
        ok = failed = 0
        errors: Counter[str] = Counter()
        for key, status, error in self._conn.execute("SELECT key, status, error FROM runs"):
            if key not in wanted:
                continue
            if status == "ok":
                ok += 1
            else:
                failed += 1
                errors[(error or "unknown error").strip().splitlines()[0][:300]] += 1
        return ok, failed, errors

    @_guarded
    def mean_wall_times(self) -> dict[tuple[Any, ...], tuple[float, int]]:
        """Mean wall time of the successful runs per ``timing_group`` (and the count)."""
        cur = self._conn.execute(
            "SELECT dataset, method, config, wall_time_s FROM runs "
            "WHERE status = 'ok' AND wall_time_s IS NOT NULL"
        )
        sums: dict[tuple[Any, ...], list[float]] = {}
        for dataset, method, config, wall in cur:
            cfg = json.loads(config)
            device = str(cfg.get("device") or "cpu")
            group = (dataset, method, cfg.get("epochs"), cfg.get("max_train_rows"), device)
            sums.setdefault(group, []).append(float(wall))
        return {g: (sum(v) / len(v), len(v)) for g, v in sums.items()}

    @_guarded
    def sweep_names(self) -> set[str]:
        """Names of the sweeps that wrote to this store (meta ``spec`` and the rows)."""
        names = {row[0] for row in self._conn.execute("SELECT DISTINCT sweep FROM runs")}
        spec = self.get_meta("spec") or {}
        names.add(spec.get("name"))
        names.update(c.get("name") for c in self.get_meta("configs", []) or [])
        return {n for n in names if n}

    @_guarded
    def rows(self, status: str | None = None) -> list[dict[str, Any]]:
        """All rows as dicts (``config`` and ``metrics`` decoded from JSON)."""
        cur = self._conn.execute(
            "SELECT * FROM runs"
            + ("" if status is None else " WHERE status = ?")
            + " ORDER BY dataset, method, notion, strength, seed",
            () if status is None else (status,),
        )
        names = [d[0] for d in cur.description]
        out = []
        for raw in cur.fetchall():
            row = dict(zip(names, raw, strict=True))
            row["config"] = json.loads(row["config"])
            row["metrics"] = json.loads(row["metrics"]) if row["metrics"] else {}
            out.append(row)
        return out

    def to_frame(self, status: str | None = "ok") -> pd.DataFrame:
        """Rows as a DataFrame with the full (flattened) metrics panel as columns.

        Run-information columns (``dataset``, ``method``, ``notion``, ``strength``,
        ``seed``, ``status``...) come first; panel entries follow, nested ones with dotted
        names (``baseline.accuracy``).
        """
        records = []
        for row in self.rows(status):
            metrics = flatten(row.pop("metrics"))
            config = row.pop("config")
            row.pop("traceback")
            for k in ("dataset", "method", "notion", "strength", "seed"):
                metrics.pop(k, None)
            row["test_size"] = config.get("test_size")
            row["epochs"] = config.get("epochs")
            row["max_train_rows"] = config.get("max_train_rows")
            row["train_group_share"] = config.get("train_group_share")
            merged = dict(row)
            for k, v in metrics.items():
                if k not in merged or merged[k] is None:
                    merged[k] = v
            records.append(merged)
        return pd.DataFrame.from_records(records)

    @_guarded
    def import_rows(self, rows: Collection[Mapping[str, Any]]) -> int:
        """Insert rows written by :meth:`rows` elsewhere; keys already stored are kept.

        ``config`` and ``metrics`` may be decoded (dicts) or JSON text; columns this
        store does not have are ignored. Used to resume a sweep from an archive of its
        runs (``otfair_lab.experiments._archive``). Returns the number of rows added.
        """
        columns = [row[1] for row in self._conn.execute("PRAGMA table_info(runs)")]
        added = 0
        with self._conn:
            for row in rows:
                values = {c: row.get(c) for c in columns if c in row}
                for name in ("config", "metrics"):
                    if isinstance(values.get(name), Mapping):
                        values[name] = json.dumps(to_jsonable(values[name]), sort_keys=True)
                cols = ", ".join(values)
                marks = ", ".join("?" for _ in values)
                cur = self._conn.execute(
                    f"INSERT INTO runs ({cols}) VALUES ({marks}) ON CONFLICT(key) DO NOTHING",
                    tuple(values.values()),
                )
                added += cur.rowcount
        return added

    def export_csv(self, path: str | Path, status: str | None = None) -> Path:
        """Write :meth:`to_frame` to ``path`` as CSV and return the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.to_frame(status).to_csv(path, index=False)
        return path


def _stored_config(config: RunConfig) -> dict[str, Any]:
    """Return the ``config`` column: the run's identity (plus its device, unless CPU).

    The device does not change the result (it is not in the key) but does change the
    run's cost: :meth:`ResultStore.mean_wall_times` groups timings by it. CPU runs keep
    the identity alone, so the rows of earlier stores and archives are unchanged.
    """
    out = config.identity()
    if str(config.device or "cpu") != "cpu":
        out["device"] = str(config.device)
    return out


def config_key(config: Mapping[str, Any]) -> str:
    """Return the run key of a stored ``config`` (decoded): its row's key if unedited."""
    return identity_key({k: v for k, v in config.items() if k != "device"})


def timing_group(config: RunConfig) -> tuple[Any, ...]:
    """Return the group of runs assumed to cost the same.

    (dataset, method, epochs, rows, device): a run timed on one device says nothing of
    its cost on another (a GPU sweep is not estimated from CPU timings, nor the
    reverse), so the device requested by the run is part of the group.
    """
    return (
        config.dataset_label or config.dataset,
        config.method_label or config.method,
        config.epochs,
        config.max_train_rows,
        str(config.device or "cpu"),
    )


def open_store(out_dir: str | Path, *, read_only: bool = False) -> ResultStore:
    """Open (or create) the store of the sweep output directory ``out_dir``.

    ``read_only=True`` opens an existing store for reading only (:class:`ResultStore`).

    Raises
    ------
    StoreError
        If ``out_dir`` is an existing file, or its store is damaged (nothing is written).
    """
    check_out_dir(out_dir)
    return ResultStore(Path(out_dir) / STORE_FILENAME, read_only=read_only)


def check_out_dir(out_dir: str | Path) -> None:
    """Raise :class:`StoreError` if ``out_dir`` or its store cannot hold a sweep (read only)."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise StoreError(
            f"--out {out} is an existing file, not a directory; choose another --out "
            "(a directory, created when missing)."
        )
    check_store_file(out / STORE_FILENAME)
    check_rows(out / STORE_FILENAME)
