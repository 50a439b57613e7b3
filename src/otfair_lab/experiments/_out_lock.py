"""One sweep at a time per output directory: a lock file held while a sweep runs.

Two sweeps on the same ``--out`` would both run every pending run (each sees the same
rows missing) and store each twice (``attempts = 2``). :func:`lock_out_dir` takes an
exclusive :func:`fcntl.flock` on ``out_dir/sweep.lock`` for the whole sweep; a second
sweep is refused at once with one line naming the running one (its pid, host and start
time, written in the file). The operating system releases the lock when its holder
dies, even by SIGKILL, so a lock file left by a dead sweep is simply taken over. Where
:mod:`fcntl` is missing (Windows) nothing is locked.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from otfair_lab.experiments._store_files import (
    StoreError,
    StoreFullError,
    full_message,
    is_disk_full,
)

#: File name of the lock inside a sweep's output directory.
LOCK_FILENAME = "sweep.lock"


class OutDirBusyError(StoreError):
    """Another sweep is running on the same output directory."""


def _holder(text: str) -> str:
    """Describe the sweep that wrote the lock file's ``text`` (pid, host, start time)."""
    try:
        info = json.loads(text)
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(info["started"])))
        return f"pid {int(info['pid'])} on {info.get('host') or '?'}, started {started}"
    except (ValueError, KeyError, TypeError):
        return "a process that has not yet written its pid"


def _lock_error(path: Path, exc: OSError) -> StoreError:
    """Return the one-line error of a lock file that cannot be written (a full disk named)."""
    if is_disk_full(exc):
        return StoreFullError(full_message(path.parent, exc))
    return StoreError(
        f"cannot write the sweep lock {path} ({exc.strerror or exc}); choose a writable --out."
    )


def _busy(out: Path) -> OutDirBusyError:
    """Return the one-line error naming the sweep that holds the lock of ``out``."""
    with open(out / LOCK_FILENAME, encoding="utf-8", errors="replace") as fh:
        holder = _holder(fh.read())
    return OutDirBusyError(
        f"--out {out} is in use by a running sweep ({holder}); wait for it to finish or "
        "stop it, or choose another --out."
    )


def refuse_if_busy(out_dir: str | Path) -> None:
    """Raise :class:`OutDirBusyError` at once if a sweep holds the lock of ``out_dir``.

    Creates nothing and holds nothing: a sweep calls it before its request checks (which
    may fit throwaway probes), so that a second sweep is refused in a moment;
    :func:`lock_out_dir` then takes the lock for the work.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return
    out = Path(out_dir)
    try:
        fd = os.open(out / LOCK_FILENAME, os.O_RDONLY)
    except OSError:  # no lock file: no sweep has run here (or it cannot be read)
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise _busy(out) from None
    finally:
        os.close(fd)


@contextmanager
def lock_out_dir(out_dir: str | Path) -> Iterator[None]:
    """Hold the sweep lock of ``out_dir`` (created when missing) for the block.

    Raises
    ------
    OutDirBusyError
        If another process holds it: a sweep runs on ``out_dir``.
    StoreError
        If the lock file cannot be created (the directory is not writable).
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    out = Path(out_dir)
    path = out / LOCK_FILENAME
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise _lock_error(path, exc) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise _busy(out) from None
        info = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.time()}
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(info).encode(), 0)
        except OSError as exc:
            raise _lock_error(path, exc) from None
        yield
    finally:
        os.close(fd)  # releases the lock; the file stays (a later sweep takes it over)
