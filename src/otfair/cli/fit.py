"""``otfair fit``: train one registered method on one dataset split and print its test panel."""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from otfair.cli._checks import (
    check_budget_method,
    check_dataset,
    check_dataset_options,
    check_device,
    check_epochs_floor,
    check_method,
    check_run_sizes,
)
from otfair.cli._common import echo_json, fail, note, parse_key_values, print_panel

_DATA_FIX = (
    "get it with `otfair datasets fetch {name}`, or point --data-home or OTFAIR_DATA_DIR "
    "at a directory that holds it"
)


class _FitCommand(TyperCommand):
    """``fit`` whose help lists the registered methods (loaded only when help is shown)."""

    def format_help(self, ctx: Any, formatter: Any) -> None:  # click's or typer's vendored
        from otfair.experiments.methods import list_methods

        names = ", ".join(list_methods())
        self.help = f"{self.help}\n\nMethods (`otfair methods` describes them): {names}."
        super().format_help(ctx, formatter)


def _progress_default(progress: bool | None) -> bool:
    """On when stderr is a terminal (with --json too: stdout keeps only the JSON)."""
    if progress is not None:
        return progress
    return sys.stderr.isatty()


def _gate(run: dict[str, Any], yes: bool, confirm_above: float, cv: int | None = None) -> None:
    """Print the command's estimate on stderr; refuse (exit 2) above ``confirm_above`` hours.

    The gate of ``otfair sweep``: on a terminal it asks, otherwise ``--yes`` is needed.
    ``cv``: the fit is ``--max-violation``'s cross-validation (its paths are counted).
    The estimate is of the whole command: start-up, checks and pilots included.
    """
    from otfair.cli import started
    from otfair.experiments._fit_estimate import estimate_fit
    from otfair.experiments._plan import format_duration

    estimate = estimate_fit(run, cv=cv, before_s=time.perf_counter() - started())
    if estimate is None:
        return
    note(f"{run['method']} on {run['dataset']}: {estimate.describe()}")
    if yes or estimate.whole_s <= confirm_above * 3600:
        return
    if sys.stdin.isatty() and sys.stderr.isatty():
        if typer.confirm("Start it?", default=False, err=True):
            return
        fail("not confirmed; nothing more was run.")
    fail(
        f"this fit is estimated at {format_duration(estimate.whole_s)}, above "
        f"{confirm_above:g} h; pass --yes to run it, fewer --epochs, or --confirm-above HOURS."
    )


def fit_command(
    dataset: str = typer.Option(..., "--dataset", help="Dataset name (`otfair datasets list`)."),
    method: str = typer.Option(..., "--method", help="Method name (`otfair methods list`)."),
    strength: float | None = typer.Option(
        None,
        "--strength",
        help="Trade-off parameter (alpha, lambda, eps...); default: the method's. "
        "An error for methods without one.",
    ),
    notion: str | None = typer.Option(
        None,
        "--notion",
        help="Fairness notion among those the method supports (`otfair methods describe`).",
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the split and of the estimator."),
    epochs: int | None = typer.Option(None, "--epochs", help="Training epochs."),
    device: str = typer.Option(
        "cpu", "--device", help="Torch device (cpu, cuda, cuda:N, mps, auto)."
    ),
    test_size: float | None = typer.Option(
        None,
        "--test-size",
        help="Test fraction of the split [default: 0.2]; not with -d split=predefined.",
    ),
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
    data_home: str | None = typer.Option(
        None, "--data-home", help="Directory of the dataset files (else OTFAIR_DATA_DIR)."
    ),
    source_domain: str | None = typer.Option(
        None, "--source-domain", help="Source domain of a domain-shift pair (AdapFair only)."
    ),
    target_domain: str | None = typer.Option(
        None, "--target-domain", help="Target domain of a domain-shift pair (AdapFair only)."
    ),
    max_train_rows: int | None = typer.Option(
        None, "--max-train-rows", help="Subsample the training split to this many rows."
    ),
    progress: bool | None = typer.Option(
        None,
        "--progress/--no-progress",
        help="Training progress on stderr (default: on when stderr is a terminal, "
        "--json included).",
    ),
    as_json: bool = typer.Option(
        False, "--json", help="Print the result as JSON (progress and notes go to stderr)."
    ),
    yes: bool = typer.Option(
        False, "--yes", "-y", help="Start a fit estimated above --confirm-above hours."
    ),
    confirm_above: float = typer.Option(
        1.0,
        "--confirm-above",
        min=0.0,
        help="Ask (or, without a terminal, refuse unless --yes) above this many hours.",
    ),
    max_violation: float | None = typer.Option(
        None,
        "--max-violation",
        help="Choose the strength with FairnessCV: the most accurate one whose mean "
        "held-out violation (--metric) is at most this budget (docs/budget.md).",
    ),
    metric: str | None = typer.Option(
        None,
        "--metric",
        help="Violation measure of --max-violation [default: dp_gap (eo_gap, tpr_gap "
        "under --notion eo, eopp); error_gap for regression].",
    ),
    cv: int = typer.Option(5, "--cv", help="Folds of --max-violation's cross-validation."),
) -> None:
    """Train METHOD on the DATASET training split and print the test fairness panel."""
    if max_violation is not None:  # checked before torch is imported
        from otfair.cli._budget import check_budget

        problem = check_budget(max_violation, metric, cv, strength)
        if problem:
            fail(problem)
    elif metric is not None or cv != 5:
        fail("--metric and --cv apply with --max-violation only.")
    dataset_options = parse_key_values(dataset_option, "--dataset-option")
    method_options = parse_key_values(option)
    # names first, before torch is imported: a typo answers at once
    if (source_domain is None) != (target_domain is None):
        fail("`source_domain` and `target_domain` must be given together.")
    check_method(
        method,
        strength=strength,
        notion=notion,
        domains=source_domain is not None or target_domain is not None,
        options=method_options,
        epochs=epochs,
    )
    check_dataset(dataset)
    if max_violation is not None:
        check_budget_method(method, metric)
    check_run_sizes(test_size, max_train_rows, seed)
    check_device(device)
    check_dataset_options(dataset, dataset_options)
    if test_size is not None and dataset_options.get("split") == "predefined":
        fail("--test-size does not apply with -d split=predefined (the dataset's own files).")
    if data_home is not None and not Path(data_home).expanduser().is_dir():
        home = Path(data_home).expanduser()
        problem = "is not a directory" if home.exists() else "does not exist"
        fail(
            f"`data_home` = {str(home)!r} {problem} (--data-home); pass an existing directory "
            "(`otfair datasets fetch --data-home DIR` creates one)."
        )

    run: dict[str, Any] = {
        "dataset": dataset,
        "method": method,
        "strength": strength,
        "seed": seed,
        "notion": notion,
        "epochs": epochs,
        "method_options": method_options,
        "device": device,
        "test_size": 0.2 if test_size is None else test_size,
        "dataset_options": dataset_options,
        "source_domain": source_domain,
        "target_domain": target_domain,
        "max_train_rows": max_train_rows,
        "data_home": data_home,
    }
    check_epochs_floor(run, confirm_above=confirm_above, yes=yes)  # before any pilot

    from otfair.datasets import DataFileError
    from otfair.experiments._single import run_single

    try:
        with contextlib.redirect_stdout(sys.stderr):  # progress bars: never on stdout
            _gate(run, yes, confirm_above, cv if max_violation is not None else None)
            if max_violation is None:
                result = run_single(**run, verbose=_progress_default(progress), announce=note)
            else:
                from otfair.cli._budget import run_budget_single

                run_args = {k: v for k, v in run.items() if k not in ("dataset", "method")}
                result = run_budget_single(
                    dataset,
                    method,
                    max_violation,
                    metric,
                    cv,
                    announce=note,
                    verbose=_progress_default(progress),
                    **run_args,
                )
    except DataFileError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "data file missing"
        fail(f"{first} ({_DATA_FIX.format(name=dataset)})")
    except (ValueError, TypeError) as exc:
        fail(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
    if result.get("constant"):
        note(
            f"{method} predicted a constant on the test split (one class for every row, or "
            "constant scores): its fairness gaps are trivially small; `constant` is true."
        )
    if as_json:
        echo_json(result)
    elif max_violation is not None:
        from otfair.cli._budget import print_budget

        print_budget(result)
    else:
        _print(result)


def _print(result: dict[str, Any]) -> None:
    title = f"{result['method']} on {result['dataset']} (seed {result['seed']}), test split"
    print_panel(title, result)


def register(app: typer.Typer) -> None:
    """Attach the ``fit`` command to the root app."""
    app.command("fit", cls=_FitCommand)(fit_command)
