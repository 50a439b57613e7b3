"""fairness_path over 8 OTF strengths on 12,000 Adult rows vs 8 separate fits.

Usage: ``python benchmarks/fairness_path_bench.py [--rows 12000] [--epochs 10]
[--repeats 2] [--json]``. Public API only; one torch thread. Times are CPU seconds of
this process (``time.process_time``), the two variants alternating ``--repeats`` times
in one run so that the ratio compares like with like; the best time of each is kept.

* ``separate``: 8 calls ``FairClassifier("otf", a_k, ...).fit`` (the estimator's
  defaults: logistic model, fixed batches);
* ``path``: one ``fairness_path(FairClassifier("otf", ...), ..., strengths=[a_1..a_8])``
  (one stacked training run);
* ``speed-up`` = separate / path (the target: >= 1.5).
"""

from __future__ import annotations

import json
import time

import numpy as np
import torch
from _common import ArgumentParser

from otfair.datasets import load_dataset
from otfair.estimators import FairClassifier, fairness_path

STRENGTHS = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1]


def _cpu(fn) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def main(argv: list[str] | None = None) -> dict:
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=12000)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    split = load_dataset("adult").split(test_size=0.2, random_state=0)
    rows = np.random.default_rng(0).permutation(len(split.y_train))[: args.rows]
    X, y, s = split.X_train[rows], split.y_train[rows], split.s_train[rows]
    # Adam: the stacked training run is what is measured (under L-BFGS, OTF's default
    # for two groups under DP, a path fits its strengths one by one, sharing the costs)
    template = FairClassifier("otf", epochs=args.epochs, solver="adam", random_state=0)

    def separate() -> None:
        for a in STRENGTHS:
            FairClassifier("otf", a, epochs=args.epochs, solver="adam", random_state=0).fit(
                X, y, sensitive_features=s
            )

    def path() -> None:
        fairness_path(template, X, y, sensitive_features=s, strengths=STRENGTHS)

    t_sep, t_path = [], []
    for _ in range(args.repeats):
        t_sep.append(_cpu(separate))
        t_path.append(_cpu(path))
    out = {
        "rows": len(y),
        "strengths": len(STRENGTHS),
        "epochs": args.epochs,
        "separate_s": min(t_sep),
        "path_s": min(t_path),
        "speed_up": min(t_sep) / min(t_path),
    }
    if args.json:
        print(json.dumps(out))
    else:
        print(
            f"8 OTF strengths, {out['rows']} Adult rows, {args.epochs} epochs: separate "
            f"{out['separate_s']:.2f} s, path {out['path_s']:.2f} s, "
            f"speed-up {out['speed_up']:.2f}x"
        )
    return out


if __name__ == "__main__":
    main()
