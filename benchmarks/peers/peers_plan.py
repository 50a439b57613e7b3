"""Peers page, the plan: strength grids, (dataset, model) blocks, the CSV store, the loop."""

from __future__ import annotations

import csv
import os
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from peers_fits import Runner

OUT = Path(__file__).resolve().parents[2] / "docs" / "reproduction" / "peers" / "fits.csv"
FIELDS = (
    "dataset",
    "model",
    "method",
    "strength",
    "seed",
    "accuracy",
    "auc",
    "dp_gap",
    "fit_cpu_s",
    "solver",
    "epochs",
)
LEVELS = (0.05, 0.02)

#: method -> (library, full strength grid), run on the cheap COMPAS block; the Adult blocks
#: override the grids with the points near DP 0.05 and 0.02 (a busy 2-core machine).
GRIDS: dict[str, tuple[str, tuple[float, ...]]] = {
    "unfair": ("otfair", (0.0,)),
    "otf": ("otfair", (0.002, 0.005, 0.02)),
    "norm": ("otfair", (0.03, 0.1, 0.3, 0.6, 0.9, 0.97)),
    "gapreg": ("otfair", (1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0)),
    "ftm": ("otfair", (0.5, 1.0, 1.5, 2.0)),
    "reduction": ("otfair", (0.05, 0.02, 0.01, 0.005)),
    "fairret-norm": ("fairret", (0.1, 0.3, 1.0, 3.0, 10.0, 30.0)),
    "fairret-kl": ("fairret", (1.0, 5.0, 30.0, 100.0)),
    "threshold-opt": ("fairlearn", (0.0, 0.01, 0.02, 0.04, 0.06)),
    "error-parity": ("error-parity", (0.0, 0.01, 0.02, 0.04, 0.06)),
}
LIBRARY = {**{m: lib for m, (lib, _) in GRIDS.items()}, "exp-gradient": "fairlearn"}
#: methods fitted on the first seed only (cost)
FIRST_SEED_ONLY = ("fairret-kl",)


@dataclass(frozen=True)
class Plan:
    """One (dataset, model) block: its methods, seeds and grid overrides."""

    dataset: str
    model: str
    seeds: tuple[int, ...]
    methods: tuple[str, ...]
    grids: dict[str, tuple[float, ...]] = field(default_factory=dict)

    def grid(self, method: str) -> tuple[float, ...]:
        """Return the strengths of ``method`` in this block."""
        return self.grids.get(method, GRIDS[method][1])


_ALL = ("unfair", "norm", "gapreg", "fairret-norm", "reduction", "threshold-opt",
        "error-parity", "ftm", "otf", "fairret-kl")  # fmt: skip
PLANS = {
    "compas-logistic": Plan(
        "compas",
        "logistic",
        (0, 1, 2),
        _ALL,
        {
            "otf": (0.002, 0.005, 0.02, 0.1, 0.3, 0.9, 0.97, 0.99, 0.997),
            "norm": (0.03, 0.1, 0.3, 0.4, 0.5, 0.6, 0.9, 0.97),
            "gapreg": (1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0, 10000.0),
        },
    ),
    "adult-logistic": Plan(
        "adult",
        "logistic",
        (0,),
        _ALL[:-1],
        {
            "norm": (0.03, 0.1, 0.2, 0.3, 0.35, 0.4, 0.45, 0.6, 0.75, 0.9),
            "gapreg": (3.0, 5.0, 10.0, 30.0, 100.0, 300.0, 1000.0),
            "fairret-norm": (0.3, 0.5, 1.0, 3.0, 10.0),
            "ftm": (1.0, 1.5, 2.0),
            "reduction": (0.03, 0.01, 0.005),
            # L-BFGS fits (the default for the logistic model): a second each
            "otf": (0.003, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1),
        },
    ),
    "adult-mlp": Plan(
        "adult",
        "mlp",
        (0,),
        ("unfair", "gapreg", "norm", "fairret-norm", "threshold-opt", "error-parity", "ftm"),
        {
            "gapreg": (10.0, 30.0, 50.0, 100.0, 300.0, 1000.0),
            "norm": (0.03, 0.3, 0.6, 0.9),
            "fairret-norm": (0.3, 1.0, 3.0, 10.0),
            "ftm": (0.5, 1.0, 1.5, 2.0, 3.0),
        },
    ),
}


# --------------------------------------------------------------------------- CSV store
def read_rows(path: Path) -> list[dict]:
    """Rows of the fits CSV (numbers parsed), or ``[]`` if it does not exist."""
    if not path.exists():
        return []
    with path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    unique: dict[tuple, dict] = {}
    for r in rows:
        for k in ("strength", "accuracy", "auc", "dp_gap", "fit_cpu_s"):
            r[k] = float(r[k])
        r["seed"] = int(r["seed"])
        unique.setdefault((r["dataset"], r["model"], r["method"], r["strength"], r["seed"]), r)
    return list(unique.values())  # the first row of a fit run twice


def append_rows(path: Path, rows: Iterable[dict]) -> None:
    """Append rows with one ``write`` (O_APPEND: safe for concurrent processes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        path.write_text(",".join(FIELDS) + "\n")
    text = "".join(",".join(_fmt(r[k]) for k in FIELDS) + "\n" for r in rows)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _fmt(v: Any) -> str:
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def run(
    plans: list[str],
    only: set[str] | None,
    out: Path,
    max_fits: int = 0,
    strengths: set[float] | None = None,
) -> None:
    """Fit every missing (plan, method, strength, seed), logging progress to stderr.

    ``max_fits > 0`` stops after that many fits (to keep each process short);
    ``strengths`` restricts the grids to those values.
    """
    torch.set_num_threads(1)
    done = {(r["dataset"], r["model"], r["method"], r["strength"], r["seed"])
            for r in read_rows(out)}  # fmt: skip
    n_fits = 0
    for name in plans:
        plan = PLANS[name]
        for seed in plan.seeds:
            runner: Runner | None = None
            for method in plan.methods:
                if (only and method not in only) or (
                    method in FIRST_SEED_ONLY and seed != plan.seeds[0]
                ):
                    continue
                for strength in plan.grid(method):
                    if strengths and float(strength) not in strengths:
                        continue
                    key = (plan.dataset, plan.model, method, float(strength), seed)
                    if key in done:
                        continue
                    if max_fits and n_fits >= max_fits:
                        return
                    n_fits += 1
                    runner = runner or Runner(plan.dataset, plan.model, seed)
                    t0 = time.time()
                    rows = runner.fit(method, float(strength))
                    append_rows(out, rows)
                    for r in rows:
                        print(
                            f"[{time.strftime('%H:%M:%S')}] {name} seed={seed} "
                            f"{r['method']}@{strength:g}: acc {r['accuracy']:.3f} "
                            f"auc {r['auc']:.3f} dp {r['dp_gap']:.3f} "
                            f"cpu {r['fit_cpu_s']:.1f}s wall {time.time() - t0:.1f}s",
                            file=sys.stderr,
                            flush=True,
                        )
