"""Where each data file is (``otfair datasets where``) and fetching files ahead of time.

Both follow the search order of ``_fetch.py`` (``otfair datasets fetch`` downloads into
its first directory).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from otfair.datasets._errors import ChecksumError
from otfair.datasets._fetch import (
    DATASET_FILES,
    REMOTE_FILES,
    DataDir,
    DataHome,
    Progress,
    check_file,
    download_file,
    locate_first,
    search_dirs,
)
from otfair.datasets._verify import should_verify
from otfair.utils._docstrings import fill_doc

#: The two parameters that name one data file, shared by the functions below.
_DATASET_FILE_DOC = """\
dataset : str
    The dataset the file belongs to.
group : tuple of str
    The file's alternative relative paths (a group of :func:`dataset_files`)."""

#: Where to look and whether to check, shared by the functions that report a state.
_SEARCH_DOC = """\
data_home : str or path-like, optional
    A directory searched first (see :func:`search_dirs`).
verify : bool, optional
    Check the sha256 (default: unless ``OTFAIR_VERIFY=0``)."""


@dataclass(frozen=True)
class FileStatus:
    """State of one data file of a dataset.

    Attributes
    ----------
    dataset : str
    relpath : str
        The file found (or, when missing, the one that would be downloaded).
    state : str
        ``"ok"`` (sha256 matches), ``"unchecked"`` (verification off or no registry
        digest), ``"differs"`` (sha256 differs), ``"missing"`` or, after
        :func:`ensure_file`, ``"downloaded"``.
    directory : DataDir or None
        Where it was found or written.
    """

    dataset: str
    relpath: str
    state: str
    directory: DataDir | None

    @property
    def path(self) -> Path | None:
        """Full path of the file, when it exists."""
        return None if self.directory is None else self.directory.path / self.relpath


def real_dataset_names() -> list[str]:
    """Return the names of the datasets read from files, in registry order.

    Returns
    -------
    list of str
        The real datasets (synthetic ones need no files).
    """
    return list(DATASET_FILES)


def dataset_files(name: str) -> tuple[tuple[str, ...], ...]:
    """Return the data files of dataset ``name``.

    Parameters
    ----------
    name : str
        One of :func:`real_dataset_names`.

    Returns
    -------
    tuple of tuple of str
        One group per file; a group lists the alternative relative paths of the file
        (the first found in the search order is used).

    Raises
    ------
    ValueError
        ``name`` is not a dataset read from files.
    """
    if name not in DATASET_FILES:
        raise ValueError(
            f"{name!r} is not a dataset read from files; valid names are "
            f"{real_dataset_names()} (synthetic datasets need no files)."
        )
    return DATASET_FILES[name]


@fill_doc(dataset_file=_DATASET_FILE_DOC, search=_SEARCH_DOC)
def file_status(
    dataset: str,
    group: tuple[str, ...],
    data_home: DataHome = None,
    *,
    verify: bool | None = None,
) -> FileStatus:
    """Locate one data file and check its sha256 unless verification is off.

    Parameters
    ----------
    {dataset_file}
    {search}

    Returns
    -------
    FileStatus
        ``state`` is ``"ok"``, ``"unchecked"``, ``"differs"`` or ``"missing"``.
    """
    relpath, found = locate_first(group, data_home)
    if found is None:
        return FileStatus(dataset, relpath, "missing", None)
    if not should_verify(verify) or not REMOTE_FILES.get(relpath, None):
        return FileStatus(dataset, relpath, "unchecked", found)
    try:
        check_file(found.path / relpath, relpath)
    except ChecksumError:
        return FileStatus(dataset, relpath, "differs", found)
    return FileStatus(dataset, relpath, "ok", found)


@fill_doc(search=_SEARCH_DOC)
def data_status(data_home: DataHome = None, *, verify: bool | None = None) -> list[FileStatus]:
    """Return the :func:`file_status` of every file of every real dataset.

    What ``otfair datasets where`` prints.

    Parameters
    ----------
    {search}

    Returns
    -------
    list of FileStatus
        One per file, datasets in registry order.
    """
    return [
        file_status(name, group, data_home, verify=verify)
        for name, groups in DATASET_FILES.items()
        for group in groups
    ]


@fill_doc(dataset_file=_DATASET_FILE_DOC)
def ensure_file(
    dataset: str,
    group: tuple[str, ...],
    data_home: DataHome = None,
    *,
    force: bool = False,
    progress: Progress | None = None,
) -> FileStatus:
    """Make one file available and verified, downloading it when needed.

    A verified copy anywhere in the search order is kept. Otherwise the file is
    downloaded into the first directory of the order; a differing copy there is only
    replaced with ``force`` (it may be an edited copy), while a differing copy further
    down the order is simply shadowed by the download.

    Parameters
    ----------
    {dataset_file}
    data_home : str or path-like, optional
        A directory searched first, and the download's destination.
    force : bool, default=False
        Replace a differing copy in the first directory.
    progress : callable, optional
        Called with the downloaded and total byte counts while downloading.

    Returns
    -------
    FileStatus
        The file's state (``"downloaded"`` after a download).

    Raises
    ------
    DataFileError
        Download failure, or a differing copy in the first directory without ``force``.
    """
    status = file_status(dataset, group, data_home, verify=True)
    if status.state in ("ok", "unchecked"):
        return status
    first = search_dirs(data_home)[0]
    if status.state == "differs" and status.directory == first and not force:
        raise ChecksumError(
            f"{status.path} differs from the registry's sha256 (an edited or damaged copy).",
            "rerun with --force to replace it by the registry's copy, or keep it and skip "
            "the check with OTFAIR_VERIFY=0 (any command).",
        )
    remote = {r: REMOTE_FILES.get(r) for r in group}
    target = next((r for r, e in remote.items() if e is not None and e.url), group[0])
    download_file(target, data_home, progress=progress)  # DataFileError naming the fix
    return FileStatus(dataset, target, "downloaded", first)
