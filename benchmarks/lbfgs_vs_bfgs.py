"""The logistic model's full-batch fits: full-memory BFGS (the default) against L-BFGS.

Usage::

    python benchmarks/lbfgs_vs_bfgs.py [--datasets adult bank ...] [--notions dp eo]
        [--strengths 0 0.01 0.1 0.3 0.9] [--penalty otf] [--out PREFIX]

For each dataset (the FairnessCV benchmark's protocol: ``load_dataset(name).split(
test_size=0.3, random_state=0)``, the training rows subsampled to 20,000 with seed 0,
standardized), notion and strength it fits ``FairClassifier(penalty, strength,
notion=notion, random_state=0)`` twice from scratch at the default cap (``epochs=300``):
with the default solver (full-memory BFGS up to
``otfair.estimators._bfgs.FULL_MEMORY_MAX_PARAMS`` parameters) and with L-BFGS (the
limit set to 0, as above it). Each row: iterations, objective evaluations, CPU seconds
(``time.process_time``, one torch and one BLAS thread), the final training objective
(``history_[-1]``; lower is better, both minimize the same function), test accuracy and
whether the fit hit the cap (``ConvergenceWarning``). ``PREFIX.csv`` (default
``docs/measurements/lbfgs_vs_bfgs``) holds the rows and ``PREFIX.md`` the report,
with the totals per dataset and solver.
"""

from __future__ import annotations

import csv
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ArgumentParser, markdown_table  # noqa: E402
from fairness_cv_vs_fairlearn import load  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "docs" / "measurements" / "lbfgs_vs_bfgs"
DATASETS = ("adult", "bank", "compas", "german", "diabetes", "dutch")
STRENGTHS = (0.01, 0.1, 0.3, 0.9)
SOLVERS = ("bfgs", "lbfgs")


def fit_row(name: str, notion: str, penalty: str, strength: float, solver: str, data) -> dict:
    """Fit one model with ``solver``; return its row."""
    from sklearn.exceptions import ConvergenceWarning

    import otfair.estimators.classification._logistic as train_module
    from otfair.estimators import FairClassifier
    from otfair.estimators._bfgs import FULL_MEMORY_MAX_PARAMS

    (X, y, s), (Xt, yt, _) = data
    calls = [0]
    objective_call = train_module.LogisticObjective.__call__

    def counted(self, theta):  # type: ignore[no-untyped-def]
        calls[0] += 1
        return objective_call(self, theta)

    train_module.LogisticObjective.__call__ = counted  # type: ignore[method-assign]
    train_module.FULL_MEMORY_MAX_PARAMS = FULL_MEMORY_MAX_PARAMS if solver == "bfgs" else 0
    try:
        est = FairClassifier(penalty, strength, notion=notion, random_state=0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            start = time.process_time()
            est.fit(X, y, sensitive_features=s)
            cpu = time.process_time() - start
    finally:
        train_module.LogisticObjective.__call__ = objective_call  # type: ignore[method-assign]
        train_module.FULL_MEMORY_MAX_PARAMS = FULL_MEMORY_MAX_PARAMS
    capped = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    return {
        "dataset": name,
        "notion": notion,
        "penalty": penalty,
        "strength": strength,
        "solver": solver,
        "n_iter": int(est.n_iter_),
        "evaluations": calls[0],
        "cpu_s": cpu,
        "objective": float(est.history_[-1]),
        "test_accuracy": float(np.mean(est.predict(Xt) == yt)),
        "capped": capped,
    }


def summary(rows: list[dict]) -> str:
    """Say in words how the pairs compare: objective, cap, false convergence."""
    pairs = []
    for r in rows:
        if r["solver"] == "bfgs":
            for o in rows:
                same = all(o[k] == r[k] for k in ("dataset", "notion", "penalty", "strength"))
                if same and o["solver"] == "lbfgs":
                    pairs.append((r, o))
    differ = [
        (b, lb) for b, lb in pairs if abs(float(b["objective"]) - float(lb["objective"])) > 1e-5
    ]
    lower = sum(float(b["objective"]) < float(lb["objective"]) for b, lb in differ)
    early = [
        (b, lb)
        for b, lb in differ
        if str(lb["capped"]) != "True" and float(lb["objective"]) > float(b["objective"])
    ]
    worst = max((float(lb["objective"]) - float(b["objective"]) for b, lb in early), default=0.0)
    return (
        f"Of {len(pairs)} pairs, {len(differ)} end more than 1e-5 apart in the objective; "
        f"BFGS's is the lower in {lower}. In {len(early)} of them L-BFGS stopped before its "
        f"cap, reported as converged (its line search or its relative-decrease rule), up to "
        f"{worst:.2g} above BFGS's objective. Fits that hit the cap: "
        f"{sum(str(b['capped']) == 'True' for b, _ in pairs)} with BFGS, "
        f"{sum(str(lb['capped']) == 'True' for _, lb in pairs)} with L-BFGS."
    )


def report(rows: list[dict], command: str) -> str:
    """Return the markdown report of ``rows``."""
    lines = [
        "# The logistic model's fits: full-memory BFGS against L-BFGS",
        "",
        f"Generated by `{command}` from `lbfgs_vs_bfgs.csv` (the script's docstring states"
        " the protocol). Each pair: one `FairClassifier(penalty, strength, notion=...,"
        " random_state=0)` fitted from scratch with the default solver (full-memory BFGS,"
        " weak Wolfe line search) and with L-BFGS (10 pairs), both to the default cap of"
        " 300 iterations and `tol=1e-4`. `objective`: the final training objective (the same"
        " function; lower is better); `capped`: the fit hit the cap (ConvergenceWarning).",
        "",
        "## Totals per dataset",
        "",
    ]
    totals = []
    for name in dict.fromkeys(r["dataset"] for r in rows):
        for solver in SOLVERS:
            sel = [r for r in rows if r["dataset"] == name and r["solver"] == solver]
            if not sel:
                continue
            totals.append(
                [
                    name,
                    solver,
                    str(len(sel)),
                    str(sum(int(r["n_iter"]) for r in sel)),
                    str(sum(int(r["evaluations"]) for r in sel)),
                    f"{sum(float(r['cpu_s']) for r in sel):.2f}",
                    str(sum(str(r["capped"]) == "True" for r in sel)),
                ]
            )
    lines += markdown_table(
        ["dataset", "solver", "fits", "iterations", "evaluations", "CPU s", "capped"], totals
    )
    lines += ["", summary(rows), "", "## Each fit", ""]
    pairs = []
    for r in rows:
        if r["solver"] != "bfgs":
            continue
        other = next(
            (
                o
                for o in rows
                if o["solver"] == "lbfgs"
                and all(o[k] == r[k] for k in ("dataset", "notion", "penalty", "strength"))
            ),
            None,
        )
        if other is None:
            continue
        pairs.append(
            [
                r["dataset"],
                r["notion"],
                f"{float(r['strength']):g}",
                f"{r['n_iter']} / {other['n_iter']}",
                f"{r['evaluations']} / {other['evaluations']}",
                f"{float(r['cpu_s']):.2f} / {float(other['cpu_s']):.2f}",
                f"{float(r['objective']) - float(other['objective']):+.2e}",
                f"{float(r['test_accuracy']):.4f} / {float(other['test_accuracy']):.4f}",
                f"{'yes' if str(r['capped']) == 'True' else 'no'} / "
                f"{'yes' if str(other['capped']) == 'True' else 'no'}",
            ]
        )
    lines += markdown_table(
        [
            "dataset",
            "notion",
            "strength",
            "iterations (BFGS / L-BFGS)",
            "evaluations",
            "CPU s",
            "objective BFGS - L-BFGS",
            "test accuracy",
            "capped",
        ],
        pairs,
    )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", choices=DATASETS, default=list(DATASETS))
    parser.add_argument("--notions", nargs="+", choices=("dp", "eo"), default=["dp", "eo"])
    parser.add_argument("--strengths", nargs="+", type=float, default=list(STRENGTHS))
    parser.add_argument("--penalty", default="otf")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="PREFIX of .csv and .md")
    parser.add_argument("--report-only", action="store_true", help="rewrite the .md from the .csv")
    args = parser.parse_args(argv)
    if args.report_only:
        with args.out.with_suffix(".csv").open() as handle:
            kept = list(csv.DictReader(handle))
        args.out.with_suffix(".md").write_text(report(kept, "python benchmarks/lbfgs_vs_bfgs.py"))
        return
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(1)
    threadpool_limits(1)
    rows: list[dict] = []
    command = "python benchmarks/lbfgs_vs_bfgs.py " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    for name in args.datasets:
        data = load(name, 20000)
        for notion in args.notions:
            for strength in args.strengths:
                for solver in SOLVERS:
                    row = fit_row(name, notion, args.penalty, strength, solver, data)
                    rows.append(row)
                    print(
                        f"{name} {notion} {strength:g} {solver}: {row['n_iter']} iterations,"
                        f" {row['cpu_s']:.2f} s, objective {row['objective']:.6f}",
                        flush=True,
                    )
        with args.out.with_suffix(".csv").open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        args.out.with_suffix(".md").write_text(report(rows, command.strip()))


if __name__ == "__main__":
    main()
