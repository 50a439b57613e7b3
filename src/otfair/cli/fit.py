"""``otfair fit``: train one registered method on one dataset split and print its test panel."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from otfair.cli._common import echo_json, fail, parse_key_values


def _print_panel(result: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    title = f"{result['method']} on {result['dataset']} (seed {result['seed']}), test split"
    table = Table(title=title)
    table.add_column("measure")
    table.add_column("value", justify="right")
    for key, value in result.items():
        if isinstance(value, dict):
            continue
        shown = f"{value:.4f}" if isinstance(value, float) else str(value)
        table.add_row(key, shown)
    console = Console()
    console.print(table)
    for key, value in result.items():
        if isinstance(value, dict):
            sub = Table(title=key)
            sub.add_column("measure")
            sub.add_column("value", justify="right")
            for k, v in value.items():
                sub.add_row(str(k), f"{v:.4f}" if isinstance(v, float) else str(v))
            console.print(sub)


def fit_command(
    dataset: str = typer.Option(..., "--dataset", help="Dataset name (`otfair datasets list`)."),
    method: str = typer.Option(..., "--method", help="Registered method name."),
    strength: float | None = typer.Option(
        None, "--strength", help="Trade-off parameter (alpha, lambda, eps...) of the method."
    ),
    notion: str | None = typer.Option(None, "--notion", help="Fairness notion: dp, eo, eopp."),
    seed: int = typer.Option(0, "--seed", help="Seed of the split and of the estimator."),
    epochs: int | None = typer.Option(None, "--epochs", help="Training epochs."),
    device: str = typer.Option("cpu", "--device", help="Torch device (cpu, cuda, auto)."),
    test_size: float = typer.Option(0.2, "--test-size", help="Test fraction of the split."),
    option: Annotated[
        list[str] | None,
        typer.Option("--option", "-o", help="Method option key=value (JSON values); repeatable."),
    ] = None,
    dataset_option: Annotated[
        list[str] | None,
        typer.Option(
            "--dataset-option", "-d", help="Dataset loader option key=value; repeatable."
        ),
    ] = None,
    source_domain: str | None = typer.Option(
        None, "--source-domain", help="Source domain of a domain-shift pair (with target)."
    ),
    target_domain: str | None = typer.Option(
        None, "--target-domain", help="Target domain of a domain-shift pair (with source)."
    ),
    max_train_rows: int | None = typer.Option(
        None, "--max-train-rows", help="Subsample the training split to this many rows."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Train METHOD on the DATASET training split and print the test fairness panel."""
    from otfair.experiments import run_single

    try:
        result = run_single(
            dataset,
            method,
            strength=strength,
            seed=seed,
            notion=notion,
            epochs=epochs,
            device=device,
            test_size=test_size,
            dataset_options=parse_key_values(dataset_option, "--dataset-option"),
            method_options=parse_key_values(option),
            source_domain=source_domain,
            target_domain=target_domain,
            max_train_rows=max_train_rows,
        )
    except (ValueError, TypeError) as exc:
        fail(str(exc))
    if as_json:
        echo_json(result)
    else:
        _print_panel(result)


def register(app: typer.Typer) -> None:
    """Attach the ``fit`` command to the root app."""
    app.command("fit")(fit_command)
