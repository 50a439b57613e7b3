r"""WassersteinNet vs the unfair net on Crime and Law (accuracy-disparity paper, App. B).

Protocol: for each seed ``s`` the dataset is split 80/20 with ``random_state=s`` (the
paper's Law split; the library's default). ``--stage val`` splits the *training* part again
80/20 and scores on that validation part (for choosing hyperparameters); ``--stage test``
fits on the whole training part and scores on the test part (the reported numbers). The
error gap ``|MSE_0 - MSE_1|`` is computed with targets min-max scaled by the training range
(the paper's [0, 1] units); R^2 is unit-free. Torch runs on one thread.

Usage::

    OTFAIR_DATA_DIR=/work/shared/datasets python benchmarks/regression_parity.py \
        --dataset communities_crime --stage test --variants unfair,paper,gp --lams 1,10

Variants: ``unfair`` (no adversary), ``paper`` (App. B: clipped critic, one critic step),
``gp`` (critic with gradient penalty 10 and no clipping, 5 critic steps per encoder step),
``clip5`` (clipped critic, 5 critic steps). Prints one JSON line per (variant, lambda).
"""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np
import torch
from _common import ArgumentParser

from otfair.datasets import load_dataset
from otfair.estimators import UnfairRegressor, WassersteinNet
from otfair_lab.experiments.methods import paper_settings

VARIANTS: dict[str, dict[str, Any]] = {
    "paper": {},
    "clip5": {"n_critic": 5},
    "gp": {"clip": None, "gradient_penalty": 10.0, "n_critic": 3},
}


def _parts(dataset: Any, seed: int, stage: str) -> tuple[np.ndarray, ...]:
    split = dataset.split(test_size=0.2, random_state=seed)
    X, y, s = split.X_train, np.asarray(split.y_train, float), np.asarray(split.s_train)
    if stage == "test":
        return X, y, s, split.X_test, np.asarray(split.y_test, float), np.asarray(split.s_test)
    rng = np.random.default_rng(seed)
    val = np.zeros(len(y), bool)
    for g in np.unique(s):  # stratified by group, like the library's split
        idx = rng.permutation(np.flatnonzero(s == g))
        val[idx[: round(0.2 * len(idx))]] = True
    return X[~val], y[~val], s[~val], X[val], y[val], s[val]


def evaluate(est: Any, parts: tuple[np.ndarray, ...]) -> dict[str, float]:
    """Fit on the first three arrays; R^2 and the [0, 1]-unit error gap on the rest.

    ``error_gap_signed`` is ``MSE_0 - MSE_1`` (groups in sorted order), ``error_gap`` its
    absolute value (the paper's metric).
    """
    X_fit, y_fit, s_fit, X_ev, y_ev, s_ev = parts
    start = time.perf_counter()
    est.fit(X_fit, y_fit, sensitive_features=s_fit)
    fit_time = time.perf_counter() - start
    pred = est.predict(X_ev)
    lo, hi = y_fit.min(), y_fit.max()
    err = ((pred - y_ev) / (hi - lo)) ** 2
    groups = np.unique(s_fit)
    mse = [float(err[s_ev == g].mean()) for g in groups]
    r2 = 1.0 - np.sum((pred - y_ev) ** 2) / np.sum((y_ev - y_ev.mean()) ** 2)
    return {
        "r2": float(r2),
        "error_gap": abs(mse[0] - mse[1]),
        "error_gap_signed": mse[0] - mse[1],
        "fit_time_s": fit_time,
    }


def run(
    dataset: str, stage: str, variants: list[str], lams: list[float], seeds: int
) -> list[dict[str, Any]]:
    """Mean and std over ``seeds`` seeds of every (variant, lambda) pair."""
    torch.set_num_threads(1)
    data = load_dataset(dataset)
    settings = paper_settings(dataset)
    rows = []
    for variant in variants:
        for lam in [0.0] if variant == "unfair" else lams:
            res = []
            for seed in range(seeds):
                parts = _parts(data, seed, stage)
                if variant == "unfair":
                    drop = ("adversary_hidden", "clip")
                    opts = {k: v for k, v in settings.items() if k not in drop}
                    est = UnfairRegressor(random_state=seed, **opts)
                else:
                    est = WassersteinNet(
                        lam, random_state=seed, **{**settings, **VARIANTS[variant]}
                    )
                res.append(evaluate(est, parts))
            row: dict[str, Any] = {"dataset": dataset, "stage": stage, "variant": variant}
            row["lam"] = lam
            for key in ("r2", "error_gap", "error_gap_signed", "fit_time_s"):
                vals = [r[key] for r in res]
                row[key], row[key + "_std"] = float(np.mean(vals)), float(np.std(vals))
                if key != "fit_time_s":
                    row[key + "_per_seed"] = [round(v, 6) for v in vals]
            print(json.dumps(row), flush=True)
            rows.append(row)
    return rows


def main() -> None:
    parser = ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="communities_crime")
    parser.add_argument("--stage", choices=("val", "test"), default="test")
    parser.add_argument("--variants", default="unfair,paper,gp")
    parser.add_argument("--lams", default="1,10")
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    run(
        args.dataset,
        args.stage,
        args.variants.split(","),
        [float(v) for v in args.lams.split(",")],
        args.seeds,
    )


if __name__ == "__main__":
    main()
