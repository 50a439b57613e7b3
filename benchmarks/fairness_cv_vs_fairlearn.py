"""FairnessCV against fairlearn's GridSearch and ExponentiatedGradient at a fairness budget.

Usage::

    python benchmarks/fairness_cv_vs_fairlearn.py
        [--datasets adult compas bank german dutch diabetes]
        [--models logistic mlp] [--penalties otf] [--notions dp eo] [--cv 5] [--quick]
        [--threads one|default] [--out PREFIX] [--fresh] [--report-only]

``--out`` (default ``docs/measurements/fairness_cv_vs_fairlearn``) names ``PREFIX.csv``
(one row per dataset x budget x method x model x penalty) and ``PREFIX.md`` (the report,
generated from the CSV alone). The run is resumable: a row already in the CSV is not
measured again (``--fresh`` measures the selected rows again; rows of other datasets,
models or penalties stay), the CSV is rewritten after every row
and the report after every dataset, so an interrupted run keeps what it measured.
``--report-only`` regenerates the report from the CSV.

Protocol (one fixed split per dataset, the same for every method):

* ``otfair.datasets.load_dataset(name).split(test_size=0.3, random_state=0)``; the
  training split subsampled to ``--max-train-rows`` rows (default 20,000: Adult; the
  others are smaller) with seed 0; the features standardized by a ``StandardScaler``
  fitted on the training rows. The sensitive attribute is the loader's (Adult, German:
  sex; COMPAS: race; Bank: age group; Dutch: sex; Diabetes: gender). The committed table
  has the MLP's rows on the first four datasets only (logistic on all six).
* Budgets: demographic parity ``dp_gap <= 0.02`` and equalized odds (worst case,
  ``max_eo_gap <= 0.05``, which is fairlearn's ``EqualizedOdds`` bound), measured on the
  test split on hard decisions.
* ``FairnessCV(FairClassifier(<penalty>, notion=<notion>, model=<model>,
  random_state=0), max_violation=<budget>, metric=<metric>, cv=<cv>)``: every other
  setting at its default (the strength grid, epochs, margin). It is fitted with
  ``refit=False`` and then refitted on the training rows by the function ``refit=True``
  calls (``otfair.estimators._fairness_cv_refit.checked_refit``, ``check_refit=True``:
  while the refit's violation on its training rows is over the budget, the next larger
  eligible strength is refitted); both parts are timed (``cv_cpu_s``, ``refit_cpu_s``)
  and ``cpu_s`` is their sum. ``cv_strength`` is the folds' choice, ``strength`` the
  refit kept, ``refit_train_violation`` its violation on the training rows.
* The logistic model (where the search ascends, cheaply) is also searched with
  ``refine=2`` (``refined_*`` columns: its choice refitted and measured, the refined
  search's CPU); the report's refinement table shows it beside the default's.
* fairlearn's ``GridSearch(LogisticRegression(max_iter=1000), <constraint>,
  grid_size=10)`` with ``DemographicParity(difference_bound=budget)`` or
  ``EqualizedOdds(difference_bound=budget)``: ``gridsearch`` is fairlearn's own choice
  (``best_idx_``: the least ``0.5 error + 0.5 violation`` on the training rows; the bound
  does not enter it); ``gridsearch_budget`` is the most accurate of its 10 models whose
  training violation is within the budget (the same fit, the one a user with a budget
  would take; the least violating one when none is).
* fairlearn's ``ExponentiatedGradient(LogisticRegression(max_iter=1000), <constraint>,
  eps=budget)``, its randomized test predictions drawn with ``random_state=0``.
* CPU seconds: ``time.process_time`` of the whole fit (cross-validation included), one
  torch thread and one BLAS thread (``threadpoolctl``; ``--threads default``: the
  libraries' own thread counts, what a user's session has, to ``PREFIX_default_threads``
  unless ``--out`` is given), measured one after the other in the same process, after
  an untimed warm-up fit of every method on 300 synthetic rows (imports, first kernels);
  ``cpu_ratio`` is FairnessCV's CPU over GridSearch's measured in the same invocation
  (on a resumed run, GridSearch is measured again before any new FairnessCV row).
* The test violation's noise: the standard deviation of the violation over 200
  bootstrap resamples of the test rows (the predictions fixed), ``test_violation_sd``.

``--quick``: Adult (5,000 training rows) and COMPAS, logistic, DP only, to a separate
``PREFIX_quick`` output unless ``--out`` is given: a few minutes.
"""

from __future__ import annotations

import contextlib
import csv
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ArgumentParser, markdown_table  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "docs" / "measurements" / "fairness_cv_vs_fairlearn"
DATASETS = ("adult", "compas", "bank", "german", "dutch", "diabetes")
MODELS = ("logistic", "mlp")
#: notion -> (otfair's violation measure, budget, fairlearn's constraint class name)
BUDGETS: dict[str, tuple[str, float, str]] = {
    "dp": ("dp_gap", 0.02, "DemographicParity"),
    "eo": ("max_eo_gap", 0.05, "EqualizedOdds"),
}
#: the key of a row: a row with the same key is not measured again on a resumed run
KEY = ("dataset", "notion", "method", "model", "penalty")
FAIRLEARN = ("gridsearch", "gridsearch_budget", "expgrad")
BOOTSTRAP = 200
#: other margins whose choice is recorded beside the default's (same folds, refitted)
MARGINS = (0.5, 1.0)


# ----------------------------------------------------------------------------- data
def load(name: str, max_rows: int | None) -> tuple[tuple, tuple]:
    """Return the standardized ``(X, y, s)`` of the training rows and of the test split."""
    from sklearn.preprocessing import StandardScaler

    from otfair.datasets import load_dataset

    split = load_dataset(name).split(test_size=0.3, random_state=0)
    X, y, s = split.X_train, split.y_train, split.s_train
    if max_rows is not None and len(y) > max_rows:
        rows = np.sort(np.random.default_rng(0).choice(len(y), max_rows, replace=False))
        X, y, s = X[rows], y[rows], s[rows]
    scaler = StandardScaler().fit(X)
    train = (scaler.transform(X), np.asarray(y).astype(int), np.asarray(s))
    test = (scaler.transform(split.X_test), np.asarray(split.y_test).astype(int), split.s_test)
    return train, test


def violation(metric: str, y: np.ndarray, scores: np.ndarray, s: np.ndarray) -> float:
    """Return the violation of ``scores`` (probabilities or 0/1 decisions, cut at 0.5)."""
    from otfair.estimators._budget_rule import resolve_metric

    _, fn = resolve_metric(metric, "classification")
    return float(fn(y, scores, sensitive_features=s))


def bootstrap_sd(metric: str, y: np.ndarray, scores: np.ndarray, s: np.ndarray) -> float:
    """Return the sd of the test violation over bootstrap resamples of the test rows."""
    rng = np.random.default_rng(0)
    values = []
    for _ in range(BOOTSTRAP):
        rows = rng.integers(0, len(y), len(y))
        try:
            values.append(violation(metric, y[rows], scores[rows], s[rows]))
        except ValueError:  # a resample without a (group, label) cell
            continue
    return float(np.std(values, ddof=1)) if len(values) > 1 else float("nan")


def cpu(fn: Callable[[], Any]) -> tuple[Any, float]:
    """Return ``fn()`` and the CPU seconds it took (``time.process_time``)."""
    start = time.process_time()
    out = fn()
    return out, time.process_time() - start


def measure(row: dict, metric: str, test: tuple, pred: np.ndarray, scores: np.ndarray) -> dict:
    """Add the test accuracy, the test violation and its bootstrap sd to ``row``."""
    X, y, s = test
    budget = row["budget"]
    value = violation(metric, y, scores, s)
    sd = bootstrap_sd(metric, y, scores, s)
    row.update(
        test_accuracy=float(np.mean(pred == y)),
        test_violation=value,
        test_violation_sd=sd,
        within_budget=bool(value <= budget),
        within_budget_noise=bool(value <= budget + 2 * sd),
    )
    return row


# -------------------------------------------------------------------------- methods
def _constraint(notion: str, budget: float) -> Any:
    from fairlearn import reductions

    return getattr(reductions, BUDGETS[notion][2])(difference_bound=budget)


def _logistic() -> Any:
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(max_iter=1000)


def run_fairlearn(base: dict, notion: str, train: tuple, test: tuple) -> list[dict]:
    """GridSearch (fairlearn's choice and the budget's) and ExponentiatedGradient rows."""
    from fairlearn.reductions import ExponentiatedGradient, GridSearch

    metric, budget, _ = BUDGETS[notion]
    X, y, s = train
    rows = []
    grid = GridSearch(_logistic(), _constraint(notion, budget), grid_size=10)
    _, grid_cpu = cpu(lambda: grid.fit(X, y, sensitive_features=s))
    common = {**base, "model": "logistic (sklearn)", "penalty": "", "cpu_s": grid_cpu}
    best = grid.predictors_[grid.best_idx_]
    row = {**common, "method": "gridsearch", "gridsearch_cpu_s": grid_cpu}
    rows.append(measure(row, metric, test, best.predict(test[0]), best.predict(test[0])))
    # the budget's choice among the same 10 models, on the training rows
    train_violation = [violation(metric, y, p.predict(X), s) for p in grid.predictors_]
    train_accuracy = [float(np.mean(p.predict(X) == y)) for p in grid.predictors_]
    within = [i for i, v in enumerate(train_violation) if v <= budget]
    pick = (
        max(within, key=lambda i: train_accuracy[i]) if within else int(np.argmin(train_violation))
    )
    chosen = grid.predictors_[pick]
    row = {
        **common,
        "method": "gridsearch_budget",
        "gridsearch_cpu_s": grid_cpu,
        "cv_violation": train_violation[pick],
    }
    rows.append(measure(row, metric, test, chosen.predict(test[0]), chosen.predict(test[0])))
    eg = ExponentiatedGradient(_logistic(), _constraint(notion, budget), eps=budget)
    _, eg_cpu = cpu(lambda: eg.fit(X, y, sensitive_features=s))
    pred = np.asarray(eg.predict(test[0], random_state=0))
    row = {**common, "method": "expgrad", "cpu_s": eg_cpu, "gridsearch_cpu_s": grid_cpu}
    rows.append(measure(row, metric, test, pred, pred.astype(float)))
    return rows


def warm_up(penalties: list[str], models: tuple[str, ...], notions: tuple[str, ...]) -> None:
    """Fit every method once on 300 synthetic rows, untimed.

    The first fit of a process pays its imports (otfair's, fairlearn's lazy ones) and
    torch's first kernels; without this the first timed row carried them.
    """
    from otfair.estimators import FairClassifier, FairnessCV

    rng = np.random.default_rng(0)
    s = (rng.random(300) < 0.4).astype(int)
    X = rng.normal(size=(300, 4)) + s[:, None]
    y = (X[:, 0] + rng.normal(size=300) > 0.5).astype(int)
    for notion in notions:
        run_fairlearn({"budget": BUDGETS[notion][1]}, notion, (X, y, s), (X, y, s))
        metric, _, _ = BUDGETS[notion]
        for model in models:
            for penalty in penalties:
                est = FairClassifier(penalty, notion=notion, model=model, epochs=5)
                search = FairnessCV(est, strengths=[0.0, 0.1], max_violation=1.0, cv=2)
                with contextlib.suppress(ValueError), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    search.set_params(metric=metric).fit(X, y, sensitive_features=s)


def run_fairness_cv(
    base: dict, notion: str, model: str, penalty: str, cv: int, train: tuple, test: tuple
) -> dict:
    """One FairnessCV row: its choice, its test measures, its CPU (CV and refit)."""
    from otfair.estimators import FairClassifier, FairnessCV

    metric, budget, _ = BUDGETS[notion]
    X, y, s = train
    est = FairClassifier(penalty, notion=notion, model=model, random_state=0)
    search = FairnessCV(est, max_violation=budget, metric=metric, cv=cv, refit=False)
    row = {**base, "method": "fairnesscv", "model": model, "penalty": penalty, "cv": cv}
    row["margin"] = search.margin
    start = time.process_time()
    try:
        search.fit(X, y, sensitive_features=s)
    except ValueError as exc:  # no strength within the budget (or above the constant)
        row.update(error=str(exc).split(". ")[0], cpu_s=time.process_time() - start)
        return row
    cv_cpu = time.process_time() - start
    res = search.cv_results_
    done, refit_cpu = cpu(lambda: checked(est, train, res, search.best_index_, metric, budget))
    k, refit = done.index, done.estimator
    row.update(
        cv_strength=search.strength_,
        strength=float(res["strength"][k]),
        refit_train_violation=done.history[-1]["train_violation"],
        n_strengths=int((~res["reference"]).sum()),
        cv_score=float(res["mean_test_score"][k]),
        cv_violation=float(res["test_violation"][k]),
        cv_upper=float(res["upper_test_violation"][k]),
        constant_cv_score=float(res["mean_test_score"][res["reference"]][0]),
        cv_cpu_s=cv_cpu,
        refit_cpu_s=refit_cpu,
        cpu_s=cv_cpu + refit_cpu,
    )
    Xt = test[0]
    measure(row, metric, test, refit.predict(Xt), refit.predict_proba(Xt)[:, 1])
    for margin in MARGINS:  # the choice at other margins, from the same folds
        row.update(margin_choice(search, margin, est, train, test, metric, budget, row))
    if model == "logistic":  # where the search ascends (cheap)
        row.update(refined_choice(est, budget, metric, cv, train, test))
    return row


def checked(est: Any, train: tuple, results: dict, index: int, metric: str, budget: float) -> Any:
    """Refit as ``FairnessCV(refit=True)`` does: ``checked_refit`` from row ``index``."""
    from otfair.estimators import get_violation_metric
    from otfair.estimators._fairness_cv_refit import checked_refit

    X, y, s = train
    with warnings.catch_warnings():  # none within the budget: the row says so
        warnings.simplefilter("ignore", UserWarning)
        return checked_refit(
            est,
            X,
            y,
            s,
            results=results,
            index=index,
            param="strength",
            max_violation=budget,
            metric=get_violation_metric(metric, "classification"),
            task="classification",
        )


#: refinement rounds whose choice is recorded beside the default's (ascending searches)
REFINE = 2


def refined_choice(
    est: Any, budget: float, metric: str, cv: int, train: tuple, test: tuple
) -> dict:
    """Return what ``FairnessCV(refine=REFINE)`` chooses, refitted, and its CPU seconds.

    Measured where the search ascends (the logistic model); elsewhere a refined search
    would cost another whole Adam grid per fold.
    """
    from otfair.estimators import FairnessCV

    X, y, s = train
    search = FairnessCV(
        est, max_violation=budget, metric=metric, cv=cv, refit=False, refine=REFINE
    )
    start = time.process_time()
    try:
        search.fit(X, y, sensitive_features=s)
    except ValueError as exc:
        return {"refined_error": str(exc).split(":")[0]}
    seconds = time.process_time() - start
    done = checked(est, train, search.cv_results_, search.best_index_, metric, budget)
    model = done.estimator
    scores_t = model.predict_proba(test[0])[:, 1]
    return {
        "refined_strength": float(model.strength),
        "refined_cv_violation": float(search.cv_results_["test_violation"][done.index]),
        "refined_test_accuracy": float(np.mean(model.predict(test[0]) == test[1])),
        "refined_test_violation": violation(metric, test[1], scores_t, test[2]),
        "refined_cpu_s": seconds,
    }


def margin_choice(
    search: Any,
    margin: float,
    est: Any,
    train: tuple,
    test: tuple,
    metric: str,
    budget: float,
    kept: dict,
) -> dict:
    """Return what ``FairnessCV(margin=margin)`` chooses on the same folds, refitted.

    ``kept``: the default margin's row (its ``strength``: the refit kept); a choice whose
    checked refit keeps the same strength is marked ``same``.
    """
    from otfair.estimators._budget_rule import cv_results, select_strength

    res = search.cv_results_
    folds = search.n_splits_
    rows = ~res["reference"]
    scores = np.array([res[f"split{f}_test_score"][rows] for f in range(folds)])
    violations = np.array([res[f"split{f}_test_violation"][rows] for f in range(folds)])
    reference = {
        key: np.array([res[f"split{f}_test_{key}"][~rows][0] for f in range(folds)])
        for key in ("score", "violation")
    }
    losses = np.tile(res["mean_train_loss"][rows], (folds, 1))  # only the mean is used
    reference["loss"] = np.full(folds, res["mean_train_loss"][~rows][0])
    pooled = res.get("pooled_test_violation")
    if pooled is not None:
        reference["pooled"] = float(pooled[~rows][0])
        pooled = pooled[rows]
    table = cv_results(
        res["strength"][rows],
        scores,
        violations,
        search.strength_param_,
        budget,
        losses=losses,
        reference=reference,
        margin=margin,
        pooled=pooled,
    )
    tag = f"m{margin:g}".replace(".", "_")
    try:
        k = select_strength(table, budget)
    except ValueError as exc:
        return {f"{tag}_error": str(exc).split(":")[0]}
    if float(table["strength"][k]) == search.strength_:  # the folds' choice: same refit
        return {f"{tag}_strength": kept["strength"], f"{tag}_same": True}
    done = checked(est, train, table, k, metric, budget)
    k, model = done.index, done.estimator
    out = {f"{tag}_strength": float(table["strength"][k])}
    out[f"{tag}_cv_violation"] = float(table["test_violation"][k])
    out[f"{tag}_cv_upper"] = float(table["upper_test_violation"][k])
    if out[f"{tag}_strength"] == kept["strength"]:
        out[f"{tag}_same"] = True
        return out
    scores_t = model.predict_proba(test[0])[:, 1]
    out[f"{tag}_test_accuracy"] = float(np.mean(model.predict(test[0]) == test[1]))
    out[f"{tag}_test_violation"] = violation(metric, test[1], scores_t, test[2])
    return out


# ------------------------------------------------------------------------------ csv
def read_rows(path: Path) -> list[dict]:
    """Rows of an earlier run (numbers parsed back), or none."""
    if not path.exists():
        return []
    with path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        for key, value in list(row.items()):
            if value == "":
                del row[key]
                continue
            if value in ("True", "False"):
                row[key] = value == "True"
                continue
            with contextlib.suppress(ValueError):
                row[key] = float(value) if any(c in value for c in ".en") else int(value)
    return rows


def write_rows(path: Path, rows: list[dict]) -> None:
    """Write ``rows`` (sorted by their key) to ``path``, all columns."""
    names = list(dict.fromkeys(k for r in rows for k in r))
    rows = in_order(rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".csv.tmp")
    with tmp.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=names)
        writer.writeheader()
        writer.writerows(rows)
    tmp.replace(path)


def _key(row: dict) -> tuple:
    return tuple(str(row.get(k, "")) for k in KEY)


def in_order(rows: list[dict]) -> list[dict]:
    """Return ``rows`` by dataset (``DATASETS``' order), then by key: the CSV's order."""
    order = {name: i for i, name in enumerate(DATASETS)}
    return sorted(rows, key=lambda r: (order.get(r["dataset"], 99), *_key(r)))


# --------------------------------------------------------------------------- report
def _f(value: Any, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "-"
    if isinstance(value, str):
        return value
    return f"{value:.{digits}f}"


def _threads_text(rows: list[dict]) -> str:
    """Say which thread counts the rows were measured with (their ``threads`` column)."""
    kinds = {str(r.get("threads", "one")) for r in rows}
    if kinds == {"default"}:
        return (
            "the libraries' default thread counts (this machine's 2 cores; idle BLAS and "
            "OpenMP threads spin, and their spinning counts as CPU)"
        )
    return "one torch thread and one BLAS thread" if kinds == {"one"} else "mixed threads"


def report(rows: list[dict], csv_name: str, command: str) -> str:
    """Return the markdown report of ``rows`` (the CSV's rows, nothing else)."""
    rows = in_order(rows)  # a resumed run's new rows come last
    subset = " (quick subset)" if "quick" in csv_name else ""
    if {str(r.get("threads", "one")) for r in rows} == {"default"}:
        subset += " (the libraries' default threads)"
    lines = [
        f"# FairnessCV against fairlearn's GridSearch and ExponentiatedGradient{subset}",
        "",
        f"Generated by `benchmarks/fairness_cv_vs_fairlearn.py` from `{csv_name}` (one row "
        "per dataset, budget, method, model and penalty; the script's docstring states the "
        f"protocol). Last command: `{command}`.",
        "",
        "One fixed split per dataset (70/30, seed 0; the training rows subsampled to "
        "`--max-train-rows`, their number beside the dataset's name), standardized "
        "features, the same rows for every method. FairnessCV: "
        "`FairnessCV(FairClassifier(penalty, notion=..., model=..., random_state=0), "
        "max_violation=budget, metric=...)` with every other setting at its default. "
        "`gridsearch`: fairlearn's `GridSearch(LogisticRegression, grid_size=10)` and its "
        "own choice; `gridsearch_budget`: the most accurate of its 10 models within the "
        "budget on the training rows; `expgrad`: `ExponentiatedGradient(LogisticRegression,"
        " eps=budget)`, randomized predictions. CPU: `time.process_time` of the whole fit "
        f"(cross-validation and refit included), {_threads_text(rows)}; `CPU / GS` is "
        "FairnessCV's over GridSearch's measured in the same invocation. `strength`: the "
        "refit kept; `(folds: s)` where the folds chose `s` but its refit was over the "
        "budget on its own training rows, and `check_refit` moved to the next eligible "
        "strength.",
        "",
    ]
    header = [
        "dataset",
        "method",
        "model",
        "penalty",
        "strength",
        "test accuracy",
        "test violation (± sd)",
        "≤ budget",
        "refit's training violation",
        "CPU s",
        "CPU / GS",
    ]
    order = {m: i for i, m in enumerate(("fairnesscv", *FAIRLEARN))}
    for notion, (metric, budget, _) in BUDGETS.items():
        sel = [r for r in rows if r["notion"] == notion]
        if not sel:
            continue
        lines += ["", f"## {metric} ≤ {budget:g}", ""]
        table = []
        for dataset in [d for d in DATASETS if any(r["dataset"] == d for r in sel)]:
            part = [r for r in sel if r["dataset"] == dataset]
            part.sort(
                key=lambda r: (
                    order.get(r["method"], 9),
                    str(r["model"]),
                    str(r.get("penalty", "")),
                )
            )
            for r in part:
                label = f"{dataset} ({int(r['n_train']):,})"
                if "error" in r:
                    table.append(
                        [label, r["method"], r["model"], r.get("penalty", ""), r["error"]]
                        + [""] * (len(header) - 7)
                        + [f"{r['cpu_s']:.1f}" if "cpu_s" in r else "", ""]
                    )
                    continue
                is_cv = r["method"] == "fairnesscv"
                ratio = (
                    f"{r['cpu_s'] / r['gridsearch_cpu_s']:.2f}x"
                    if is_cv and r.get("gridsearch_cpu_s")
                    else ""
                )
                mark = (
                    "yes"
                    if r["within_budget"]
                    else ("noise" if r["within_budget_noise"] else "no")
                )
                table.append(
                    [
                        label,
                        r["method"],
                        str(r["model"]),
                        str(r.get("penalty", "")),
                        _strength_cell(r),
                        _f(r["test_accuracy"], 4),
                        f"{r['test_violation']:.4f} ± {r['test_violation_sd']:.4f}",
                        mark,
                        _f(r.get("refit_train_violation"), 4) if is_cv else "",
                        f"{r['cpu_s']:.1f}",
                        ratio,
                    ]
                )
        lines += markdown_table(header, table)
    lines += [
        "",
        "`≤ budget`: yes when the test violation is within the budget, `noise` when it is "
        "within the budget plus two bootstrap sd of the test violation, no otherwise.",
        "",
    ]
    lines += margin_table(rows)
    lines += refine_table(rows)
    lines += ["", "## FairnessCV's cost, by part", ""]
    cost = []
    for r in rows:
        if r["method"] != "fairnesscv" or "cv_cpu_s" not in r:
            continue
        folds = int(r["cv"])
        per_fold = r["cv_cpu_s"] / folds
        cost.append(
            [
                r["dataset"],
                BUDGETS[r["notion"]][0],
                str(r["model"]),
                str(r.get("penalty", "")),
                f"{folds} x {int(r['n_strengths'])}",
                f"{r['cv_cpu_s']:.1f}",
                f"{per_fold:.1f}",
                f"{r['refit_cpu_s']:.1f}",
                f"{per_fold / r['refit_cpu_s']:.1f}" if r["refit_cpu_s"] > 0 else "-",
                f"{r['gridsearch_cpu_s']:.1f}",
            ]
        )
    lines += markdown_table(
        [
            "dataset",
            "metric",
            "model",
            "penalty",
            "folds x strengths",
            "CV CPU s",
            "per fold (one path)",
            "refit CPU s (one fit)",
            "path / fit",
            "GridSearch CPU s",
        ],
        cost,
    )
    lines += [
        "",
        "`folds x strengths`: the strengths fitted on each fold. FairnessCV's default "
        "`search='auto'` fits them in increasing order, each fold's fit warm-started from "
        "its previous strength, and stops once the choice is settled (an estimator whose "
        "first fit is L-BFGS and converged: the logistic model with OTF or GapReg, two "
        "groups, DP or EO); otherwise (Adam: the MLP) each fold's path fits every strength of "
        "the grid in one stacked run (its models each stopping at their own convergence). "
        "The refit is one fit from scratch at the chosen strength on all the rows. "
        "FairnessCV's CPU is about `folds x path + refit`.",
        "",
    ]
    return "\n".join(lines)


def _strength_cell(r: dict) -> str:
    """Return the strength kept, and the folds' choice where the refit check moved it."""
    if "strength" not in r:
        return ""
    cell = _f(r["strength"], 4)
    if r.get("cv_strength") not in (None, "") and float(r["cv_strength"]) != float(r["strength"]):
        cell += f" (folds: {_f(r['cv_strength'], 4)})"
    return cell


def _margin_cell(r: dict, margin: float) -> str:
    """``strength: accuracy / violation`` of the choice at ``margin`` (or why none)."""
    if margin == r.get("margin", 0.0):
        return f"{r['strength']:.4g}: {r['test_accuracy']:.4f} / {r['test_violation']:.4f}"
    tag = f"m{margin:g}".replace(".", "_")
    if f"{tag}_error" in r:
        return str(r[f"{tag}_error"])
    if f"{tag}_strength" not in r:
        return "-"
    if r.get(f"{tag}_same"):
        return f"{r[f'{tag}_strength']:.4g}: (same)"
    return (
        f"{r[f'{tag}_strength']:.4g}: {r[f'{tag}_test_accuracy']:.4f} / "
        f"{r[f'{tag}_test_violation']:.4f}"
    )


def refine_table(rows: list[dict]) -> list[str]:
    """Lines of the table of FairnessCV's choice with ``refine=REFINE`` beside the default's."""
    sel = [
        r
        for r in rows
        if r["method"] == "fairnesscv" and ("refined_strength" in r or "refined_error" in r)
    ]
    if not sel:
        return []
    table = []
    for r in sel:
        head = [r["dataset"], BUDGETS[r["notion"]][0], str(r["model"]), str(r.get("penalty", ""))]
        default = (
            f"{r['strength']:.4g}: {r['test_accuracy']:.4f} / {r['test_violation']:.4f}"
            if "strength" in r
            else str(r.get("error", "-"))
        )
        if "refined_error" in r:
            table.append([*head, default, str(r["refined_error"]), "-"])
            continue
        refined = (
            f"{r['refined_strength']:.4g}: {r['refined_test_accuracy']:.4f} / "
            f"{r['refined_test_violation']:.4f}"
        )
        table.append([*head, default, refined, f"{r['refined_cpu_s']:.1f}"])
    return [
        f"## Refinement: FairnessCV's choice with `refine={REFINE}`",
        "",
        "Each cell: chosen strength: test accuracy / test violation, refitted on the "
        f"training rows. `refine={REFINE}` bisects, {REFINE} times, the grid step where the "
        "budget is crossed (the default, 0, keeps the grid's choice); its choice sits "
        "nearer the budget: more accurate, and its test violation over the budget about "
        "as often as not. Measured where the search ascends (the logistic model); "
        "`CPU s`: the refined search, without its refit.",
        "",
        *markdown_table(
            ["dataset", "metric", "model", "penalty", "refine 0 (default)",
             f"refine {REFINE}", "CPU s"],
            table,
        ),
        "",
    ]  # fmt: skip


def margin_table(rows: list[dict]) -> list[str]:
    """Lines of the table of FairnessCV's choice at margins 0 (its row), 0.5 and 1."""
    sel = [r for r in rows if r["method"] == "fairnesscv" and "strength" in r]
    if not sel:
        return []
    margins = (0.0, *MARGINS)
    table = [
        [r["dataset"], BUDGETS[r["notion"]][0], str(r["model"]), str(r.get("penalty", ""))]
        + [_margin_cell(r, m) for m in margins]
        for r in sel
    ]
    return [
        "## The margin: FairnessCV's choice at other margins",
        "",
        "Each cell: chosen strength: test accuracy / test violation, refitted on the "
        "training rows; the same folds as the row above (margin "
        f"{sel[0].get('margin', 0.0):g}, the default) and the same table.",
        "",
        *markdown_table(
            ["dataset", "metric", "model", "penalty"] + [f"margin {m:g}" for m in margins],
            table,
        ),
    ]


# ----------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> None:
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", choices=DATASETS, default=None)
    parser.add_argument("--models", nargs="+", choices=MODELS, default=None)
    parser.add_argument("--penalties", nargs="+", default=["otf"])
    parser.add_argument("--notions", nargs="+", choices=tuple(BUDGETS), default=None)
    parser.add_argument("--cv", type=int, default=5, help="FairnessCV's folds (default 5)")
    parser.add_argument("--max-train-rows", type=int, default=20000)
    parser.add_argument("--quick", action="store_true", help="Adult 5,000 rows + COMPAS, DP")
    parser.add_argument("--out", type=Path, default=None, help="PREFIX of .csv and .md")
    parser.add_argument(
        "--fresh", action="store_true", help="measure the selected rows again (others stay)"
    )
    parser.add_argument(
        "--threads",
        choices=("one", "default"),
        default="one",
        help="one torch and one BLAS thread (default), or the libraries' defaults",
    )
    parser.add_argument("--report-only", action="store_true", help="regenerate the .md")
    args = parser.parse_args(argv)
    if args.cv < 2 or args.max_train_rows < 100:
        parser.error("--cv must be >= 2 and --max-train-rows >= 100")
    quick = args.quick
    datasets = args.datasets or (("adult", "compas") if quick else DATASETS)
    models = args.models or (("logistic",) if quick else MODELS)
    notions = args.notions or (("dp",) if quick else tuple(BUDGETS))
    max_rows = min(args.max_train_rows, 5000) if quick else args.max_train_rows
    suffix = ("_quick" if quick else "") + (
        "_default_threads" if args.threads == "default" else ""
    )
    out = args.out or DEFAULT_OUT.with_name(DEFAULT_OUT.name + suffix)
    csv_path, md_path = out.with_suffix(".csv"), out.with_suffix(".md")
    command = "python benchmarks/fairness_cv_vs_fairlearn.py " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    rows = read_rows(csv_path)  # --fresh measures the selected rows again; others stay

    def save(final: bool = False) -> None:
        write_rows(csv_path, rows)
        if final or rows:
            md_path.write_text(report(rows, csv_path.name, command.strip()) + "\n")

    if args.report_only:
        md_path.write_text(report(rows, csv_path.name, command.strip()) + "\n")
        print(md_path.read_text())
        return

    import scipy.optimize
    import sklearn.linear_model  # noqa: F401 (its BLAS loaded before the limit below)
    import torch
    from threadpoolctl import threadpool_limits

    # threadpoolctl limits the BLAS libraries loaded when the limit is set: load SciPy's
    # (L-BFGS-B, LogisticRegression) first, else its solves run multithreaded
    scipy.optimize.minimize(lambda w: (float(w @ w), 2 * w), np.ones(2), jac=True)
    one = args.threads == "one"
    if one:
        torch.set_num_threads(1)
    done = set() if args.fresh else {_key(r) for r in rows}
    with threadpool_limits(limits=1) if one else contextlib.nullcontext():
        warm_up(args.penalties, models, notions)
        for dataset in datasets:
            train, test = load(dataset, max_rows)
            n_train, n_test = len(train[1]), len(test[1])
            for notion in notions:
                metric, budget, _ = BUDGETS[notion]
                base = {
                    "threads": args.threads,
                    "dataset": dataset,
                    "notion": notion,
                    "metric": metric,
                    "budget": budget,
                    "n_train": n_train,
                    "n_test": n_test,
                }
                todo = [
                    (model, penalty)
                    for model in models
                    for penalty in args.penalties
                    if _key({**base, "method": "fairnesscv", "model": model, "penalty": penalty})
                    not in done
                ]
                fl_keys = {
                    _key({**base, "method": m, "model": "logistic (sklearn)", "penalty": ""})
                    for m in FAIRLEARN
                }
                if not todo and fl_keys <= done:
                    print(f"{dataset} {metric}: already measured", file=sys.stderr)
                    continue
                print(f"{dataset} {metric}: fairlearn ...", file=sys.stderr, flush=True)
                fl_rows = run_fairlearn(base, notion, train, test)
                rows = [r for r in rows if _key(r) not in fl_keys] + fl_rows
                done |= fl_keys
                grid_cpu = fl_rows[0]["cpu_s"]
                print(
                    f"  gridsearch acc {fl_rows[0]['test_accuracy']:.4f} viol "
                    f"{fl_rows[0]['test_violation']:.4f} cpu {grid_cpu:.1f}s",
                    file=sys.stderr,
                    flush=True,
                )
                save()
                for model, penalty in todo:
                    print(
                        f"{dataset} {metric}: FairnessCV {penalty} {model} ...",
                        file=sys.stderr,
                        flush=True,
                    )
                    row = run_fairness_cv(
                        {**base, "gridsearch_cpu_s": grid_cpu},
                        notion,
                        model,
                        penalty,
                        args.cv,
                        train,
                        test,
                    )
                    row["cpu_ratio"] = row["cpu_s"] / grid_cpu
                    if "error" not in row:
                        print(
                            f"  strength {row['strength']:g} acc {row['test_accuracy']:.4f} "
                            f"viol {row['test_violation']:.4f} cpu {row['cpu_s']:.1f}s "
                            f"({row['cpu_ratio']:.2f}x GridSearch)",
                            file=sys.stderr,
                            flush=True,
                        )
                    else:
                        print(f"  {row['error']}", file=sys.stderr, flush=True)
                    rows = [r for r in rows if _key(r) != _key(row)] + [row]
                    done.add(_key(row))
                    save()
    save(final=True)
    print(md_path.read_text())


if __name__ == "__main__":
    main()
