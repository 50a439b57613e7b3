"""FairnessCV on the methods beyond FairClassifier: the representation classifiers, AdapFair.

``FairnessCV`` searches LAFTR, sIPM-LFR and CFair at their papers' sweeps, the fair
normalizing flows and aware AdapFair with the group in a column of ``X``
(``sensitive_column``), and blind AdapFair, whose smaller strengths are the fairer ones
(docs/budget.md). This script runs each at its defaults against a demographic-parity
budget and measures the model it returns on the test split, beside OTF's logistic model
for reference.

Protocol: each dataset's default variant, one stratified 80/20 split
(``random_state=0``, as ``benchmarks/training_quality_methods.py``); the training rows
subsampled to ``--max-train-rows`` (default 5,000, seed 0; the test rows all kept).
Per dataset and method: ``FairnessCV(<method>(random_state=0), max_violation=BUDGET)``
with every other setting at its default (5 folds, the default grid, ``refit=True``);
for the group-column models the group is appended to ``X`` as its last column. Per row:
the strength chosen, its cross-validated score (accuracy) and violation (pooled DP gap),
the unconstrained end of the grid's (strength 0, or 1 for AdapFair), the refit's test
accuracy and DP gap (hard decisions), the best constant's test accuracy, and the CPU of
the whole search (``time.process_time``, one torch and one BLAS thread). A search that
raises (no strength within the budget, or none above the constant) records its message.

Outputs ``docs/measurements/fairness_cv_methods.csv`` and ``.md`` (the report is
generated from the CSV alone: ``--report-only``). Run
``python benchmarks/fairness_cv_methods.py`` (about 15 minutes on 2 cores).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _common import load_split, markdown_table, measurement_main, write_csv

DATASETS = ("german", "compas")
BUDGET = 0.05
PREFIX = Path(__file__).resolve().parents[1] / "docs" / "measurements" / "fairness_cv_methods"
COLUMNS = [
    "dataset",
    "method",
    "n_train",
    "strength",
    "cv_score",
    "cv_violation",
    "unconstrained_cv_score",
    "unconstrained_cv_violation",
    "test_accuracy",
    "test_dp_gap",
    "constant_test_accuracy",
    "n_strengths",
    "cpu_s",
    "error",
]


def methods() -> dict[str, tuple[Callable[[], Any], bool]]:
    """Each method's label: (a maker of its estimator, whether the group is a column)."""
    from otfair.estimators import (
        AdapFairClassifier,
        CFairClassifier,
        FairClassifier,
        FairNormalizingFlowClassifier,
        LAFTRClassifier,
        SIPMClassifier,
    )

    return {
        "FairClassifier('otf')": (lambda: FairClassifier("otf", random_state=0), False),
        "LAFTRClassifier()": (lambda: LAFTRClassifier(random_state=0), False),
        "SIPMClassifier()": (lambda: SIPMClassifier(random_state=0), False),
        "CFairClassifier()": (lambda: CFairClassifier(random_state=0), False),
        "FairNormalizingFlowClassifier(sensitive_column=-1)": (
            lambda: FairNormalizingFlowClassifier(sensitive_column=-1, random_state=0),
            True,
        ),
        "AdapFairClassifier(sensitive_column=-1)": (
            lambda: AdapFairClassifier(sensitive_column=-1, random_state=0),
            True,
        ),
        "AdapFairClassifier(mode='blind')": (
            lambda: AdapFairClassifier(mode="blind", random_state=0),
            False,
        ),
    }


def measure(name: str, label: str, max_rows: int) -> dict:
    """Run FairnessCV with method ``label`` on dataset ``name``; return its CSV row."""
    from otfair.estimators import FairnessCV
    from otfair.estimators._strength_grids import larger_is_fairer
    from otfair.metrics import demographic_parity_gap

    make, group_column = methods()[label]
    (X, y, s), (X_test, y_test, s_test) = load_split(name, max_rows)
    if group_column:
        X, X_test = np.c_[X, s], np.c_[X_test, s_test]
    majority_label = 1 if np.mean(y == 1) >= 0.5 else 0  # the best constant's prediction
    row: dict[str, Any] = {"dataset": name, "method": label, "n_train": len(y)}
    row["constant_test_accuracy"] = float(np.mean(y_test == majority_label))
    estimator = make()
    start = time.process_time()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the table records what a warning would say
            search = FairnessCV(estimator, max_violation=BUDGET).fit(X, y, sensitive_features=s)
    except ValueError as exc:
        return {**row, "cpu_s": time.process_time() - start, "error": str(exc)[:300]}
    cpu = time.process_time() - start
    res = search.cv_results_
    strengths = np.asarray(res["strength"], dtype=float)
    # the unconstrained end: the smallest strength, or AdapFair's largest
    free = int(np.nanargmin(strengths) if larger_is_fairer(estimator) else np.nanargmax(strengths))
    pred = np.asarray(search.predict(X_test))
    return {
        **row,
        "strength": float(search.strength_),
        "cv_score": float(search.best_score_),
        "cv_violation": float(search.best_violation_),
        "unconstrained_cv_score": float(res["mean_test_score"][free]),
        "unconstrained_cv_violation": float(res["test_violation"][free]),
        "test_accuracy": float(np.mean(pred == y_test)),
        "test_dp_gap": float(
            demographic_parity_gap(y_test, pred.astype(float), sensitive_features=s_test)
        ),
        "n_strengths": int(np.sum(~np.asarray(res["reference"], dtype=bool))),
        "cpu_s": cpu,
        "error": "",
    }


def write_rows(path: Path, rows: list[dict]) -> None:
    """Write ``rows`` under ``COLUMNS`` (``_common.write_csv``)."""
    write_csv(path, rows, COLUMNS)


def report(rows: list[dict], command: str) -> str:
    """Return the Markdown report of the CSV's ``rows``."""
    lines = [
        "# FairnessCV on the representation classifiers and AdapFair",
        "",
        "Generated by `benchmarks/fairness_cv_methods.py` from "
        "[fairness_cv_methods.csv](fairness_cv_methods.csv) (do not edit; the script's "
        f"docstring states the protocol). Last command: `{command}`.",
        "",
        f"`FairnessCV(<method>(random_state=0), max_violation={BUDGET})` (demographic-"
        "parity gap, 5 folds, the method's default grid, refit on the training rows), "
        "each method at its defaults; `(sensitive_column=-1)`: the group appended to `X` as "
        "its last column. `cv`: the chosen strength's cross-validated accuracy and pooled "
        "DP gap; `unconstrained`: those of the grid's unconstrained end (strength 0; 1 for "
        "AdapFair, whose strength weighs the cross-entropy); `test`: the refit's accuracy "
        "and DP gap on the test split, beside the best constant's accuracy; CPU: the whole "
        "search, one torch and one BLAS thread.",
    ]
    header = [
        "method",
        "strength",
        "cv acc / DP",
        "unconstrained cv acc / DP",
        "test acc",
        "test DP",
        "constant test acc",
        "strengths",
        "CPU s",
    ]
    for name in DATASETS:
        part = [r for r in rows if r["dataset"] == name]
        if not part:
            continue
        lines += ["", f"## {name} ({part[0]['n_train']} training rows)", ""]
        body = []
        for r in part:
            if r["error"]:
                body.append([r["method"], r["error"], "", "", "", "", "", "", r["cpu_s"]])
                continue
            body.append(
                [
                    r["method"],
                    r["strength"],
                    f"{r['cv_score']} / {r['cv_violation']}",
                    f"{r['unconstrained_cv_score']} / {r['unconstrained_cv_violation']}",
                    r["test_accuracy"],
                    r["test_dp_gap"],
                    r["constant_test_accuracy"],
                    r["n_strengths"],
                    r["cpu_s"],
                ]
            )
        lines += markdown_table(header, body)
    return "\n".join(lines)


def measure_all(max_rows: int, add: Callable[[dict], None]) -> None:
    """Run every method's search on every dataset, one row each."""
    for name in DATASETS:
        for label in methods():
            add(measure(name, label, max_rows))
            print(f"{name} {label}: done", flush=True)


def main() -> None:
    """Run the searches (unless ``--report-only``), write the CSV and the report."""
    measurement_main(
        "benchmarks/fairness_cv_methods.py",
        __doc__,
        str(PREFIX),
        5_000,
        measure_all,
        write_rows,
        report,
    )


if __name__ == "__main__":
    main()
