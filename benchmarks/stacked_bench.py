"""A trade-off curve of K strengths on Adult: one stacked fit vs K separate fits (issue 17).

Usage: ``python benchmarks/stacked_bench.py [--quick] [--json]`` (``--memory K`` prints
the peak RSS of one stacked FTM fit of K models in a fresh process). Public API only;
one torch thread (``torch.set_num_threads(1)``) and one BLAS thread (``threadpoolctl``);
times are CPU seconds of this process (``time.process_time``: wall time on an idle
machine, and other processes on a shared one do not count), the variants alternating in
one run so that the ratios compare like with like.

Rows, on Adult's seed-0 split with the registered method defaults (``otfair methods
describe``) except for the epoch budget:

* ``ftm`` / ``gapreg``: the FTM family (MLP, two hidden layers of width = input
  dimension, batch 1024, Adam with decay 0.95), K strengths of the method's grid;
* ``otf``: the OTF family (logistic regression, batch 1000, eps = 1e-3), K alphas;
* ``K separate``: K calls ``FairClassifier(method, a_k).fit``; ``stacked``: one
  ``fairness_path(FairClassifier(method), ..., strengths=[a_1..a_K])``;
  ``speed-up`` = separate / stacked;
* ``otf vs unfair``: one OTF fit (default, and ``fixed_batches=True``) and the stacked
  K-curve's cost per model, against one unpenalized logistic fit at equal epochs (the
  issue's target: <= 5x).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from typing import Any

import numpy as np
import torch
from _common import bench_main, fit_at

from otfair.datasets import load_dataset
from otfair_lab.experiments.methods import get_method

#: method -> epochs of the timed fits (quick, full)
EPOCHS = {"ftm": (1, 2), "gapreg": (1, 2), "otf": (1, 2)}
#: epochs of the OTF vs unpenalized comparison (quick, full): fixed batches pay their
#: cost matrices in the first epoch only, so the ratio depends on the epoch count
OTF_EPOCHS = (3, 10)


def _split(method: str):
    spec = get_method(method)
    return load_dataset("adult").split(random_state=0, sensitive_as_input=spec.sensitive_as_input)


def _estimator(method: str, strengths: Any, epochs: int):
    spec = get_method(method)
    grid = spec.default_strengths
    est = spec.build(grid[0], random_state=0, epochs=epochs, dataset="adult", notion="dp")
    return _Fit(est, strengths)


class _Fit:
    """An estimator and its strength (a list: its path, :func:`fairness_path`)."""

    def __init__(self, est: Any, strength: Any) -> None:
        self.est, self.strength = est, strength

    def set_params(self, **params: Any) -> _Fit:
        self.est.set_params(**params)
        return self

    def fit(self, X: Any, y: Any, **fit: Any) -> Any:
        return fit_at(self.est, X, y, self.strength, **fit)


def _strengths(method: str, K: int) -> list[float]:
    grid = list(get_method(method).default_strengths)
    values = np.interp(np.linspace(0, len(grid) - 1, K), np.arange(len(grid)), grid)
    return [float(v) for v in np.round(values, 6)]


def _cpu(fn) -> float:
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def _curve_times(method: str, K: int, epochs: int, split) -> dict[str, float]:
    strengths = _strengths(method, K)
    fit = {"sensitive_features": split.s_train}

    def separate() -> None:
        for a in strengths:
            _estimator(method, a, epochs).fit(split.X_train, split.y_train, **fit)

    def stacked() -> None:
        _estimator(method, strengths, epochs).fit(split.X_train, split.y_train, **fit)

    t_stacked = _cpu(stacked)
    t_separate = _cpu(separate)
    return {"separate_s": t_separate, "stacked_s": t_stacked, "speedup": t_separate / t_stacked}


def _otf_vs_unfair(epochs: int, K: int, split) -> dict[str, float]:
    fit = {"sensitive_features": split.s_train}
    unfair = get_method("unfair").build(None, random_state=0, epochs=epochs, dataset="adult")
    otf = _estimator("otf", 0.01, epochs)
    fixed = _estimator("otf", 0.01, epochs).set_params(fixed_batches=True)
    curve = _estimator("otf", _strengths("otf", K), epochs)
    curve_fixed = _estimator("otf", _strengths("otf", K), epochs).set_params(fixed_batches=True)
    t_unfair = _cpu(lambda: unfair.fit(split.X_train, split.y_train, **fit))
    t_otf = _cpu(lambda: otf.fit(split.X_train, split.y_train, **fit))
    t_fixed = _cpu(lambda: fixed.fit(split.X_train, split.y_train, **fit))
    t_curve = _cpu(lambda: curve.fit(split.X_train, split.y_train, **fit))
    t_curve_fixed = _cpu(lambda: curve_fixed.fit(split.X_train, split.y_train, **fit))
    return {
        "unfair_s": t_unfair,
        "otf_s": t_otf,
        "otf_ratio": t_otf / t_unfair,
        "otf_fixed_ratio": t_fixed / t_unfair,
        "curve_per_model_ratio": t_curve / K / t_unfair,
        "curve_fixed_per_model_ratio": t_curve_fixed / K / t_unfair,
    }


def peak_memory(K: int, epochs: int = 1) -> dict[str, float]:
    """Peak RSS (MB) of this process before and after one stacked FTM fit of K models."""
    split = _split("ftm")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    _estimator("ftm", _strengths("ftm", K), epochs).fit(
        split.X_train, split.y_train, sensitive_features=split.s_train
    )
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"K": K, "rss_before_mb": before, "peak_rss_mb": after}


def run(quick: bool = False) -> dict:
    torch.set_num_threads(1)
    from threadpoolctl import threadpool_limits

    Ks = (2, 8) if quick else (2, 4, 8, 16)
    out: dict[str, Any] = {"curves": []}
    with threadpool_limits(1):
        for method in ("ftm", "gapreg", "otf"):
            split = _split(method)
            epochs = EPOCHS[method][0 if quick else 1]
            _curve_times(method, 2, 1, split)  # warm-up (imports, matching cache)
            for K in Ks:
                row = {"method": method, "K": K, "epochs": epochs}
                row.update(_curve_times(method, K, epochs, split))
                out["curves"].append(row)
        epochs = OTF_EPOCHS[0 if quick else 1]
        out["otf_vs_unfair"] = {"epochs": epochs, "K": 8}
        out["otf_vs_unfair"].update(_otf_vs_unfair(epochs, 8, _split("otf")))
    K_mem = 8 if quick else 16
    proc = subprocess.run(
        [sys.executable, __file__, "--memory", str(K_mem)],
        capture_output=True,
        text=True,
        check=True,
    )
    out["memory"] = json.loads(proc.stdout)
    return out


def format_rows(result: dict) -> str:
    lines = [
        "| method | K | epochs | K separate fits (s) | stacked fit (s) | speed-up |",
        "|---|---|---|---|---|---|",
    ]
    for r in result["curves"]:
        lines.append(
            f"| {r['method']} | {r['K']} | {r['epochs']} | {r['separate_s']:.2f} | "
            f"{r['stacked_s']:.2f} | {r['speedup']:.2f}x |"
        )
    o = result["otf_vs_unfair"]
    lines += [
        "",
        f"OTF logistic vs unpenalized logistic, {o['epochs']} epochs: one OTF fit "
        f"{o['otf_s']:.2f} s vs {o['unfair_s']:.2f} s = {o['otf_ratio']:.1f}x; "
        f"with fixed_batches {o['otf_fixed_ratio']:.1f}x; stacked curve of {o['K']}: "
        f"{o['curve_per_model_ratio']:.1f}x per model ({o['curve_fixed_per_model_ratio']:.1f}x "
        "with fixed_batches)",
        f"Peak RSS of a stacked FTM fit of K = {result['memory']['K']}: "
        f"{result['memory']['peak_rss_mb']:.0f} MB (after loading: "
        f"{result['memory']['rss_before_mb']:.0f} MB)",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--memory":
        torch.set_num_threads(1)
        print(json.dumps(peak_memory(int(sys.argv[2]))))
    else:
        bench_main(__doc__, run, format_rows)
