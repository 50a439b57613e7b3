"""The result store's file checks: a damaged file, a read-only location, read-only opens.

Kept apart from :mod:`otfair.experiments._store` (the store's rows) so that each module
has one job: here, whether a file can be read as a store, and opening it without
writing anything (``otfair report`` on a store in a read-only directory).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

__all__ = [
    "StoreError",
    "check_store_file",
    "connect_read_only",
    "damaged_message",
    "is_read_only_location",
]

#: The first 16 bytes of every SQLite 3 database file.
_SQLITE_HEADER = b"SQLite format 3\x00"


class StoreError(ValueError):
    """A result store that cannot be read (damaged, or not a database); names the fix."""


def damaged_message(path: Path, exc: BaseException | str) -> str:
    """One line naming a damaged store ``path``, the reason and the fix."""
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return (
        f"{path} is not a readable result store ({reason}); it was left as it is. Move it "
        "aside (or restore it from a backup) and rerun, or choose another --out."
    )


def check_store_file(path: Path) -> None:
    """Raise :class:`StoreError` when ``path`` exists but is not a sound SQLite database.

    Read only: the header is compared with SQLite's and an existing database is opened
    read-only for SQLite's ``quick_check`` (which reads every page, so a truncated file
    is caught), so a damaged file is never written to. With a ``-wal`` file beside it (a
    sweep running, or killed before it closed the store) the check reads the database
    through it: a process killed during a checkpoint leaves a main file that is only
    whole together with its write-ahead log, which SQLite replays.
    """
    if not path.exists():
        if path.parent.exists() and not path.parent.is_dir():
            raise StoreError(
                f"{path.parent} is a file, not a directory; choose another --out (a "
                "directory, created when missing)."
            )
        return
    if not path.is_file():
        raise StoreError(f"{path} is not a regular file; choose another --out.")
    with path.open("rb") as fh:
        header = fh.read(len(_SQLITE_HEADER))
    if not header:
        return  # an empty file: SQLite makes a database of it
    if header != _SQLITE_HEADER:
        raise StoreError(damaged_message(path, "not an SQLite database"))
    try:
        wal = path.with_name(path.name + "-wal")
        if wal.exists() and is_read_only_location(path):
            return  # SQLite cannot replay the log here: connect_read_only names the fix
        # without a -wal the file is whole by itself: immutable creates no -shm beside it
        uri = f"{path.resolve().as_uri()}?mode=ro" + ("" if wal.exists() else "&immutable=1")
        conn = sqlite3.connect(uri, uri=True, timeout=30.0)
        try:
            result = conn.execute("PRAGMA quick_check").fetchone()
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise StoreError(damaged_message(path, exc)) from None
    if not result or result[0] != "ok":
        raise StoreError(damaged_message(path, f"quick_check: {result[0] if result else '?'}"))


def is_read_only_location(path: Path) -> bool:
    """Whether ``path`` (a store file) or its directory cannot be written by this process."""
    directory = path.parent
    return not os.access(directory, os.W_OK | os.X_OK) or (
        path.exists() and not os.access(path, os.W_OK)
    )


def connect_read_only(path: Path) -> sqlite3.Connection:
    """Open the existing store ``path`` read-only (see :class:`ResultStore`)."""
    if not path.is_file():
        raise FileNotFoundError(f"No result store at {path} (run `otfair sweep` first).")
    wal = path.with_name(path.name + "-wal")
    # no -wal file: no connection is writing the store (a writer keeps one while open),
    # so it is read as immutable: SQLite then creates no -shm / -wal beside it (which a
    # directory this process cannot write would refuse). With a -wal (a sweep running),
    # a plain read-only connection shares the writer's files.
    immutable = not wal.exists()
    uri = f"{path.resolve().as_uri()}?mode=ro" + ("&immutable=1" if immutable else "")
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=30.0)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.OperationalError as exc:
        if is_read_only_location(path):
            raise StoreError(
                f"{path} is in a read-only location and has unmerged writes ({wal.name}); "
                "it is not damaged: copy the directory somewhere writable, or report it "
                f"where it can be written ({exc})."
            ) from None
        raise StoreError(damaged_message(path, exc)) from None
    except sqlite3.DatabaseError as exc:
        raise StoreError(damaged_message(path, exc)) from None
    return conn
