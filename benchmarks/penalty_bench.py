"""Training-step cost of each fairness penalty relative to plain ERM, and epoch speed-ups.

Usage: ``python benchmarks/penalty_bench.py [--quick] [--json]`` (or ``otfair bench
penalties`` from a checkout). Public API only.

Step timings: one process, one torch thread (``torch.set_num_threads(1)``; BLAS threads
as set by the environment, printed), Adam, synthetic Adult-sized data (16 batches of
1024 points, d = 100). What is timed is :class:`otfair.estimators.FairClassifier`'s
``fit``: each variant is fitted with 1 and with 3 epochs, and a step costs the
difference / (2 x 16), so set-up (matchings, constraint fits, model build) cancels out
and the per-step Python overhead of the training loop is included. Variants are timed
*alternately* (round robin over repeats, medians), on the MLP d-d-d-1 and, for the OTF
family, on the logistic model (the OTF paper's setting, where the step is almost free).

Epoch timings against the reference algorithms re-created here: OTF with numpy and
``scipy.optimize.minimize`` per constraint (as the OTF paper's code), FTM with ``ot.emd``
per batch (as the FTM paper's code). Reference epochs are extrapolated from the timed
batches (stated in the row).
"""

from __future__ import annotations

import math
import os
import statistics
import tempfile
import time
from typing import Any

import numpy as np
import torch
from _common import synthetic

#: (name, FairClassifier keywords): MLP variants, then the logistic OTF family
VARIANTS: dict[str, dict[str, Any]] = {
    "erm": {"penalty": "none"},
    "ftm": {"penalty": "ftm", "strength": 1.0},
    "gapreg": {"penalty": "gapreg", "strength": 1.0},
    "norm": {"penalty": "norm", "strength": 0.5},
    "barycenter": {"penalty": "barycenter", "strength": 0.5},
    "adv": {"penalty": "adv", "strength": 1.0},
    "otf": {"penalty": "otf", "strength": 0.5},
    "logistic erm": {"penalty": "none", "model": "logistic"},
    # Adam steps (OTF's default for the logistic model, two groups, DP, is L-BFGS)
    "logistic otf": {"penalty": "otf", "strength": 0.5, "model": "logistic", "solver": "adam"},
}


def _fit_fns(n_steps: int, batch: int, d: int, cache_dir: str) -> dict[str, Any]:
    """Per variant ``(fn, steps per epoch)``; ``fn(epochs)`` fits a fresh FairClassifier.

    FTM steps draw ``batch / 2`` points of each group and an epoch covers the larger
    group: ``ceil(max group size / (batch / 2))`` steps; the others take ``n_steps``.
    """
    from otfair.estimators import FairClassifier
    from otfair.penalties import FTM

    X, y, s = (t.numpy() for t in synthetic(n_steps * batch, d))
    ftm_steps = math.ceil(np.bincount(s).max() / (batch // 2))

    def make(options: dict[str, Any]):
        kw = {"model": "mlp", "hidden": (d, d), "batch_size": batch, "random_state": 0}
        kw.update(options)
        if kw["penalty"] == "ftm":  # the same 1024 points per step as ERM
            kw["penalty"] = FTM(group_batch_size=batch // 2, cache_dir=cache_dir)

        def fn(epochs: int) -> None:
            FairClassifier(epochs=epochs, **kw).fit(X, y, sensitive_features=s)

        return fn, ftm_steps if isinstance(kw["penalty"], FTM) else n_steps

    return {name: make(options) for name, options in VARIANTS.items()}


def _time_steps(fns: dict[str, Any], repeats: int) -> dict[str, float]:
    """Median seconds per step: (fit with 3 epochs - fit with 1 epoch) / (2 x steps).

    CPU time of this process (``time.process_time``): with one torch thread it equals
    wall time on an idle machine, and on a shared one it does not count the time
    slices given to other processes. Variants alternate (round robin).
    """
    for fn, _ in fns.values():  # warm-up (and the FTM matchings go to the cache)
        fn(1)
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeats):
        for name, (fn, steps_per_epoch) in fns.items():
            t0 = time.process_time()
            fn(1)
            t1 = time.process_time()
            fn(3)
            t2 = time.process_time()
            times[name].append(((t2 - t1) - (t1 - t0)) / (2 * steps_per_epoch))
    return {k: statistics.median(v) for k, v in times.items()}


def _reference_otf_batch(h, C, G, eps, n_iter):
    """Run the OTF paper's algorithm: numpy lambda updates, scipy minimize per mu_c.

    The mu_c objective is minimized in log form (same argmin, no overflow).
    """
    from scipy.optimize import minimize
    from scipy.special import logsumexp

    n, d = len(h), G.shape[0]
    mu = np.zeros(d)
    lam = np.zeros(n)
    for _ in range(n_iter):
        lam = eps * np.log(h) - eps * logsumexp((-C + (mu @ G)[None, :]) / eps, axis=1)
        log_eta = logsumexp((-C + lam[:, None]) / eps, axis=0)
        for c in range(d):
            other = mu @ G - mu[c] * G[c]

            def obj(m, c=c, other=other, log_eta=log_eta):
                return float(logsumexp(log_eta + (other + m[0] * G[c]) / eps))

            mu[c] = minimize(obj, x0=[mu[c]], method="BFGS").x[0]
    return lam, mu


def run(quick: bool = False, **kw: Any) -> dict:
    """Run the benchmark and return ``{"rows": [...], "torch_threads": ...}``."""
    torch.set_num_threads(1)
    d, batch = 100, 1024
    repeats = 3 if quick else 7
    n_steps = 16
    rows = []
    with tempfile.TemporaryDirectory() as cache_dir:
        medians = _time_steps(_fit_fns(n_steps, batch, d, cache_dir), repeats)
    for name, t in medians.items():
        base = medians["logistic erm" if name.startswith("logistic") else "erm"]
        rows.append(
            {"what": f"step {name}", "batch": batch, "ms": 1e3 * t, "ratio_to_erm": t / base}
        )

    # --- OTF epoch: ours vs the reference (batch 1000, Adult-sized training set) ---
    from otfair.ot import OTFProblem, euclidean_cost, match

    n_train, b = (8000 if quick else 36000), 1000
    steps = math.ceil(n_train / b)
    X, y, s = synthetic(b, d, seed=1)
    sf = s.double()
    G = torch.stack([sf / sf.mean() - 1, (1 - sf) / (1 - sf).mean() - 1]).float()  # DP rows
    h = torch.sigmoid(torch.randn(b)).requires_grad_(True)

    def ours_batch() -> None:  # what the OTF penalty does per batch: cost, problem, otf0
        with torch.no_grad():
            C = euclidean_cost(X, X, exact=False)
            scale = float(C.mean())
        OTFProblem(C / scale, G).otf0(h, 1e-3).backward()

    ours_batch()  # warm-up
    k = 2 if quick else 4
    t0 = time.perf_counter()
    for _ in range(k):
        ours_batch()
    ours = (time.perf_counter() - t0) / k
    C = euclidean_cost(X, X).double().numpy()
    C = C / C.mean()
    t0 = time.perf_counter()
    _reference_otf_batch(h.detach().double().numpy(), C, G.double().numpy(), 1e-3, 2)
    _reference_otf_batch(h.detach().double().numpy(), C, G.double().numpy(), 1e-3, 2)
    ref = (time.perf_counter() - t0) / 2
    rows.append({"what": "epoch otf (ours)", "batch": b, "ms": 1e3 * ours * steps,
                 "ratio_to_erm": None, "steps": steps})  # fmt: skip
    rows.append({"what": "epoch otf (reference: scipy minimize per constraint, x2 iters; "
                 "extrapolated from 2 batches)", "batch": b, "ms": 1e3 * ref * steps,
                 "ratio_to_erm": None, "speedup_ours": ref / ours})  # fmt: skip

    # --- FTM epoch: cached steps vs ot.emd per batch ---
    import ot as pot

    m = 1024
    steps = math.ceil(n_train / (2 * m))
    X0, _, _ = synthetic(m, d, seed=2)
    X1, _, _ = synthetic(m, d, seed=3)
    t0 = time.perf_counter()
    match(X0, X1)
    t_match = time.perf_counter() - t0
    t0 = time.perf_counter()
    M = pot.dist(X0.double().numpy(), X1.double().numpy())
    pot.emd(np.full(m, 1 / m), np.full(m, 1 / m), M)
    t_emd = time.perf_counter() - t0
    t_ftm = medians["ftm"] * 2  # a step has 2 x 512 points: 2 steps per 2m at m = 1024
    rows.append({"what": "epoch ftm (ours, cached)", "batch": 2 * m, "ms": 1e3 * t_ftm * steps,
                 "ratio_to_erm": None, "one_matching_ms": 1e3 * t_match})  # fmt: skip
    rows.append({"what": "epoch ftm (reference: ot.emd per batch)", "batch": 2 * m,
                 "ms": 1e3 * (t_ftm + t_emd) * steps, "ratio_to_erm": None,
                 "speedup_ours": (t_ftm + t_emd) / t_ftm})  # fmt: skip
    return {
        "rows": rows,
        "torch_threads": torch.get_num_threads(),
        "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
        "quick": quick,
    }


def format_rows(result: dict) -> str:
    """Render the rows as a fixed-width table."""
    lines = [
        f"torch threads={result['torch_threads']} "
        f"OPENBLAS_NUM_THREADS={result['OPENBLAS_NUM_THREADS']}",
        f"{'what':<75} {'batch':>6} {'ms':>10} {'x ERM':>7} {'speed-up':>9}",
    ]
    for r in result["rows"]:
        ratio = "" if r.get("ratio_to_erm") is None else f"{r['ratio_to_erm']:.2f}"
        speed = "" if r.get("speedup_ours") is None else f"{r['speedup_ours']:.1f}"
        lines.append(f"{r['what']:<75} {r['batch']:>6} {r['ms']:>10.2f} {ratio:>7} {speed:>9}")
    return "\n".join(lines)


if __name__ == "__main__":
    from _common import bench_main

    bench_main(__doc__, run, format_rows, quick_help="fewer repeats, 8000 rows")
