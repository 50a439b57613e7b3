"""One fit and stacked K = 8 / 32 curves of OTF, FTM, GapReg (Adult) and CENet (Law) on a device.

Usage: ``python benchmarks/device_bench.py [--device cpu|cuda] [--quick] [--json]``.
Public API only; wall-clock seconds (``time.perf_counter``, with
``torch.cuda.synchronize()`` around each fit on CUDA), registered method defaults
(``otfair methods describe``) except for the epoch budget, seed-0 splits.

Rows, per method:

* ``one fit``: one fit at the method's default strength;
* ``curve K``: one stacked fit of K strengths (``fairness_path``,
  FairClassifier or CENet) against ``K x`` the one fit: ``speed-up = K * one / curve``.

Issue 26's targets on one GPU: an OTF logistic fit at most half its CPU time (run the
script with both devices); a stacked K = 8 OTF curve >= 3x faster than 8 separate fits;
a K = 32 FTM curve in less wall time than one plain fit on a 2-core CPU. ``--quick``
(1 epoch, K = 8 only, at most 8,000 training rows) finishes in under 2 minutes on a CPU.
"""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np
import torch
from _common import ArgumentParser, fit_at

from otfair.datasets import load_dataset
from otfair_lab.experiments.methods import get_method

#: method -> dataset
METHODS = {"otf": "adult", "ftm": "adult", "gapreg": "adult", "cenet": "law_school"}


def _strengths(method: str, K: int) -> list[float]:
    grid = list(get_method(method).default_strengths)
    values = np.interp(np.linspace(0, len(grid) - 1, K), np.arange(len(grid)), grid)
    return [float(v) for v in np.round(values, 6)]


def _wall(fn, device: str) -> float:
    if device == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    if device == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - t0


def _fit_fn(method: str, strength: Any, split, epochs: int, device: str, rows: int | None):
    spec = get_method(method)
    est = spec.build(spec.default_strength, random_state=0, epochs=epochs, dataset=METHODS[method])
    if "device" in est.get_params():
        est.set_params(device=device)
    stop = rows or len(split.y_train)
    X, y, s = split.X_train[:stop], split.y_train[:stop], split.s_train[:stop]
    return lambda: fit_at(est, X, y, strength, sensitive_features=s)


def run(device: str = "cpu", quick: bool = False) -> dict[str, Any]:
    """Time one fit and the stacked curves of every method on ``device``."""
    torch.set_num_threads(torch.get_num_threads() if device == "cuda" else 1)
    epochs, Ks, rows = (1, (8,), 8000) if quick else (5, (8, 32), None)
    out: dict[str, Any] = {"device": device, "epochs": epochs, "rows": []}
    for method, dataset in METHODS.items():
        spec = get_method(method)
        split = load_dataset(dataset).split(
            random_state=0, sensitive_as_input=spec.sensitive_as_input
        )
        one = _fit_fn(method, spec.default_strength, split, epochs, device, rows)
        one()  # warm-up: imports, caches (FTM's matching), CUDA context
        t_one = _wall(one, device)
        row: dict[str, Any] = {"method": method, "dataset": dataset, "one_fit_s": t_one}
        for K in Ks:
            curve = _fit_fn(method, _strengths(method, K), split, epochs, device, rows)
            t_curve = _wall(curve, device)
            row[f"curve{K}_s"] = t_curve
            row[f"curve{K}_speedup"] = K * t_one / t_curve
        out["rows"].append(row)
    return out


def format_rows(result: dict[str, Any]) -> str:
    Ks = sorted(
        int(k[5:-2]) for k in result["rows"][0] if k.startswith("curve") and k.endswith("_s")
    )
    head = "| method | dataset | one fit (s) |" + "".join(
        f" curve K={K} (s) | K x one / curve |" for K in Ks
    )
    lines = [
        f"device {result['device']}, {result['epochs']} epoch(s), wall seconds",
        head,
        "|" + "---|" * (3 + 2 * len(Ks)),
    ]
    for r in result["rows"]:
        cells = "".join(f" {r[f'curve{K}_s']:.2f} | {r[f'curve{K}_speedup']:.2f}x |" for K in Ks)
        lines.append(f"| {r['method']} | {r['dataset']} | {r['one_fit_s']:.2f} |{cells}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--quick", action="store_true", help="1 epoch, K = 8, 8,000 rows")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: torch sees no CUDA device here.")
    result = run(args.device, args.quick)
    print(json.dumps(result, indent=2) if args.json else format_rows(result))


if __name__ == "__main__":
    main()
