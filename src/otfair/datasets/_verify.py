"""sha256 verification of local data files, remembered so a file is hashed once.

A local file is accepted when its sha256 equals the registry's (or, for a ``.gz`` copy,
when its uncompressed content matches ``content_sha256``). Hashing the 6 MB Adult files
costs tens of milliseconds, so the digest of each file is remembered by (resolved path,
size, modification time, status-change time): in-process, and across processes in the
small JSON file ``<user cache>/verified.json`` (written atomically; ignored when the
cache is not writable). A file that is edited, truncated or replaced changes its size,
mtime or ctime and is hashed again; the ctime catches a same-size edit whose mtime was
set back (``touch -d``, ``os.utime``), since setting the mtime sets the ctime to now.

Verification can be switched off for copies edited on purpose: ``verify=False`` on
:func:`otfair.datasets.load_dataset` / :func:`~otfair.datasets.load_domain_shift` /
:func:`~otfair.datasets.fetch_file`, the environment variable ``OTFAIR_VERIFY=0``, or
``--no-verify`` on ``otfair datasets describe`` / ``where`` (every other command
reads ``OTFAIR_VERIFY``). An explicit argument wins over the environment.
"""

from __future__ import annotations

import contextlib
import contextvars
import gzip
import hashlib
import io
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from otfair.datasets._cache import default_cache_dir

VERIFY_ENV_VAR = "OTFAIR_VERIFY"
_OFF = {"0", "false", "no", "off"}
_CHUNK = 1 << 20
_CONTENT = "::gunzip"

#: Setting of the innermost :func:`verification` block (None: not set).
_VERIFY: contextvars.ContextVar[bool | None] = contextvars.ContextVar(
    "otfair_verify", default=None
)
#: (resolved path, content?) -> (size, mtime_ns, ctime_ns, sha256).
_MEMO: dict[str, tuple[int, int, int, str]] = {}


def should_verify(verify: bool | None = None) -> bool:
    """Tell whether to check local files.

    ``verify`` if given, else the enclosing :func:`verification` block, else
    ``$OTFAIR_VERIFY`` (``0``, ``false``, ``no`` or ``off`` disable the check).
    """
    if verify is not None:
        return bool(verify)
    scoped = _VERIFY.get()
    if scoped is not None:
        return scoped
    return os.environ.get(VERIFY_ENV_VAR, "1").strip().lower() not in _OFF


@contextlib.contextmanager
def verification(verify: bool | None) -> Iterator[None]:
    """Within the block, files are (not) verified; ``None`` leaves the setting as is."""
    if verify is None:
        yield
        return
    token = _VERIFY.set(bool(verify))
    try:
        yield
    finally:
        _VERIFY.reset(token)


def record_path() -> Path:
    """``<user cache>/verified.json``, where digests of checked files are remembered."""
    return default_cache_dir() / "verified.json"


def sha256_stream(fh: IO[bytes] | io.BufferedIOBase) -> str:
    """Hex sha256 of a binary stream, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    for chunk in iter(lambda: fh.read(_CHUNK), b""):
        digest.update(chunk)
    return digest.hexdigest()


def file_sha256(path: str | os.PathLike[str], *, content: bool = False) -> str:
    """sha256 of ``path`` (of its gzip-decompressed content if ``content``), remembered.

    Parameters
    ----------
    path : path
    content : bool, default=False
        Hash the decompressed bytes of a gzip file instead of the file itself.

    Returns
    -------
    str
        Hex digest. Reused without reading the file while its size, mtime and ctime
        are unchanged (in-process, then via :func:`record_path`).
    """
    resolved = Path(path).resolve()
    stat = resolved.stat()
    key = f"{resolved}{_CONTENT if content else ''}"
    sig = (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
    hit = _MEMO.get(key)
    if hit is None or hit[:3] != sig:
        stored = _read_record().get(key)  # an entry without a ctime (older) never matches
        if stored is not None and len(stored) == 4 and tuple(stored[:3]) == sig:
            hit = (*sig, str(stored[3]))
        else:
            opener = gzip.open if content else open
            with opener(resolved, "rb") as fh:
                hit = (*sig, sha256_stream(fh))
            _write_record(key, hit)
        _MEMO[key] = hit
    return hit[3]


def forget() -> None:
    """Drop the in-process memo (the record file stays); used by tests."""
    _MEMO.clear()


def _read_record() -> dict[str, list]:
    try:
        data = json.loads(record_path().read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_record(key: str, value: tuple[int, int, int, str]) -> None:
    """Add one entry to the record (atomic replace; best effort, never raises)."""
    path = record_path()
    record = _read_record()
    record = {k: v for k, v in record.items() if os.path.exists(k.removesuffix(_CONTENT))}
    record[key] = list(value)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".verified.", suffix=".part", dir=path.parent)
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(record, fh)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
