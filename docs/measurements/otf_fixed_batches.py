"""OTF on Adult with new batches every epoch vs fixed batches: the model and its cost.

Usage: ``python docs/measurements/otf_fixed_batches.py`` (writes
``otf_fixed_batches.csv`` and ``.md`` beside it; about 2 minutes on one core).

The OTF family of the method registry (logistic regression, Adam 1e-3, batch 1000,
30 epochs here) at alpha in {0.01, 0.02}, notions DP and EO, seeds 0-2 of Adult's 80/20
split; each fit once with ``fixed_batches=False`` (the stratified batches redrawn every
epoch, the OTF paper's protocol) and once with ``fixed_batches=True`` (drawn once and
visited in a new random order every epoch, each batch's class-reduced cost kept).
Reports test AUC, the violation of the fitted notion (PDP or PEO) and the fit's CPU
seconds; the summary row gives the mean paired difference and its standard error over
the 12 pairs.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from otfair.datasets import load_dataset
from otfair.metrics import fairness_report
from otfair_lab.experiments.methods import get_method

HERE = Path(__file__).resolve().parent
EPOCHS = 30


def main() -> None:
    """Fit the 24 models and write the table (see the module docstring)."""
    torch.set_num_threads(1)
    rows = []
    for seed in (0, 1, 2):
        split = load_dataset("adult").split(random_state=seed)
        for notion in ("dp", "eo"):
            for alpha in (0.01, 0.02):
                for fixed in (False, True):
                    est = get_method("otf").build(
                        alpha, notion=notion, random_state=seed, epochs=EPOCHS,
                        dataset="adult", fixed_batches=fixed,
                    )  # fmt: skip
                    t0 = time.process_time()
                    est.fit(split.X_train, split.y_train, sensitive_features=split.s_train)
                    cpu = time.process_time() - t0
                    p = est.predict_proba(split.X_test)[:, 1]
                    rep = fairness_report(split.y_test, p, sensitive_features=split.s_test)
                    violation = "pdp_violation" if notion == "dp" else "peo_violation"
                    rows.append({
                        "seed": seed, "notion": notion, "alpha": alpha,
                        "fixed_batches": fixed, "auc": rep.summary["auc"],
                        "violation": rep.summary[violation], "cpu_s": cpu,
                    })  # fmt: skip
    df = pd.DataFrame(rows)
    df.to_csv(HERE / "otf_fixed_batches.csv", index=False)
    keys = ["seed", "notion", "alpha"]
    pair = pd.merge(
        df[~df.fixed_batches], df[df.fixed_batches], on=keys, suffixes=("_new", "_fixed")
    )
    lines = [
        "# OTF with fixed batches vs new batches every epoch (Adult, 30 epochs)",
        "",
        "`python docs/measurements/otf_fixed_batches.py`; per-fit rows in "
        "[otf_fixed_batches.csv](otf_fixed_batches.csv).",
        "",
        "| quantity | new batches (mean) | fixed batches (mean) | paired difference "
        "(fixed - new) | SE of the difference |",
        "|---|---|---|---|---|",
    ]
    for name in ("auc", "violation", "cpu_s"):
        diff = pair[f"{name}_fixed"] - pair[f"{name}_new"]
        se = diff.std(ddof=1) / np.sqrt(len(diff))
        lines.append(
            f"| {name} | {pair[f'{name}_new'].mean():.4f} | {pair[f'{name}_fixed'].mean():.4f}"
            f" | {diff.mean():+.4f} | {se:.4f} |"
        )
    lines += ["", f"{len(pair)} pairs (seeds 0-2 x DP/EO x alpha 0.01/0.02)."]
    (HERE / "otf_fixed_batches.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
