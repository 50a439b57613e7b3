"""``otfair fit``: train one registered method on one dataset split and print its test panel."""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from otfair_lab.cli._checks import (
    check_budget_method,
    check_dataset,
    check_dataset_options,
    check_device,
    check_epochs_floor,
    check_method,
    check_run_sizes,
)
from otfair_lab.cli._common import (
    ConfirmAboveOption,
    echo_json,
    fail,
    note,
    parse_key_values,
    print_panel,
)
from otfair_lab.cli._help import option

_DATA_FIX = (
    "get it with `otfair datasets fetch {name}`, or point --data-home or OTFAIR_DATA_DIR "
    "at a directory that holds it"
)


class _FitCommand(TyperCommand):
    """``fit`` whose help lists the registered methods (loaded only when help is shown)."""

    def format_help(self, ctx: Any, formatter: Any) -> None:  # click's or typer's vendored
        from otfair_lab.experiments.methods import list_methods

        names = ", ".join(list_methods())
        self.help = f"{self.help}\n\nMethods (`otfair methods` describes them): {names}."
        super().format_help(ctx, formatter)


def _progress_default(progress: bool | None) -> bool:
    """On when stderr is a terminal (with --json too: stdout keeps only the JSON)."""
    if progress is not None:
        return progress
    return sys.stderr.isatty()


#: ``--max-violation``'s settings: the budget, the metric and the folds.
_Budget = tuple[float, str | None, int]


def _gate(
    run: dict[str, Any], yes: bool, confirm_above: float, budget: _Budget | None = None
) -> None:
    """Print the command's estimate on stderr; refuse (exit 2) above ``confirm_above`` hours.

    The gate of ``otfair sweep``: on a terminal it asks, otherwise ``--yes`` is needed.
    ``budget``: the fit is ``--max-violation``'s cross-validation, piloted by FairnessCV
    on one fold (its folds' paths and the refit are counted). The estimate is of the
    whole command: start-up, checks and pilots included.
    """
    from otfair_lab.cli import started
    from otfair_lab.experiments._fit_estimate import estimate_fit
    from otfair_lab.experiments._plan import format_duration

    before_s = time.perf_counter() - started()
    if budget is None:
        estimate = estimate_fit(run, before_s=before_s)
    else:
        max_violation, metric, cv = budget
        estimate = estimate_fit(
            run, cv=cv, max_violation=max_violation, metric=metric, before_s=before_s
        )
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
    dataset: Annotated[str, option("fit", "--dataset")],
    method: Annotated[str, option("fit", "--method")],
    strength: Annotated[float | None, option("fit", "--strength")] = None,
    notion: Annotated[str | None, option("fit", "--notion")] = None,
    seed: Annotated[int, option("fit", "--seed")] = 0,
    epochs: Annotated[int | None, option("fit", "--epochs")] = None,
    device: Annotated[str, option("fit", "--device")] = "cpu",
    test_size: Annotated[float | None, option("fit", "--test-size")] = None,
    option: Annotated[list[str] | None, option("fit", "--option", "-o")] = None,
    dataset_option: Annotated[list[str] | None, option("fit", "--dataset-option", "-d")] = None,
    data_home: Annotated[str | None, option("fit", "--data-home")] = None,
    source_domain: Annotated[str | None, option("fit", "--source-domain")] = None,
    target_domain: Annotated[str | None, option("fit", "--target-domain")] = None,
    max_train_rows: Annotated[int | None, option("fit", "--max-train-rows")] = None,
    progress: Annotated[bool | None, option("fit", "--progress/--no-progress")] = None,
    as_json: Annotated[bool, option("fit", "--json")] = False,
    yes: Annotated[bool, option("fit", "--yes", "-y")] = False,
    confirm_above: ConfirmAboveOption = 1.0,
    max_violation: Annotated[float | None, option("fit", "--max-violation")] = None,
    metric: Annotated[str | None, option("fit", "--metric")] = None,
    cv: Annotated[int, option("fit", "--cv")] = 5,
) -> None:
    """Train METHOD on the DATASET training split and print the test fairness panel."""
    budget = _check_budget(max_violation, metric, cv, strength)  # before torch is imported
    dataset_options = parse_key_values(dataset_option, "--dataset-option")
    run: dict[str, Any] = {
        "dataset": dataset,
        "method": method,
        "strength": strength,
        "seed": seed,
        "notion": notion,
        "epochs": epochs,
        "method_options": parse_key_values(option),
        "device": device,
        "test_size": test_size,
        "dataset_options": dataset_options,
        "source_domain": source_domain,
        "target_domain": target_domain,
        "max_train_rows": max_train_rows,
        "data_home": data_home,
    }
    _check_run(run, budget)  # names first, before torch is imported: a typo answers at once
    run["test_size"] = 0.2 if test_size is None else test_size
    check_epochs_floor(run, confirm_above=confirm_above, yes=yes)  # before any pilot
    verbose = _progress_default(progress)
    result = _fit(run, budget, yes=yes, confirm_above=confirm_above, verbose=verbose)
    if result.get("constant"):
        note(
            f"{method} predicted a constant on the test split (one class for every row, or "
            "constant scores): its fairness gaps are trivially small; `constant` is true."
        )
    if "drawn_accuracy" in result:  # a randomized classifier: its own predictions differ
        note(
            f"{method} predicts by drawing each label with its probability (randomized); "
            "the panel cuts that probability at 0.5. Its draws on the test split: accuracy "
            f"{result['drawn_accuracy']:.4f}, dp_gap {result['drawn_dp_gap']:.4f}, "
            f"max_eo_gap {result['drawn_max_eo_gap']:.4f} (`drawn_*`)."
        )
    if as_json:
        echo_json(result)
    elif budget is not None:
        from otfair_lab.cli._budget import print_budget

        print_budget(result)
    else:
        _print(result)


def _check_budget(
    max_violation: float | None, metric: str | None, cv: int, strength: float | None
) -> _Budget | None:
    """Return ``--max-violation``'s settings (``None`` without it); fail on a bad one."""
    if max_violation is None:
        if metric is not None or cv != 5:
            fail("--metric and --cv apply with --max-violation only.")
        return None
    from otfair_lab.cli._budget import check_budget

    problem = check_budget(max_violation, metric, cv, strength)
    if problem:
        fail(problem)
    return max_violation, metric, cv


def _check_run(run: dict[str, Any], budget: _Budget | None) -> None:
    """Fail on the first bad name or value of ``run`` (its ``test_size`` as given)."""
    domains = (run["source_domain"], run["target_domain"])
    if (domains[0] is None) != (domains[1] is None):
        fail("`source_domain` and `target_domain` must be given together.")
    check_method(
        run["method"],
        strength=run["strength"],
        notion=run["notion"],
        domains=domains != (None, None),
        options=run["method_options"],
        epochs=run["epochs"],
    )
    if run["epochs"] is not None:  # a flag the method would ignore
        from otfair_lab.experiments._names import epochs_problem

        problem = epochs_problem(run["method"])
        if problem:
            fail(problem)
    check_dataset(run["dataset"])
    if budget is not None:
        check_budget_method(run["method"], budget[1])
    check_run_sizes(run["test_size"], run["max_train_rows"], run["seed"])
    check_device(run["device"])
    check_dataset_options(run["dataset"], run["dataset_options"])
    if run["test_size"] is not None and run["dataset_options"].get("split") == "predefined":
        fail("--test-size does not apply with -d split=predefined (the dataset's own files).")
    data_home = run["data_home"]
    if data_home is not None and not Path(data_home).expanduser().is_dir():
        home = Path(data_home).expanduser()
        problem = "is not a directory" if home.exists() else "does not exist"
        fail(
            f"`data_home` = {str(home)!r} {problem} (--data-home); pass an existing directory "
            "(`otfair datasets fetch --data-home DIR` creates one)."
        )


def _fit(
    run: dict[str, Any],
    budget: _Budget | None,
    *,
    yes: bool,
    confirm_above: float,
    verbose: bool,
) -> dict[str, Any]:
    """Run the fit (through FairnessCV with a budget) after the gate; fail on a user error."""
    from otfair.datasets import DataFileError
    from otfair_lab.experiments._single import run_single

    try:
        with contextlib.redirect_stdout(sys.stderr):  # progress bars: never on stdout
            _gate(run, yes, confirm_above, budget)
            if budget is None:
                return run_single(**run, verbose=verbose, announce=note)
            from otfair_lab.cli._budget import run_budget_single

            run_args = {k: v for k, v in run.items() if k not in ("dataset", "method")}
            return run_budget_single(
                run["dataset"], run["method"], *budget, announce=note, verbose=verbose, **run_args
            )
    except DataFileError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "data file missing"
        fail(f"{first} ({_DATA_FIX.format(name=run['dataset'])})")
    except (ValueError, TypeError) as exc:
        fail(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)


def _print(result: dict[str, Any]) -> None:
    title = f"{result['method']} on {result['dataset']} (seed {result['seed']}), test split"
    print_panel(title, result)


def register(app: typer.Typer) -> None:
    """Attach the ``fit`` command to the root app."""
    app.command("fit", cls=_FitCommand)(fit_command)
