"""Measure the second-round baselines for docs/baselines.md (prints Markdown tables).

Run from the repository root:

    OTFAIR_DATA_DIR=../shared/datasets python docs/baselines_measure.py [SECTION ...]

SECTION is adult, wb-regression or cod-rff (default: all).

One split (random_state=0) of each dataset; a few minutes on one core.
"""

from __future__ import annotations

import sys

import numpy as np
from fairlearn.postprocessing import ThresholdOptimizer
from scipy.stats import ks_2samp, wasserstein_distance
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import r2_score

from otfair.datasets import load_dataset
from otfair.estimators.postprocessing.wb_postprocess import WassersteinBarycenterClassifier
from otfair.estimators.postprocessing.wb_regression import WassersteinBarycenterRegressor
from otfair.estimators.preprocessing.fair_pca import FairPCA
from otfair.estimators.preprocessing.ot_repair import OTRepair
from otfair.estimators.regression.cod_rff import CODRFFRegressor

CONTINUOUS = ("age", "education-num", "capital-gain", "capital-loss", "hours-per-week")


def _dp(pred: np.ndarray, s: np.ndarray) -> float:
    return float(abs(pred[s == 0].mean() - pred[s == 1].mean()))


def adult() -> None:
    """Adult (sex): wb-postprocess vs ThresholdOptimizer, ot-repair, fair-pca."""
    split = load_dataset("adult").split(random_state=0)
    Xtr, Xte = split.X_train.astype(np.float64), split.X_test.astype(np.float64)
    ytr, yte, s, st = split.y_train, split.y_test, split.s_train, split.s_test
    base = LogisticRegression(max_iter=1000).fit(Xtr, ytr)
    p = base.predict(Xte)
    acc = np.mean(p == yte)
    print(f"\nAdult (sex), LogisticRegression: test accuracy {acc:.4f}, DP {_dp(p, st):.4f}")

    print(
        "\n### wb-postprocess vs fairlearn ThresholdOptimizer (calibrated on the training set)\n"
    )
    print("| strength | rate gap (calib.) | WB acc | WB DP | TO tol | TO acc | TO DP |")
    print("|---|---|---|---|---|---|---|")
    for lam in (0.0, 0.5, 0.75, 0.9, 1.0):
        wb = WassersteinBarycenterClassifier(base, strength=lam, prefit=True, random_state=0)
        wb.fit(Xtr, ytr, sensitive_features=s)
        pw = wb.predict(Xte, sensitive_features=st)
        gap = float(wb.rates_.max() - wb.rates_.min())
        to = ThresholdOptimizer(
            estimator=base,
            constraints="demographic_parity",
            prefit=True,
            predict_method="predict_proba",
            tol=None if lam == 1.0 else gap,
        ).fit(Xtr, ytr, sensitive_features=s)
        pt = to.predict(Xte, sensitive_features=st, random_state=0)
        tol = "None" if lam == 1.0 else f"{gap:.4f}"
        print(
            f"| {lam} | {gap:.4f} | {np.mean(pw == yte):.4f} | {_dp(pw, st):.4f} | "
            f"{tol} | {np.mean(pt == yte):.4f} | {_dp(pt, st):.4f} |"
        )

    cont = [i for i, f in enumerate(split.feature_names) if f in CONTINUOUS]
    print("\n### ot-repair (all 80 columns repaired, quantile maps), then LogisticRegression\n")
    print("| mode | strength | max W1 continuous (train) | max W1 (test) | test acc | test DP |")
    print("|---|---|---|---|---|---|")
    for mode in ("geometric", "random"):
        for lam in (0.0, 0.5, 1.0):
            rep = OTRepair(lam, mode=mode, random_state=0).fit(Xtr, sensitive_features=s)
            Rtr = rep.transform(Xtr, sensitive_features=s)
            Rte = rep.transform(Xte, sensitive_features=st)
            w_tr = max(wasserstein_distance(Rtr[s == 0, j], Rtr[s == 1, j]) for j in cont)
            w_te = max(wasserstein_distance(Rte[st == 0, j], Rte[st == 1, j]) for j in cont)
            pr = LogisticRegression(max_iter=1000).fit(Rtr, ytr).predict(Rte)
            print(
                f"| {mode} | {lam} | {w_tr:.4f} | {w_te:.4f} | {np.mean(pr == yte):.4f} | "
                f"{_dp(pr, st):.4f} |"
            )

    print("\n### fair-pca (k = 10), then LogisticRegression\n")
    print("| variant | strength | test acc | test DP |")
    print("|---|---|---|---|")
    for cov in (False, True):
        for lam in (0.0, 0.5, 1.0):
            fp = FairPCA(10, equalize_covariance=cov, strength=lam).fit(Xtr, sensitive_features=s)
            pr = LogisticRegression(max_iter=1000).fit(fp.transform(Xtr), ytr)
            pf = pr.predict(fp.transform(Xte))
            name = "mean + covariance" if cov else "mean"
            print(f"| {name} | {lam} | {np.mean(pf == yte):.4f} | {_dp(pf, st):.4f} |")


def wb_regression() -> None:
    """Law School and Crime: wb-regression."""
    print("\n### wb-regression (LinearRegression base, half the training set calibrates)\n")
    print(
        "| dataset | strength | calib. KS | 1/n_min | test KS (p-value) | base test KS | "
        "R2 base | R2 fair |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name in ("law_school", "communities_crime"):
        split = load_dataset(name).split(random_state=0)
        st = split.s_test
        for lam in (0.5, 1.0):
            m = WassersteinBarycenterRegressor(LinearRegression(), strength=lam, random_state=0)
            m.fit(split.X_train, split.y_train, sensitive_features=split.s_train)
            cs = m.calibration_sensitive_[:, 0]
            cp = m.calibration_predictions_
            n_min = min(np.sum(cs == 0), np.sum(cs == 1))
            fair = m.predict(split.X_test, sensitive_features=st)
            base = m.estimator_.predict(split.X_test)
            ks = ks_2samp(fair[st == 0], fair[st == 1])
            ks_b = ks_2samp(base[st == 0], base[st == 1]).statistic
            ks_c = ks_2samp(cp[cs == 0], cp[cs == 1]).statistic
            print(
                f"| {name} | {lam} | {ks_c:.4f} | {1 / n_min:.4f} | {ks.statistic:.4f} "
                f"({ks.pvalue:.2f}) | {ks_b:.4f} | {r2_score(split.y_test, base):.4f} | "
                f"{r2_score(split.y_test, fair):.4f} |"
            )


def cod_rff() -> None:
    """Law School and Crime: cod-rff over the paper's grid."""
    print(
        "\n### cod-rff (D = 50; gamma in {scale, 0.1, 1, 10, 100}: the lowest training MSE "
        "per eps, as the paper)\n"
    )
    print("| dataset | eps | gamma | train CoD | test R2 |")
    print("|---|---|---|---|---|")
    for name in ("law_school", "communities_crime"):
        split = load_dataset(name).split(random_state=0)
        for eps in (0.01, 0.1, 0.5, 1.0):
            best = None
            for gamma in ("scale", 0.1, 1.0, 10.0, 100.0):
                m = CODRFFRegressor(eps, gamma=gamma, random_state=0)
                m.fit(split.X_train, split.y_train, sensitive_features=split.s_train)
                mse = np.mean((m.predict(split.X_train) - split.y_train) ** 2)
                if best is None or mse < best[0]:
                    best = (mse, gamma, m)
            _, gamma, m = best
            r2 = r2_score(split.y_test, m.predict(split.X_test))
            print(f"| {name} | {eps} | {gamma} ({m.gamma_:.4g}) | {m.cod_.cod_:.4f} | {r2:.4f} |")


SECTIONS = {"adult": adult, "wb-regression": wb_regression, "cod-rff": cod_rff}

if __name__ == "__main__":
    for section in sys.argv[1:] or list(SECTIONS):
        SECTIONS[section]()
