"""Archives of finished runs as JSON lines: a sweep resumable from what is committed.

A sweep's SQLite store (:mod:`otfair_lab.experiments._store`) lives on one machine. An
*archive* is a folder of plain-text files, one per seed (``seed-3.jsonl``), one finished
run per line, sorted by run key, so that it can be committed beside a report, reviewed as
a diff, and merged: two machines that ran different seeds (or different datasets of the
same seed) write disjoint lines. :func:`import_runs` loads an archive into a store, after
which the sweep skips every archived run (the run key is a hash of the run's
configuration, the same on every machine); :func:`export_runs` writes the store's
successful runs back, keeping the archived lines the store does not have.

Only runs stored ``ok`` are archived (a failed run is run again); the traceback and the
host name are left out, and the key-metric columns are rebuilt from the panel on import.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from otfair_lab.experiments._labels import method_label
from otfair_lab.experiments._store import (
    config_key,
    flatten,
    open_store,
    to_jsonable,
)
from otfair_lab.experiments._store_check import KEY_METRICS, _as_float

#: Store columns written to an archive line (the rest is rebuilt or machine-specific).
ARCHIVED_COLUMNS = (
    "key",
    "sweep",
    "profile",
    "dataset",
    "dataset_name",
    "method",
    "method_name",
    "notion",
    "strength",
    "seed",
    "status",
    "config",
    "metrics",
    "fit_time_s",
    "predict_time_s",
    "wall_time_s",
    "started_at",
    "finished_at",
    "attempts",
    "otfair_version",
    "git_revision",
)


class ArchiveError(ValueError):
    """An archive file that cannot be read (names the file and the line)."""


def _archive_line(row: Mapping[str, Any]) -> str:
    return json.dumps(to_jsonable({c: row.get(c) for c in ARCHIVED_COLUMNS}), sort_keys=True)


def read_archive(archive_dir: str | Path) -> list[dict[str, Any]]:
    """Read every run of the archive folder ``archive_dir`` (``seed-*.jsonl``).

    Raises
    ------
    ArchiveError
        If a file is not UTF-8 text (a binary file) or cannot be read, a line is not a
        JSON object with a ``key`` and ``status`` ``"ok"``, or its key is not the hash of
        its ``config``: the error names the file and the line number (an edited,
        truncated or binary file).
    """
    rows: dict[str, dict[str, Any]] = {}
    for path in sorted(Path(archive_dir).glob("seed-*.jsonl")):
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            at_line = path.read_bytes()[: exc.start].count(b"\n") + 1
            raise ArchiveError(
                f"{path}, line {at_line}: not text (not UTF-8 at byte {exc.start}; a binary or "
                "damaged file); restore it with `git checkout` or move it out of the archive."
            ) from None
        except OSError as exc:
            raise ArchiveError(f"{path}: cannot be read ({exc.strerror or exc}).") from None
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ArchiveError(f"{path}, line {number}: not JSON ({exc.msg}).") from None
            if not isinstance(row, dict) or not row.get("key") or row.get("status") != "ok":
                raise ArchiveError(
                    f"{path}, line {number}: not an archived run (a JSON object with a "
                    "`key` and status 'ok')."
                )
            config = row.get("config")
            if not isinstance(config, dict) or config_key(config) != row["key"]:
                raise ArchiveError(
                    f"{path}, line {number}: its `key` is not the key of its `config` (an "
                    "edited line); restore the line from version control or delete it, so "
                    "that the run is done again."
                )
            rows[row["key"]] = row
    return list(rows.values())


def load_archive(archive_dir: str | Path) -> pd.DataFrame:
    """Read a runs archive (``seed-*.jsonl``) as a table, one row per run.

    The run's columns (``dataset`` and ``method`` as labelled in the config, ``notion``,
    ``strength``, ``seed``, ``key``...) followed by its metrics panel, flattened as in
    :meth:`ResultStore.to_frame` (``auc``, ``dp_gap``, ``baseline.accuracy``), and
    ``label``: the series name the reports plot, ``method [notion]`` (``otf [dp]``) or the
    method alone where it has no notion (``barycenter``). A committed archive
    (``docs/reproduction/PAPER/runs``) is analysed this way without a store. Raises
    ``ArchiveError`` for a damaged file (see ``read_archive``).

    Examples
    --------
    >>> runs = load_archive("docs/reproduction/otf/runs")  # doctest: +SKIP
    >>> runs.groupby(["dataset", "method", "notion", "strength"])["auc"].mean()  # doctest: +SKIP
    """
    records = []
    for row in read_archive(archive_dir):
        metrics = flatten(row.get("metrics") or {})
        record = {k: v for k, v in row.items() if k not in ("metrics", "config")}
        for k, v in metrics.items():
            record.setdefault(k, v)
        record["label"] = method_label(record.get("method", ""), record.get("notion"))
        records.append(record)
    return pd.DataFrame.from_records(records)


def import_runs(archive_dir: str | Path, out_dir: str | Path) -> int:
    """Load the archive ``archive_dir`` into the store of ``out_dir``; return rows added.

    Runs already in the store are kept as they are (a store's own row wins).
    """
    rows = read_archive(archive_dir)
    for row in rows:
        metrics = row.get("metrics") or {}
        for metric in KEY_METRICS:
            row[metric] = _as_float(metrics.get(metric))
    if not rows:
        return 0
    with open_store(out_dir) as store:
        return store.import_rows(rows)


def _write_atomic(path: Path, lines: Iterable[str]) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            for line in lines:
                fh.write(line + "\n")
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would make a committed file private
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def export_runs(
    out_dir: str | Path, archive_dir: str | Path, keys: Iterable[str] | None = None
) -> dict[int, int]:
    """Write the store's successful runs (only ``keys`` if given) to ``archive_dir``.

    One file per seed, ``seed-{seed}.jsonl``, its lines sorted by run key; lines already
    in a file whose key the store does not have are kept (archives merge). Each file is
    replaced atomically. Returns the number of runs per seed written.
    """
    wanted = None if keys is None else set(keys)
    with open_store(out_dir) as store:
        rows = [r for r in store.rows("ok") if wanted is None or r["key"] in wanted]
    archive = Path(archive_dir)
    archive.mkdir(parents=True, exist_ok=True)
    by_seed: dict[int, dict[str, str]] = {}
    for row in read_archive(archive):
        by_seed.setdefault(int(row["seed"]), {})[row["key"]] = _archive_line(row)
    for row in rows:
        by_seed.setdefault(int(row["seed"]), {})[row["key"]] = _archive_line(row)
    for seed, lines in by_seed.items():
        _write_atomic(archive / f"seed-{seed}.jsonl", (lines[k] for k in sorted(lines)))
    return {seed: len(lines) for seed, lines in sorted(by_seed.items())}
