"""How the command line shows Python warnings: one ``warning:`` line each, repeats counted.

Python prints a warning as ``path:line: Category: message`` followed by the source line
that raised it, and a warning whose text differs only by a number (a strength, a fold's
accuracy) again for each. A command that fits a path of strengths on several folds would
print the same advice a dozen times. :class:`WarningLines` prints the first of each kind
on one line, ``warning: Category: message``, and :meth:`WarningLines.summary` says how
many more of each kind came (``otfair`` installs it for the length of a command).
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from typing import Any, TextIO

#: a number inside a message (an integer, a decimal, a float in e-notation)
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def warning_kind(category: type[Warning], text: str) -> tuple[str, str]:
    """Return the key two warnings share when they differ only by their numbers."""
    return category.__name__, _NUMBER.sub("#", text)


class WarningLines:
    """A ``warnings.showwarning`` that prints each kind of warning once, on one line."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream
        self.counts: Counter[tuple[str, str]] = Counter()

    def _out(self) -> TextIO:
        return self.stream if self.stream is not None else sys.stderr

    def show(
        self,
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: Any = None,
        line: str | None = None,
    ) -> None:
        """Print ``warning: Category: message`` the first time a kind is seen."""
        text = " ".join(str(message).split())
        key = warning_kind(category, text)
        self.counts[key] += 1
        if self.counts[key] == 1:
            print(f"warning: {category.__name__}: {text}", file=self._out(), flush=True)

    def summary(self) -> None:
        """Say how many more warnings of each printed kind came (numbers aside)."""
        for (name, text), count in self.counts.items():
            if count > 1:
                # the start and the end: kinds of one message differ in their cause
                head = text if len(text) <= 100 else f"{text[:40].rstrip()} ... {text[-55:]}"
                print(
                    f"note: {count - 1} more {name} like '{head}' (other numbers: "
                    "strengths, folds or scores)",
                    file=self._out(),
                    flush=True,
                )
