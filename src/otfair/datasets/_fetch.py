"""The data search order, and downloading a missing file once, verified and atomically.

Search order (the one rule used by the loaders, the ``otfair`` command line and the
tests): a data file ``<relpath>`` (e.g. ``adult/adult.data``) is looked for in

1. the ``data_home`` argument (``--data-home`` on the command line), if given;
2. ``$OTFAIR_DATA_DIR``, if set;
3. the user cache ``$XDG_CACHE_HOME/otfair`` (``~/.cache/otfair`` when XDG is unset);

and the first directory holding it wins. A file found nowhere is downloaded from the
canonical address in ``_registry.json`` into the *first* directory of that list (so
``data_home``, else ``$OTFAIR_DATA_DIR``, else the cache), its sha256 checked, and
written through a temporary file in the same directory renamed into place
(``os.replace``): an interrupted or corrupt download never leaves a partial file. Local
files are checked against the registry's sha256 too (see ``_verify.py`` for the cached
check and the opt-out). An explicit directory (argument or variable) that does not exist
is an error. ``otfair datasets where`` prints this order and where each file was found.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from otfair.datasets._cache import default_cache_dir
from otfair.datasets._errors import ChecksumError, DataDirError, DataFileError, one_line
from otfair.datasets._verify import VERIFY_ENV_VAR, file_sha256, sha256_stream, should_verify

ENV_VAR = "OTFAIR_DATA_DIR"
#: A ``data_home`` argument: a directory searched first, or ``None`` (see :func:`search_dirs`).
DataHome = str | os.PathLike[str] | None
_TIMEOUT = 60.0
_CHUNK = 1 << 16

#: ``progress(bytes_done, bytes_total_or_None)``, called while a file downloads.
Progress = Callable[[int, "int | None"], None]


@dataclass(frozen=True)
class RemoteFile:
    """Canonical address and checksum of one data file.

    Attributes
    ----------
    url : str
        Download address ("" when the file has no public address of its own).
    sha256 : str
        Hex digest of the file as stored (after extraction from ``members``).
    members : tuple of str
        Path through (nested) zip archives at ``url``; each step matches a member by its
        base name.
    content_sha256 : str
        For a ``.gz`` copy: digest of the uncompressed content, also accepted ("" if none).
    """

    url: str
    sha256: str
    members: tuple[str, ...] = ()
    content_sha256: str = ""


@dataclass(frozen=True)
class DataDir:
    """One directory of the search order: ``label`` says where it comes from."""

    label: str
    path: Path


def _load_registry() -> tuple[dict[str, RemoteFile], dict[str, tuple[tuple[str, ...], ...]]]:
    text = resources.files("otfair.datasets").joinpath("_registry.json").read_text("utf-8")
    registry = json.loads(text)
    files = {
        path: RemoteFile(
            url=e["url"],
            sha256=e["sha256"],
            members=tuple(e.get("members", ())),
            content_sha256=e.get("content_sha256", ""),
        )
        for path, e in registry["files"].items()
    }
    datasets = {
        name: tuple(tuple(group) for group in groups)
        for name, groups in registry["datasets"].items()
    }
    return files, datasets


#: Relative path (under a data directory) -> canonical address. Tests may patch it.
#: DATASET_FILES: dataset name -> the files it reads; each entry is a tuple of
#: alternatives (in one directory, the first present is used).
REMOTE_FILES, DATASET_FILES = _load_registry()


def dataset_of(relpath: str) -> str:
    """Name of the dataset whose files include ``relpath`` (else its first folder)."""
    for name, groups in DATASET_FILES.items():
        if any(relpath in group for group in groups):
            return name
    return relpath.split("/", 1)[0]


def search_dirs(data_home: DataHome = None) -> list[DataDir]:
    """List the data search order: ``data_home``, ``$OTFAIR_DATA_DIR``, the user cache.

    Parameters
    ----------
    data_home : path or None
        Explicit directory (must exist).

    Returns
    -------
    list of DataDir
        Directories to search, first match wins; downloads go to the first one. The
        cache is listed even when it does not exist yet.

    Raises
    ------
    DataDirError
        (also a ``ValueError``) if ``data_home`` or ``$OTFAIR_DATA_DIR`` does not exist
        or is not a directory.
    """
    dirs = []
    if data_home is not None:
        dirs.append(DataDir("data_home", _existing_dir(data_home, "`data_home`")))
    if os.environ.get(ENV_VAR):
        dirs.append(DataDir(f"${ENV_VAR}", _existing_dir(os.environ[ENV_VAR], f"${ENV_VAR}")))
    dirs.append(DataDir("user cache", default_cache_dir()))
    return dirs


def _existing_dir(value: str | os.PathLike[str], what: str) -> Path:
    path = Path(value).expanduser()
    if not path.is_dir():
        problem = "is not a directory" if path.exists() else "does not exist"
        fix = (
            f"create it, or unset {ENV_VAR} to use {default_cache_dir()}"
            if what.startswith("$")
            else "pass an existing directory (`otfair datasets fetch --data-home DIR` creates one)"
        )
        raise DataDirError(f"{what} = {str(path)!r} {problem}.", fix)
    return path


def get_data_home(data_home: DataHome = None) -> Path:
    """Return the first directory of :func:`search_dirs`, where downloads are written.

    Parameters
    ----------
    data_home : path or None
        Explicit directory; must exist. ``None`` uses ``$OTFAIR_DATA_DIR`` (must exist
        too) or else the user cache directory (created when needed).

    Returns
    -------
    pathlib.Path

    Raises
    ------
    DataDirError
        (a ``ValueError``) if an explicit directory does not exist or is not a directory.
    """
    first = search_dirs(data_home)[0].path
    if data_home is None and not os.environ.get(ENV_VAR):
        first.mkdir(parents=True, exist_ok=True)
    return first


def locate(relpath: str, data_home: DataHome = None) -> DataDir | None:
    """Return the first directory of the search order holding ``relpath`` (or None)."""
    for entry in search_dirs(data_home):
        if (entry.path / relpath).is_file():
            return entry
    return None


def locate_first(
    relpaths: tuple[str, ...], data_home: DataHome = None
) -> tuple[str, DataDir | None]:
    """First of alternative files present, directory by directory in the search order.

    Returns ``(relpath, directory)``; when none is present anywhere, the first
    alternative with a download address and ``None``.
    """
    for entry in search_dirs(data_home):
        for relpath in relpaths:
            if (entry.path / relpath).is_file():
                return relpath, entry
    downloadable = [r for r in relpaths if REMOTE_FILES.get(r, RemoteFile("", "")).url]
    return (downloadable or list(relpaths))[0], None


def check_file(path: Path, relpath: str) -> None:
    """Raise :class:`ChecksumError` if ``path`` does not match the registry's sha256.

    Files without a registry entry are not checked. The digest is cached (see
    :func:`otfair.datasets._verify.file_sha256`).
    """
    remote = REMOTE_FILES.get(relpath)
    if remote is None or not remote.sha256:
        return
    found = file_sha256(path)
    if found == remote.sha256:
        return
    if remote.content_sha256 and path.suffix == ".gz":
        try:
            if file_sha256(path, content=True) == remote.content_sha256:
                return
        except (OSError, EOFError):
            pass
    size = path.stat().st_size
    raise ChecksumError(
        f"{path} differs from the registry's copy of {relpath} (sha256 expected "
        f"{remote.sha256}, found {found}; {size:,} bytes): truncated, edited or another "
        "version of the file.",
        f"replace it with `otfair datasets fetch {dataset_of(relpath)} --force`, or, for a "
        f"copy you changed on purpose, skip the check with {VERIFY_ENV_VAR}=0 "
        "(`otfair datasets describe/where --no-verify`; Python: verify=False).",
    )


def fetch_file(
    relpath: str,
    data_home: DataHome = None,
    *,
    verify: bool | None = None,
    progress: Progress | None = None,
) -> Path:
    """Return the local path of data file ``relpath``, downloading it when missing.

    Parameters
    ----------
    relpath : str
        Path relative to a data directory, e.g. ``"adult/adult.data"``.
    data_home : path or None
        First directory of the search order (see :func:`search_dirs`).
    verify : bool or None
        Check a local file's sha256 against the registry; ``None`` follows
        ``$OTFAIR_VERIFY`` (on unless ``0``). Downloads are always checked.
    progress : callable or None
        ``progress(done, total)`` during a download.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    DataFileError
        The file is missing and the download fails or its checksum does not match
        (nothing is left at the destination); :class:`ChecksumError` if a local file
        differs from the registry; :class:`DataDirError` for a bad directory.
    """
    found = locate(relpath, data_home)
    if found is None:
        return download_file(relpath, data_home, progress=progress)
    path = found.path / relpath
    if should_verify(verify):
        check_file(path, relpath)
    return path


def download_file(
    relpath: str,
    data_home: DataHome = None,
    *,
    progress: Progress | None = None,
) -> Path:
    """Download ``relpath`` into the first directory of the search order (replacing it).

    The payload's sha256 is checked before anything is written; the file is written
    atomically. Raises :class:`DataFileError` with a one-line fix on any failure.
    """
    dirs = search_dirs(data_home)
    dest = dirs[0].path / relpath
    remote = REMOTE_FILES.get(relpath)
    if remote is None or not remote.url:
        raise DataFileError(
            f"{relpath} is in none of {_searched(dirs)} and has no download address.",
            _copy_hint(relpath, dirs),
        )
    try:
        payload = _download(remote.url, progress)
        for member in remote.members:
            payload = _extract_member(payload, member)
    except (urllib.error.URLError, OSError, zipfile.BadZipFile, KeyError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise DataFileError(
            f"Could not download {relpath} from {remote.url} ({one_line(str(reason))}); "
            f"it is in none of {_searched(dirs)}.",
            _copy_hint(relpath, dirs),
        ) from exc
    digest = sha256_stream(io.BytesIO(payload))
    if digest != remote.sha256:
        raise DataFileError(
            f"Checksum mismatch for {relpath} downloaded from {remote.url}: expected sha256 "
            f"{remote.sha256}, got {digest}. Nothing was saved.",
            _copy_hint(relpath, dirs),
        )
    try:
        _atomic_write(dest, payload)
    except OSError as exc:
        raise DataFileError(
            f"Could not write {dest} ({exc.strerror or exc}).",
            f"pass a writable directory with --data-home DIR (Python: data_home=DIR) or "
            f"set {ENV_VAR}=DIR.",
        ) from exc
    return dest


def _searched(dirs: list[DataDir]) -> str:
    return "the searched directories (" + ", ".join(f"{d.label} {d.path}" for d in dirs) + ")"


def _copy_hint(relpath: str, dirs: list[DataDir]) -> str:
    return (
        f"run `otfair datasets fetch {dataset_of(relpath)}` when online, or copy the file "
        f"by hand to {dirs[0].path / relpath} (or to <dir>/{relpath} and set "
        f"{ENV_VAR}=<dir>, or pass --data-home <dir> / data_home=<dir>)."
    )


def _download(url: str, progress: Progress | None = None) -> bytes:
    with urllib.request.urlopen(url, timeout=_TIMEOUT) as response:  # noqa: S310 - registry URLs
        length = response.headers.get("Content-Length")
        total = int(length) if length and length.isdigit() else None
        chunks, done = [], 0
        while chunk := response.read(_CHUNK):
            chunks.append(chunk)
            done += len(chunk)
            if progress is not None:
                progress(done, total)
        return b"".join(chunks)


def _extract_member(archive: bytes, member: str) -> bytes:
    with zipfile.ZipFile(io.BytesIO(archive)) as zf:
        names = [n for n in zf.namelist() if n.rsplit("/", 1)[-1] == member]
        names = [n for n in names if not n.startswith("__MACOSX/")]
        if not names:
            raise KeyError(f"archive has no member named {member!r}")
        return zf.read(names[0])


def _atomic_write(dest: Path, payload: bytes) -> None:
    """Write ``payload`` to ``dest`` via a temporary file in the same directory."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, dest)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
