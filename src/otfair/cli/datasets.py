"""`otfair datasets list|describe`: what data is available and what it looks like."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from otfair.cli._common import echo_json, fail, parse_key_values

datasets_app = typer.Typer(help="List and describe the benchmark datasets.", no_args_is_help=True)


@datasets_app.command("list")
def list_command(
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """List the datasets (real and synthetic), their options and the domain shifts."""
    from otfair.datasets import list_datasets, list_domain_shifts
    from otfair.datasets._api import get_entry

    rows = []
    for name in list_datasets():
        entry = get_entry(name)
        options = {
            key: list(entry.choices.get(key, ())) or default
            for key, default in entry.options().items()
        }
        rows.append(
            {
                "name": name,
                "kind": "real" if entry.real else "synthetic",
                "summary": entry.summary,
                "options": options,
            }
        )
    if as_json:
        echo_json({"datasets": rows, "domain_shifts": list_domain_shifts()})
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title="otfair datasets")
    for col in ("name", "kind", "summary", "options (choices or default)"):
        table.add_column(col)
    for row in rows:
        opts = ", ".join(
            f"{k}={'|'.join(map(str, v)) if isinstance(v, list) else v}"
            for k, v in row["options"].items()
        )
        table.add_row(row["name"], row["kind"], row["summary"], opts)
    console = Console(width=160)
    console.print(table)
    console.print(f"domain shifts (load_domain_shift): {', '.join(list_domain_shifts())}")


@datasets_app.command("describe")
def describe_command(
    name: str = typer.Argument(..., help="Dataset name (see `otfair datasets list`)."),
    option: Annotated[
        list[str] | None,
        typer.Option(
            "--dataset-option",
            "-d",
            "--option",
            "-o",
            help="Dataset option KEY=VALUE, e.g. sensitive=both (repeatable; -o is an old alias).",
        ),
    ] = None,
    data_home: str | None = typer.Option(
        None, "--data-home", help="Data directory (default: $OTFAIR_DATA_DIR or the cache)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of text."),
) -> None:
    """Rows, features after preprocessing, group sizes and label statistics per group."""
    from otfair.datasets import DataFileError, dataset_summary, load_dataset

    options = parse_key_values(option, "--dataset-option")
    try:
        summary = dataset_summary(load_dataset(name, data_home=data_home, **options))
    except (ValueError, TypeError, DataFileError) as exc:
        fail(str(exc))
        return
    if as_json:
        echo_json(summary)
        return
    lines = [
        f"{summary['name']} ({summary['task']}): {summary['rows']:,} rows, "
        f"{summary['raw_features']} columns -> {summary['features']} features after "
        f"one-hot encoding ({summary['scaling']} scaling)",
        f"label: {_fmt_stats(summary['label'])}",
    ]
    for attr, info in summary["sensitive"].items():
        if info["kind"] == "binary":
            for group, stats in info["groups"].items():
                lines.append(f"  {attr} = {group}: n = {stats['size']:,}, {_fmt_stats(stats)}")
        else:
            lines.append(
                f"  {attr} (continuous): mean {info['mean']:.4g}, std {info['std']:.4g}, "
                f"corr with label {info['corr_with_label']:.3f}"
            )
    lines.append(summary["description"])
    typer.echo("\n".join(lines))


def _fmt_stats(stats: dict[str, Any]) -> str:
    if "base_rate" in stats:
        return f"base rate {stats['base_rate']:.4f}"
    return f"mean {stats['label_mean']:.4g}, std {stats['label_std']:.4g}"


def register(app: typer.Typer) -> None:
    """Attach the ``datasets`` command group to the root app."""
    app.add_typer(datasets_app, name="datasets")
