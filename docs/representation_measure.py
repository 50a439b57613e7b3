"""Measure the fair-representation baselines on Adult (docs/baselines.md, issue 15).

For each method, strength and seed: Adult split 80/20 with ``random_state=seed`` (the
sensitive attribute not an input), the training part subsampled to ``--n-train`` rows
(stratified by group x label; the busy CI machine), the test part kept whole; test
accuracy and the method's target violation (DP gap for laftr, sipm-lfr and fair-nf, the
mean equalized-odds gap for cfair) of the hard predictions. Appends to a JSON-lines file,
prints the per-strength means and draws the trade-off plot.

    OTFAIR_DATA_DIR=../shared/datasets PYTHONPATH=src python docs/representation_measure.py
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from otfair.datasets import load_dataset
from otfair.estimators.representation import (
    CFairClassifier,
    FairNormalizingFlowClassifier,
    LAFTRClassifier,
    SIPMClassifier,
)
from otfair.metrics import demographic_parity_gap, equalized_odds_gap

METHODS = {
    "laftr": (LAFTRClassifier, (0.0, 0.25, 0.5, 1.0, 2.0), "dp"),
    "sipm-lfr": (SIPMClassifier, (0.0, 1.0, 2.0, 5.0), "dp"),
    "cfair": (CFairClassifier, (0.0, 1.0, 10.0, 30.0), "eo"),
    "fair-nf": (FairNormalizingFlowClassifier, (0.0, 0.9, 0.99), "dp"),
}


def subsample(n: int, strata: np.ndarray, size: int, seed: int) -> np.ndarray:
    """Stratified subsample of ``size`` row indices."""
    if size >= n:
        return np.arange(n)
    rng = np.random.default_rng(seed)
    keep = []
    for c in np.unique(strata):
        rows = np.flatnonzero(strata == c)
        keep.append(rng.choice(rows, max(1, round(size * len(rows) / n)), replace=False))
    return np.sort(np.concatenate(keep))


def run_one(method: str, strength: float, seed: int, args: argparse.Namespace) -> dict:
    """Fit one (method, strength, seed); return its test accuracy and violation."""
    cls, _, target = METHODS[method]
    split = load_dataset("adult").split(random_state=seed, sensitive_as_input=False)
    s_train = np.asarray(split.s_train).astype(int)
    y_train = np.asarray(split.y_train).astype(int)
    idx = subsample(len(y_train), s_train * 2 + y_train, args.n_train, seed)
    X = np.asarray(split.X_train, dtype=np.float32)[idx]
    est = cls(strength, epochs=args.epochs, random_state=seed)
    t0 = time.perf_counter()
    est.fit(X, y_train[idx], sensitive_features=s_train[idx])
    fit_s = time.perf_counter() - t0
    s_test = np.asarray(split.s_test).astype(int)
    p = est.predict_proba(np.asarray(split.X_test, dtype=np.float32), sensitive_features=s_test)
    y = np.asarray(split.y_test).astype(int)
    gap = demographic_parity_gap if target == "dp" else equalized_odds_gap
    return {
        "method": method,
        "strength": float(strength),
        "seed": seed,
        "target": target,
        "acc": float(np.mean((p[:, 1] >= 0.5) == y)),
        "violation": float(gap(y, p[:, 1], sensitive_features=s_test)),
        "fit_s": fit_s,
    }


def summarize(rows: list[dict]) -> dict[str, list[tuple]]:
    """Per method: (strength, mean acc, mean violation, n seeds), sorted by strength."""
    out: dict[str, list[tuple]] = {}
    for method in METHODS:
        mine = [r for r in rows if r["method"] == method]
        for lam in sorted({r["strength"] for r in mine}):
            cell = [r for r in mine if r["strength"] == lam]
            acc = np.mean([r["acc"] for r in cell])
            vio = np.mean([r["violation"] for r in cell])
            out.setdefault(method, []).append((lam, acc, vio, len(cell)))
    return out


def plot(summary: dict[str, list[tuple]], path: Path) -> None:
    """Accuracy vs target violation, one panel per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(summary), figsize=(4 * len(summary), 3.4))
    for ax, (method, pts) in zip(np.atleast_1d(axes), summary.items(), strict=True):
        vio = [p[2] for p in pts]
        acc = [p[1] for p in pts]
        ax.plot(vio, acc, "o-")
        for lam, a, v, _ in pts:
            ax.annotate(f"{lam:g}", (v, a), fontsize=7)
        ax.set_title(f"{method} ({METHODS[method][2].upper()})")
        ax.set_xlabel("target violation (test)")
        ax.set_ylabel("accuracy (test)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    """Run the grid (skipping finished cells) and report."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--methods", nargs="*", default=list(METHODS))
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--n-train", type=int, default=8000)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--out", type=Path, default=Path("docs/figures/representation_runs.jsonl"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    done = []
    if args.out.is_file():
        done = [json.loads(line) for line in args.out.read_text().splitlines() if line]
    keys = {(r["method"], r["strength"], r["seed"]) for r in done}
    for method in args.methods:
        for lam in METHODS[method][1]:
            for seed in range(args.seeds):
                if (method, float(lam), seed) in keys:
                    continue
                row = run_one(method, lam, seed, args)
                done.append(row)
                with args.out.open("a") as fh:
                    fh.write(json.dumps(row) + "\n")
                print(json.dumps(row), flush=True)
    summary = summarize(done)
    for method, pts in summary.items():
        for lam, acc, vio, k in pts:
            print(f"{method:9s} strength={lam:<6g} acc={acc:.4f} violation={vio:.4f} (n={k})")
    plot(summary, args.out.with_name("representation_tradeoff.png"))


if __name__ == "__main__":
    main()
