"""The help of the CLI commands' options, one entry per option, in one place.

``otfair fit``, ``sweep``, ``reproduce`` and ``audit`` declare each option once, as an
``Annotated`` alias over :func:`option`, which takes its help from :data:`HELP`.
"""

from __future__ import annotations

from typing import Any

import typer

__all__ = ["HELP", "option"]

#: The help of each option, by command and by the option's first name.
HELP: dict[str, dict[str, str]] = {
    "fit": {
        "--dataset": "Dataset name (`otfair datasets list`).",
        "--method": "Method name (`otfair methods list`).",
        "--strength": (
            "Trade-off parameter (alpha, lambda, eps...); default: the method's. An error for "
            "methods without one."
        ),
        "--notion": "Fairness notion among those the method supports (`otfair methods describe`).",
        "--seed": "Seed of the split and of the estimator.",
        "--epochs": "Training epochs.",
        "--device": "Torch device (cpu, cuda, cuda:N, mps, auto).",
        "--test-size": "Test fraction of the split [default: 0.2]; not with -d split=predefined.",
        "--option": "Method option key=value (JSON values); repeatable.",
        "--dataset-option": "Dataset loader option key=value; repeatable.",
        "--data-home": "Directory of the dataset files (else OTFAIR_DATA_DIR).",
        "--source-domain": "Source domain of a domain-shift pair (AdapFair only).",
        "--target-domain": "Target domain of a domain-shift pair (AdapFair only).",
        "--max-train-rows": "Subsample the training split to this many rows.",
        "--progress/--no-progress": (
            "Training progress on stderr (default: on when stderr is a terminal, --json included)."
        ),
        "--json": "Print the result as JSON (progress and notes go to stderr).",
        "--yes": "Start a fit estimated above --confirm-above hours.",
        "--max-violation": (
            "Choose the strength with FairnessCV: the most accurate one whose mean held-out "
            "violation (--metric) is at most this budget (docs/budget.md)."
        ),
        "--metric": (
            "Violation measure of --max-violation [default: dp_gap (max_eo_gap, tpr_gap under "
            "--notion eo, eopp); error_gap for regression]."
        ),
        "--cv": "Folds of --max-violation's cross-validation.",
    },
    "sweep": {
        "--profile": "Profile of the spec: quick, full...",
        "--backend": "local (processes) or cluster (Dask).",
        "--scheduler": "Address of an existing Dask scheduler (cluster backend).",
        "--device": "Override the spec's device.",
        "--retry-failed": "Run again the runs stored with an error.",
        "--report": "Write the report when done.",
        "--merge": "Allow an --out that holds another sweep's results.",
        "--stack/--no-stack": "Fit runs that differ only in strength as one stacked training run.",
        "--data-home": (
            "Directory of the dataset files for every run (sets OTFAIR_DATA_DIR for them)."
        ),
        "--pilot/--no-pilot": (
            "Time a pilot of each method x dataset group for the estimate before the workers "
            "start (default: when more than one fit is pending)."
        ),
        "--warm-up": (
            "Fit a throwaway tiny model in each worker first, so that fit times leave out one-"
            "time costs."
        ),
    },
    "reproduce": {
        "--profile": "Profile of configs/PAPER.toml: quick (smoke test), one_split, full...",
        "--out": "Sweep store directory (default runs/reproduce/PAPER).",
        "--report-dir": "Report directory (default OUT/report).",
        "--config": "Config file (default configs/PAPER.toml).",
        "--confirm-above": "Hours above which to ask.",
        "--run/--no-run": "--no-run: write the report from the stored runs only.",
        "--runs": (
            "Archive of finished runs (seed-N.jsonl files, e.g. docs/reproduction/PAPER/runs): "
            "resume from it and write the finished runs back to it."
        ),
        "--device": "Override the config's device (cpu, cuda, cuda:N, mps, auto).",
        "--seeds": (
            "Only these seeds of the profile, comma-separated (e.g. 3 or 3,4): run a long "
            "protocol in whole seeds with --runs."
        ),
        "--verify": (
            "Re-run N runs of the --runs archive with today's code (stratified over methods and "
            "datasets, oldest first; a stacked run with its group) and print each difference "
            "against its tolerance (0.001, or the measured spread of a run listed in the paper's "
            "unstable.csv; a (method, dataset, strength) listed there with level=mean re-runs "
            "every seed and is judged by its seed mean, within 3 standard errors); exit 1 when "
            "one is outside it."
        ),
        "--verify-method": (
            "With --verify: only the archived runs of this method (its label in the archive, e.g."
            " cenet); repeatable."
        ),
    },
    "audit": {
        "--label": "Column with the true label / target.",
        "--score": "Column with the score (probability) or the regression prediction.",
        "--sensitive": "Sensitive column; repeat for several columns.",
        "--task": "classification (scores in [0, 1]) or regression.",
        "--threshold": (
            "Decision threshold for hard predictions [default: 0.5]; classification only."
        ),
        "--max-categories": (
            "A numeric sensitive column with more distinct values (>= 1) is continuous."
        ),
        "--pos-label": (
            "Positive class of a string --label column (e.g. '>50K'), and of predicted labels in "
            "the --score column."
        ),
        "--continuous": (
            "A --sensitive column that is a quantity (age, income), not groups; repeat for "
            "several. Other columns are groups unless numeric with more than --max-categories "
            "values."
        ),
        "--min-group-size": (
            "Groups with fewer rows are flagged (by_group 'small') and left out of the max gaps, "
            "with a warning; 0 keeps every group."
        ),
        "--json": "Print JSON with stable keys.",
    },
}


def option(command: str, *decls: str, **kw: Any) -> Any:
    """Return ``typer.Option(*decls, **kw)`` with the help of ``command``'s option."""
    return typer.Option(*decls, help=HELP[command][decls[0]], **kw)
