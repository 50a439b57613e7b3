"""How far a stacked curve's models drift from their separate fits over a whole fit.

Usage: ``python benchmarks/curve_drift.py [--method gapreg] [--model mlp] [--epochs 30]
[--strengths 0.1 0.3 1 3 10] [--dataset adult] [--json]``. Public API only, one torch
thread. Fits ``fairness_path(FairClassifier(method), ...)`` once and each strength
separately (same seed, same settings) on the dataset's seed-0 split, and prints per
strength the largest absolute difference of the test probabilities and the number of
test labels that differ.

Why they can differ at all: each *step* of a stacked model equals the separate fit's step
up to float rounding (``tests/estimators/test_classif_curve.py``: 1e-5 after 3 epochs),
but the batched penalty rounds differently in the last bits, and an MLP trained for many
epochs amplifies such differences (a logistic model's convex training does not).
"""

from __future__ import annotations

import json

import numpy as np
import torch
from _common import ArgumentParser

from otfair.datasets import load_dataset
from otfair.estimators import FairClassifier, fairness_path


def main(argv: list[str] | None = None) -> dict:
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--method", default="gapreg")
    parser.add_argument("--model", default="mlp")
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--strengths", type=float, nargs="+", default=[0.1, 0.3, 1.0, 3.0, 10.0])
    parser.add_argument("--dataset", default="adult")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    split = load_dataset(args.dataset).split(test_size=0.2, random_state=0)
    common = {"model": args.model, "epochs": args.epochs, "random_state": 0}
    if args.model == "mlp":  # the FTM family's network (docs/stacking.md measured it)
        common["hidden"] = None
    path = fairness_path(
        FairClassifier(args.method, **common),
        split.X_train,
        split.y_train,
        sensitive_features=split.s_train,
        strengths=list(args.strengths),
    )
    curve = dict(zip(args.strengths, path.estimators_, strict=True))
    rows = []
    for a in args.strengths:
        alone = FairClassifier(args.method, a, **common)
        alone.fit(split.X_train, split.y_train, sensitive_features=split.s_train)
        p_curve = curve[a].predict_proba(split.X_test)[:, 1]
        p_alone = alone.predict_proba(split.X_test)[:, 1]
        rows.append(
            {
                "strength": a,
                "max_abs_proba_diff": float(np.max(np.abs(p_curve - p_alone))),
                "labels_differing": int(np.sum((p_curve >= 0.5) != (p_alone >= 0.5))),
                "n_test": len(p_alone),
            }
        )
    out = {"method": args.method, "model": args.model, "epochs": args.epochs, "rows": rows}
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        print(f"{args.method} {args.model}, {args.epochs} epochs on {args.dataset} (seed 0):")
        for r in rows:
            print(
                f"  strength {r['strength']:g}: max |p_curve - p_separate| = "
                f"{r['max_abs_proba_diff']:.3g}, labels differing {r['labels_differing']} "
                f"of {r['n_test']}"
            )
    return out


if __name__ == "__main__":
    main()
