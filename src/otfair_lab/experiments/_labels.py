"""The series label of a run in reports and plots: ``method [notion]``."""

from __future__ import annotations

from typing import Any


def method_label(method: str, notion: Any) -> str:
    """Return ``"method [notion]"`` (``"otf [dp]"``), or ``method`` when it has no notion.

    A method trained for one notion at a time (OTF, Norm) is a different series per notion;
    one without a notion (Barycenter, the unfair model) keeps its name.
    """
    return f"{method} [{notion}]" if isinstance(notion, str) and notion else method
