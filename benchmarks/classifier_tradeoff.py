"""Fairness-accuracy trade-off of the fair classifiers on Adult (sensitive attribute: sex).

``python benchmarks/classifier_tradeoff.py [--methods ftm,gapreg] [--seeds 0,1,2]
[--epochs-mlp 30] [--epochs-logistic 100] [--epochs-otf 100] [--out DIR] [--table]``
(``DIR`` defaults to ``$TMPDIR/otfair-classifier-tradeoff``)

Every method of ``otfair fit`` (classification) is trained over its registered strength
grid (``MethodSpec.default_strengths``) with the registered defaults, except for the
epoch budget, which is set here and printed in the table. Seed ``k`` uses the split
``random_state=k`` (80/20 as ``load_dataset("adult").split``) and the model
``random_state=k``. Each run is appended as one JSON line to ``DIR/runs.jsonl`` and
skipped when rerun, so the script can be stopped, resumed or run in several processes
(one per method). ``--table`` prints the markdown table of ``docs/classifiers.md``:
means over seeds of test accuracy, AUC and the method's target violation, DP (hard
predictions) for the FTM family and the reduction, PDP (mean-score gap) for the OTF
family, against the unfair model of the same family (MLP with the sensitive attribute
as input for the FTM family, logistic regression without it for the OTF family).

One torch thread (``torch.set_num_threads(1)``); set ``OPENBLAS_NUM_THREADS=1``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from _common import ArgumentParser

from otfair.datasets import load_dataset
from otfair.metrics import accuracy, demographic_parity_gap, pdp_violation, roc_auc
from otfair_lab.experiments.methods import get_method

#: method -> (family, violation metric). Baselines are strength 0 of these methods.
METHODS = {
    "ftm": ("mlp", "dp"),
    "ftm-joint": ("mlp", "dp"),
    "gapreg": ("mlp", "dp"),
    "adv": ("mlp", "dp"),
    "reduction": ("mlp", "dp"),
    "otf": ("logistic", "pdp"),
    "norm": ("logistic", "pdp"),
    "barycenter": ("logistic", "pdp"),
}
#: The unfair reference of each family: (method, strength). OTF runs with its own
#: (reduced) epoch budget, so its reference is the logistic model with that budget.
UNFAIR = {"mlp": ("gapreg", 0.0), "logistic": ("unfair", 0.0), "otf": ("unfair-short", 0.0)}


def _family(method: str) -> str:
    return "otf" if method == "otf" else METHODS[method][0]


def _epochs(method: str, args: argparse.Namespace) -> int | None:
    if method == "reduction":
        return None
    if method in ("otf", "unfair-short"):
        return args.epochs_otf
    return (
        args.epochs_mlp
        if METHODS.get(method, ("logistic",))[0] == "mlp"
        else (args.epochs_logistic)
    )


def run_one(method: str, strength: float, seed: int, args: argparse.Namespace) -> dict:
    """Fit one (method, strength, seed) and return its test panel."""
    spec = get_method("unfair" if method == "unfair-short" else method)
    split = load_dataset("adult").split(
        random_state=seed, sensitive_as_input=spec.sensitive_as_input
    )
    options: dict[str, Any] = {}
    if method.startswith("ftm"):
        options["cache_dir"] = str(args.out / "matchings")
    epochs = _epochs(method, args)
    est = spec.build(
        strength, random_state=seed, epochs=epochs, dataset="adult", notion="dp", **options
    )
    t0 = time.perf_counter()
    est.fit(split.X_train, split.y_train, sensitive_features=split.s_train)
    fit_s = time.perf_counter() - t0
    p = est.predict_proba(split.X_test)[:, 1]
    y, s = split.y_test, split.s_test
    return {
        "method": method,
        "strength": float(strength),
        "seed": int(seed),
        "epochs": epochs,
        "acc": accuracy(y, p),
        "auc": roc_auc(y, p),
        "dp": demographic_parity_gap(y, p, sensitive_features=s),
        "pdp": pdp_violation(y, p, sensitive_features=s),
        "fit_s": fit_s,
    }


def _done(path: Path) -> dict[tuple, dict]:
    if not path.is_file():
        return {}
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {(r["method"], r["strength"], r["seed"]): r for r in rows}


def run(args: argparse.Namespace) -> None:
    """Run every missing (method, strength, seed) and append it to ``runs.jsonl``."""
    torch.set_num_threads(1)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "runs.jsonl"
    for method in args.methods:
        family = _family(method)
        grid = [UNFAIR[family]] + [(method, g) for g in get_method(method).default_strengths]
        for seed in args.seeds:
            for name, strength in grid:
                if (name, float(strength), seed) in _done(path):
                    continue
                row = run_one(name, strength, seed, args)
                with path.open("a") as fh:
                    fh.write(json.dumps(row) + "\n")
                print(json.dumps(row), flush=True)


def table(args: argparse.Namespace) -> str:
    """Markdown table: per method and strength, means over seeds vs the unfair model."""
    rows = list(_done(args.out / "runs.jsonl").values())

    def mean(method: str, strength: float, key: str) -> tuple[float, int]:
        vals = [r[key] for r in rows if r["method"] == method and r["strength"] == strength]
        return (float(np.mean(vals)) if vals else float("nan")), len(vals)

    out = [
        "| method | strength | seeds | epochs | acc | AUC | violation | / unfair | "
        "d acc | d AUC | fit s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for family, (base, g0) in UNFAIR.items():
        metric = "dp" if family == "mlp" else "pdp"
        acc, n = mean(base, g0, "acc")
        if n == 0:
            continue
        auc, vio = mean(base, g0, "auc")[0], mean(base, g0, metric)[0]
        out.append(
            f"| {base} ({family}) | - | {n} | | {acc:.3f} | {auc:.3f} | "
            f"{metric.upper()} {vio:.3f} | 1 | | | |"
        )
    for method in args.methods:
        metric = METHODS[method][1]
        base = UNFAIR[_family(method)]
        b_acc, b_auc, b_vio = (mean(*base, k)[0] for k in ("acc", "auc", metric))
        strengths = sorted({r["strength"] for r in rows if r["method"] == method} - {0.0})
        for g in strengths:
            acc, n = mean(method, g, "acc")
            auc, vio, fit = (mean(method, g, k)[0] for k in ("auc", metric, "fit_s"))
            ep = next(r["epochs"] for r in rows if r["method"] == method)
            out.append(
                f"| {method} | {g:g} | {n} | {ep or '-'} | {acc:.3f} | {auc:.3f} | "
                f"{metric.upper()} {vio:.3f} | {vio / b_vio:.2f} | {acc - b_acc:+.3f} | "
                f"{auc - b_auc:+.3f} | {fit:.1f} |"
            )
    return "\n".join(out)


def main() -> None:
    """Command-line entry point."""
    parser = ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--epochs-mlp", type=int, default=30)
    parser.add_argument("--epochs-logistic", type=int, default=100)
    parser.add_argument("--epochs-otf", type=int, default=100)
    parser.add_argument(
        "--out", type=Path, default=Path(tempfile.gettempdir()) / "otfair-classifier-tradeoff"
    )
    parser.add_argument("--table", action="store_true", help="print the table only")
    args = parser.parse_args()
    args.methods = [m for m in args.methods.split(",") if m]
    unknown = sorted(set(args.methods) - set(METHODS))
    if unknown:
        parser.error(f"unknown --methods {unknown}; choose from {sorted(METHODS)}")
    args.seeds = [int(v) for v in args.seeds.split(",") if v]
    if not args.table:
        run(args)
    print(table(args))


if __name__ == "__main__":
    main()
