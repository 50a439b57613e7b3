"""One line of description per ``-o`` option, read from the estimators' numpydoc.

``otfair methods describe`` lists each option of a method once: a penalty object's
setting reachable both as ``NAME`` and ``penalty__NAME`` is one option with its alias,
and its description is the first sentence of the ``Parameters`` entry of the class that
owns it (the estimator, or the penalty object).
"""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any

__all__ = ["option_rows", "param_descriptions"]

_ENTRY = re.compile(r"^(?P<names>\w+(?:\s*,\s*\w+)*)\s*(?::.*)?$")
#: Longest description shown (longer ones end with an ellipsis).
MAX_CHARS = 160


def _first_sentence(text: str) -> str:
    """Return the first sentence of ``text`` (ending at ". " before a capital)."""
    text = " ".join(text.split())
    sentence = re.split(r"(?<=\.)\s+(?=[A-Z`(])", text, maxsplit=1)[0]
    return sentence if len(sentence) <= MAX_CHARS else sentence[: MAX_CHARS - 1] + "…"


def param_descriptions(cls: Any) -> dict[str, str]:
    """First sentence of each ``Parameters`` entry of ``cls``'s numpydoc docstring."""
    lines = (inspect.getdoc(cls) or "").splitlines()
    try:
        start = next(i for i, ln in enumerate(lines) if ln.strip() == "Parameters") + 2
    except StopIteration:
        return {}
    out: dict[str, str] = {}
    names: list[str] = []
    text: list[str] = []
    for i in range(start, len(lines)):
        line = lines[i]
        if line and not line[0].isspace():
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            match = _ENTRY.match(line)
            if match is None or set(nxt.strip()) == {"-"}:  # the next section
                break
            for name in names:
                out.setdefault(name, _first_sentence(" ".join(text)))
            names, text = [n.strip() for n in match["names"].split(",")], []
        elif line.strip():
            text.append(line.strip())
    for name in names:
        out.setdefault(name, _first_sentence(" ".join(text)))
    return out


_PASSED_TO = re.compile(r"^Passed to :class:`~?(?P<path>[\w.]+)`")


def _follow_reference(text: str, name: str) -> str:
    """For "Passed to :class:`X`", the description of ``name`` in ``X`` (else ``text``)."""
    match = _PASSED_TO.match(text)
    if match is None:
        return text
    module, _, attr = match["path"].rpartition(".")
    try:
        target = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError):
        return text
    return param_descriptions(target).get(name) or text


def option_rows(spec: Any, describe: Any) -> list[dict[str, str]]:
    """Each option of ``spec`` once: name, aliases, what it expects, and a description.

    ``describe(spec, name)`` says what the option expects (its type words).
    """
    names = list(spec.option_names())
    own = set(inspect.signature(spec.estimator.__init__).parameters) if spec.estimator else set()
    docs = param_descriptions(spec.estimator) if spec.estimator is not None else {}
    penalty_docs = param_descriptions(spec.penalty) if spec.penalty is not None else {}
    rows = []
    for name in sorted(names):
        base = name.removeprefix("penalty__")
        if name.startswith("penalty__") and base in names and base not in own:
            continue  # listed under its short name, with this alias
        is_penalty = name.startswith("penalty__") or (name not in own and base in penalty_docs)
        alias = f"penalty__{base}" if not name.startswith("penalty__") and is_penalty else ""
        text = (penalty_docs if is_penalty else docs).get(base, "")
        text = _follow_reference(text, base)
        if name.startswith("penalty__") and base in own:
            text = f"the penalty object's `{base}` (not the classifier's). {text}".strip()
        rows.append(
            {
                "option": name,
                "alias": alias if alias in names else "",
                "expects": describe(spec, name),
                "description": text or "-",
            }
        )
    return rows
