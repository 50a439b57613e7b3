"""``otfair reproduce PAPER``: run a paper's config and compare with its published numbers.

The runs go through the sweep runner (plan and estimate, ``--yes`` above one hour,
signals, resumable store); exit codes as ``otfair sweep``: 0 every run stored ok, 1 some
run failed (the report is still written), 2 a user error, 130 / 143 interrupted (the
report of what finished is written; rerun to resume).
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from otfair_lab.cli._checks import check_device
from otfair_lab.cli._common import check_output_dir, fail
from otfair_lab.cli._help import option
from otfair_lab.cli.sweep import (
    CONFIRM_ABOVE_HOURS,
    EXIT_RUNS_FAILED,
    ProgressOption,
    WorkersOption,
    YesOption,
    _interrupted,
    _print_summary,
    _runner_options,
)

if TYPE_CHECKING:
    from otfair_lab.reproduction._run import Reproduction
    from otfair_lab.reproduction._verify import Difference


_Paper = Annotated[str, typer.Argument(help="otf, ftm, adapfair or accuracy_parity.")]


@dataclass(frozen=True)
class _Target:
    """What ``otfair reproduce`` writes: a paper's profile, its store, report and command."""

    paper: str
    profile: str
    out: Path
    report_dir: Path | None
    config: Path | None
    seeds: list[int] | None
    command: str


def reproduce_command(
    paper: _Paper,
    profile: Annotated[str, option("reproduce", "--profile")] = "quick",
    out: Annotated[Path | None, option("reproduce", "--out")] = None,
    report_dir: Annotated[Path | None, option("reproduce", "--report-dir")] = None,
    config: Annotated[Path | None, option("reproduce", "--config")] = None,
    workers: WorkersOption = 1,
    yes: YesOption = False,
    confirm_above: Annotated[
        float, option("reproduce", "--confirm-above", min=0.0)
    ] = CONFIRM_ABOVE_HOURS,
    run: Annotated[bool, option("reproduce", "--run/--no-run")] = True,
    progress: ProgressOption = True,
    runs: Annotated[Path | None, option("reproduce", "--runs")] = None,
    device: Annotated[str | None, option("reproduce", "--device")] = None,
    seeds: Annotated[str | None, option("reproduce", "--seeds")] = None,
    verify: Annotated[int | None, option("reproduce", "--verify", min=1)] = None,
    verify_method: Annotated[list[str] | None, option("reproduce", "--verify-method")] = None,
) -> None:
    """Run PAPER's config (a profile) and write the paper-vs-otfair comparison report."""
    from otfair_lab.reproduction import PAPERS

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
    command = "otfair " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    target = _Target(paper, profile, out, report_dir, config, _parse_seeds(seeds), command)
    options = _runner_options(profile, workers, progress, yes, confirm_above)
    result = _reproduce(target, run=run, runs=runs, device=device, options=options)
    summary = result.summary
    if summary is not None:
        _print_summary(summary)
    elif result.pending:
        typer.echo(f"{result.pending} runs of the profile are not stored ok yet.", err=True)
    typer.echo(f"report: {result.index}")
    if summary is not None and summary.stored_failed:
        raise typer.Exit(EXIT_RUNS_FAILED)


def _parse_seeds(seeds: str | None) -> list[int] | None:
    """``--seeds 3,4`` as a list (``None`` without it); fail on what is not an integer."""
    if seeds is None:
        return None
    try:
        return [int(x) for x in seeds.split(",") if x.strip()]
    except ValueError:
        fail(f"--seeds must be comma-separated integers (e.g. 3,4); got {seeds!r}.")


def _reproduce(
    target: _Target,
    *,
    run: bool,
    runs: Path | None,
    device: str | None,
    options: dict[str, Any],
) -> Reproduction:
    """Run and report ``target``; fail on a user error; report what an interruption kept."""
    from otfair_lab.experiments import ConfigError
    from otfair_lab.experiments._runner import SweepInterrupted
    from otfair_lab.reproduction._run import reproduce

    try:
        return reproduce(
            target.paper,
            target.out,
            report_dir=target.report_dir,
            config=target.config,
            run=run,
            command=target.command,
            runs=runs,
            device=device,
            seeds=target.seeds,
            **options,
        )
    except (ConfigError, FileNotFoundError, ValueError) as exc:
        fail(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
    except SweepInterrupted as stop:
        if stop.summary.reason:  # a full disk: no report can be written either
            _interrupted(stop.summary)
        _write_finished(target, f"interrupted by {stop.summary.interrupted}.")
        _interrupted(stop.summary)


def _write_finished(target: _Target, unfinished: str) -> None:
    """Write the report of the runs that finished before an interruption."""
    from otfair_lab.experiments import load_spec
    from otfair_lab.reproduction._run import find_config, write_from_store

    spec = load_spec(find_config(target.paper, target.config))
    if target.seeds is not None:
        spec = spec.with_seeds(target.profile, target.seeds)
    index, _ = write_from_store(
        target.paper,
        spec,
        target.out,
        target.report_dir,
        profile=target.profile,
        command=target.command,
        unfinished=unfinished,
    )
    typer.echo(f"report of the finished runs: {index}", err=True)


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
    from otfair_lab.reproduction._verify import verify_archive

    log = _VerifyLog(paper)
    keep = _of_methods(methods) if methods else None
    try:
        diffs = verify_archive(
            runs, n, keep=keep, on_item=log.show, on_plan=log.on_plan, on_start=log.on_start
        )
    except (FileNotFoundError, ValueError) as exc:
        fail(str(exc).strip().splitlines()[0])
    if not diffs:
        fail(f"no archived run of {paper} matches --verify-method {', '.join(methods)}.")
    _verdict(paper, n, diffs)


class _VerifyLog:
    """What ``--verify`` prints as it goes: the plan, each item's start, its differences."""

    def __init__(self, paper: str) -> None:
        import time

        self.paper, self.items, self.started = paper, 0, time.perf_counter()

    def on_plan(self, items: Sequence[Sequence[Mapping[str, Any]]]) -> None:
        """Print the plan: the runs, the fits and the estimate from archived wall times."""
        from otfair_lab.experiments._plan import format_duration, load_factor

        seconds = sum(float(r.get("wall_time_s") or 0.0) for item in items for r in item)
        self.items = len(items)
        count = sum(len(item) for item in items)
        factor, load = load_factor()
        typer.echo(
            f"verifying {count} archived runs of {self.paper} in {len(items)} fits (stacked "
            f"groups whole, mean-level seeds all): estimated "
            f"{format_duration(seconds * factor)} ({format_duration(seconds)} of archived "
            f"wall time{load}; another machine differs).",
            err=True,
        )

    def on_start(self, index: int, item: Sequence[Mapping[str, Any]]) -> None:
        """Print one line as a work item starts."""
        import time

        from otfair_lab.experiments._plan import format_duration

        first = item[0]
        elapsed = time.perf_counter() - self.started
        group = f", {len(item)} strengths stacked" if len(item) > 1 else ""
        typer.echo(
            f"[{index + 1}/{self.items:.0f}, {format_duration(elapsed)} elapsed] "
            f"re-running {first['method']} on {first['dataset']}, seed {first['seed']}{group}",
            err=True,
        )

    def show(self, diffs: Sequence[Difference]) -> None:
        """Print an item's differences as it ends."""
        from otfair_lab.reproduction._verify import format_differences

        for line in format_differences(diffs):
            typer.echo(line)


def _of_methods(methods: Sequence[str]) -> Callable[[Mapping[str, Any]], bool]:
    """Return the filter of the archived rows of ``--verify-method``'s methods."""
    wanted = set(methods)

    def keep(row: Mapping[str, Any]) -> bool:
        return str(row.get("method")) in wanted

    return keep


def _verdict(paper: str, n: int, diffs: Sequence[Difference]) -> None:
    """Print the seed means and the verdict line; exit 1 when a run or a mean is outside."""
    from otfair_lab.reproduction._verify_means import compare_means, format_means, judged_outside

    means = compare_means(diffs)
    for line in format_means(means):
        typer.echo(line)
    outside, means_outside = judged_outside(diffs)
    checked = len({d.key for d in diffs})
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
