"""Every classifier at its library defaults against the best constant and LogisticRegression.

``benchmarks/training_quality.py`` holds ``FairClassifier``'s logistic and MLP defaults
(and a few penalized strengths) to ``LogisticRegression``; this script does the same for
every other classifier otfair ships, each constructed with its defaults and
``random_state=0`` only, as a practitioner's first fit would be:

* ``FairClassifier(<penalty>)`` for the penalties that ``benchmarks/training_quality.py``
  leaves out (FTM, the adversary, the barycenter, FairTorch's DP, the group-Wasserstein
  loss) and OTF at its default strength;
* the representation learners (``LAFTRClassifier``, ``CFairClassifier``,
  ``SIPMClassifier``, ``FairNormalizingFlowClassifier``, ``DiscreteFairNFClassifier``);
* fairlearn-style ``ReductionClassifier``;
* the pre- and post-processors in front of / around ``LogisticRegression()``:
  ``OTRepair``, ``FairPCA`` (in a ``Pipeline``), ``WassersteinBarycenterClassifier``;
* ``AdapFairClassifier()`` (its default base classifier trained first, then frozen; its
  flows stop early on held-out rows) and ``AdapFairClassifier(early_stopping=False)``
  (the paper's protocol: every epoch on every row).

Protocol: each shipped classification dataset's default variant, one stratified 80/20
split (``random_state=0``); the training rows subsampled to ``--max-train-rows``
(default 10,000, seed 0: Adult, Bank, Dutch and Diabetes; the test rows are all kept).
Per fit: test AUC and accuracy and their gaps to ``LogisticRegression()`` on the same
rows; the training accuracy and log-loss minus the best constant's (the training base
rate, itself perfectly fair; ``below const`` marks a fit whose training accuracy is
below it or whose log-loss is above it); the test demographic-parity gap; ``n_iter_``;
CPU seconds (``time.process_time`` of the whole fit, one torch and one BLAS thread);
and the warnings the fit raised (first words). A fit that raises is a row with its
error.

Outputs ``docs/measurements/training_quality_methods.csv`` and ``.md`` (the report is
generated from the CSV alone: ``--report-only``). Resumable: a (dataset, model) row
already in the CSV is not measured again unless ``--fresh``; the CSV is rewritten after
every row. Run ``python benchmarks/training_quality_methods.py`` (about 15 minutes on 2
cores); ``--datasets german,compas`` runs a subset, ``--models Reduction --fresh``
measures the rows whose label contains ``Reduction`` again.
"""

from __future__ import annotations

import csv
import inspect
import math
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _common import ArgumentParser, markdown_table

#: models whose ``predict_proba`` mixes hard decisions (a randomized classifier, the
#: repaired acceptance): held to the constant on their own predictions' accuracy only
HARD_DECISION_MIXTURES = ("ReductionClassifier()", "WassersteinBarycenterClassifier(LR)")
#: ``check_against_constant``'s tolerance on the log-loss (relative)
CONSTANT_LOSS_RTOL = 1e-6
DATASETS = ("adult", "bank", "compas", "diabetes", "dutch", "german")
OUT = Path(__file__).resolve().parents[1] / "docs" / "measurements"
PREFIX = OUT / "training_quality_methods"
#: FairClassifier's penalties, each at the middle and the end of its default strength grid
PENALTIES = ("otf", "norm", "gapreg", "ftm", "adv", "barycenter", "fairtorch-dp", "group-w2")
COLUMNS = [
    "dataset",
    "model",
    "n_train",
    "test_auc",
    "test_accuracy",
    "auc_minus_lr",
    "accuracy_minus_lr",
    "train_accuracy_minus_constant",
    "train_log_loss_minus_constant",
    "below_constant",
    "test_dp_gap",
    "n_iter",
    "cpu_s",
    "warnings",
    "error",
]


def makers() -> list[tuple[str, Callable[[], Any], bool]]:
    """Return ``(label, make, takes_sensitive_features)`` for every model measured."""
    from sklearn.linear_model import LogisticRegression

    from otfair.estimators import (
        AdapFairClassifier,
        CFairClassifier,
        DiscreteFairNFClassifier,
        FairClassifier,
        FairNormalizingFlowClassifier,
        FairPCA,
        LAFTRClassifier,
        OTRepair,
        ReductionClassifier,
        SIPMClassifier,
        WassersteinBarycenterClassifier,
        default_strengths,
    )
    from otfair.estimators.preprocessing import RepairedClassifier, SensitiveColumnEstimator

    def lr() -> Any:
        return LogisticRegression(max_iter=1000)

    out: list[tuple[str, Callable[[], Any], bool]] = [("LogisticRegression", lr, False)]
    for penalty in PENALTIES:
        grid = default_strengths(FairClassifier(penalty))
        for strength in (float(grid[len(grid) // 2]), float(grid[-1])):
            out.append(
                (
                    f"FairClassifier('{penalty}', {strength:g})",
                    lambda p=penalty, a=strength: FairClassifier(p, a, random_state=0),
                    True,
                )
            )
    for cls in (
        LAFTRClassifier,
        CFairClassifier,
        SIPMClassifier,
        FairNormalizingFlowClassifier,
        DiscreteFairNFClassifier,
    ):
        out.append((f"{cls.__name__}()", lambda c=cls: c(random_state=0), True))
    out += [
        ("ReductionClassifier()", lambda: ReductionClassifier(random_state=0), True),
        (
            "OTRepair() + LR",
            lambda: RepairedClassifier(OTRepair(random_state=0), lr(), sensitive_column=None),
            True,
        ),
        (
            "FairPCA() + LR",
            lambda: RepairedClassifier(FairPCA(), lr(), sensitive_column=None),
            True,
        ),
        (
            "WassersteinBarycenterClassifier(LR)",
            lambda: SensitiveColumnEstimator(
                WassersteinBarycenterClassifier(lr(), random_state=0), sensitive_column=None
            ),
            True,
        ),
        ("AdapFairClassifier()", lambda: AdapFairClassifier(random_state=0), True),
        (  # the paper's protocol (the lab's): every epoch on every row, no held-out rows
            "AdapFairClassifier(early_stopping=False)",
            lambda: AdapFairClassifier(early_stopping=False, random_state=0),
            True,
        ),
    ]
    return out


def _fit(
    make: Callable[[], Any], sensitive: bool, X: Any, y: Any, s: Any
) -> tuple[Any, float, str]:
    """Fit ``make()``; return the model, its CPU seconds and its warnings' first words."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.process_time()
        model = make()
        if sensitive:
            model.fit(X, y, sensitive_features=s)
        else:
            model.fit(X, y)
        cpu = time.process_time() - start
    words = sorted({f"{w.category.__name__}: {str(w.message)[:70]}" for w in caught})
    return model, cpu, "; ".join(words)


def _scores(model: Any, X: Any, s: Any) -> np.ndarray:
    """``P(Y = 1 | x)`` of ``model`` (with the sensitive features where it takes them)."""
    takes = "sensitive_features" in inspect.signature(model.predict_proba).parameters
    proba = model.predict_proba(X, sensitive_features=s) if takes else model.predict_proba(X)
    return np.asarray(proba, dtype=np.float64)[:, 1]


def _predict(model: Any, X: Any, s: Any) -> np.ndarray:
    """Return the model's own 0/1 decisions (randomized for ``ReductionClassifier``'s default)."""
    takes = "sensitive_features" in inspect.signature(model.predict).parameters
    decisions = model.predict(X, sensitive_features=s) if takes else model.predict(X)
    return np.asarray(decisions).astype(np.int64)


def _constant(y_train: np.ndarray, y_test: np.ndarray) -> dict[str, float]:
    """Return the best constant's training accuracy and log-loss and its test accuracy."""
    rate = float(np.mean(y_train))
    label = int(rate >= 0.5)
    return {
        "train_accuracy": max(rate, 1.0 - rate),
        "train_log_loss": -sum(q * math.log(q) for q in (rate, 1.0 - rate) if q > 0),
        "test_accuracy": float(np.mean(y_test == label)),
    }


def measure(
    name: str, label: str, make: Callable[[], Any], sensitive: bool, max_rows: int
) -> dict:
    """Fit one model on dataset ``name``'s training rows; return its CSV row."""
    from sklearn.metrics import log_loss, roc_auc_score

    from otfair.datasets import load_dataset
    from otfair.metrics import demographic_parity_gap

    split = load_dataset(name).split(random_state=0)
    X, y, s = split.X_train, np.asarray(split.y_train), np.asarray(split.s_train)
    if len(y) > max_rows:
        keep = np.sort(np.random.default_rng(0).choice(len(y), max_rows, replace=False))
        X, y, s = X[keep], y[keep], s[keep]
    y_test = np.asarray(split.y_test)
    row: dict[str, Any] = {"dataset": name, "model": label, "n_train": len(y)}
    try:
        model, cpu, words = _fit(make, sensitive, X, y, s)
        p_train, p_test = _scores(model, X, s), _scores(model, split.X_test, split.s_test)
        d_train, d_test = _predict(model, X, s), _predict(model, split.X_test, split.s_test)
    except Exception as exc:  # a row that says what failed: the table keeps going
        return {**row, "error": f"{type(exc).__name__}: {str(exc)[:400]}"}
    constant = _constant(y, y_test)
    train_accuracy = float(np.mean(d_train == y))
    train_log_loss = float(log_loss(y, np.clip(p_train, 1e-15, 1 - 1e-15), labels=[0, 1]))
    acc_gap = train_accuracy - constant["train_accuracy"]
    loss_gap = train_log_loss - constant["train_log_loss"]
    # otfair's rule (``otfair.estimators._torch_base.check_against_constant``); a model
    # trained on the class-balanced error (CFair) on the balanced measures
    floor_acc, floor_loss, fit_acc, fit_loss = (
        constant["train_accuracy"],
        constant["train_log_loss"],
        train_accuracy,
        train_log_loss,
    )
    balanced = bool(getattr(model, "_balanced_objective", False))
    if balanced:
        weights = np.where(y == 1, 0.5 / np.mean(y == 1), 0.5 / np.mean(y == 0)) / len(y)
        fit_acc = float(np.sum(weights * (d_train == y)))
        fit_loss = float(
            log_loss(y, np.clip(p_train, 1e-15, 1 - 1e-15), labels=[0, 1], sample_weight=weights)
        )
        floor_acc, floor_loss = 0.5, math.log(2.0)
    below = [
        what
        for what, bad in (
            ("accuracy", fit_acc < floor_acc - 1e-12),
            ("log-loss", fit_loss > floor_loss * (1 + CONSTANT_LOSS_RTOL)),
        )
        if bad
    ]
    mixture = label in HARD_DECISION_MIXTURES  # its log-loss is not what it optimizes
    if mixture:
        below = [what for what in below if what == "accuracy"]
    verdict = " and ".join(below) or "no"
    if balanced:
        verdict += " (balanced)"
    if mixture:
        verdict += " (accuracy only)"
    n_iter = getattr(model, "n_iter_", None)
    if n_iter is None:
        inner = getattr(model, "estimator_", None)
        n_iter = getattr(inner, "n_iter_", 0)
    return {
        **row,
        "test_auc": float(roc_auc_score(y_test, p_test)),
        "test_accuracy": float(np.mean(d_test == y_test)),
        "train_accuracy_minus_constant": acc_gap,
        "train_log_loss_minus_constant": loss_gap,
        "below_constant": verdict,
        "test_dp_gap": float(
            demographic_parity_gap(y_test, d_test, sensitive_features=split.s_test)
        ),
        "n_iter": int(np.max(np.atleast_1d(n_iter))),
        "cpu_s": cpu,
        "warnings": words,
    }


def with_gaps(rows: list[dict]) -> list[dict]:
    """Fill each row's gaps to the ``LogisticRegression`` row of its dataset."""
    reference = {r["dataset"]: r for r in rows if r["model"] == "LogisticRegression"}
    for r in rows:
        lr = reference.get(r["dataset"])
        for col, key in (("auc_minus_lr", "test_auc"), ("accuracy_minus_lr", "test_accuracy")):
            ok = lr is not None and _number(r.get(key)) and _number(lr.get(key))
            # from the values as the CSV rounds them: the same gap from a fresh
            # measurement and from a row read back
            gap = round(float(r[key]), 4) - round(float(lr[key]), 4) if ok else None  # type: ignore[index]
            r[col] = "" if gap is None else round(gap, 4)
    return rows


def _number(value: Any) -> bool:
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def read_rows(path: Path) -> list[dict]:
    """Return the CSV's rows (an empty list when it does not exist)."""
    if not path.exists():
        return []
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def write_rows(path: Path, rows: list[dict]) -> None:
    """Write ``rows`` to the CSV (floats to 4 decimals, CPU to 2)."""

    def cell(key: str, value: Any) -> Any:
        if isinstance(value, float):
            return f"{value:.2f}" if key == "cpu_s" else f"{value:.4f}"
        return "" if value is None else value

    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        writer.writeheader()
        for r in rows:
            writer.writerow({k: cell(k, r.get(k, "")) for k in COLUMNS})


def _signed(value: Any) -> str:
    return f"{float(value):+.4f}" if _number(value) else ""


def _plain(value: Any, digits: int = 4) -> str:
    return f"{float(value):.{digits}f}" if _number(value) else ""


def report(rows: list[dict], command: str) -> str:
    """Return the Markdown report of ``rows`` (the CSV's, as strings or numbers)."""
    lines = [
        "# Every classifier at its defaults against LogisticRegression and the best constant",
        "",
        "Generated by `benchmarks/training_quality_methods.py` from "
        "[training_quality_methods.csv](training_quality_methods.csv) (do not edit; the "
        "script's docstring states the protocol). Last command: "
        f"`{command}`.",
        "",
        "One stratified 80/20 split per dataset (`random_state=0`; training rows "
        "subsampled to the number beside the dataset), each model built with its defaults "
        "and `random_state=0`. `AUC - LR`, `acc - LR`: test gaps to scikit-learn's "
        "`LogisticRegression()` on the same rows. `train acc - const` and `train loss - "
        "const`: the training accuracy and log-loss minus the best constant predictor's "
        "(the training base rate); `below const` is yes when the accuracy is below it or "
        "the log-loss above it (otfair's rule, `FitQualityWarning`; `(balanced)`: CFair, "
        "trained on the class-balanced error, is held to the balanced constant, balanced "
        "accuracy 0.5 and balanced log-loss log 2). Accuracy and `test "
        "DP` (the demographic-parity gap) are of each model's own `predict`: randomized "
        "for `ReductionClassifier` (seeded), the repaired acceptance for the barycenter "
        "post-processor; their `predict_proba` mixes hard decisions, so its log-loss is "
        "not what they optimize and they are held to the constant on accuracy only "
        "(`(accuracy only)`). CPU: `time.process_time` of the fit, one torch and one BLAS "
        "thread, on the machine it ran on.",
        "",
    ]
    below = [r for r in rows if not (r.get("below_constant") or "no").startswith("no")]
    silent = [
        r
        for r in below
        if "FitQualityWarning" not in (r.get("warnings") or "")
        and "LogisticRegression" not in r["model"]
        and "+ LR" not in r["model"]
        and "(LR)" not in r["model"]
    ]
    errors = [r for r in rows if r.get("error")]
    lines += [
        f"Fits measured: {len(rows)}; below the constant on their training rows: "
        f"{len(below)}; of those, otfair fits without a `FitQualityWarning`: {len(silent)}; "
        f"fits that raised: {len(errors)}.",
        "",
    ]
    header = [
        "model",
        "test AUC",
        "test acc",
        "AUC - LR",
        "acc - LR",
        "train acc - const",
        "train loss - const",
        "below const",
        "test DP",
        "n_iter",
        "CPU s",
        "warnings",
    ]
    for name in dict.fromkeys(r["dataset"] for r in rows):
        part = [r for r in rows if r["dataset"] == name]
        lines += [f"## {name} ({int(float(part[0]['n_train'])):,} training rows)", ""]
        body = []
        for r in part:
            if r.get("error"):
                body.append([r["model"], r["error"].replace("|", "/")] + [""] * 10)
                continue
            body.append(
                [
                    r["model"],
                    _plain(r["test_auc"]),
                    _plain(r["test_accuracy"]),
                    _signed(r["auc_minus_lr"]),
                    _signed(r["accuracy_minus_lr"]),
                    _signed(r["train_accuracy_minus_constant"]),
                    _signed(r["train_log_loss_minus_constant"]),
                    r["below_constant"],
                    _plain(r["test_dp_gap"]),
                    str(int(float(r["n_iter"]))) if _number(r["n_iter"]) else "",
                    _plain(r["cpu_s"], 2),
                    (r.get("warnings") or "").replace("|", "/"),
                ]
            )
        lines += markdown_table(header, body) + [""]
    return "\n".join(lines)


def main() -> None:
    """Parse the command line, measure the missing rows, write the CSV and the report."""
    import sys

    parser = ArgumentParser(prog="benchmarks/training_quality_methods.py", description=__doc__)
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--max-train-rows", type=int, default=10_000)
    parser.add_argument(
        "--models", default="", help="comma-separated parts of model labels to measure (all)"
    )
    parser.add_argument("--fresh", action="store_true", help="measure the selected rows again")
    parser.add_argument("--report-only", action="store_true", help="only rewrite the report")
    parser.add_argument("--out", default=str(PREFIX), help="PREFIX of PREFIX.csv and PREFIX.md")
    args = parser.parse_args()
    names = [n for n in args.datasets.split(",") if n]
    unknown = sorted(set(names) - set(DATASETS))
    if unknown:
        parser.error(
            f"unknown dataset(s) {', '.join(unknown)}; choose among {', '.join(DATASETS)}"
        )
    if args.max_train_rows < 100:
        parser.error("--max-train-rows must be at least 100")
    csv_path, md_path = Path(args.out + ".csv"), Path(args.out + ".md")
    rows = read_rows(csv_path)
    command = "python benchmarks/training_quality_methods.py " + " ".join(sys.argv[1:])
    if args.report_only and md_path.exists():  # the command that measured the rows
        page = md_path.read_text(encoding="utf-8")
        if "Last command: `" in page:
            command = page.split("Last command: `", 1)[1].split("`", 1)[0]
    if not args.report_only:
        import scipy.optimize
        import torch
        from threadpoolctl import threadpool_limits

        import otfair.estimators  # noqa: F401 (and the libraries it loads)

        # load SciPy's BLAS before the limit (as benchmarks/training_quality.py)
        scipy.optimize.minimize(lambda w: (float(w @ w), 2 * w), np.ones(2), jac=True)
        torch.set_num_threads(1)
        parts = [m for m in args.models.split(",") if m]
        every = makers()
        selected = [m for m in every if not parts or any(p in m[0] for p in parts)]
        current = {m[0] for m in every}  # a row of a model no longer measured (a grid
        rows = [r for r in rows if r["model"] in current]  # moved) leaves the table
        with threadpool_limits(limits=1):
            for name in names:
                for label, make, sensitive in selected:
                    key = (name, label)
                    done = [r for r in rows if (r["dataset"], r["model"]) == key]
                    if done and not args.fresh:
                        continue
                    row = measure(name, label, make, sensitive, args.max_train_rows)
                    rows = [r for r in rows if (r["dataset"], r["model"]) != key] + [row]
                    order = {d: i for i, d in enumerate(DATASETS)}
                    labels = {m[0]: i for i, m in enumerate(every)}
                    rows.sort(
                        key=lambda r: (order.get(r["dataset"], 99), labels.get(r["model"], 99))
                    )
                    write_rows(csv_path, with_gaps(rows))
                    print(
                        f"{name:9s} {label:38s} "
                        + (
                            row["error"]
                            if row.get("error")
                            else f"AUC {row['test_auc']:.4f} acc {row['test_accuracy']:.4f} "
                            f"below {row['below_constant']:3s} cpu {row['cpu_s']:6.2f}s "
                            f"{row['warnings'][:60]}"
                        ),
                        flush=True,
                    )
            rows = read_rows(csv_path)
    rows = with_gaps(rows)
    write_rows(csv_path, rows)  # the gaps as the report shows them
    md_path.write_text(report(rows, command) + "\n", encoding="utf-8")
    print(f"wrote {md_path}")


if __name__ == "__main__":
    main()
