"""Default regression fits against a converged reference and the best constant.

The regression half of ``benchmarks/training_quality.py``. For each shipped regression
dataset (Law School, Communities and Crime; the default variant, one 80/20 split,
``random_state=0``):

* scikit-learn's ``LinearRegression()`` (least squares, solved exactly): the converged
  reference;
* the best constant predictor (the training mean, :math:`R^2 = 0` on the training rows),
  which is perfectly fair;
* ``UnfairRegressor()``, ``CENet()`` and ``WassersteinNet()`` with default settings (the
  sigmoid regression net of the accuracy-disparity paper, 50 Adadelta epochs; strength 1
  for the two adversarial nets) and the two adversarial nets at strength 50 (the paper's
  Fig. 4), each held against the constant's *training* mean squared error (a fit whose
  training :math:`R^2` is below 0 warns, :class:`otfair.estimators.FitQualityWarning`).

It writes ``docs/measurements/training_quality_regression.csv`` and ``.md``: test
:math:`R^2` and its gap to ``LinearRegression``, the training :math:`R^2` (the margin
over the constant), the test error gap between the groups
(:func:`otfair.metrics.error_gap`, what accuracy parity equalizes), ``n_iter_``, CPU
seconds (``time.process_time``, one torch thread and one BLAS thread) and the warnings
each fit raised. Run ``python benchmarks/training_quality_regression.py`` (about a
minute on 2 cores).
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from _common import ArgumentParser
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score

from otfair.datasets import load_dataset
from otfair.estimators import CENet, UnfairRegressor, WassersteinNet
from otfair.metrics import error_gap

DATASETS = ("law_school", "communities_crime")
OUT = Path(__file__).resolve().parents[1] / "docs" / "measurements"
#: the nets measured: label and constructor (default settings, ``random_state=0``)
NETS: tuple[tuple[str, Any], ...] = (
    ("UnfairRegressor()", lambda: UnfairRegressor(random_state=0)),
    ("CENet()", lambda: CENet(random_state=0)),
    ("WassersteinNet()", lambda: WassersteinNet(random_state=0)),
    ("CENet(50)", lambda: CENet(50.0, random_state=0)),
    ("WassersteinNet(50)", lambda: WassersteinNet(50.0, random_state=0)),
)


def _row(name: str, label: str, predict: Any, split: Any, **extra: Any) -> dict:
    p_test, p_train = predict(split.X_test), predict(split.X_train)
    return {
        "dataset": name,
        "model": label,
        "test_r2": r2_score(split.y_test, p_test),
        "train_r2": r2_score(split.y_train, p_train),
        "test_error_gap": error_gap(split.y_test, p_test, sensitive_features=split.s_test),
        **extra,
    }


def run(datasets: list[str]) -> list[dict]:
    """Measure every dataset; print each row as it is measured."""
    rows: list[dict] = []
    for name in datasets:
        split = load_dataset(name).split(test_size=0.2, random_state=0)
        mean = float(np.mean(split.y_train))
        rows.append(
            _row(
                name,
                "best constant",
                lambda X, m=mean: np.full(len(X), m),
                split,
                n_iter=0,
                cpu_s=0.0,
                warnings="",
            )
        )
        start = time.process_time()
        linear = LinearRegression().fit(split.X_train, split.y_train)
        cpu = time.process_time() - start
        rows.append(
            _row(name, "LinearRegression", linear.predict, split, n_iter=0, cpu_s=cpu, warnings="")
        )
        for label, make in NETS:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                start = time.process_time()
                net = make().fit(split.X_train, split.y_train, sensitive_features=split.s_train)
                cpu = time.process_time() - start
            words = sorted({f"{w.category.__name__}: {str(w.message)[:60]}" for w in caught})
            rows.append(
                _row(
                    name,
                    label,
                    net.predict,
                    split,
                    n_iter=int(net.n_iter_),
                    cpu_s=cpu,
                    warnings="; ".join(words),
                )
            )
        for r in rows[-len(NETS) - 2 :]:
            print(
                f"{name:18s} {r['model']:20s} test R2 {r['test_r2']:+.4f} "
                f"train R2 {r['train_r2']:+.4f} gap {r['test_error_gap']:.4f} "
                f"{r['warnings'][:60]}",
                flush=True,
            )
    return rows


def write(rows: list[dict]) -> None:
    """Write the CSV and the Markdown table with the gaps to LinearRegression."""
    import pandas as pd

    table = pd.DataFrame(rows)
    ref = table[table["model"] == "LinearRegression"].set_index("dataset")
    table["r2_minus_lr"] = table["test_r2"] - table["dataset"].map(ref["test_r2"])
    OUT.mkdir(parents=True, exist_ok=True)
    table.to_csv(OUT / "training_quality_regression.csv", index=False, float_format="%.4f")
    lines = [
        "# Default regression fits against LinearRegression and the best constant",
        "",
        "Generated by `python benchmarks/training_quality_regression.py` (do not edit; the",
        "numbers are those of",
        "[training_quality_regression.csv](training_quality_regression.csv)). One 80/20",
        "split per dataset (`random_state=0`), each dataset's default variant, targets in",
        "their own units. `R2 - LR` is the test gap to scikit-learn's `LinearRegression()`;",
        "`train R2` is the margin over the best constant predictor (the training mean, 0",
        "there; a net below it warns); `test error gap` is the difference of the groups'",
        "test mean squared errors (accuracy parity). CPU is `time.process_time()` of the",
        "whole fit on the machine it ran on. The nets train for exactly their default",
        "`epochs` (50; `tol=None`, as App. B of the accuracy-disparity paper trains):",
        "`n_iter` is that count.",
        "",
        "| dataset | model | test R2 | R2 - LR | train R2 | test error gap | n_iter | CPU s "
        "| warnings |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in table.to_dict("records"):
        lines.append(
            f"| {r['dataset']} | {r['model']} | {r['test_r2']:.4f} | {r['r2_minus_lr']:+.4f} "
            f"| {r['train_r2']:+.4f} | {r['test_error_gap']:.4f} | {r['n_iter']} "
            f"| {r['cpu_s']:.2f} | {r['warnings'] or ''} |"
        )
    (OUT / "training_quality_regression.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {OUT / 'training_quality_regression.md'}")


def main() -> None:
    """Parse the command line, measure, write."""
    parser = ArgumentParser(prog="benchmarks/training_quality_regression.py", description=__doc__)
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args()
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(1)  # the CPU column: one thread, as every benchmark here
    names = [n for n in args.datasets.split(",") if n]
    with threadpool_limits(limits=1):
        rows = run(names)
    if not args.no_write:
        write(rows)


if __name__ == "__main__":
    main()
