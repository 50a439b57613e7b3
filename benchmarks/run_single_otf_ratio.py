"""OTF through ``run_single`` (the registry's defaults) against the unpenalized fit.

Usage: ``python benchmarks/run_single_otf_ratio.py [--epochs 30] [--repeats 2]
[--json]``. Public API only; one torch thread. Runs ``run_single("adult", "otf")`` and
``run_single("adult", "unfair")`` (seed 0, ``--epochs`` epochs, the registry's
defaults: OTF on fixed batches, as ``FairClassifier`` trains it) alternately
``--repeats`` times and prints the ratio of their best fit times (``fit_time_s``:
wall seconds of the fit alone). The target: <= 5x.
"""

from __future__ import annotations

import json

import torch
from _common import ArgumentParser

from otfair_lab.experiments import run_single


def main(argv: list[str] | None = None) -> dict:
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    times: dict[str, list[float]] = {"otf": [], "unfair": []}
    for _ in range(args.repeats):
        for method in times:
            result = run_single("adult", method, seed=0, epochs=args.epochs)
            times[method].append(float(result["fit_time_s"]))
    out = {
        "epochs": args.epochs,
        "otf_fit_s": min(times["otf"]),
        "unfair_fit_s": min(times["unfair"]),
        "ratio": min(times["otf"]) / min(times["unfair"]),
    }
    if args.json:
        print(json.dumps(out))
    else:
        print(
            f"run_single on Adult, {args.epochs} epochs: otf {out['otf_fit_s']:.2f} s, "
            f"unfair {out['unfair_fit_s']:.2f} s, ratio {out['ratio']:.2f}x"
        )
    return out


if __name__ == "__main__":
    main()
