"""``otfair reproduce PAPER``: run a paper's config and compare with its published numbers.

The runs go through the sweep runner (plan and estimate, ``--yes`` above one hour,
signals, resumable store); exit codes as ``otfair sweep``: 0 every run stored ok, 1 some
run failed (the report is still written), 2 a user error, 130 / 143 interrupted (the
report of what finished is written; rerun to resume).
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from otfair.cli._checks import check_device
from otfair.cli._common import check_output_dir, fail
from otfair.cli.sweep import (
    CONFIRM_ABOVE_HOURS,
    EXIT_RUNS_FAILED,
    ProgressOption,
    WorkersOption,
    YesOption,
    _interrupted,
    _print_errors,
    _print_warnings,
    _runner_options,
    _summary_line,
)

if TYPE_CHECKING:
    from otfair.reproduction._verify import Difference


def reproduce_command(
    paper: Annotated[str, typer.Argument(help="otf, ftm, adapfair or accuracy_parity.")],
    profile: str = typer.Option(
        "quick",
        "--profile",
        help="Profile of configs/PAPER.toml: quick (smoke test), one_split, full...",
    ),
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Sweep store directory (default runs/reproduce/PAPER)."),
    ] = None,
    report_dir: Annotated[
        Path | None, typer.Option("--report-dir", help="Report directory (default OUT/report).")
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option("--config", help="Config file (default configs/PAPER.toml)."),
    ] = None,
    workers: WorkersOption = 1,
    yes: YesOption = False,
    confirm_above: float = typer.Option(
        CONFIRM_ABOVE_HOURS, "--confirm-above", min=0.0, help="Hours above which to ask."
    ),
    run: bool = typer.Option(
        True, "--run/--no-run", help="--no-run: write the report from the stored runs only."
    ),
    progress: ProgressOption = True,
    runs: Annotated[
        Path | None,
        typer.Option(
            "--runs",
            help=(
                "Archive of finished runs (seed-N.jsonl files, e.g. "
                "docs/reproduction/PAPER/runs): resume from it and write the finished "
                "runs back to it."
            ),
        ),
    ] = None,
    device: str | None = typer.Option(
        None, "--device", help="Override the config's device (cpu, cuda, cuda:N, mps, auto)."
    ),
    seeds: str | None = typer.Option(
        None,
        "--seeds",
        help=(
            "Only these seeds of the profile, comma-separated (e.g. 3 or 3,4): run a long "
            "protocol in whole seeds with --runs."
        ),
    ),
    verify: int | None = typer.Option(
        None,
        "--verify",
        min=1,
        help=(
            "Re-run N runs of the --runs archive with today's code (stratified over "
            "methods and datasets, oldest first; a stacked run with its group) and print "
            "each difference against its tolerance (0.001, or the measured spread of a "
            "run listed in the paper's unstable.csv; a (method, dataset, strength) listed "
            "there with level=mean re-runs every seed and is judged by its seed mean, "
            "within 3 standard errors); exit 1 when one is outside it."
        ),
    ),
    verify_method: Annotated[
        list[str] | None,
        typer.Option(
            "--verify-method",
            help="With --verify: only the archived runs of this method (its label in "
            "the archive, e.g. cenet); repeatable.",
        ),
    ] = None,
) -> None:
    """Run PAPER's config (a profile) and write the paper-vs-otfair comparison report."""
    from otfair.experiments import ConfigError, load_spec
    from otfair.experiments._runner import SweepInterrupted
    from otfair.reproduction import PAPERS
    from otfair.reproduction._run import find_config, reproduce, write_from_store

    if paper not in PAPERS:
        fail(f"unknown paper {paper!r}; choose one of {', '.join(sorted(PAPERS))}.")
    if verify is not None:
        _verify(paper, verify, runs, verify_method or [])
        return
    if verify_method:
        fail("--verify-method applies with --verify only.")
    if device is not None:
        check_device(device)
    out = out if out is not None else Path("runs") / "reproduce" / paper
    check_output_dir(out)
    if report_dir is not None:
        check_output_dir(report_dir, option="--report-dir")
    chosen = None
    if seeds is not None:
        try:
            chosen = [int(x) for x in seeds.split(",") if x.strip()]
        except ValueError:
            fail(f"--seeds must be comma-separated integers (e.g. 3,4); got {seeds!r}.")
    command = "otfair " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    try:
        result = reproduce(
            paper,
            out,
            report_dir=report_dir,
            config=config,
            run=run,
            command=command,
            runs=runs,
            device=device,
            seeds=chosen,
            **_runner_options(profile, workers, progress, yes, confirm_above),
        )
    except (ConfigError, FileNotFoundError, ValueError) as exc:
        fail(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
    except SweepInterrupted as stop:
        if stop.summary.reason:  # a full disk: no report can be written either
            _interrupted(stop.summary)
        spec = load_spec(find_config(paper, config))
        if chosen is not None:
            spec = spec.with_seeds(profile, chosen)
        index, _ = write_from_store(
            paper,
            spec,
            out,
            report_dir,
            profile=profile,
            command=command,
            unfinished=f"interrupted by {stop.summary.interrupted}.",
        )
        typer.echo(f"report of the finished runs: {index}", err=True)
        _interrupted(stop.summary)
    summary = result.summary
    if summary is not None:
        typer.echo(_summary_line(summary))
        _print_warnings(summary)
        if summary.stored_failed:
            _print_errors(summary)
    elif result.pending:
        typer.echo(f"{result.pending} runs of the profile are not stored ok yet.", err=True)
    typer.echo(f"report: {result.index}")
    if summary is not None and summary.stored_failed:
        raise typer.Exit(EXIT_RUNS_FAILED)


def _verify(paper: str, n: int, runs: Path | None, methods: Sequence[str]) -> None:
    """``--verify N``: re-run N archived runs and exit 1 if one moved beyond its tolerance.

    Prints the plan first (work items, runs, the archived wall time as the estimate),
    a progress line on stderr as each work item starts, and each item's differences as
    it ends; then the seed means of the mean-level runs and the verdict.
    """
    if runs is None:
        fail(
            f"--verify needs --runs (the archive to verify, e.g. docs/reproduction/{paper}/runs)."
        )
    if not runs.is_dir():
        fail(f"--runs {str(runs)!r} is not a folder (an archive of seed-N.jsonl files).")
    import time

    from otfair.experiments._plan import format_duration, load_factor
    from otfair.reproduction._verify import format_differences, verify_archive
    from otfair.reproduction._verify_means import format_means, judged_outside

    started = time.perf_counter()
    plan: dict[str, float] = {"items": 0, "archived_s": 0.0}

    def on_plan(items: Sequence[Sequence[Mapping[str, Any]]]) -> None:
        seconds = sum(float(r.get("wall_time_s") or 0.0) for item in items for r in item)
        plan.update(items=len(items), archived_s=seconds)
        count = sum(len(item) for item in items)
        factor, load = load_factor()
        typer.echo(
            f"verifying {count} archived runs of {paper} in {len(items)} fits (stacked "
            f"groups whole, mean-level seeds all): estimated "
            f"{format_duration(seconds * factor)} ({format_duration(seconds)} of archived "
            f"wall time{load}; another machine differs).",
            err=True,
        )

    def on_start(index: int, item: Sequence[Mapping[str, Any]]) -> None:
        first = item[0]
        elapsed = time.perf_counter() - started
        group = f", {len(item)} strengths stacked" if len(item) > 1 else ""
        typer.echo(
            f"[{index + 1}/{plan['items']:.0f}, {format_duration(elapsed)} elapsed] "
            f"re-running {first['method']} on {first['dataset']}, seed {first['seed']}{group}",
            err=True,
        )

    def show(diffs: Sequence[Difference]) -> None:
        for line in format_differences(diffs):
            typer.echo(line)

    keep = None
    if methods:
        wanted = set(methods)

        def keep(row: Mapping[str, Any]) -> bool:
            return str(row.get("method")) in wanted

    try:
        diffs = verify_archive(
            runs, n, keep=keep, on_item=show, on_plan=on_plan, on_start=on_start
        )
    except (FileNotFoundError, ValueError) as exc:
        fail(str(exc).strip().splitlines()[0])
    if not diffs:
        fail(f"no archived run of {paper} matches --verify-method {', '.join(methods)}.")
    from otfair.reproduction._verify_means import compare_means

    for line in format_means(compare_means(diffs)):
        typer.echo(line)
    outside, means_outside = judged_outside(diffs)
    checked = len({d.key for d in diffs})
    means = compare_means(diffs)
    of_means = (
        f"; {len(means)} seed means: {len(means) - len(means_outside)} within, "
        f"{len(means_outside)} outside"
        if means
        else ""
    )
    typer.echo(
        f"verified {checked} archived runs of {paper} ({n} picked, with their stacked "
        f"groups): {checked - len(outside)} within tolerance, {len(outside)} outside"
        f"{of_means}."
    )
    if outside or means_outside:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Attach the ``reproduce`` command to the root app."""
    app.command("reproduce")(reproduce_command)
