"""The registry's words for the run arguments a method refuses by name (torch-free).

One wording, imported by the torch-free name checks (:mod:`otfair_lab.experiments._names`,
the CLI, a sweep spec's parser) and by the registry's option check
(:func:`otfair_lab.experiments.methods.check_options`); a leaf module, so that both can.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["notion_problem", "unknown_options_message"]


def notion_problem(method: str, notions: Sequence[str], notion: str) -> str | None:
    """Return the registry's words for a ``notion`` outside ``method``'s ``notions``, or None."""
    if not notions:
        return f"method {method!r} has no choice of fairness notion; drop `notion`."
    if notion not in notions:
        return f"method {method!r} supports the notion(s) {', '.join(notions)}; got {notion!r}."
    return None


def unknown_options_message(method: str, unknown: list[str], valid: Iterable[str]) -> str:
    """Return the registry's words for ``-o`` option names ``method`` does not accept."""
    return (
        f"unknown option(s) {', '.join(map(repr, unknown))} for method {method!r}; "
        f"valid options: {', '.join(sorted(valid))}."
    )
