"""FairnessCV on real data: does the budget hold on the test split, and at what cost.

Usage: ``python benchmarks/fairness_cv.py [--splits 10] [--quick] [--out PREFIX]``
(``--out docs/measurements/fairness_cv`` writes ``PREFIX.md`` and ``PREFIX.csv``).

For each dataset and each of ``--splits`` seeded 80/20 splits:

* the cross-validated path (``FairnessCV(..., cv=5, refit=False)``: per fold one stacked
  fit of the strength grid, scored on the held-out fold) is computed once, and
  FairnessCV's rule (:func:`otfair.estimators._budget_rule.select_strength`) is applied
  to each budget; this is what ``FairnessCV(max_violation=b)`` computes for every ``b``
  (the folds are deterministic; ``refine=0``, the default). The chosen strength is
  refitted on the training split as it is (``check_refit=False``: the refit check,
  which may move a refit over the budget on its training rows to a larger strength,
  is not applied here)
  and measured on the test split: its score and its test violation, and whether the test
  violation exceeds the budget (the budget holds in expectation over folds only);
* classification: fairlearn's ``ExponentiatedGradient(LogisticRegression(),
  DemographicParity(difference_bound=b))`` fitted on the same training rows, its
  (randomized, ``random_state=seed``) test predictions measured the same way;
* on the first split: the CPU seconds (``time.process_time``, one torch thread) of the
  cross-validated path against ``GridSearchCV`` over the same strengths, the same folds
  and a custom accuracy / R^2 scorer (``refit=False``; GridSearchCV cannot select under
  a constraint, so only its fits and scoring are timed), measured one after the other.

Estimators (small budgets so that the whole run fits ~15 min on a loaded 2-core
machine): Adult (sex; 4,000 training rows drawn per split, the full test split) and
COMPAS (race; full training split) with ``FairClassifier("norm")`` (logistic model, the
OTF paper's L1 norm of the linear DP constraints; 20 epochs, batch 256, Adam lr 0.01;
default convex grid) and budgets on the DP gap; Law School (gender) with ``CENet`` (20
epochs, paper widths 60) and budgets on the error gap (|MSE_0 - MSE_1|, GPA units^2).
"""

from __future__ import annotations

import csv
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from otfair.datasets import load_dataset
from otfair.estimators import CENet, FairClassifier, FairnessCV
from otfair.estimators._budget_rule import make_splits, resolve_metric, select_strength
from otfair.estimators._strength_grids import default_strengths

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ArgumentParser, markdown_table  # noqa: E402


@dataclass
class Case:
    """One dataset of the benchmark."""

    name: str
    task: str
    metric: str
    budgets: tuple[float, ...]
    max_rows: int | None
    make: Any  # (seed, epochs) -> unfitted estimator
    rows: list[dict[str, Any]] = field(default_factory=list)


def _norm(seed: int, epochs: int) -> FairClassifier:
    return FairClassifier(
        "norm", epochs=epochs, batch_size=256, lr=0.01, random_state=seed, fixed_batches=False
    )


def _cenet(seed: int, epochs: int) -> CENet:
    return CENet(epochs=epochs, random_state=seed)


#: ``--grid fine``: 16 strengths, dense where Norm's DP gap falls (alpha 0.3-0.7)
FINE_GRID = (0.0, 0.01, 0.03, 0.1, 0.2, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.8, 0.9)

CASES = (
    Case("adult", "classification", "dp_gap", (0.03, 0.05), 4000, _norm),
    Case("compas", "classification", "dp_gap", (0.03, 0.05), None, _norm),
    Case("law_school", "regression", "error_gap", (0.03, 0.05), None, _cenet),
)


def _data(case: Case, seed: int, max_rows: int | None):
    split = load_dataset(case.name).split(test_size=0.2, random_state=seed)
    X, y, s = split.X_train, split.y_train, split.s_train
    if max_rows is not None and len(y) > max_rows:
        rows = np.random.default_rng(seed).choice(len(y), max_rows, replace=False)
        X, y, s = X[rows], y[rows], s[rows]
    return (X, y, s), (split.X_test, split.y_test, split.s_test)


def _measure(case: Case, est: Any, X: Any, y: Any, s: Any) -> tuple[float, float]:
    """Test score (accuracy / R^2) and test violation of a fitted estimator."""
    _, metric = resolve_metric(case.metric, case.task)
    if case.task == "classification":
        score = float(np.mean(est.predict(X) == y))
        return score, metric(y, est.predict_proba(X)[:, 1], sensitive_features=s)
    return float(est.score(X, y)), metric(y, est.predict(X), sensitive_features=s)


def _exponentiated_gradient(train, test, bound: float, seed: int) -> tuple[float, float, float]:
    from fairlearn.reductions import DemographicParity, ExponentiatedGradient
    from sklearn.linear_model import LogisticRegression

    from otfair.metrics import demographic_parity_gap

    (X, y, s), (Xt, yt, st) = train, test
    start = time.process_time()
    eg = ExponentiatedGradient(
        LogisticRegression(max_iter=1000), DemographicParity(difference_bound=bound)
    ).fit(X, y, sensitive_features=s)
    cpu = time.process_time() - start
    pred = eg.predict(Xt, random_state=seed)
    return float(np.mean(pred == yt)), demographic_parity_gap(yt, pred, sensitive_features=st), cpu


def _grid_search_cpu(case: Case, est: Any, strengths: np.ndarray, folds, X, y, s) -> float:
    from sklearn.metrics import accuracy_score, r2_score

    measure = accuracy_score if case.task == "classification" else r2_score

    def scorer(model: Any, X_: Any, y_: Any) -> float:  # the custom scorer
        return float(measure(y_, model.predict(X_)))

    search = GridSearchCV(
        est, {"strength": list(strengths)}, scoring=scorer, cv=folds, refit=False, n_jobs=1
    )
    start = time.process_time()
    search.fit(X, y, sensitive_features=s)
    return time.process_time() - start


def _warm_up() -> None:
    """One tiny fit of each estimator, so that the first timed fit pays no set-up cost."""
    rng = np.random.default_rng(0)
    X, s = rng.normal(size=(200, 3)), rng.integers(0, 2, 200)
    y = (X[:, 0] > 0).astype(int)
    for est, target in ((_norm(0, 1), y), (_cenet(0, 1), y / 2.0)):
        search = FairnessCV(
            est, strengths=[0.0, 0.1], max_violation=1e9, metric="wdp", cv=2, refit=False
        )
        with warnings.catch_warnings():  # tiny fits: below the constant, said in a warning
            warnings.simplefilter("ignore")
            search.set_params(below_constant="warn").fit(X, target, sensitive_features=s)


def run_split(
    case: Case,
    seed: int,
    *,
    epochs: int,
    cv: int,
    max_rows,
    timing: bool,
    fine: bool = False,
    margin: float = 0.0,
    pooled: bool = False,
) -> None:
    """Append the rows of one split (one per budget) to ``case.rows``."""
    train, test = _data(case, seed, max_rows)
    X, y, s = train
    est = case.make(seed, epochs)
    strengths = np.asarray(FINE_GRID) if fine else default_strengths(est)
    search = FairnessCV(
        est,
        strengths=strengths,
        max_violation=1e9,
        metric=case.metric,
        cv=cv,
        refit=False,
        margin=margin,
        pooled_violation=pooled,
        refine=0,  # the grid's table: the rule is applied to it per budget
        below_constant="warn",  # the table is what counts; the rule is applied per budget
    )
    start, wall = time.process_time(), time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        search.fit(X, y, sensitive_features=s)
    cv_cpu, cv_wall = time.process_time() - start, time.perf_counter() - wall
    gs_cpu = float("nan")
    if timing:
        folds = list(make_splits(cv, X, y, s, case.task))
        gs_cpu = _grid_search_cpu(case, est, strengths, folds, X, y, s)
    results = search.cv_results_
    param = search.strength_param_
    for budget in case.budgets:
        row: dict[str, Any] = {
            "dataset": case.name,
            "seed": seed,
            "budget": budget,
            "metric": case.metric,
            "n_train": len(y),
            "n_strengths": len(strengths),
            "cv_cpu_s": cv_cpu,
            "cv_wall_s": cv_wall,
            "gridsearch_cpu_s": gs_cpu,
        }
        try:
            k = select_strength(results, budget)
        except ValueError:
            row.update(feasible=False)
        else:
            best = (
                clone(est)
                .set_params(**{param: float(strengths[k])})
                .fit(X, y, sensitive_features=s)
            )
            score, violation = _measure(case, best, *test)
            row.update(
                feasible=True,
                strength=float(strengths[k]),
                cv_score=float(results["mean_test_score"][k]),
                cv_violation=float(results["mean_test_violation"][k]),
                test_score=score,
                test_violation=float(violation),
                exceeds=bool(violation > budget),
            )
        if case.task == "classification":
            eg_acc, eg_dp, eg_cpu = _exponentiated_gradient(train, test, budget, seed)
            row.update(eg_accuracy=eg_acc, eg_dp_gap=eg_dp, eg_exceeds=bool(eg_dp > budget))
            row.update(eg_cpu_s=eg_cpu)
        case.rows.append(row)


def _fmt(values: list[float], digits: int = 3) -> str:
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return "-"
    return f"{arr.mean():.{digits}f} ± {arr.std(ddof=1) if arr.size > 1 else 0.0:.{digits}f}"


def report(
    cases: tuple[Case, ...],
    command: str,
    settings: str,
    csv_name: str = "fairness_cv.csv",
    grid: str = "default",
) -> str:
    """Return the markdown report of a run (its title names the grid: one title per page)."""
    on_grid = " (fine grid of strengths)" if grid == "fine" else ""
    lines = [
        "# FairnessCV: the budget on new data, against exponentiated gradient, and its cost"
        + on_grid,
        "",
        "> Superseded as a comparison with fairlearn by "
        "[fairness_cv_vs_fairlearn.md](fairness_cv_vs_fairlearn.md) (FairnessCV at its "
        "defaults against GridSearch and ExponentiatedGradient, same split, CPU ratio).",
        "",
        f"`{command}` ({settings}); per-split rows in `{csv_name}`. Generated by "
        "benchmarks/fairness_cv.py (its docstring states the protocol). Mean ± sd over "
        "the splits where the budget was feasible.",
        "",
        "Reduced training budgets, to fit a 2-core machine shared with other jobs: the "
        "epochs above (the registry's defaults are 100-200) and training rows per split "
        + ", ".join(f"{c.name} {c.rows[0]['n_train']:,}" for c in cases if c.rows)
        + " (Adult subsampled; the test splits are whole).",
        "",
    ]
    header = [
        "dataset",
        "metric",
        "budget",
        "feasible splits",
        "test > budget",
        "chosen strengths",
        "CV violation",
        "test violation",
        "test score",
        "EG accuracy",
        "EG DP gap",
        "EG DP > budget",
    ]
    rows = []
    for case in cases:
        for budget in case.budgets:
            sel = [r for r in case.rows if r["budget"] == budget]
            ok = [r for r in sel if r["feasible"]]
            eg = [r for r in sel if "eg_accuracy" in r]
            rows.append(
                [
                    case.name,
                    case.metric,
                    f"{budget:g}",
                    f"{len(ok)} / {len(sel)}",
                    f"{sum(r['exceeds'] for r in ok)} / {len(ok)}",
                    ", ".join(f"{r['strength']:g}" for r in ok) or "-",
                    _fmt([r["cv_violation"] for r in ok], 4),
                    _fmt([r["test_violation"] for r in ok], 4),
                    _fmt([r["test_score"] for r in ok]),
                    _fmt([r["eg_accuracy"] for r in eg]) if eg else "n/a",
                    _fmt([r["eg_dp_gap"] for r in eg], 4) if eg else "n/a",
                    f"{sum(r['eg_exceeds'] for r in eg)} / {len(eg)}" if eg else "n/a",
                ]
            )
    lines += markdown_table(header, rows)
    lines += [
        "",
        "Test score: accuracy (classification) or R^2 (regression). EG: fairlearn's "
        "ExponentiatedGradient(LogisticRegression, DemographicParity(difference_bound="
        "budget)) on the same training rows, randomized predictions.",
        "",
        "## Cost: the cross-validated path against GridSearchCV (first split)",
        "",
    ]
    timing = []
    for case in cases:
        first = next((r for r in case.rows if not np.isnan(r["gridsearch_cpu_s"])), None)
        if first is None:
            continue
        ratio = first["gridsearch_cpu_s"] / first["cv_cpu_s"]
        timing.append(
            [
                case.name,
                f"{first['n_train']:,}",
                str(first.get("n_strengths", "")),
                f"{first['cv_cpu_s']:.1f}",
                f"{first['gridsearch_cpu_s']:.1f}",
                f"{ratio:.1f}x",
            ]
        )
    lines += markdown_table(
        ["dataset", "training rows", "K", "FairnessCV CPU s", "GridSearchCV CPU s", "ratio"],
        timing,
    )
    lines += [
        "",
        "Both over the same strengths (K values, the grid named above) and the same folds, "
        "one torch thread, measured one after the other in this run. FairnessCV's time "
        "includes scoring every model and measuring its violation.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=10, help="seeded splits per dataset")
    parser.add_argument("--quick", action="store_true", help="smoke run: 2 splits, 2 epochs")
    parser.add_argument("--cv", type=int, default=5, help="folds")
    parser.add_argument("--epochs", type=int, default=20, help="training epochs")
    parser.add_argument("--out", type=Path, default=None, help="write PREFIX.md and .csv")
    parser.add_argument(
        "--margin", type=float, default=0.0, help="FairnessCV's margin (0: the mean rule)"
    )
    parser.add_argument(
        "--pooled",
        action="store_true",
        help="violation of the pooled held-out predictions (default: the fold mean, as "
        "the committed tables)",
    )
    parser.add_argument("--datasets", nargs="+", default=[c.name for c in CASES])
    parser.add_argument(
        "--grid",
        choices=("default", "fine"),
        default="default",
        help="strengths: the estimator's default grid, or FINE_GRID (classification)",
    )
    args = parser.parse_args(argv)
    if args.splits < 1 or args.cv < 2 or args.epochs < 1:
        parser.error("--splits and --epochs must be >= 1, --cv >= 2")
    torch.set_num_threads(1)
    _warm_up()
    splits, epochs = (2, 2) if args.quick else (args.splits, args.epochs)
    cases = tuple(c for c in CASES if c.name in args.datasets)
    for case in cases:
        max_rows = min(case.max_rows or 10**9, 1000) if args.quick else case.max_rows
        for seed in range(splits):
            run_split(
                case,
                seed,
                epochs=epochs,
                cv=args.cv,
                max_rows=max_rows,
                timing=seed == 0,
                fine=args.grid == "fine",
                margin=args.margin,
                pooled=args.pooled,
            )
            print(f"{case.name} split {seed} done", file=sys.stderr, flush=True)
    command = "python benchmarks/fairness_cv.py " + " ".join(argv or sys.argv[1:])
    n_default = len(default_strengths(_norm(0, 1)))
    grid = (
        "FINE_GRID, 16 strengths"
        if args.grid == "fine"
        else f"default grid, {n_default} strengths"
    )
    rule = f"margin {args.margin:g}, {'pooled' if args.pooled else 'fold-mean'} violation"
    settings = f"{splits} splits, {args.cv} folds, {epochs} epochs, {grid}, {rule}"
    csv_name = "stdout only" if args.out is None else args.out.with_suffix(".csv").name
    text = report(cases, command.strip(), settings, csv_name, args.grid)
    print(text)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.with_suffix(".md").write_text(text)
        rows = [r for c in cases for r in c.rows]
        names = list(dict.fromkeys(k for r in rows for k in r))
        with args.out.with_suffix(".csv").open("w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=names)
            writer.writeheader()
            writer.writerows(rows)


if __name__ == "__main__":
    main()
