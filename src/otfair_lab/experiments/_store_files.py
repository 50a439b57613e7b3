"""The result store's file checks: a damaged file, a read-only location, read-only opens.

Kept apart from :mod:`otfair_lab.experiments._store` (the store's rows) so that each module
has one job: here, whether a file can be read as a store, and opening it without
writing anything (``otfair report`` on a store in a read-only directory).
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
from pathlib import Path

__all__ = [
    "StoreError",
    "StoreFullError",
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
    if len(reason) > 160:
        reason = reason[:157] + "..."
    return (
        f"{path} is not a readable result store ({reason}); it was left as it is. Move it "
        "aside (or restore it from a backup) and rerun, or choose another --out."
    )


class StoreFullError(StoreError):
    """The disk (or quota) holding a result store is full; the store is not damaged."""


#: SQLite's result code of a full disk (``sqlite3.SQLITE_FULL`` from Python 3.11).
_SQLITE_FULL = 13
#: Free bytes below which an SQLite I/O error on writing is put down to a full disk.
_NEARLY_FULL_BYTES = 1 << 20


def is_disk_full(exc: BaseException, path: Path | None = None) -> bool:
    """Whether ``exc`` (an :class:`OSError` or :class:`sqlite3.Error`) means a full disk.

    ``ENOSPC`` / ``EDQUOT``, SQLite's ``SQLITE_FULL``, or an SQLite I/O error while the
    file system of ``path`` has less than 1 MiB free.
    """
    if isinstance(exc, OSError):
        return exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))
    if not isinstance(exc, sqlite3.Error):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code == _SQLITE_FULL or "disk is full" in str(exc):
        return True
    if path is not None and "disk I/O error" in str(exc):
        try:
            return shutil.disk_usage(_existing(path)).free < _NEARLY_FULL_BYTES
        except OSError:
            return False
    return False


def _existing(path: Path) -> Path:
    """Return ``path`` or its nearest existing ancestor."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def full_message(path: Path, exc: BaseException | str) -> str:
    """One line naming the full disk that holds ``path`` (a store or its directory)."""
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    try:
        free = f"{shutil.disk_usage(_existing(path)).free / 2**20:.1f} MiB free"
    except OSError:
        free = "free space unknown"
    return (
        f"the disk holding {path} is full ({reason}; {free}); nothing stored is damaged: "
        "free some space (or choose another --out) and rerun the same command."
    )


def store_error(path: Path, exc: BaseException) -> StoreError:
    """Return the :class:`StoreError` that an SQLite or OS error on the store ``path`` means."""
    if is_disk_full(exc, path):
        return StoreFullError(full_message(path, exc))
    if "readonly" in str(exc):  # permissions changed under a sweep: not damage
        return StoreError(
            f"{path} cannot be written ({exc}); make it and its directory writable, or "
            "choose another --out."
        )
    return StoreError(damaged_message(path, exc))


def check_store_file(path: Path) -> None:
    """Raise :class:`StoreError` when ``path`` exists but is not a sound SQLite database.

    Read only: the header is compared with SQLite's and an existing database is opened
    read-only for SQLite's ``integrity_check`` (which reads every page, so a truncated
    file is caught, and compares each index with its table), so a damaged file is never
    written to. With a ``-wal`` file beside it (a
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
    if file_state(path) in SOUND_STORES:
        return  # checked whole (with its rows) since it last changed
    try:
        wal = path.with_name(path.name + "-wal")
        if wal.exists() and is_read_only_location(path):
            return  # SQLite cannot replay the log here: connect_read_only names the fix
        # without a -wal the file is whole by itself: immutable creates no -shm beside it
        uri = f"{path.resolve().as_uri()}?mode=ro" + ("" if wal.exists() else "&immutable=1")
        conn = sqlite3.connect(uri, uri=True, timeout=30.0)
        try:  # also compares every index with its table (a key overwritten in one of them)
            result = [str(r[0]) for r in conn.execute("PRAGMA integrity_check(20)")]
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise StoreError(damaged_message(path, exc)) from None
    if result != ["ok"]:
        found = [line for r in result for line in r.splitlines() if not line.startswith("***")]
        raise StoreError(damaged_message(path, f"integrity_check: {'; '.join(found) or '?'}"))


#: Stores found sound, rows included, by :func:`file_state` (not checked again).
SOUND_STORES: set[tuple[object, ...]] = set()


def file_state(path: Path) -> tuple[object, ...]:
    """Return the path, size and mtime of the store ``path`` and of its ``-wal`` file."""
    wal = path.with_name(path.name + "-wal")
    stats = [p.stat() for p in (path, wal) if p.exists()]
    return (str(path.resolve()), *((st.st_size, st.st_mtime_ns) for st in stats))


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
