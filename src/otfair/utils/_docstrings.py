"""Numpydoc entries that several estimators share, written once.

A class docstring names a shared block on a line of its own, ``{name}``, indented as the
entries around it; :func:`fill_doc` puts the block there when the class is defined, so
``help()``, the API pages and the docstring tests read the whole section.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import TypeVar

__all__ = ["fill_doc"]

T = TypeVar("T")


def fill_doc(*, required: bool = True, **blocks: str) -> Callable[[T], T]:
    """Return a decorator that replaces each ``{name}`` line by ``blocks[name]``.

    Parameters
    ----------
    required : bool, default=True
        Whether every block must have its line (a class that shares a fixed set of
        entries); ``False`` for a table of parts each function picks from.
    **blocks : str
        The shared entries, dedented (numpydoc: ``name : type`` then an indented
        description).

    Returns
    -------
    callable
        The decorator; with ``required`` it raises ``ValueError`` if a block's line is
        missing.
    """

    def decorate(obj: T) -> T:
        doc = obj.__doc__ or ""
        for name, block in blocks.items():
            marker = "{" + name + "}"
            line = next((ln for ln in doc.splitlines() if ln.strip() == marker), None)
            if line is None:
                if not required:
                    continue
                raise ValueError(f"{obj!r}: no line `{marker}` in the docstring.")
            indent = line[: len(line) - len(line.lstrip())]
            text = textwrap.indent(textwrap.dedent(block).strip("\n"), indent)
            doc = doc.replace(line, text, 1)
        obj.__doc__ = doc
        return obj

    return decorate
