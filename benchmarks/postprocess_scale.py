"""Post-processing at scale: fit + predict time against the calibration size, beside EquiPy.

For n = 1e3 ... 1e6 calibration rows (and as many fresh rows to predict), the CPU
seconds of ``fit`` + ``predict`` of

* ``WassersteinBarycenterRegressor`` (Chzhen et al. 2020) beside EquiPy's
  ``FairWasserstein`` (Hu, Ratz and Charpentier 2024), the same map;
* ``WassersteinBarycenterClassifier`` (Xian et al. 2023) beside EquiPy's
  ``FairWasserstein`` on the same scores (EquiPy's route for a classifier: move the
  scores to their barycenter, then threshold; another method, timed for scale);
* ``OTRepair`` on one feature (Gordaliza et al. 2019) beside ``FairWasserstein`` on
  that column (the same per-coordinate map without the randomized tie breaking).

The otfair times include the (prefit, one-feature linear) base model's ``predict`` /
``predict_proba``; EquiPy is handed the predictions. Times are the smallest of
``--repeats`` runs (CPU seconds of this process, ``time.process_time``; run with
``OMP_NUM_THREADS=1``). ``max_abs_diff`` is the largest difference between otfair's and
EquiPy's regressor outputs without jitter (``sigma=0``), where the two coincide.

Usage: ``python benchmarks/postprocess_scale.py [--quick] [--out docs/measurements]``
(EquiPy is not an otfair dependency: ``pip install equipy`` in the benchmark's
environment; without it only otfair's times are printed).
"""

from __future__ import annotations

import csv
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from sklearn.linear_model import LinearRegression, LogisticRegression

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ArgumentParser, markdown_table  # noqa: E402

from otfair.estimators.postprocessing.wb_postprocess import (  # noqa: E402
    WassersteinBarycenterClassifier,
)
from otfair.estimators.postprocessing.wb_regression import (  # noqa: E402
    WassersteinBarycenterRegressor,
)
from otfair.estimators.preprocessing.ot_repair import OTRepair  # noqa: E402

SIZES = [1_000, 3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000]
QUICK_SIZES = [1_000, 10_000, 100_000]


def _data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """One feature shifted by a three-valued group (shares 1/2, 1/3, 1/6)."""
    rng = np.random.default_rng(seed)
    s = rng.choice(3, size=n, p=[0.5, 1 / 3, 1 / 6])
    x = rng.normal(size=n) + 0.8 * s
    return x[:, None], s


def _best(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return min(times)


def _equipy():
    try:
        from equipy.fairness import FairWasserstein
    except ImportError:
        return None
    return FairWasserstein


def measure(n: int, repeats: int) -> list[dict]:
    """Rows (one per method) of otfair's and EquiPy's fit + predict CPU seconds at size n."""
    X, s = _data(n, seed=0)
    Xt, st = _data(n, seed=1)
    reg = LinearRegression().fit(X[:50], 2.0 * X[:50, 0] + 1.0)
    clf = LogisticRegression().fit(X[:200], (X[:200, 0] > 0.5).astype(int))
    fair_wasserstein = _equipy()
    rows = []

    def wb_reg(sigma: float = 1e-4) -> np.ndarray:
        model = WassersteinBarycenterRegressor(reg, prefit=True, sigma=sigma, random_state=0)
        return model.fit(X, sensitive_features=s).predict(Xt, sensitive_features=st)

    def wb_clf() -> np.ndarray:
        model = WassersteinBarycenterClassifier(clf, prefit=True, random_state=0)
        return model.fit(X, sensitive_features=s).predict(Xt, sensitive_features=st)

    def repair() -> np.ndarray:
        model = OTRepair(random_state=0).fit(X, sensitive_features=s)
        return model.transform(Xt, sensitive_features=st)

    def equipy_on(calib: np.ndarray, test: np.ndarray, sigma: float = 1e-4) -> np.ndarray:
        model = fair_wasserstein(sigma=sigma)
        model.fit(calib, s)
        return model.transform(test, st)

    reg_calib, reg_test = reg.predict(X), reg.predict(Xt)
    clf_calib, clf_test = clf.predict_proba(X)[:, 1], clf.predict_proba(Xt)[:, 1]
    cases = [
        ("wb_regression", wb_reg, lambda: equipy_on(reg_calib, reg_test)),
        ("wb_classifier", wb_clf, lambda: equipy_on(clf_calib, clf_test) > 0.5),
        ("ot_repair", repair, lambda: equipy_on(X[:, 0], Xt[:, 0])),
    ]
    for name, ours, theirs in cases:
        row = {"method": name, "n_calibration": n, "n_predict": n}
        row["otfair_s"] = _best(ours, repeats)
        row["equipy_s"] = _best(theirs, repeats) if fair_wasserstein else float("nan")
        row["ratio"] = row["otfair_s"] / row["equipy_s"]
        row["max_abs_diff"] = float("nan")
        if name == "wb_regression" and fair_wasserstein:
            diff = wb_reg(sigma=0.0) - equipy_on(reg_calib, reg_test, sigma=0.0)
            row["max_abs_diff"] = float(np.max(np.abs(diff)))
        rows.append(row)
    return rows


def run(sizes: list[int], repeats: int) -> list[dict]:
    """Measure every size (repeats halved above 1e5 rows, at least one)."""
    rows = []
    for n in sizes:
        rows += measure(n, repeats if n <= 100_000 else max(1, repeats // 2))
        for row in rows[-3:]:
            print(
                f"{row['method']:>14} n={n:>9,}  otfair {row['otfair_s']:8.4f} s  "
                f"equipy {row['equipy_s']:8.4f} s  ratio {row['ratio']:.3f}",
                flush=True,
            )
    return rows


def growth(rows: list[dict], method: str, small: int, large: int) -> float:
    """Return otfair's time at ``large`` rows over its time at ``small`` rows (``method``)."""
    t = {r["n_calibration"]: r["otfair_s"] for r in rows if r["method"] == method}
    return t[large] / t[small] if small in t and large in t else float("nan")


def write(rows: list[dict], out: Path, command: str) -> None:
    """Write ``postprocess_scale.csv`` and ``postprocess_scale.md`` under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    fields = list(rows[0])
    with open(out / "postprocess_scale.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: f"{v:.6g}" if isinstance(v, float) else v for k, v in row.items()})
    table = markdown_table(
        [
            "method",
            "calibration rows",
            "otfair (s)",
            "EquiPy (s)",
            "otfair / EquiPy",
            "max abs diff (sigma=0)",
        ],
        [
            [
                r["method"],
                f"{r['n_calibration']:,}",
                f"{r['otfair_s']:.4f}",
                f"{r['equipy_s']:.4f}",
                f"{r['ratio']:.2f}",
                f"{r['max_abs_diff']:.1e}" if np.isfinite(r["max_abs_diff"]) else "",
            ]
            for r in rows
        ],
    )
    diffs = [r["max_abs_diff"] for r in rows if np.isfinite(r["max_abs_diff"])]
    lines = [
        "# Post-processing at scale: fit + predict against the calibration size",
        "",
        f"`{command}`; per-row numbers in [postprocess_scale.csv](postprocess_scale.csv).",
        "",
        "CPU seconds (smallest of the repeats) of `fit` on n calibration rows plus",
        "`predict` / `transform` of n fresh rows, one feature, three groups; EquiPy's",
        "`FairWasserstein` on the same values (see the script's docstring for what each",
        "row compares).",
        f"Machine: {platform.machine()}, Python {platform.python_version()}, "
        f"NumPy {np.__version__}.",
        "",
        *table,
        "",
        "Growth of otfair's fit + predict time (regressor): "
        f"100k / 10k rows = {growth(rows, 'wb_regression', 10_000, 100_000):.1f}x, "
        f"1M / 100k rows = {growth(rows, 'wb_regression', 100_000, 1_000_000):.1f}x.",
    ]
    if diffs:
        lines.append(
            f"Largest |otfair - EquiPy| of the regressor without jitter: {max(diffs):.2g} "
            "(same map; EquiPy interpolates its quantile function with scipy's `interp1d` "
            "on the grid `linspace(0, 1, n)`, otfair by index as `numpy.quantile`, so the "
            "interpolation weights round differently, more so as n grows)."
        )
    (out / "postprocess_scale.md").write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> None:
    """Command line: ``--quick``, ``--repeats``, ``--out DIR``."""
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="sizes 1e3, 1e4, 1e5 only")
    parser.add_argument("--repeats", type=int, default=3, help="runs per size (best kept)")
    parser.add_argument("--out", type=Path, default=None, help="write the .md and .csv here")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be >= 1")
    rows = run(QUICK_SIZES if args.quick else SIZES, args.repeats)
    print(f"regressor 100k / 10k: {growth(rows, 'wb_regression', 10_000, 100_000):.1f}x")
    if args.out is not None:
        command = "python benchmarks/postprocess_scale.py " + " ".join(argv or sys.argv[1:])
        write(rows, args.out, command.strip())


if __name__ == "__main__":
    main()
