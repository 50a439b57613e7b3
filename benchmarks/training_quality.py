"""Default fits against a converged reference and the best constant, on every dataset.

For each shipped classification dataset (its default variant, one stratified 80/20 split,
``random_state=0``):

* scikit-learn's ``LogisticRegression()`` (lbfgs, ``C=1``, ``max_iter=1000``): the
  converged reference;
* ``FairClassifier()`` with default settings (logistic model: L-BFGS, ``l2=1``, i.e.
  ``C=1``) and ``FairClassifier(model="mlp")`` (one layer of 100, Adam, early stopping on
  10% held-out rows);
* the best constant predictor (the training base rate), which is perfectly fair;
* penalized default fits (``--penalized``): OTF at alpha 0.01 / 0.1 / 0.9, Norm at 0.9
  and GapReg at lambda 1e6, each held against the constant's *training* accuracy and
  cross-entropy (a fit below it warns, :class:`otfair.estimators.FitQualityWarning`).

It writes ``docs/measurements/training_quality.csv`` and ``.md``: test AUC and accuracy,
the gaps to ``LogisticRegression`` (the acceptance bands: AUC within 0.01, accuracy
within 0.005 for the logistic default), ``n_iter_``, CPU seconds (``time.process_time``,
the whole fit, on one torch thread and one BLAS thread) and the warnings each
fit raised. Run ``python benchmarks/training_quality.py`` (about 10 minutes on 2 cores);
``--datasets german,compas --no-mlp`` runs a subset.
"""

from __future__ import annotations

import math
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from _common import ArgumentParser
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, log_loss, roc_auc_score

from otfair.datasets import load_dataset
from otfair.estimators import FairClassifier

DATASETS = ("adult", "bank", "compas", "diabetes", "dutch", "german")
OUT = Path(__file__).resolve().parents[1] / "docs" / "measurements"
PENALIZED: tuple[tuple[str, float], ...] = (
    ("otf", 0.01),
    ("otf", 0.1),
    ("otf", 0.9),
    ("norm", 0.9),
    ("gapreg", 1e6),
)


def _fit(make: Any, X: np.ndarray, y: np.ndarray, s: Any) -> tuple[Any, float, list[str]]:
    """Fit ``make()``; return the model, its CPU seconds and its warnings' first words."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.process_time()
        model = make()
        if isinstance(model, FairClassifier):
            model.fit(X, y, sensitive_features=s)
        else:
            model.fit(X, y)
        cpu = time.process_time() - start
    words = sorted({f"{w.category.__name__}: {str(w.message)[:60]}" for w in caught})
    return model, cpu, words


def _row(name: str, label: str, model: Any, cpu: float, words: list[str], split: Any) -> dict:
    p_test = model.predict_proba(split.X_test)[:, 1]
    p_train = model.predict_proba(split.X_train)[:, 1]
    y_train = np.asarray(split.y_train)
    return {
        "dataset": name,
        "model": label,
        "test_auc": roc_auc_score(split.y_test, p_test),
        "test_accuracy": accuracy_score(split.y_test, (p_test >= 0.5).astype(int)),
        "train_accuracy": accuracy_score(y_train, (p_train >= 0.5).astype(int)),
        "train_log_loss": log_loss(y_train, np.clip(p_train, 1e-12, 1 - 1e-12)),
        "n_iter": int(np.max(getattr(model, "n_iter_", [0]))),
        "cpu_s": cpu,
        "warnings": "; ".join(words),
    }


def _constant_row(name: str, split: Any) -> dict:
    y_train = np.asarray(split.y_train)
    rate = float(np.mean(y_train))
    label = int(rate >= 0.5)
    return {
        "dataset": name,
        "model": "best constant",
        "test_auc": 0.5,
        "test_accuracy": float(np.mean(np.asarray(split.y_test) == label)),
        "train_accuracy": max(rate, 1 - rate),
        "train_log_loss": -sum(q * math.log(q) for q in (rate, 1 - rate) if q > 0),
        "n_iter": 0,
        "cpu_s": 0.0,
        "warnings": "",
    }


def run(datasets: list[str], mlp: bool, penalized: bool) -> list[dict]:
    """Measure every dataset; print each row as it is measured."""
    rows: list[dict] = []
    for name in datasets:
        split = load_dataset(name).split(random_state=0)
        s = split.s_train
        makers: list[tuple[str, Any]] = [
            ("LogisticRegression", lambda: LogisticRegression(max_iter=1000)),
            ("FairClassifier()", lambda: FairClassifier(random_state=0)),
        ]
        if mlp:
            makers.append(
                (
                    "FairClassifier(model='mlp')",
                    lambda: FairClassifier(model="mlp", random_state=0),
                )
            )
        if penalized:
            for penalty, strength in PENALIZED:
                makers.append(
                    (
                        f"FairClassifier('{penalty}', {strength:g})",
                        lambda p=penalty, a=strength: FairClassifier(p, a, random_state=0),
                    )
                )
        rows.append(_constant_row(name, split))
        for label, make in makers:
            model, cpu, words = _fit(make, split.X_train, split.y_train, s)
            rows.append(_row(name, label, model, cpu, words, split))
            r = rows[-1]
            print(
                f"{name:10s} {label:34s} AUC {r['test_auc']:.4f} acc {r['test_accuracy']:.4f} "
                f"train acc {r['train_accuracy']:.4f} n_iter {r['n_iter']:4d} "
                f"cpu {cpu:6.2f}s {r['warnings'][:70]}",
                flush=True,
            )
    return rows


def write(rows: list[dict]) -> None:
    """Write the CSV and the Markdown table with the gaps to LogisticRegression."""
    import pandas as pd

    table = pd.DataFrame(rows)
    ref = table[table["model"] == "LogisticRegression"].set_index("dataset")
    table["auc_minus_lr"] = table["test_auc"] - table["dataset"].map(ref["test_auc"])
    table["accuracy_minus_lr"] = table["test_accuracy"] - table["dataset"].map(
        ref["test_accuracy"]
    )
    const = table[table["model"] == "best constant"].set_index("dataset")
    table["train_accuracy_minus_constant"] = table["train_accuracy"] - table["dataset"].map(
        const["train_accuracy"]
    )
    OUT.mkdir(parents=True, exist_ok=True)
    table.to_csv(OUT / "training_quality.csv", index=False, float_format="%.4f")
    lines = [
        "# Default fits against LogisticRegression and the best constant",
        "",
        "Generated by `python benchmarks/training_quality.py` (do not edit; the numbers are",
        "those of [training_quality.csv](training_quality.csv)). One stratified 80/20 split",
        "per dataset (`random_state=0`), each dataset's default variant. `auc - LR` and",
        "`acc - LR` are the test gaps to scikit-learn's `LogisticRegression()`; `train acc -",
        "const` is the training accuracy minus the best constant predictor's (a fit below",
        "it warns). CPU is `time.process_time()` of the whole fit on the machine it ran on.",
        "",
        "| dataset | model | test AUC | test acc | auc - LR | acc - LR | train acc - const "
        "| n_iter | CPU s | warnings |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in table.to_dict("records"):
        lines.append(
            f"| {r['dataset']} | {r['model']} | {r['test_auc']:.4f} | {r['test_accuracy']:.4f} "
            f"| {r['auc_minus_lr']:+.4f} | {r['accuracy_minus_lr']:+.4f} "
            f"| {r['train_accuracy_minus_constant']:+.4f} | {r['n_iter']} | {r['cpu_s']:.2f} "
            f"| {r['warnings'] or ''} |"
        )
    (OUT / "training_quality.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {OUT / 'training_quality.md'}")


def main() -> None:
    """Parse the command line, measure, write."""
    parser = ArgumentParser(prog="benchmarks/training_quality.py", description=__doc__)
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--no-mlp", action="store_true", help="skip the default MLP")
    parser.add_argument("--no-penalized", action="store_true", help="skip the penalized fits")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    import scipy.optimize
    import torch
    from threadpoolctl import threadpool_limits

    import otfair.estimators  # noqa: F401 (and the libraries it loads)

    # threadpoolctl limits the BLAS libraries loaded when the limit is set: load SciPy's
    # (L-BFGS-B, LogisticRegression) first, as benchmarks/fairness_cv_vs_fairlearn.py
    scipy.optimize.minimize(lambda w: (float(w @ w), 2 * w), np.ones(2), jac=True)
    torch.set_num_threads(1)  # the CPU column: one thread, as every benchmark here
    names = [n for n in args.datasets.split(",") if n]
    # one BLAS thread too: the CPU column is one core's, and a multi-threaded BLAS sums in
    # an order that depends on the threads (LogisticRegression's n_iter_ moved with it)
    with threadpool_limits(limits=1):
        rows = run(names, mlp=not args.no_mlp, penalized=not args.no_penalized)
    if not args.no_write:
        write(rows)


if __name__ == "__main__":
    main()
