"""``otfair demo``: a quick fairness sweep (synthetic data by default), ending in a report."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from otfair_lab.cli._common import check_output_dir, fail

if TYPE_CHECKING:
    from otfair_lab.experiments import SweepSummary


def demo_command(
    out: Annotated[
        Path, typer.Option("--out", help="Output directory (results and report).")
    ] = Path("otfair-demo"),
    dataset: Annotated[
        str | None,
        typer.Option(
            "--dataset",
            help="Run on this dataset instead of the synthetic default (a regression "
            "dataset switches to the accuracy-parity methods).",
        ),
    ] = None,
    workers: Annotated[
        int | None, typer.Option("--workers", help="Worker processes (default: up to 2).")
    ] = None,
    progress: Annotated[
        bool | None,
        typer.Option(
            "--progress/--no-progress",
            help="Progress bar (runs done/total, ETA); default: on in a terminal.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Run a quick trade-off sweep (a few methods x strengths x 2 seeds) and write a report."""
    from otfair.datasets import DataFileError
    from otfair_lab.experiments import SweepInterrupted, demo_spec, make_report, run_sweep
    from otfair_lab.experiments._claim import StoreConflictError

    check_output_dir(out)
    try:
        spec = demo_spec(dataset)
        n_workers = workers if workers is not None else max(1, min(2, os.cpu_count() or 1))
        if n_workers < 1:
            fail(f"--workers must be a positive integer; got {n_workers}.")
        runs = spec.runs()
        typer.echo(
            f"Demo on {spec.datasets[0].label}: {len(runs)} runs "
            f"({len({(r.method_label, r.strength) for r in runs})} method settings x "
            f"{len(spec.seeds)} seeds) on {n_workers} worker(s)."
        )
        show = sys.stderr.isatty() if progress is None else progress
        summary = run_sweep(spec, out, workers=n_workers, progress=show)
        index = make_report(out)
    except StoreConflictError as exc:  # the demo has no --merge: its words name --out only
        fail(str(exc).split(" Use another --out")[0] + " Use another --out.")
    except (DataFileError, FileNotFoundError, ValueError) as exc:
        fail(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
    except SweepInterrupted as stop:
        _interrupted(stop.summary, out)
    typer.echo(
        f"{summary.total} runs ({summary.skipped} reused, {summary.failed} failed) "
        f"in {summary.wall_time_s:.0f}s; results: {summary.store_path}"
    )
    typer.echo(f"Report: {index} (open {index.with_suffix('.html')} in a browser)")
    from otfair_lab.cli.sweep import _print_warnings

    _print_warnings(summary)


def _interrupted(summary: SweepSummary, out: Path) -> NoReturn:
    """Say in two lines what an interrupted demo kept, and exit 128 + signal number."""
    kept = summary.ok + summary.failed
    if summary.interrupted not in signal.Signals.__members__:  # a full disk
        fail(f"stopped by {summary.interrupted}: {kept} runs stored; {summary.reason}")
    typer.echo(
        f"interrupted by {summary.interrupted}: {kept} run{'s' if kept != 1 else ''} "
        f"stored, {len(summary.abandoned)} abandoned, {summary.not_started} not started; "
        "no report written.\n"
        f"Rerun the same command to resume (results kept in {out}).",
        err=True,
    )
    raise typer.Exit(128 + int(signal.Signals[summary.interrupted or "SIGINT"]))


def register(app: typer.Typer) -> None:
    """Attach the ``demo`` command to the root app."""
    app.command("demo")(demo_command)
