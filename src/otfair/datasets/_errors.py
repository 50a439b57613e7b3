"""Errors about data files: one base class whose message is one line naming the fix.

Every problem with a data file (missing and not downloadable, a bad data directory, a
checksum mismatch, an unparsable file) raises a subclass of :class:`DataFileError`.
``str(exc)`` is a single line ``"<what is wrong>. Fix: <what to do>"``, so a command
line front end only needs ``fail(str(exc))``.
"""

from __future__ import annotations

from pathlib import PurePath


def one_line(text: str) -> str:
    """Collapse whitespace (newlines included) so a message prints as one line."""
    return " ".join(str(text).split())


class DataFileError(OSError):
    """A data file is missing, could not be downloaded, or failed verification.

    Parameters
    ----------
    message : str
        What is wrong (collapsed to one line).
    hint : str, optional
        How to fix it (collapsed to one line), also available as ``exc.hint``.

    Notes
    -----
    ``str(exc)`` is ``message`` followed by ``" Fix: " + hint`` when a hint is given.
    """

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(one_line(message))
        self.message = one_line(message)
        self.hint = one_line(hint)

    def __str__(self) -> str:
        return f"{self.message} Fix: {self.hint}" if self.hint else self.message


class DataDirError(DataFileError, ValueError):
    """A data directory given by ``data_home`` or ``$OTFAIR_DATA_DIR`` is unusable."""


class ChecksumError(DataFileError):
    """A data file's sha256 differs from the registry's (truncated, edited or wrong file)."""


class MalformedFileError(DataFileError, ValueError):
    """A data file does not have the expected layout (columns, values).

    The message should start with the file's path; without a ``hint`` the fix offered
    is to restore the registry's copy of the dataset named by the path's folder.
    """

    def __init__(self, message: str, hint: str = "") -> None:
        if not hint:
            folder = PurePath(str(message).split(" ", 1)[0]).parent.name or "NAME"
            hint = (
                f"restore the original with `otfair datasets fetch {folder} --force` "
                "(or fix the file)."
            )
        super().__init__(message, hint)
