"""``otfair sweep`` and ``otfair report``: run a TOML sweep spec, then report on its results.

Exit codes of ``otfair sweep``: 0 every run of the selection is stored ok; 1 some run is
stored failed (the distinct errors are printed with their counts); 2 a user error (bad
config, another sweep's ``--out``, unreachable scheduler, an unconfirmed long sweep);
130 / 143 stopped by SIGINT / SIGTERM (finished runs kept; rerun to resume).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from otfair_lab.cli._checks import (
    check_device,
    check_scheduler,
    check_spec,
    check_sweep_epochs_floor,
)
from otfair_lab.cli._common import ConfirmAboveOption, check_output_dir, check_output_file, fail
from otfair_lab.cli._help import option

if TYPE_CHECKING:
    from collections.abc import Callable

    from otfair_lab.experiments._plan import SweepPlan
    from otfair_lab.experiments._runner import SweepSummary

#: Exit code of a sweep with failed runs.
EXIT_RUNS_FAILED = 1
#: Sweeps estimated above this many hours need ``--yes`` (or a confirmation on a terminal).
CONFIRM_ABOVE_HOURS = 1.0
#: How many distinct error messages a sweep prints.
SHOWN_ERRORS = 5

#: Options that ``otfair sweep`` and ``otfair reproduce`` declare alike.
WorkersOption = Annotated[
    int, typer.Option("--workers", help="Worker processes (1 = in process).")
]
YesOption = Annotated[
    bool,
    typer.Option("--yes", "-y", help="Start a sweep estimated above --confirm-above hours."),
]
ProgressOption = Annotated[
    bool, typer.Option("--progress/--no-progress", help="Progress display.")
]


def _confirm_plan(yes: bool, confirm_above: float) -> Callable[[SweepPlan], None]:
    """Return the ``on_plan`` callback: print the plan, ask before a long sweep.

    A partial plan (a lower bound while the pilots run) is printed only when it is
    already above ``confirm_above`` hours, and then asks (or stops) at once.
    """
    from otfair_lab.experiments._plan import format_duration

    confirmed = [yes]

    def on_plan(plan: SweepPlan) -> None:
        over = plan.estimate_s is not None and plan.estimate_s > confirm_above * 3600
        if plan.partial and (confirmed[0] or not over):
            return
        typer.echo(plan.describe(), err=True)
        if confirmed[0] or not over or plan.estimate_s is None:
            return
        if sys.stdin.isatty() and sys.stderr.isatty():
            import signal

            old = signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C aborts
            try:
                answer = typer.confirm("Start it?", default=False, err=True)
            finally:
                signal.signal(signal.SIGINT, old)
            if answer:
                confirmed[0] = True
                return
            fail("not confirmed; nothing more was run.")
        profiles = [p for p in plan.profiles if p != plan.profile]
        hint = f" or a smaller --profile ({', '.join(profiles)})" if profiles else ""
        bound = "at least " if plan.partial else None
        fail(
            f"this sweep is estimated {'at ' if bound is None else bound}"
            f"{format_duration(plan.estimate_s)}, above "
            f"{confirm_above:g} h; pass --yes to run it{hint}, or --confirm-above HOURS."
        )

    return on_plan


def _runner_options(
    profile: str, workers: int, progress: bool, yes: bool, confirm_above: float
) -> dict[str, Any]:
    """Return the sweep runner's keywords from the options ``sweep`` and ``reproduce`` share."""
    on_plan = _confirm_plan(yes, confirm_above)
    return {"profile": profile, "workers": workers, "progress": progress, "on_plan": on_plan}


def _print_errors(summary: SweepSummary) -> None:
    n = len(summary.errors)
    shown = summary.errors[:SHOWN_ERRORS]
    more = f", the first {len(shown)}" if n > len(shown) else ""
    typer.echo(f"{n} distinct error{'s' if n != 1 else ''}{more}:", err=True)
    for message, count in shown:
        typer.echo(f"  {count} x {message}", err=True)
    old = summary.stored_failed - summary.failed
    if old > 0:
        typer.echo(
            f"{old} of the failed runs were stored by an earlier sweep and not rerun; "
            "rerun them with --retry-failed.",
            err=True,
        )
    typer.echo(
        "Tracebacks: the `traceback` column of results.sqlite; rerun them with --retry-failed.",
        err=True,
    )


def _print_warnings(summary: SweepSummary) -> None:
    """Print each distinct warning of the sweep's fits once, with how many fits gave it.

    A stacked group of strengths is one fit: its warnings, caught once for the group,
    count once (crediting each strength with every other's warnings overcounted them).
    """
    n = len(summary.warnings)
    if not n:
        return
    shown = summary.warnings[:SHOWN_ERRORS]
    more = f", the first {len(shown)}" if n > len(shown) else ""
    typer.echo(f"{n} distinct warning{'s' if n != 1 else ''} (fits that gave it){more}:", err=True)
    for message, count in shown:
        typer.echo(f"  {count} x {message}", err=True)


def _summary_line(summary: SweepSummary) -> str:
    other = summary.other_ok + summary.other_failed
    outside = (
        f" (and {other} rows outside this selection: {summary.other_ok} ok, "
        f"{summary.other_failed} failed)"
        if other
        else ""
    )
    return (
        f"{summary.total} runs (profile {summary.profile}): {summary.skipped} already done, "
        f"{summary.ok} ok, {summary.failed} failed in {summary.wall_time_s:.1f}s; "
        f"stored: {summary.stored_ok} ok, {summary.stored_failed} failed{outside}; "
        f"results in {summary.store_path}"
    )


def sweep_command(
    config: Annotated[Path, typer.Argument(help="TOML sweep spec (see configs/).")],
    out: Annotated[Path, typer.Option("--out", help="Output directory (holds results.sqlite).")],
    profile: Annotated[str, option("sweep", "--profile")] = "full",
    workers: WorkersOption = 1,
    backend: Annotated[str, option("sweep", "--backend")] = "local",
    scheduler: Annotated[str | None, option("sweep", "--scheduler")] = None,
    device: Annotated[str | None, option("sweep", "--device")] = None,
    retry_failed: Annotated[bool, option("sweep", "--retry-failed")] = False,
    report: Annotated[bool, option("sweep", "--report")] = False,
    progress: ProgressOption = True,
    yes: YesOption = False,
    confirm_above: ConfirmAboveOption = CONFIRM_ABOVE_HOURS,
    merge: Annotated[bool, option("sweep", "--merge")] = False,
    stack: Annotated[bool, option("sweep", "--stack/--no-stack")] = True,
    data_home: Annotated[Path | None, option("sweep", "--data-home")] = None,
    pilot: Annotated[bool | None, option("sweep", "--pilot/--no-pilot")] = None,
    warm_up: Annotated[bool, option("sweep", "--warm-up")] = False,
) -> None:
    """Run every pending run of CONFIG, storing each result as it finishes (resumable).

    Prints the plan first (runs, and the time estimated from a pilot fit of each method x
    dataset group, or from stored timings; --no-pilot times the runs as they go); a sweep
    estimated above --confirm-above hours needs --yes. Exit codes: 0 all runs
    ok, 1 some run failed, 2 user error, 130/143 interrupted by SIGINT/SIGTERM.

    A spec runs code like a script: its plugins are imported and a dataset named
    module:function calls that function (only from a module listed in plugins). Run
    only specs you trust as you would a Python script.
    """
    check_output_dir(out)
    _use_data_home(data_home)
    # the spec's names and the scheduler's address are checked before torch is imported
    _check_backend(backend, scheduler, device)
    spec = check_spec(config)
    check_sweep_epochs_floor(
        spec, profile, workers=workers, confirm_above=confirm_above, yes=yes
    )  # before any pilot
    if scheduler is not None:
        check_scheduler(scheduler)

    from otfair_lab.experiments import ConfigError, make_report, run_sweep
    from otfair_lab.experiments._runner import SchedulerUnreachableError, SweepInterrupted

    try:
        if device is not None:
            spec = spec.with_device(device)
        summary = run_sweep(
            spec,
            out,
            backend=backend,  # type: ignore[arg-type]
            scheduler=scheduler,
            retry_failed=retry_failed,
            merge=merge,
            stack=stack,
            pilot=pilot,
            warm_up=warm_up,
            **_runner_options(profile, workers, progress, yes, confirm_above),
        )
    except (ConfigError, FileNotFoundError, ValueError, SchedulerUnreachableError) as exc:
        fail(_one_line(exc))
    except SweepInterrupted as stop:
        _interrupted(stop.summary)
    _print_summary(summary)
    if report:
        if summary.stored_ok:
            typer.echo(f"report: {make_report(out)}")
        else:
            typer.echo("no report: no successful run.", err=True)
    if summary.stored_failed:
        raise typer.Exit(EXIT_RUNS_FAILED)


def _use_data_home(data_home: Path | None) -> None:
    """Point the runs (and local workers) at ``--data-home``: they read $OTFAIR_DATA_DIR."""
    if data_home is None:
        return
    if not data_home.expanduser().is_dir():
        fail(f"--data-home {str(data_home)!r} is not an existing directory.")
    os.environ["OTFAIR_DATA_DIR"] = str(data_home.expanduser().resolve())


def _check_backend(backend: str, scheduler: str | None, device: str | None) -> None:
    """Fail on an unknown ``--backend``, a ``--scheduler`` without a cluster, a bad device."""
    if backend not in ("local", "cluster"):
        fail(f"--backend must be 'local' or 'cluster'; got {backend!r}.")
    if scheduler is not None and backend != "cluster":
        fail("--scheduler is only used with --backend cluster.")
    if device is not None:
        check_device(device)


def _print_summary(summary: SweepSummary) -> None:
    """Print the summary line, the distinct warnings and, with failed runs, the errors."""
    typer.echo(_summary_line(summary))
    _print_warnings(summary)
    if summary.stored_failed:
        _print_errors(summary)


def _interrupted(summary: SweepSummary) -> NoReturn:
    """Say what an interrupted sweep kept and abandoned, and exit 128 + signal number.

    A sweep stopped by a full disk says so in the same one line and exits 2.
    """
    import signal

    kept = summary.ok + summary.failed
    shown = ", ".join(summary.abandoned[:SHOWN_ERRORS])
    more = (
        f", and {len(summary.abandoned) - SHOWN_ERRORS} more"
        if len(summary.abandoned) > SHOWN_ERRORS
        else ""
    )
    abandoned = f" ({shown}{more})" if shown else ""
    if summary.interrupted not in signal.Signals.__members__:  # a full disk: exit 2
        fail(
            f"stopped by {summary.interrupted}: {kept} run{'s' if kept != 1 else ''} "
            f"finished and stored, {len(summary.abandoned)} abandoned, not stored{abandoned}; "
            f"{summary.not_started} not started; {summary.reason}"
        )
    typer.echo(  # one line, whenever the signal came
        f"interrupted by {summary.interrupted}: {kept} run{'s' if kept != 1 else ''} "
        f"finished and stored, {len(summary.abandoned)} abandoned, not stored{abandoned}; "
        f"{summary.not_started} not started; rerun the same command to resume.",
        err=True,
    )
    raise typer.Exit(128 + int(signal.Signals[summary.interrupted or "SIGINT"]))


def report_command(
    results: Annotated[Path, typer.Argument(help="Sweep output directory (results.sqlite).")],
    out: Annotated[
        Path | None, typer.Option("--out", help="Report directory (default DIR/report).")
    ] = None,
    csv: Annotated[
        Path | None, typer.Option("--csv", help="Also export all rows to this CSV.")
    ] = None,
) -> None:
    """Write trade-off plots, tables and an index page for the sweep in RESULTS."""
    from otfair_lab.experiments import STORE_FILENAME, ResultStore, make_report, open_store
    from otfair_lab.experiments._store import StoreError, check_store_file
    from otfair_lab.experiments._store_files import is_read_only_location

    db = results / STORE_FILENAME if results.is_dir() else results
    if not db.is_file():
        fail(f"no sweep results at {db} (run `otfair sweep CONFIG --out {results}` first).")
    if out is None and is_read_only_location(db):  # the store itself is read, never written
        fail(
            f"{db.parent} is read-only, so the report cannot be written beside the store "
            f"(the store is fine and is only read); pass --out DIR somewhere writable."
        )
    try:
        check_store_file(db)
        if out is not None:
            check_output_dir(out)
        with ResultStore(db, read_only=True) as store:
            n_ok, n_failed = store.count("ok"), store.count("error")
    except StoreError as exc:
        fail(str(exc))
    if n_ok == 0:
        fail(
            f"{db} has no successful run ({n_failed} failed); nothing to report "
            "(rerunning `otfair sweep` prints the errors)."
            if n_failed
            else f"{db} has no runs yet; nothing to report."
        )
    if csv is not None:
        check_output_file(csv, "--csv")
    try:
        index = make_report(results, out)
        if csv is not None:
            with open_store(db.parent, read_only=True) as store:
                store.export_csv(csv)
    except (FileNotFoundError, ValueError, OSError) as exc:
        fail(_one_line(exc))
    typer.echo(f"report: {index} (and {index.with_suffix('.html')})")


def _one_line(exc: BaseException) -> str:
    """Return the first line of an error's message (its type when it has none)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def register(app: typer.Typer) -> None:
    """Attach the ``sweep`` and ``report`` commands to the root app."""
    app.command("sweep")(sweep_command)
    app.command("report")(report_command)
