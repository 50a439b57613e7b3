"""How often a budget chosen on the training rows holds on new data: FairnessCV and GridSearch.

Usage::

    python benchmarks/budget_on_new_data.py [--splits 10] [--cases adult-otf-dp ...]
        [--out PREFIX] [--fresh] [--report-only]

``--out`` (default ``docs/measurements/budget_on_new_data``) names ``PREFIX.csv`` (one
row per case, split and method) and ``PREFIX.md`` (the report, generated from the CSV
alone). The run is resumable: a row already in the CSV is not measured again
(``--fresh`` measures the selected cases' splits again; the other rows stay); the CSV
and the report are rewritten after every split.

Protocol. For each case (dataset, penalty, notion, budget) and each of ``--splits``
seeds ``k``:

* ``otfair.datasets.load_dataset(name).split(test_size=0.3, random_state=k)``; the
  training split subsampled to 20,000 rows with seed ``k`` (Adult; the others are
  smaller); the features standardized by a ``StandardScaler`` fitted on the training
  rows.
* ``fairnesscv``: ``FairnessCV(FairClassifier(penalty, notion=notion, random_state=0),
  max_violation=budget)`` at its defaults (``metric="auto"``: ``dp_gap`` under DP,
  ``max_eo_gap`` under EO; ``margin=0``, the mean rule; ``check_refit=True``: a refit
  over the budget on its own training rows moves to the next eligible strength),
  refitted on the training rows; ``fairnesscv_unchecked``: the same search's choice as
  ``check_refit=False`` keeps it (the folds' choice refitted; the same model where the
  check kept it); ``fairnesscv_margin1``: the same with ``margin=1.0`` (the upper bound ``mean + 1
  standard error`` within the budget); ``fairnesscv_refine2``: ``refine=2`` (two
  bisection rounds of the grid step where the budget is crossed: a choice nearer it).
* ``gridsearch_budget``: fairlearn's ``GridSearch(LogisticRegression(max_iter=1000),
  DemographicParity | EqualizedOdds(difference_bound=budget), grid_size=10)``, the most
  accurate of its 10 models whose violation on the training rows is within the budget
  (what a user with a budget takes from it; the least violating one when none is, marked
  ``none within``); ``gridsearch``: fairlearn's own choice (``best_idx_``, which the
  bound does not enter).
* Measured on the test split (hard decisions at 0.5): accuracy and the violation;
  ``exceeded``: the test violation is over the budget; ``exceeded_noise``: over it by
  more than two ``test_violation_sd`` (the sd of the test violation over 200 bootstrap
  resamples of the test rows, the predictions fixed). A FairnessCV that finds no
  strength within the budget says so (``refused``) and has no test measures.

One torch thread and one BLAS thread, so that a rerun gives the same rows. The report
counts, per case and method, the splits where the test violation exceeded the budget and
gives the mean test accuracy with its standard error over the splits.
"""

from __future__ import annotations

import csv
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ArgumentParser, markdown_table  # noqa: E402
from fairness_cv_vs_fairlearn import bootstrap_sd  # noqa: E402  (200 resamples, seed 0)

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "docs" / "measurements" / "budget_on_new_data"
MAX_TRAIN_ROWS = 20_000
#: name -> (dataset, penalty, notion, budget)
CASES: dict[str, tuple[str, str, str, float]] = {
    "adult-otf-dp": ("adult", "otf", "dp", 0.02),
    "adult-gapreg-dp": ("adult", "gapreg", "dp", 0.02),
    "adult-otf-eo": ("adult", "otf", "eo", 0.05),
    "compas-gapreg-dp": ("compas", "gapreg", "dp", 0.05),
    "german-otf-dp": ("german", "otf", "dp", 0.02),
    "dutch-otf-eo": ("dutch", "otf", "eo", 0.05),
}
#: the CSV's numeric columns
NUMBERS = (
    "budget",
    "strength",
    "cv_violation",
    "refit_train_violation",
    "test_accuracy",
    "test_violation",
    "test_violation_sd",
)
FLAGS = ("exceeded", "exceeded_noise")
METHODS = (
    "fairnesscv",
    "fairnesscv_unchecked",
    "fairnesscv_margin1",
    "fairnesscv_refine2",
    "gridsearch_budget",
    "gridsearch",
)
FIELDS = (
    "case",
    "dataset",
    "penalty",
    "notion",
    "metric",
    "budget",
    "seed",
    "method",
    "strength",
    "cv_violation",
    "refit_train_violation",
    "test_accuracy",
    "test_violation",
    "test_violation_sd",
    "exceeded",
    "exceeded_noise",
    "note",
)


# ----------------------------------------------------------------------------- data
def load(name: str, seed: int) -> tuple[tuple, tuple]:
    """Return the standardized ``(X, y, s)`` of split ``seed``'s training and test rows."""
    from sklearn.preprocessing import StandardScaler

    from otfair.datasets import load_dataset

    split = load_dataset(name).split(test_size=0.3, random_state=seed)
    X, y, s = split.X_train, split.y_train, split.s_train
    if len(y) > MAX_TRAIN_ROWS:
        rows = np.sort(np.random.default_rng(seed).choice(len(y), MAX_TRAIN_ROWS, replace=False))
        X, y, s = X[rows], y[rows], s[rows]
    scaler = StandardScaler().fit(X)
    train = (scaler.transform(X), np.asarray(y).astype(int), np.asarray(s))
    test = (scaler.transform(split.X_test), np.asarray(split.y_test).astype(int), split.s_test)
    return train, test


def measure_fn(metric: str) -> Any:
    """Return the violation measure ``metric`` (decisions or scores, cut at 0.5)."""
    from otfair.estimators import get_violation_metric

    return get_violation_metric(metric, "classification")


# -------------------------------------------------------------------------- methods
def run_fairness_cv(case: str, train: tuple, margin: float, refine: int = 0) -> dict[str, Any]:
    """Fit FairnessCV (defaults but ``margin``, ``refine``); return its choice or refusal."""
    from otfair.estimators import FairClassifier, FairnessCV

    _, penalty, notion, budget = CASES[case]
    X, y, s = train
    search = FairnessCV(
        FairClassifier(penalty, notion=notion, random_state=0),
        max_violation=budget,
        margin=margin,
        refine=refine,
    )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            search.fit(X, y, sensitive_features=s)
    except ValueError as exc:
        return {"note": "refused: " + str(exc).split(". Raise")[0]}
    bound = "upper_test_violation" if margin > 0 else "test_violation"
    return {
        "model": search.best_estimator_,
        "metric": search.metric_,
        "strength": search.strength_,
        "cv_violation": float(search.cv_results_[bound][search.best_index_]),
        "refit_train_violation": search.refit_history_[-1]["train_violation"],
        "search": search,
    }


def unchecked(fit: dict[str, Any], train: tuple) -> dict[str, Any]:
    """Return ``fit``'s search as ``check_refit=False`` keeps it: the folds' choice, refitted.

    The same search (no second cross-validation): where the checked refit kept the
    folds' choice, the same model; else the folds' choice refitted from scratch.
    """
    from sklearn.base import clone

    if "search" not in fit:
        return fit  # refused
    search = fit["search"]
    first = search.refit_history_[0]
    if first["strength"] == fit["strength"]:
        return fit
    X, y, s = train
    model = clone(search.estimator).set_params(strength=first["strength"])
    k = int(np.flatnonzero(search.cv_results_["strength"] == first["strength"])[0])
    return {
        "model": model.fit(X, y, sensitive_features=s),
        "metric": search.metric_,
        "strength": first["strength"],
        "cv_violation": float(search.cv_results_["test_violation"][k]),
        "refit_train_violation": first["train_violation"],
    }


def run_grid_search(case: str, train: tuple) -> dict[str, dict[str, Any]]:
    """Fit fairlearn's GridSearch once; return its budget's choice and its own."""
    from fairlearn import reductions
    from sklearn.linear_model import LogisticRegression

    _, _, notion, budget = CASES[case]
    X, y, s = train
    constraint = (
        reductions.DemographicParity(difference_bound=budget)
        if notion == "dp"
        else reductions.EqualizedOdds(difference_bound=budget)
    )
    grid = reductions.GridSearch(LogisticRegression(max_iter=1000), constraint, grid_size=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grid.fit(X, y, sensitive_features=s)
    measure = measure_fn("dp_gap" if notion == "dp" else "max_eo_gap")
    train_violation = [
        float(measure(y, p.predict(X), sensitive_features=s)) for p in grid.predictors_
    ]
    train_accuracy = [float(np.mean(p.predict(X) == y)) for p in grid.predictors_]
    within = [i for i, v in enumerate(train_violation) if v <= budget]
    pick = (
        max(within, key=lambda i: train_accuracy[i]) if within else int(np.argmin(train_violation))
    )
    return {
        "gridsearch_budget": {
            "model": grid.predictors_[pick],
            "cv_violation": train_violation[pick],
            "note": "" if within else "none within",
        },
        "gridsearch": {
            "model": grid.predictors_[grid.best_idx_],
            "cv_violation": train_violation[grid.best_idx_],
        },
    }


def test_measures(fit: dict[str, Any], test: tuple, metric: str, budget: float) -> dict[str, Any]:
    """Return the test accuracy and violation, its noise, and whether it exceeds ``budget``.

    ``exceeded_noise``: over the budget by more than two bootstrap sd of the test
    violation (more than the test split's own noise explains).
    """
    X, y, s = test
    y, s = np.asarray(y), np.asarray(s)
    pred = np.asarray(fit["model"].predict(X))
    value = float(measure_fn(metric)(y, pred, sensitive_features=s))
    sd = bootstrap_sd(metric, y, pred, s)
    return {
        "test_accuracy": float(np.mean(pred == y)),
        "test_violation": value,
        "test_violation_sd": sd,
        "exceeded": bool(value > budget),
        "exceeded_noise": bool(value > budget + 2 * sd),
    }


def measure_split(case: str, seed: int) -> list[dict[str, Any]]:
    """Return the rows of every method on split ``seed`` of ``case``."""
    dataset, penalty, notion, budget = CASES[case]
    metric = "dp_gap" if notion == "dp" else "max_eo_gap"
    base = {"case": case, "dataset": dataset, "penalty": penalty, "notion": notion}
    base.update(metric=metric, budget=budget, seed=seed)
    train, test = load(dataset, seed)
    fits = {"fairnesscv": run_fairness_cv(case, train, 0.0)}
    fits.update(
        fairnesscv_unchecked=unchecked(fits["fairnesscv"], train),
        fairnesscv_margin1=run_fairness_cv(case, train, 1.0),
        fairnesscv_refine2=run_fairness_cv(case, train, 0.0, refine=2),
        **run_grid_search(case, train),
    )
    rows = []
    for method in METHODS:
        fit = fits[method]
        if fit.get("metric", metric) != metric:  # FairnessCV's "auto" chose another measure
            raise RuntimeError(f"{case}: FairnessCV budgeted {fit['metric']}, not {metric}.")
        row = {**base, "method": method, "note": fit.get("note", "")}
        if "model" in fit:
            row.update(strength=fit.get("strength"), cv_violation=fit["cv_violation"])
            row.update(refit_train_violation=fit.get("refit_train_violation"))
            row.update(test_measures(fit, test, metric, budget))
        rows.append(row)
    return rows


# ------------------------------------------------------------------------------ CSV
def write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    """Write ``rows`` to ``path`` (an absent value is an empty cell)."""
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: ("" if row.get(k) is None else row[k]) for k in FIELDS})


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Read the rows of ``path`` back (numbers as numbers, flags as booleans)."""
    if not path.exists():
        return []
    rows = []
    with path.open(newline="") as fh:
        for raw in csv.DictReader(fh):
            row: dict[str, Any] = {}
            for key, value in raw.items():
                if value == "":
                    continue
                if key in NUMBERS:
                    row[key] = float(value)
                elif key == "seed":
                    row[key] = int(value)
                elif key in FLAGS:
                    row[key] = value == "True"
                else:
                    row[key] = value
            rows.append(row)
    return rows


# --------------------------------------------------------------------------- report
def summary(rows: list[dict[str, Any]], case: str, method: str) -> dict[str, Any]:
    """Return the splits, refusals, exceedances and mean test accuracy of one case and method."""
    sel = [r for r in rows if r["case"] == case and r["method"] == method]
    done = [r for r in sel if "test_accuracy" in r]
    acc = np.array([r["test_accuracy"] for r in done])
    violation = np.array([r["test_violation"] for r in done])
    return {
        "splits": len(sel),
        "refused": sum(str(r.get("note", "")).startswith("refused") for r in sel),
        "none_within": sum(r.get("note") == "none within" for r in sel),
        "exceeded": sum(bool(r.get("exceeded")) for r in done),
        "exceeded_noise": sum(bool(r.get("exceeded_noise")) for r in done),
        "sd": float(np.mean([r["test_violation_sd"] for r in done])) if done else np.nan,
        "measured": len(done),
        "accuracy": float(acc.mean()) if len(acc) else float("nan"),
        "accuracy_se": float(acc.std(ddof=1) / np.sqrt(len(acc)))
        if len(acc) > 1
        else float("nan"),
        "violation": float(violation.mean()) if len(violation) else float("nan"),
        "violation_max": float(violation.max()) if len(violation) else float("nan"),
    }


def paired_difference(
    rows: list[dict[str, Any]], case: str, method: str, other: str = "gridsearch_budget"
) -> tuple[float, float, int]:
    """Mean test-accuracy difference ``method - other`` over the splits both measured.

    Returns ``(mean, standard error, splits)``: the differences are paired by split, so
    their standard error is that of the per-split differences (NaN below two splits).
    """

    def accuracy(name: str) -> dict[int, float]:
        return {
            r["seed"]: r["test_accuracy"]
            for r in rows
            if r["case"] == case and r["method"] == name and "test_accuracy" in r
        }

    mine, theirs = accuracy(method), accuracy(other)
    diff = np.array([mine[k] - theirs[k] for k in sorted(set(mine) & set(theirs))])
    if not len(diff):
        return float("nan"), float("nan"), 0
    se = float(diff.std(ddof=1) / np.sqrt(len(diff))) if len(diff) > 1 else float("nan")
    return float(diff.mean()), se, len(diff)


def report(rows: list[dict[str, Any]], csv_name: str) -> str:
    """Return the markdown report of ``rows`` (the CSV's rows, nothing else)."""
    splits = max((int(r["seed"]) for r in rows), default=-1) + 1
    command = f"python benchmarks/budget_on_new_data.py --splits {splits} --fresh"
    lines = [
        "# The budget on new data: FairnessCV's choice and GridSearch's over many splits",
        "",
        f"Generated by `benchmarks/budget_on_new_data.py` from `{csv_name}` (one row per "
        "case, split and method; the script's docstring states the protocol). "
        f"Regenerate with `{command}` (every case).",
        "",
        "Each case is fitted on several 70/30 splits (seeds 0, 1, ...; standardized "
        "features, Adult's training rows subsampled to 20,000). `fairnesscv`: "
        "`FairnessCV(FairClassifier(penalty, notion=..., random_state=0), "
        "max_violation=budget)` at its defaults (the mean rule, `margin=0`; `check_refit=True`); "
        "`fairnesscv_unchecked`: the same search with `check_refit=False` (the folds' "
        "choice refitted, even where its refit is over the budget on its training rows); "
        "`fairnesscv_margin1`: `margin=1.0`; `fairnesscv_refine2`: `refine=2` (the grid "
        "step where the budget is crossed bisected twice); `gridsearch_budget`: the most "
        "accurate of fairlearn's `GridSearch(LogisticRegression, grid_size=10)` models within the "
        "budget on the training rows; `gridsearch`: fairlearn's own choice. `exceeded`: "
        "splits whose test violation (hard decisions) is over the budget, of those with a "
        "model, and in brackets those over it by more than two bootstrap sd of the test "
        "violation (200 resamples of the test rows; `mean sd`: their mean), which the "
        "test split's own noise does not explain; `refused`: FairnessCV found no strength "
        "within the budget in cross-validation; `none within`: no GridSearch model was "
        "within it on the training rows (the least violating one is measured). Accuracy: "
        "the mean test accuracy over the splits with a model, ± its standard error; `vs "
        "gridsearch_budget`: the mean of the per-split differences in test accuracy "
        "(this method's minus GridSearch's budget choice, on the splits where both have "
        "a model), ± the standard error of that mean, and the number of splits.",
        "",
    ]
    header = [
        "case",
        "budget",
        "method",
        "splits",
        "refused / none within",
        "exceeded (beyond noise)",
        "test accuracy",
        "mean test violation",
        "max test violation",
        "mean sd",
        "vs gridsearch_budget",
    ]
    table = []
    cases = [c for c in CASES if any(r["case"] == c for r in rows)]
    for case in cases:
        budget = next(r["budget"] for r in rows if r["case"] == case)
        metric = next(r["metric"] for r in rows if r["case"] == case)
        for method in METHODS:
            sm = summary(rows, case, method)
            if not sm["splits"]:
                continue
            missing = sm["refused"] if method.startswith("fairnesscv") else sm["none_within"]
            table.append(
                [
                    case,
                    f"{metric} ≤ {budget:g}",
                    method,
                    str(sm["splits"]),
                    str(missing),
                    f"{sm['exceeded']} ({sm['exceeded_noise']}) of {sm['measured']}",
                    f"{sm['accuracy']:.4f} ± {sm['accuracy_se']:.4f}",
                    f"{sm['violation']:.4f}",
                    f"{sm['violation_max']:.4f}",
                    f"{sm['sd']:.4f}",
                    paired_text(rows, case, method),
                ]
            )
    lines += markdown_table(header, table)
    return "\n".join(lines) + "\n"


def paired_text(rows: list[dict[str, Any]], case: str, method: str) -> str:
    """Return the paired-difference cell of the report (empty for GridSearch rows)."""
    if not method.startswith("fairnesscv"):
        return ""
    mean, se, n = paired_difference(rows, case, method)
    return f"{mean:+.4f} ± {se:.4f} ({n})" if n else "-"


# ----------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> None:
    """Measure the cases over the splits (resumable) and write the CSV and the report."""
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=10, help="splits per case (seeds 0..)")
    parser.add_argument("--cases", nargs="+", choices=sorted(CASES), help="a subset")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="PREFIX of .csv/.md")
    parser.add_argument(
        "--fresh", action="store_true", help="measure the selected splits again (others stay)"
    )
    parser.add_argument("--report-only", action="store_true", help="rewrite the report")
    args = parser.parse_args(argv)
    if args.splits < 1:
        parser.error(f"--splits must be at least 1; got {args.splits}")
    csv_path, md_path = args.out.with_suffix(".csv"), args.out.with_suffix(".md")
    rows = read_rows(csv_path)  # --fresh measures the selected splits again; others stay
    if not args.report_only:
        import torch
        from threadpoolctl import threadpool_limits

        torch.set_num_threads(1)
        threadpool_limits(1)
        done = set() if args.fresh else {(r["case"], r["seed"]) for r in rows}
        for case in args.cases or list(CASES):
            for seed in range(args.splits):
                if (case, seed) in done:
                    continue
                measured = measure_split(case, seed)
                rows = [r for r in rows if (r["case"], r["seed"]) != (case, seed)] + measured
                rows.sort(key=lambda r: (list(CASES).index(r["case"]), r["seed"]))
                write_rows(csv_path, rows)
                md_path.write_text(report(rows, csv_path.name))
                print(f"{case} split {seed} done", flush=True)
    md_path.write_text(report(rows, csv_path.name))
    print(md_path)


if __name__ == "__main__":
    main()
