"""How well ``otfair sweep`` estimates a sweep before running it (issue 28, item 4).

Usage: ``python benchmarks/estimate_bench.py [--profiles quick,one_split] [--configs
otf,ftm,...] [--workers N]``. Each config's profile is run into a fresh temporary
directory through :func:`otfair_lab.experiments.run_sweep` with an ``on_plan`` callback, as
``otfair sweep`` does: the pilots time each method x dataset group, then the final plan
gives the estimate of what is left. Printed per sweep: runs, the pilots' seconds, the
estimate, the wall seconds from the plan to the end of the sweep (what the estimate
predicts) and ``ratio = estimate / actual`` (the issue's target: within [0.5, 2]).
Wall times (the runs load data and write the store); needs the data files
(``OTFAIR_DATA_DIR``). The ``one_split`` profiles take from minutes to hours.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from _common import ArgumentParser

from otfair_lab.experiments import load_spec, run_sweep

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ("otf", "ftm", "adapfair", "accuracy_parity")


def measure(config: str, profile: str, workers: int) -> dict[str, float | str | int]:
    """Run one profile of one config; return its estimate and actual wall time."""
    spec = load_spec(ROOT / "configs" / f"{config}.toml")
    plans: list[tuple[float, object]] = []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as out:
        summary = run_sweep(
            spec,
            out,
            profile=profile,
            workers=workers,
            progress=False,
            on_plan=lambda plan: plans.append((time.perf_counter(), plan)),
        )
    end = time.perf_counter()
    final = [(t, p) for t, p in plans if p.estimate_s is not None and not p.partial]
    at, plan = final[-1]
    actual = end - at
    return {
        "sweep": f"{config}/{profile}",
        "runs": summary.total,
        "failed": summary.failed,
        "pilots_s": at - start,
        "estimate_s": plan.estimate_s,
        "actual_s": actual,
        "ratio": plan.estimate_s / actual if actual > 0 else float("nan"),
    }


def main() -> None:
    """Parse the options, run the sweeps and print one line each."""
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", default="quick")
    parser.add_argument("--configs", default=",".join(CONFIGS))
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    print("sweep                      runs failed  pilots_s  estimate_s  actual_s  ratio")
    for profile in args.profiles.split(","):
        for config in args.configs.split(","):
            r = measure(config, profile, args.workers)
            print(
                f"{r['sweep']:26s} {r['runs']:4d} {r['failed']:6d} {r['pilots_s']:9.1f} "
                f"{r['estimate_s']:11.1f} {r['actual_s']:9.1f} {r['ratio']:6.2f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
