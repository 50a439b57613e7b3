"""Where an OTF training step spends its time, and what sharing the data-only work saves.

Usage: ``python benchmarks/otf_batched_bench.py [--quick] [--json]`` (or ``otfair bench
otf-batched`` from a checkout). Public API only; one torch thread
(``torch.set_num_threads(1)``) and one BLAS thread (``threadpoolctl``), ratios measured
in one run with the variants alternating (medians).

The OTF penalty on one batch (the OTF paper's setting: logistic model, batch 1000,
Adult-sized inputs d = 100, two groups, DP, eps = 1e-3 on the mean-scaled Euclidean
cost) does, per step:

1. *data-only work*: the Euclidean cost (one matrix product), its mean, the class order
   and ``OTFProblem`` (class detection, checks) and the class-reduced cost at ``eps``
   (one pass over the n x n cost);
2. *the solves*: ``otf0`` (the OTF and OTFR semi-dual solves on the n x K reduced
   problem) and its backward.

Rows: each part against one logistic-regression training step (forward, backward, Adam);
``K`` models on the same batch (a trade-off curve fitted together) solved one by one
with everything recomputed (``K`` separate fits) vs one data-only pass and
``otf0(H)`` with ``H`` of shape (K, n); and whole fits through
:class:`otfair.estimators.FairClassifier` (OTF vs unpenalized logistic, equal epochs).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import torch
from _common import synthetic

from otfair.ot import OTFProblem, euclidean_cost


def _median_ms(fns: dict[str, Callable[[], Any]], repeats: int) -> dict[str, float]:
    """Median CPU ms of each callable, timed round robin after one warm-up call each.

    CPU time of this process (``time.process_time``): with one thread it equals wall
    time on an idle machine, and on a shared one it does not count other processes.
    """
    for fn in fns.values():
        fn()
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeats):
        for key, fn in fns.items():
            t0 = time.process_time()
            fn()
            times[key].append((time.process_time() - t0) * 1e3)
    return {k: statistics.median(v) for k, v in times.items()}


def _batch(n: int, d: int, seed: int = 0):
    X, y, s = synthetic(n, d, seed)
    s = s.float()
    G = torch.stack([s / s.mean() - 1, (1 - s) / (1 - s).mean() - 1])  # DP rows
    return X, y, s, G


def _data_part(X: torch.Tensor, G: torch.Tensor, eps: float):
    """Do what the OTF penalty computes from the batch alone (no model involved)."""
    order = OTFProblem.class_order(G)
    Xs, Gs = (X, G) if order is None else (X[order], G[:, order])
    with torch.no_grad():
        C = euclidean_cost(Xs, Xs, exact=False)
        C.fill_diagonal_(0.0)
        scale = float(C.mean())
        problem = OTFProblem(C, Gs)
        problem.matrices(eps * scale)
    return problem, order, eps * scale, scale


def step_rows(n: int, d: int, repeats: int, ks: tuple[int, ...], eps: float = 1e-3) -> list:
    """Per-step timings of the OTF penalty's parts and of K models on one batch."""
    X, y, _, G = _batch(n, d)
    model = torch.nn.Linear(d, 1)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.BCEWithLogitsLoss()

    def logistic_step():
        opt.zero_grad()
        loss_fn(model(X)[:, 0], y).backward()
        opt.step()

    problem, order, eps_s, scale = _data_part(X, G, eps)
    compact = problem.compact(eps_s)
    h = torch.sigmoid(model(X)[:, 0].detach())[order].requires_grad_(True)

    def solves():
        h.grad = None
        (compact.otf0(h, eps_s) / scale).backward()

    def full_step():  # what the penalty does per batch today
        p, o, e, sc = _data_part(X, G, eps)
        hh = torch.sigmoid(model(X)[:, 0].detach())[o].requires_grad_(True)
        (p.otf0(hh, e) / sc).backward()

    ms = _median_ms(
        {"logistic": logistic_step, "data": lambda: _data_part(X, G, eps), "solves": solves,
         "full": full_step},
        repeats,
    )  # fmt: skip
    rows = [
        {"what": f"logistic step (n={n}, d={d})", "ms": ms["logistic"], "x_logistic": 1.0},
        {"what": "OTF data-only work (cost, classes, reduced cost)", "ms": ms["data"]},
        {"what": "OTF solves + backward (otf0 on the reduced problem)", "ms": ms["solves"]},
        {"what": "OTF penalty step, all of it (data + solves)", "ms": ms["full"]},
    ]
    for r in rows[1:]:
        r["x_logistic"] = r["ms"] / ms["logistic"]
    gen = torch.Generator().manual_seed(1)
    for K in ks:
        W = torch.randn(K, d, generator=gen) * 0.3
        H = torch.sigmoid(X @ W.T).T.contiguous()  # (K, n): K models' scores

        def separate(H=H):  # K separate fits: everything recomputed per model
            for k in range(H.shape[0]):
                p, o, e, sc = _data_part(X, G, eps)
                (p.otf0(H[k][o].requires_grad_(True), e) / sc).backward()

        def shared(H=H):  # one data pass, K score vectors against one reduced cost
            p, o, e, sc = _data_part(X, G, eps)
            (p.otf0(H[:, o].requires_grad_(True), e).sum() / sc).backward()

        def cached(H=H):  # the batch's compact problem kept from an earlier epoch
            (compact.otf0(H[:, order].requires_grad_(True), eps_s).sum() / scale).backward()

        mk = _median_ms({"separate": separate, "shared": shared, "cached": cached}, repeats)
        rows.append(
            {
                "what": f"K={K} models on one batch: separate / shared / cached (ms per model)",
                "ms": mk["shared"] / K,
                "separate_ms_per_model": mk["separate"] / K,
                "cached_ms_per_model": mk["cached"] / K,
                "speedup_shared": mk["separate"] / mk["shared"],
                "speedup_cached": mk["separate"] / mk["cached"],
                "x_logistic": mk["shared"] / K / ms["logistic"],
            }
        )
    return rows


def fit_rows(n: int, epochs: int, repeats: int) -> list:
    """Whole fits (public estimator): OTF vs unpenalized logistic, equal epochs."""
    from otfair.estimators import FairClassifier

    X, y, s, _ = _batch(n, 100, seed=2)
    X, y, s = X.numpy(), y.numpy(), s.numpy().astype(int)

    def fit(penalty: str) -> Callable[[], None]:
        kw = {"penalty": penalty, "strength": 0.5 if penalty == "otf" else 0.0}
        return lambda: FairClassifier(model="logistic", epochs=epochs, random_state=0,
                                      **kw).fit(X, y, sensitive_features=s)  # fmt: skip

    ms = _median_ms({"none": fit("none"), "otf": fit("otf")}, repeats)
    return [
        {"what": f"fit, logistic, no penalty ({n} rows, {epochs} epochs)", "ms": ms["none"]},
        {
            "what": f"fit, logistic, OTF ({n} rows, {epochs} epochs)",
            "ms": ms["otf"],
            "x_unpenalized_fit": ms["otf"] / ms["none"],
        },
    ]


def run(quick: bool = False) -> dict:
    """Run the benchmark; ``{"rows": [...], "settings": {...}}``."""
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(1)
    repeats = 5 if quick else 15
    ks = (1, 4) if quick else (1, 2, 4, 8, 16)
    with threadpool_limits(limits=1):
        rows = step_rows(1000, 100, repeats, ks)
        rows += fit_rows(8000 if quick else 36000, 2 if quick else 5, 1 if quick else 3)
    settings = {"threads": "torch 1, BLAS 1 (threadpoolctl)", "repeats": repeats,
                "torch": torch.__version__}  # fmt: skip
    return {"rows": rows, "settings": settings}


def format_rows(result: dict) -> str:
    """Plain-text table of :func:`run`'s rows."""
    lines = [f"threads: {result['settings']['threads']}"]
    for r in result["rows"]:
        extra = "  ".join(
            f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
            for k, v in r.items()
            if k not in ("what", "ms")
        )
        lines.append(f"{r['what']:<72} {r['ms']:>9.2f} ms  {extra}")
    return "\n".join(lines)


if __name__ == "__main__":
    from _common import bench_main

    bench_main(__doc__, run, format_rows, quick_help="K = 1, 4; short fits")
