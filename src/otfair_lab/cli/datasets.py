"""`otfair datasets list|describe|where|fetch`: what data exists, where, what it looks like.

Every data problem (missing file without network, checksum mismatch, bad directory)
is answered by one ``error:`` line naming the fix, exit code 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from otfair_lab.cli._common import check_output_dir, echo_json, fail, parse_key_values

datasets_app = typer.Typer(
    help="List, describe, locate and download the benchmark datasets.", no_args_is_help=True
)

_DATA_HOME_HELP = (
    "Data directory searched first (then $OTFAIR_DATA_DIR, then the user cache); "
    "downloads go there. `otfair datasets where` prints the search order."
)
_NO_VERIFY_HELP = (
    "Do not check local files against the registry's sha256 (for copies you edited on "
    "purpose; same as OTFAIR_VERIFY=0)."
)


@datasets_app.command("list")
def list_command(
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """List the datasets (real and synthetic), their options and the domain shifts."""
    from otfair.datasets import dataset_entries, list_datasets, list_domain_shifts

    rows: list[dict[str, Any]] = []
    for name in list_datasets():
        entry = dataset_entries()[name]
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
    data_home: str | None = typer.Option(None, "--data-home", help=_DATA_HOME_HELP),
    no_verify: bool = typer.Option(False, "--no-verify", help=_NO_VERIFY_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of text."),
) -> None:
    """Rows, features after preprocessing, group sizes and label statistics per group."""
    from otfair_lab.cli._checks import check_dataset

    check_dataset(name)  # an unknown name answers before scikit-learn is imported
    from otfair.datasets import DataFileError, dataset_summary, load_dataset

    options = parse_key_values(option, "--dataset-option")
    verify = False if no_verify else None
    try:
        dataset = load_dataset(name, data_home=data_home, verify=verify, **options)
        summary = dataset_summary(dataset)
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


@datasets_app.command("where")
def where_command(
    data_home: str | None = typer.Option(None, "--data-home", help=_DATA_HOME_HELP),
    no_verify: bool = typer.Option(False, "--no-verify", help=_NO_VERIFY_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of text."),
) -> None:
    """Print the data search order and where each dataset's files were found."""
    from otfair.datasets import DataFileError, data_status, search_dirs

    try:
        dirs = search_dirs(data_home)
        rows = data_status(data_home, verify=False if no_verify else None)
    except DataFileError as exc:
        fail(str(exc))
        return
    relative = [d for d in dirs if not d.path.is_absolute()]
    if as_json:
        echo_json(
            {
                "search_order": [
                    {"source": d.label, "path": str(d.path), "resolved": str(d.path.resolve())}
                    for d in dirs
                ],
                "files": [
                    {
                        "dataset": r.dataset,
                        "file": r.relpath,
                        "state": r.state,
                        "directory": None if r.directory is None else str(r.directory.path),
                    }
                    for r in rows
                ],
            }
        )
        return
    lines = ["Search order (the first directory holding a file wins; downloads go to the first):"]
    if data_home is None:
        lines.append("  -  --data-home        (not given)")
    lines += [f"  {i}. {d.label:<17} {d.path.resolve()}" for i, d in enumerate(dirs, 1)]
    lines.append(f"  {len(dirs) + 1}. download          registry address, sha256-verified")
    width = max(len(r.relpath) for r in rows)
    for r in rows:
        if r.directory is None:
            where = f"-> otfair datasets fetch {r.dataset}"
        else:
            where = f"{r.directory.path.resolve()} ({r.directory.label})"
        lines.append(f"{r.relpath:<{width}}  {r.state:<9}  {where}")
    for d in relative:  # resolved against the working directory at every use
        lines.append(
            f"note: {d.label} = {str(d.path)!r} is a relative path: it is resolved against "
            f"the current directory ({Path.cwd()}), so it names another directory when a "
            "command runs elsewhere; give an absolute path to avoid that."
        )
    typer.echo("\n".join(lines))


@datasets_app.command("fetch")
def fetch_command(
    names: Annotated[
        list[str] | None, typer.Argument(help="Datasets to download (see `otfair datasets list`).")
    ] = None,
    all_: bool = typer.Option(False, "--all", help="Fetch every dataset read from files."),
    data_home: str | None = typer.Option(
        None,
        "--data-home",
        help=(
            "Download here (created if needed) instead of the first directory of the "
            "search order ($OTFAIR_DATA_DIR when set, else the cache)."
        ),
    ),
    force: bool = typer.Option(
        False, "--force", help="Replace a local copy whose sha256 differs from the registry."
    ),
) -> None:
    """Download datasets' files (verified by sha256) unless a verified copy exists."""
    from pathlib import Path

    from otfair_lab.cli._checks import check_fetchable

    for name in names or []:  # before scikit-learn is imported
        check_fetchable(name)
    from otfair.datasets import DataFileError, dataset_files, ensure_file, real_dataset_names

    if all_ == bool(names):
        fail(f"give dataset names or --all (one of the two); names: {real_dataset_names()}.")
    chosen = real_dataset_names() if all_ else list(names or [])
    try:
        groups = [(name, group) for name in chosen for group in dataset_files(name)]
    except ValueError as exc:
        fail(str(exc))
        return
    if data_home is not None:
        check_output_dir(Path(data_home), option="--data-home")
        Path(data_home).expanduser().mkdir(parents=True, exist_ok=True)
    for name, group in groups:
        with _DownloadProgress(group[-1]) as progress:
            try:
                status = ensure_file(name, group, data_home, force=force, progress=progress)
            except DataFileError as exc:
                fail(str(exc))
                return
        assert status.directory is not None  # ensure_file found or wrote the file
        verb = "downloaded to" if status.state == "downloaded" else "present in"
        check = "sha256 ok" if status.state != "unchecked" else "not in the registry, unchecked"
        typer.echo(f"{status.relpath}: {verb} {status.directory.path} ({check})")


class _DownloadProgress:
    """Show a download's progress: a bar on a terminal, a line on stderr otherwise."""

    def __init__(self, relpath: str) -> None:
        self.relpath = relpath
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> Any:
        return self.update

    def update(self, done: int, total: int | None) -> None:
        import sys

        if self._bar is None and sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import DownloadColumn, Progress, TransferSpeedColumn

            self._bar = Progress(
                *Progress.get_default_columns(),
                DownloadColumn(),
                TransferSpeedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task(f"downloading {self.relpath}", total=total)
        elif self._bar is None and self._task is None:
            size = f" ({total / 1e6:.1f} MB)" if total else ""
            typer.echo(f"downloading {self.relpath}{size} ...", err=True)
            self._task = False
        if self._bar is not None:
            self._bar.update(self._task, completed=done)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
