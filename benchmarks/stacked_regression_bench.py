"""A lambda curve of CENet / WassersteinNet: one stacked fit vs K separate fits (issue 17).

Usage: ``python benchmarks/stacked_regression_bench.py [--quick] [--json]``. Public API
only; one torch thread (``torch.set_num_threads(1)``) and one BLAS thread
(``threadpoolctl``); times are CPU seconds of this process (``time.process_time``: wall
time on an idle machine, and other processes on a shared one do not count). For each K
the stacked fit and the K separate fits run one after the other in one process, so the
ratio compares like with like.

Rows, on the seed-0 splits of Communities and Crime and Law School with the registry's
per-dataset settings (App. B of the accuracy-disparity paper, ``otfair methods describe
cenet``: widths, Adadelta learning rate, batch 256, 100 epochs; ``--quick``: 10 epochs):

* ``K separate``: K calls ``get_method(m).build(l_k, dataset=...).fit``;
* ``stacked``: one ``build(...).set_params(lam=[l_1..l_K]).fit``;
* ``speed-up`` = separate / stacked; the K lambdas are spread geometrically over the
  registry's grid (0.1 .. 50).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch
from _common import bench_main

from otfair.datasets import load_dataset
from otfair.experiments.methods import get_method

DATASETS = ("communities_crime", "law_school")
METHODS = ("cenet", "wassersteinnet")


def _lams(method: str, K: int) -> list[float]:
    grid = get_method(method).default_strengths
    return [float(v) for v in np.round(np.geomspace(min(grid), max(grid), K), 6)]


def _cpu(fn) -> float:
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def _curve_times(method: str, dataset: str, K: int, epochs: int | None, split) -> dict:
    spec = get_method(method)
    lams = _lams(method, K)
    fit = {"sensitive_features": split.s_train}

    def build(lam: Any):
        est = spec.build(1.0, random_state=0, dataset=dataset, epochs=epochs)
        return est.set_params(lam=lam)

    def separate() -> None:
        for lam in lams:
            build(lam).fit(split.X_train, split.y_train, **fit)

    def stacked() -> None:
        build(lams).fit(split.X_train, split.y_train, **fit)

    t_stacked = _cpu(stacked)
    t_separate = _cpu(separate)
    return {"separate_s": t_separate, "stacked_s": t_stacked, "speedup": t_separate / t_stacked}


def run(quick: bool = False) -> dict:
    torch.set_num_threads(1)
    from threadpoolctl import threadpool_limits

    Ks = (2, 8) if quick else (2, 4, 8, 16)
    epochs = 10 if quick else None  # None: the registry's 100 epochs
    out: dict[str, Any] = {"curves": []}
    with threadpool_limits(1):
        for dataset in DATASETS:
            for method in METHODS:
                split = load_dataset(dataset).split(
                    random_state=0, sensitive_as_input=get_method(method).sensitive_as_input
                )
                _curve_times(method, dataset, 2, 1, split)  # warm-up (imports, first calls)
                for K in Ks:
                    row = {"dataset": dataset, "method": method, "K": K}
                    row["epochs"] = (
                        epochs
                        or get_method(method).build(1.0, dataset=dataset).get_params()["epochs"]
                    )
                    row.update(_curve_times(method, dataset, K, epochs, split))
                    out["curves"].append(row)
    return out


def format_rows(result: dict) -> str:
    lines = [
        "| dataset | method | K | epochs | K separate fits (s) | stacked fit (s) | speed-up |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in result["curves"]:
        lines.append(
            f"| {r['dataset']} | {r['method']} | {r['K']} | {r['epochs']} | "
            f"{r['separate_s']:.2f} | {r['stacked_s']:.2f} | {r['speedup']:.2f}x |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    bench_main(__doc__, run, format_rows)
