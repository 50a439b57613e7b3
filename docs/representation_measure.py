"""Measure the papers' representation baselines beside FTM and AdapFair on Adult.

For each method, strength and seed: Adult split 80/20 with ``random_state=seed`` (the
sensitive attribute an input only for the methods whose registry entry says so: fair-nf,
ftm, adapfair), the training part subsampled to ``--n-train`` rows (stratified by group x
label, the same rows for every method), the test part kept whole. Every estimator is
built by the method registry (``get_method(name).build``, the methods' default
settings and epochs) and scored as ``run_single`` does (``predict_proba`` on the test
features): test accuracy, DP gap and mean equalized-odds gap of the hard predictions,
and the fit's CPU seconds. Runs are appended to a JSON-lines file (finished cells are
skipped); the per-strength means go to a CSV, the table of docs/baselines.md (unfair vs
the best strength within 4 points of accuracy) is printed, and the trade-off plot is
drawn.

    OTFAIR_DATA_DIR=../shared/datasets PYTHONPATH=src python docs/representation_measure.py
    # Fair NF where its Gaussian-mixture densities fit the data (continuous features):
    ... python docs/representation_measure.py --dataset communities_crime --methods fair-nf
"""

from __future__ import annotations

import argparse
import csv
import functools
import json
import time
from pathlib import Path

import numpy as np
import torch

from otfair.datasets import load_dataset
from otfair.metrics import demographic_parity_gap, equalized_odds_gap
from otfair_lab.experiments.methods import get_method

#: method -> (strengths measured, target violation). The first five are the papers'
#: comparison baselines (LAFTR, sIPM-LFR, Fair PCA, CFair, Fair NF).
METHODS: dict[str, tuple[tuple[float, ...], str]] = {
    "laftr": ((0.0, 0.25, 0.5, 1.0, 2.0), "dp"),
    "sipm-lfr": ((0.0, 1.0, 2.0, 5.0), "dp"),
    "fair-pca": ((0.0, 0.5, 1.0), "dp"),
    "cfair": ((0.0, 0.1, 1.0, 10.0, 30.0, 100.0), "eo"),
    "fair-nf": ((0.0, 0.02, 0.1, 0.9), "dp"),
    "fair-nf-discrete": ((0.0, 0.2, 0.3, 0.35, 0.4, 0.5, 0.9), "dp"),
    "ftm": ((0.0, 0.1, 0.3, 0.6, 1.0), "dp"),
    "adapfair": ((0.9, 0.5, 0.1), "dp"),
}
TARGETS = ("laftr", "sipm-lfr", "fair-pca", "cfair", "fair-nf", "fair-nf-discrete")
DATASET_OPTIONS = {"communities_crime": {"task": "classification"}}
MAX_ACCURACY_LOSS = 0.04  # the issue's "no more than 4 points of accuracy"


def subsample(n: int, strata: np.ndarray, size: int, seed: int) -> np.ndarray:
    """Stratified subsample of ``size`` row indices (all rows when ``size >= n``)."""
    if size >= n:
        return np.arange(n)
    rng = np.random.default_rng(seed)
    keep = []
    for c in np.unique(strata):
        rows = np.flatnonzero(strata == c)
        keep.append(rng.choice(rows, max(1, round(size * len(rows) / n)), replace=False))
    return np.sort(np.concatenate(keep))


@functools.lru_cache(maxsize=8)
def _split(dataset: str, seed: int, sensitive_as_input: bool):
    data = load_dataset(dataset, **DATASET_OPTIONS.get(dataset, {}))
    return data.split(random_state=seed, sensitive_as_input=sensitive_as_input)


def run_one(method: str, strength: float, seed: int, args: argparse.Namespace) -> dict:
    """Fit one (method, strength, seed) through the registry; return its test panel."""
    spec = get_method(method)
    split = _split(args.dataset, seed, spec.sensitive_as_input)
    s_train = np.asarray(split.s_train).astype(int)
    y_train = np.asarray(split.y_train).astype(int)
    idx = subsample(len(y_train), s_train * 2 + y_train, args.n_train, seed)
    notion = spec.notions[0] if spec.notions else None
    est = spec.build(strength, notion=notion, random_state=seed, dataset=args.dataset)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    est.fit(np.asarray(split.X_train)[idx], y_train[idx], sensitive_features=s_train[idx])
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    p = np.asarray(est.predict_proba(np.asarray(split.X_test)))[:, 1]
    y, s = np.asarray(split.y_test).astype(int), np.asarray(split.s_test).astype(int)
    return {
        "dataset": args.dataset,
        "method": method,
        "strength": float(strength),
        "seed": seed,
        "n_train": len(idx),
        "acc": float(np.mean((p >= 0.5) == y)),
        "dp": float(demographic_parity_gap(y, p, sensitive_features=s)),
        "eo": float(equalized_odds_gap(y, p, sensitive_features=s)),
        "fit_cpu_s": cpu,
        "fit_wall_s": wall,
    }


def summarize(rows: list[dict]) -> list[dict]:
    """Per (method, strength): means and standard deviations over the seeds."""
    out = []
    for method, (_, target) in METHODS.items():
        mine = [r for r in rows if r["method"] == method]
        for lam in sorted({r["strength"] for r in mine}):
            cell = [r for r in mine if r["strength"] == lam]
            row = {"method": method, "strength": lam, "target": target, "n_seeds": len(cell)}
            for key in ("acc", "dp", "eo", "fit_cpu_s"):
                vals = np.array([r[key] for r in cell])
                row[f"{key}_mean"], row[f"{key}_std"] = float(vals.mean()), float(vals.std())
            row["violation_mean"] = row[f"{target}_mean"]
            out.append(row)
    return out


def issue_table(summary: list[dict]) -> list[dict]:
    """Per target method: the unfair run (strength 0) and the best strength.

    The best strength has the lowest mean violation among those within 4 points of the
    unfair accuracy (the issue asks for at most half the unfair violation there).
    """
    table = []
    for method in TARGETS:
        mine = [r for r in summary if r["method"] == method]
        unfair = next((r for r in mine if r["strength"] == 0.0), None)
        if unfair is None:
            continue
        ok = [
            r
            for r in mine
            if r["strength"] > 0 and r["acc_mean"] >= unfair["acc_mean"] - MAX_ACCURACY_LOSS
        ]
        best = min(ok, key=lambda r: r["violation_mean"]) if ok else None
        table.append({"method": method, "unfair": unfair, "best": best})
    return table


def plot(summary: list[dict], path: Path, title: str) -> None:
    """Accuracy vs DP gap and vs equalized-odds gap (CFair's target), all methods."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(13, 5.4), sharey=True)
    for ax, key, label in ((axes[0], "dp", "DP gap"), (axes[1], "eo", "equalized-odds gap")):
        for i, method in enumerate(METHODS):
            pts = [r for r in summary if r["method"] == method]
            if not pts:
                continue
            style = "-" if method in TARGETS else "--"
            color = f"C{i}"
            xs, ys = [r[f"{key}_mean"] for r in pts], [r["acc_mean"] for r in pts]
            ax.plot(xs, ys, style, marker="o", color=color, label=method, ms=4)
            for r, x, y in zip(pts, xs, ys, strict=True):
                ax.annotate(f"{r['strength']:g}", (x, y), fontsize=6, color=color)
            zero = [r for r in pts if r["strength"] == 0.0]
            if zero:  # the unfair end of the curve
                ax.plot(zero[0][f"{key}_mean"], zero[0]["acc_mean"], "o", mfc="white", color=color)
        ax.set_xlabel(f"{label} (test, mean of seeds)")
        ax.grid(alpha=0.3)
    axes[1].set_title("CFair's target; hollow marker: strength 0 (unfair)", fontsize=9)
    axes[0].set_ylabel("accuracy (test)")
    axes[0].set_title(title, fontsize=9)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    """Run the grid (skipping finished cells), write the CSV and the plot, print tables."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", default="adult")
    parser.add_argument("--methods", nargs="*", default=list(METHODS))
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--n-train", type=int, default=8000)
    parser.add_argument("--out-dir", type=Path, default=Path("docs/figures"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    tag = "" if args.dataset == "adult" else f"_{args.dataset}"
    runs = args.out_dir / f"representation_runs{tag}.jsonl"
    done = [json.loads(line) for line in runs.read_text().splitlines()] if runs.is_file() else []
    keys = {(r["method"], r["strength"], r["seed"]) for r in done}
    for method in args.methods:
        for lam in METHODS[method][0]:
            for seed in range(args.seeds):
                if (method, float(lam), seed) in keys:
                    continue
                row = run_one(method, lam, seed, args)
                done.append(row)
                with runs.open("a") as fh:
                    fh.write(json.dumps(row) + "\n")
                print(json.dumps(row), flush=True)
    summary = summarize(done)
    with (args.out_dir / f"representation{tag or '_adult'}.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(summary[0]))
        writer.writeheader()
        writer.writerows(
            {k: round(v, 4) if isinstance(v, float) else v for k, v in r.items()} for r in summary
        )
    print("| method | strength | accuracy | DP gap | EO gap | fit CPU s | seeds |")
    print("|---|---|---|---|---|---|---|")
    for r in summary:
        print(
            f"| {r['method']} | {r['strength']:g} | {r['acc_mean']:.4f} ± {r['acc_std']:.4f} "
            f"| {r['dp_mean']:.4f} | {r['eo_mean']:.4f} | {r['fit_cpu_s_mean']:.1f} "
            f"| {r['n_seeds']} |"
        )
    print(f"\ntotal fit CPU: {sum(r['fit_cpu_s'] for r in done) / 60:.1f} min")
    print(
        "\n| method | target | unfair acc | unfair violation | strength | acc | violation "
        "| ratio |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for t in issue_table(summary):
        u, b = t["unfair"], t["best"]
        tail = (
            "| none within 4 points | | | |"
            if b is None
            else (
                f"| {b['strength']:g} | {b['acc_mean']:.4f} | {b['violation_mean']:.4f} "
                f"| {b['violation_mean'] / u['violation_mean']:.0%} |"
            )
        )
        print(
            f"| {t['method']} | {u['target'].upper()} | {u['acc_mean']:.4f} "
            f"| {u['violation_mean']:.4f} {tail}"
        )
    title = f"{args.dataset}: {done[0]['n_train']} training rows, means of {args.seeds} seeds"
    plot(summary, args.out_dir / f"representation_tradeoff{tag}.png", title)


if __name__ == "__main__":
    main()
