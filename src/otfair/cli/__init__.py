"""The ``otfair`` command-line interface.

Each command group lives in its own module and registers itself on the root app; heavy
imports (torch, datasets) happen inside the commands so that ``otfair --help`` is fast.
"""

from __future__ import annotations

import typer

from otfair import __version__

app = typer.Typer(
    name="otfair",
    help="Train and audit fair machine-learning models with optimal transport.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
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


def _register_all() -> None:
    from otfair.cli import audit, bench, datasets, demo, fit, methods, reproduce, sweep

    for module in (datasets, methods, audit, fit, bench, sweep, reproduce, demo):
        module.register(app)


_register_all()


def main() -> None:
    """Entry point of the ``otfair`` console script."""
    app()
