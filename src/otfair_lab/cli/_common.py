"""Helpers shared by CLI commands: error reporting, ``key=value`` options and JSON output."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any, NoReturn

import numpy as np
import typer

#: ``--confirm-above HOURS`` of the commands that estimate their run first.
ConfirmAboveOption = Annotated[
    float,
    typer.Option(
        "--confirm-above",
        min=0.0,
        help="Ask (or, without a terminal, refuse unless --yes) above this many hours.",
    ),
]


def fail(message: str, code: int = 2) -> NoReturn:
    """Print ``message`` to stderr as an error and exit with ``code``."""
    typer.secho(f"error: {message}", err=True, fg=typer.colors.RED)
    raise typer.Exit(code)


def _why_not_creatable(path: Path) -> str | None:
    """Why the missing ``path`` cannot be created (its nearest existing ancestor), or None."""
    ancestor = path.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        return f"{ancestor} is not a directory"
    if not os.access(ancestor, os.W_OK | os.X_OK):
        return f"{ancestor} is not writable"
    return None


def check_output_dir(path: Path, option: str = "--out") -> None:
    """Fail (one ``error:`` line, exit 2) unless ``path`` is or can become a directory.

    Checked before any work starts, without creating anything: an existing ``path`` must
    be a writable directory; otherwise its nearest existing ancestor must be one (so that
    ``--out /dev/null/x`` or ``--out results.csv/x`` is refused at once, not after a
    traceback from the store).
    """
    path = path.expanduser()
    if path.exists():
        if not path.is_dir():
            fail(f"{option} {path} is an existing file, not a directory; choose another {option}.")
        if not os.access(path, os.W_OK | os.X_OK):
            fail(f"{option} {path} is not a writable directory.")
        return
    reason = _why_not_creatable(path)
    if reason:
        fail(f"{option} {path} cannot be created: {reason}.")


def check_output_file(path: Path, option: str) -> None:
    """Fail unless ``path`` can be written as a file (not a directory; its folder can be made)."""
    path = path.expanduser()
    if path.is_dir():
        fail(f"{option} {path} is a directory; give a file name, e.g. {path / 'results.csv'}.")
    reason = None if path.parent.is_dir() else _why_not_creatable(path)
    if reason:
        fail(f"{option} {path} cannot be created: {reason}.")


def echo_json(obj: Any) -> None:
    """Print ``obj`` as JSON (numpy scalars converted, NaN/inf as null)."""
    from otfair_lab.experiments._store import to_jsonable  # the library's one JSON conversion

    typer.echo(json.dumps(to_jsonable(obj), indent=2, sort_keys=False))


def parse_key_values(pairs: list[str] | None, option: str = "--option") -> dict[str, Any]:
    """Parse repeated ``key=value`` pairs, the one option parser of every command.

    Values are read as JSON when possible, else kept as strings: ``lr=0.01`` gives a
    float, ``hidden=[64,64]`` a list, ``flag=true`` a bool, ``solver=adam`` the string
    ``"adam"``. Python spellings ``True``/``False``/``None`` are accepted too.
    """
    out: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, raw = pair.partition("=")
        key, raw = key.strip(), raw.strip()
        if not sep or not key:
            fail(f"{option} expects key=value, got {pair!r}.")
        raw = {"True": "true", "False": "false", "None": "null"}.get(raw, raw)
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    return out


def format_value(value: Any) -> str:
    """One table cell: floats with 4 decimals, everything else as ``str``."""
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.4f}"
    return str(value)


def print_table(
    title: str,
    header: list[str],
    rows: list[list[Any]],
    *,
    align: str = "right",
    ratios: list[int | None] | None = None,
) -> None:
    """Print one table: first column left-aligned, the others ``align``-ed.

    ``ratios`` (one per column, ``None`` for the first): the table takes the terminal's
    width, shared between the wrapped columns in these proportions (rich's ``ratio``).
    """
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, expand=ratios is not None)
    for i, name in enumerate(header):
        # the first column names the row (a method, a measure): never wrapped mid-name
        table.add_column(
            name,
            justify="left" if i == 0 else align,  # type: ignore[arg-type]
            no_wrap=i == 0,
            ratio=None if ratios is None else ratios[i],
        )
    for row in rows:
        table.add_row(*(format_value(v) for v in row))
    Console().print(table)


def print_panel(title: str, panel: dict[str, Any]) -> None:
    """Print a flat ``{measure: value}`` panel; nested dicts become their own tables."""
    flat = [[k, v] for k, v in panel.items() if not isinstance(v, dict)]
    print_table(title, ["measure", "value"], flat)
    for key, value in panel.items():
        if isinstance(value, dict):
            print_panel(key, value)


def note(message: str) -> None:
    """Print ``note: message`` on stderr (information, not an error)."""
    typer.secho(f"note: {message}", err=True)
