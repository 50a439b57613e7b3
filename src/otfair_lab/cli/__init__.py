"""The ``otfair`` command-line interface.

Each command group lives in its own module and registers itself on the root app; heavy
imports (torch, datasets) happen inside the commands so that ``otfair --help`` is fast.
"""

from __future__ import annotations

import importlib
import sys
import time
import typing
import warnings
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperGroup

from otfair import __version__
from otfair_lab.cli._warnings import WarningLines

#: When the command started (``time.perf_counter()``), for the estimates of the whole
#: command (:func:`started`): the CLI's import under :func:`main` (the console script),
#: else each invocation of the app (``CliRunner``, several commands in one process).
_START: dict[str, float] = {"at": time.perf_counter()}
_FROM_MAIN: dict[str, bool] = {"main": False}


def started() -> float:
    """Return ``time.perf_counter()`` when the current command started."""
    return _START["at"]


def plain_metavars(command: Any) -> None:
    """Give every parameter of ``command`` (and its subcommands) a plain metavar.

    Typer 0.2x renders a parameter without a metavar as ``<str>``, ``<list[str]>``,
    ``<bool>`` (even for flags) and an argument as ``{file}`` in the usage line. Here:
    arguments show their name (``FILE``), options their type (``TEXT``, ``INTEGER``,
    ``FLOAT``, ``PATH``, ``[a|b]`` for choices) and flags nothing. An explicit
    ``metavar=`` is kept.
    """
    for param in command.params:
        if param.param_type_name == "argument":
            _plain_argument(param)
        elif param.metavar is not None:
            continue
        elif getattr(param, "is_flag", False) or getattr(param, "count", False):
            param.metavar = ""
        else:
            param.metavar = _type_metavar(getattr(param, "type_descriptor", None), param)
    get_help_option = command.get_help_option

    def help_option(ctx: Any) -> Any:  # --help is a flag too (built on first use)
        option = get_help_option(ctx)
        if option is not None and option.metavar is None:
            option.metavar = ""
        return option

    command.get_help_option = help_option
    for sub in getattr(command, "commands", {}).values():
        plain_metavars(sub)


def _plain_argument(param: Any) -> None:
    """``FILE`` in the usage line (not ``{file}``) and no ``<path>`` type column."""
    if param.metavar is None:
        param.metavar = (param.name or "arg").upper()
    name = param.metavar + ("..." if param.nargs != 1 else "")
    if hasattr(param, "_usage_display_name"):  # typer 0.2x braces required arguments
        param._usage_display_name = lambda: name if param.required else f"[{name}]"
    param.display_type_rich = lambda ctx=None: None


def _type_metavar(desc: Any, param: Any = None) -> str:
    """``TEXT`` / ``INTEGER`` / ``FLOAT`` / ``PATH`` / ``[a|b]`` for a typer type.

    ``desc`` is typer's type descriptor (typer >= 0.27); older typers have none, and the
    click type of ``param`` names the metavar the way click does (``FLOAT``, ``TEXT``).
    """
    if desc is None:
        ptype = getattr(param, "type", None)
        choices = getattr(ptype, "choices", None)
        if choices:
            return "[" + "|".join(str(getattr(c, "value", c)) for c in choices) + "]"
        name = str(getattr(ptype, "name", "") or "").upper()
        aliases = {"INT": "INTEGER", "BOOL": "BOOLEAN", "STRING": "TEXT"}
        return aliases.get(name, name) if name.isidentifier() else "VALUE"
    if getattr(desc, "is_choice", False) and desc.choices:
        return "[" + "|".join(str(getattr(c, "value", c)) for c in desc.choices) + "]"
    if getattr(desc, "is_path", False):
        return "PATH"
    annotation = desc.annotation
    if typing.get_origin(annotation) in (list, tuple):
        annotation = (typing.get_args(annotation) or (str,))[0]
    names = {int: "INTEGER", float: "FLOAT", str: "TEXT", bool: "BOOLEAN", Path: "PATH"}
    return names.get(annotation, "VALUE")


class _PlainGroup(TyperGroup):
    """The root group: plain metavars everywhere (:func:`plain_metavars`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        plain_metavars(self)


app = typer.Typer(
    name="otfair",
    help="Train and audit fair machine-learning models with optimal transport.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=_PlainGroup,
)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"otfair {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Show the version."
    ),
) -> None:
    """Train and audit fair machine-learning models with optimal transport."""
    if not _FROM_MAIN["main"]:  # an app invoked in-process: the command starts now
        _START["at"] = time.perf_counter()


def _register_all() -> None:
    from otfair_lab.cli import audit, bench, datasets, demo, fit, methods, reproduce, sweep

    for module in (datasets, methods, audit, fit, bench, sweep, reproduce, demo):
        module.register(app)


_register_all()


def _click_exceptions(name: str) -> tuple[type[Any], ...]:
    """``name`` from click and from typer's vendored copy (typer >= 0.29), where present."""
    found: list[type[Any]] = []
    for module in ("typer._click.exceptions", "click.exceptions", "typer.exceptions"):
        try:
            cls = getattr(importlib.import_module(module), name, None)
        except ImportError:
            continue
        if isinstance(cls, type) and cls not in found:
            found.append(cls)
    return tuple(found)


def main() -> None:
    """Entry point of the ``otfair`` console script.

    A command-line mistake that click catches itself (an unknown command or flag, a
    missing or ill-typed value) ends like every other user error: one ``error:`` line on
    stderr naming the fix, exit code 2 (click's default is a boxed usage message). A
    command group called without a subcommand prints its help and exits 0.
    """
    _FROM_MAIN["main"] = True  # the command started with the CLI's import
    lines = WarningLines()
    warnings.showwarning = lines.show  # one line per kind of warning, repeats counted
    try:
        code = app(standalone_mode=False)
    except _click_exceptions("NoArgsIsHelpError") as exc:  # `otfair`, `otfair datasets`
        exc.show()
        code = 0
    except _click_exceptions("UsageError") as exc:
        ctx = getattr(exc, "ctx", None)
        where = ctx.command_path if ctx is not None else "otfair"
        message = " ".join(exc.format_message().split())
        print(f"error: {message} (see `{where} --help`)", file=sys.stderr)
        code = exc.exit_code
    except _click_exceptions("ClickException") as exc:
        print(f"error: {' '.join(exc.format_message().split())}", file=sys.stderr)
        code = exc.exit_code
    except _click_exceptions("Abort"):  # Ctrl-C outside a command's own handling
        print("Aborted!", file=sys.stderr)
        code = 1
    finally:
        lines.summary()
    sys.exit(code if isinstance(code, int) else 0)
