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
* ``stacked``: one ``fairness_path(build(...), ..., strengths=[l_1..l_K])``;
* ``speed-up`` = separate / stacked; the K lambdas are spread geometrically over the
  registry's grid (0.1 .. 50).

Second table, how to stack (forward + backward of one CENet step at the datasets'
sizes, batch 256, best of repeats, milliseconds): ``per-model products`` is what the
estimators use (:mod:`otfair.models.stacked`: one autograd node per layer making each
model's product as ``nn.Linear`` does, everything else stacked), ``baddbmm`` batched
products on the same stacked tensors, ``vmap`` ``torch.func.stack_module_state`` +
``torch.func.vmap`` over the K modules, ``K modules`` K separate passes.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch
from _common import bench_main, cpu_seconds, fit_at, markdown_table

from otfair.datasets import load_dataset
from otfair_lab.experiments.methods import get_method

DATASETS = ("communities_crime", "law_school")
METHODS = ("cenet", "wassersteinnet")


def _lams(method: str, K: int) -> list[float]:
    grid = get_method(method).default_strengths
    return [float(v) for v in np.round(np.geomspace(min(grid), max(grid), K), 6)]


def _curve_times(method: str, dataset: str, K: int, epochs: int | None, split) -> dict:
    spec = get_method(method)
    lams = _lams(method, K)
    fit = {"sensitive_features": split.s_train}

    def build():
        return spec.build(1.0, random_state=0, dataset=dataset, epochs=epochs)

    def separate() -> None:
        for lam in lams:
            fit_at(build(), split.X_train, split.y_train, lam, **fit)

    def stacked() -> None:
        fit_at(build(), split.X_train, split.y_train, list(lams), **fit)

    t_stacked = cpu_seconds(stacked)
    t_separate = cpu_seconds(separate)
    return {"separate_s": t_separate, "stacked_s": t_stacked, "speedup": t_separate / t_stacked}


def _step_variants(d: int, latent: int, hidden: int, K: int, b: int = 256) -> dict:
    """Milliseconds of one CENet forward + backward, four ways of running K models."""
    import copy

    from torch import nn
    from torch.func import functional_call, stack_module_state, vmap
    from torch.nn import functional as F

    from otfair.models.adversarial import JointAdversary
    from otfair.models.stacked import StackedJointAdversary, StackedLayers

    torch.manual_seed(0)
    X, y, a = torch.randn(b, d), torch.rand(b), (torch.rand(b) < 0.4).float()

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.enc, self.head = nn.Linear(d, latent), nn.Linear(latent, 1)
            self.adv = JointAdversary(latent, hidden=(hidden,))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            z = torch.relu(self.enc(x))
            mse = torch.mean((torch.sigmoid(self.head(z))[:, 0] - y) ** 2)
            return mse + F.binary_cross_entropy_with_logits(self.adv(z, y), a)

    nets = [Net() for _ in range(K)]
    enc = StackedLayers.from_linears([[n.enc] for n in nets], activate_last=True)
    head = StackedLayers.from_linears([[n.head] for n in nets])
    adv = StackedJointAdversary([n.adv for n in nets])
    stacks = (enc, head, adv.net)
    raw = [
        (w.detach().clone().requires_grad_(), c.detach().clone().requires_grad_())
        for m in stacks
        for w, c in zip(m.weights, m.biases, strict=True)
    ]

    def cenet_loss(z: torch.Tensor, pred: torch.Tensor, logits: torch.Tensor) -> None:
        mse = torch.mean((pred - y) ** 2, dim=-1)
        ce = F.binary_cross_entropy_with_logits(logits, a.expand_as(logits), reduction="none")
        (mse + ce.mean(dim=-1)).sum().backward()

    def per_model() -> None:
        z = enc(X)
        cenet_loss(z, torch.sigmoid(head(z))[..., 0], adv(z, y))

    def batched() -> None:
        (w1, b1), (wh, bh), (a1, c1), (a2, c2) = raw
        z = torch.relu(torch.matmul(X, w1.mT) + b1)
        pred = torch.sigmoid(torch.baddbmm(bh, z, wh.mT))[..., 0]
        zy = torch.cat([z, y.expand(K, b)[..., None]], dim=-1)
        logits = torch.baddbmm(c2, torch.relu(torch.baddbmm(c1, zy, a1.mT)), a2.mT)[..., 0]
        cenet_loss(z, pred, logits)

    params, buffers = stack_module_state(nets)
    base = copy.deepcopy(nets[0]).to("meta")
    vmapped = vmap(lambda p, q, x: functional_call(base, (p, q), (x,)), in_dims=(0, 0, None))

    def separate() -> None:
        for net in nets:
            net(X).backward()

    variants = {
        "per-model products": per_model,
        "baddbmm": batched,
        "vmap": lambda: vmapped(params, buffers, X).sum().backward(),
        "K modules": separate,
    }
    out = {}
    for name, fn in variants.items():
        for _ in range(10):
            fn()
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(20):
                fn()
            best = min(best, (time.perf_counter() - t0) / 20)
        out[name] = 1e3 * best
    return out


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
        out["steps"] = []
        for dataset in DATASETS:
            split = load_dataset(dataset).split(random_state=0)
            est = get_method("cenet").build(1.0, dataset=dataset)
            sizes = (split.X_train.shape[1], est.encoder_hidden[-1], est.adversary_hidden[0])
            for K in (8,) if quick else (8, 16):
                row = {"dataset": dataset, "K": K, **_step_variants(*sizes, K)}
                out["steps"].append(row)
    return out


def format_rows(result: dict) -> str:
    curves = [
        [
            r["dataset"],
            r["method"],
            str(r["K"]),
            str(r["epochs"]),
            f"{r['separate_s']:.2f}",
            f"{r['stacked_s']:.2f}",
            f"{r['speedup']:.2f}x",
        ]
        for r in result["curves"]
    ]
    header = ["dataset", "method", "K", "epochs", "K separate fits (s)", "stacked fit (s)"]
    lines = markdown_table([*header, "speed-up"], curves)
    names = [k for k in result["steps"][0] if k not in ("dataset", "K")]
    steps = [[r["dataset"], str(r["K"]), *(f"{r[k]:.2f}" for k in names)] for r in result["steps"]]
    return "\n".join([*lines, "", *markdown_table(["dataset", "K", *names], steps)])


if __name__ == "__main__":
    bench_main(__doc__, run, format_rows)
