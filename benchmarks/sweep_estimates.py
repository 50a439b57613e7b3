"""Sweep estimates against measured wall times, on held-out sweeps of several shapes.

Usage: ``python benchmarks/sweep_estimates.py [--workers N] [--out DIR] [--only NAME,...]``.

Each sweep below is run into a fresh temporary directory through
:func:`otfair_lab.experiments.run_sweep` with an ``on_plan`` callback and ``pilot=True``, as
``otfair sweep`` does for a sweep of several fits: pilots time each method x dataset
group, then the final plan gives the estimate of what is left. The actual time is the
wall time from that plan to the end of the sweep (what the estimate predicts). The
``extrapolated`` sweeps estimate seeds 1-2 from the stored timings of seed 0 run before
(no pilot): a long protocol is estimated this way from a subset.

Writes ``docs/measurements/sweep_estimates.csv`` and ``.md`` (``--out``): per sweep the
runs, fits, pilot seconds, estimate, actual, ``ratio = actual / estimate`` and whether
the actual lies in the stated range (:data:`otfair_lab.experiments._plan.ESTIMATE_RANGE`).
Wall times: run on an idle machine for numbers to quote. Needs the German data file
(``OTFAIR_DATA_DIR``) for the German sweeps.
"""

from __future__ import annotations

import csv
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import ArgumentParser

from otfair_lab.experiments import parse_spec, run_sweep
from otfair_lab.experiments._plan import ESTIMATE_RANGE, format_duration

ROOT = Path(__file__).resolve().parents[1]


def _spec(name: str, dataset: str, methods: list[dict[str, Any]], **top: Any) -> Any:
    raw = {"name": name, "datasets": [{"name": dataset}], "methods": methods, **top}
    return parse_spec(raw)


def _otf(*strengths: float) -> dict[str, Any]:
    return {"name": "otf", "strengths": list(strengths)}


#: (name, spec, workers override or None, stack)
SWEEPS: list[tuple[str, Any, int | None, bool]] = [
    (
        "synthetic-unfair-3seeds",
        _spec("a", "synthetic", [{"name": "unfair"}], seeds=3, epochs=30),
        None,
        True,
    ),
    (
        "synthetic-otf-stacked",
        _spec("b", "synthetic", [_otf(0.1, 0.5, 0.9)], seeds=2, epochs=10),
        None,
        True,
    ),
    (
        "synthetic-otf-unstacked",
        _spec("c", "synthetic", [_otf(0.1, 0.5, 0.9)], seeds=1, epochs=10),
        None,
        False,
    ),
    (
        "synthetic-ftm",
        _spec("d", "synthetic", [{"name": "ftm", "strengths": [0.5, 2.0]}], seeds=2, epochs=5),
        None,
        True,
    ),
    (
        "synthetic-reduction",
        _spec("e", "synthetic", [{"name": "reduction", "strengths": [0.01, 0.1]}], seeds=2),
        None,
        True,
    ),
    (
        "german-gapreg",
        _spec(
            "f", "german", [{"name": "gapreg", "strengths": [0.1, 1.0, 5.0]}], seeds=2, epochs=20
        ),
        None,
        True,
    ),
    (
        "german-unfair+otf",
        _spec("g", "german", [{"name": "unfair"}, _otf(0.5)], seeds=2, epochs=20),
        None,
        True,
    ),
    (
        "german-adv-2workers",
        _spec("h", "german", [{"name": "adv", "strengths": [0.5, 2.0]}], seeds=2, epochs=10),
        2,
        False,
    ),
    (
        "german-otf-long-2workers",
        _spec("i", "german", [{"name": "unfair"}, _otf(0.1, 0.5, 0.9)], seeds=4, epochs=200),
        2,
        True,
    ),
]

#: Held-out seeds estimated from a subset's stored timings: (name, spec, subset seeds).
EXTRAPOLATED = [
    (
        "extrapolated-german-otf",
        _spec("x", "german", [{"name": "unfair"}, _otf(0.3, 0.7)], seeds=3, epochs=30),
        (0,),
    ),
    (
        "extrapolated-german-ftm",
        _spec("y", "german", [{"name": "ftm", "strengths": [0.5, 2.0]}], seeds=3, epochs=100),
        (0,),
    ),
]


def _run(spec: Any, out: str, workers: int, stack: bool, pilot: bool | None) -> tuple:
    plans: list[tuple[float, Any]] = []
    start = time.perf_counter()
    summary = run_sweep(
        spec, out, workers=workers, progress=False, stack=stack, pilot=pilot,
        on_plan=lambda plan: plans.append((time.perf_counter(), plan)),
    )  # fmt: skip
    end = time.perf_counter()
    final = [(t, p) for t, p in plans if p.estimate_s is not None and not p.partial]
    at, plan = final[-1]
    return summary, plan, at - start, end - at


def measure(name: str, spec: Any, workers: int, stack: bool) -> dict[str, Any]:
    """Run one sweep with pilots; return its estimate and the measured wall time."""
    with tempfile.TemporaryDirectory() as out:
        summary, plan, pilots_s, actual = _run(spec, out, workers, stack, True)
    return _row(name, summary.total, plan, pilots_s, actual, workers, "pilots")


def extrapolate(name: str, spec: Any, subset: tuple[int, ...], workers: int) -> dict[str, Any]:
    """Run ``subset`` seeds, then estimate and run the others from the stored timings."""
    rest = tuple(s for s in spec.seeds if s not in subset)
    with tempfile.TemporaryDirectory() as out:
        from dataclasses import replace

        run_sweep(replace(spec, seeds=subset), out, workers=workers, progress=False)
        summary, plan, pilots_s, actual = _run(
            replace(spec, seeds=rest), out, workers, True, False
        )
    return _row(name, summary.total - summary.skipped, plan, pilots_s, actual, workers, "stored")


def _row(name, runs, plan, pilots_s, actual, workers, basis) -> dict[str, Any]:
    ratio = actual / plan.estimate_s if plan.estimate_s else float("nan")
    low, high = ESTIMATE_RANGE
    return {
        "sweep": name,
        "runs": runs,
        "workers": workers,
        "basis": basis,
        "pilots_s": round(pilots_s, 2),
        "estimate_s": round(plan.estimate_s, 2),
        "actual_s": round(actual, 2),
        "ratio_actual_over_estimate": round(ratio, 3),
        "in_range": low <= ratio <= high,
    }


def write(rows: list[dict[str, Any]], out: Path) -> None:
    """Write the CSV and the Markdown table of ``rows``."""
    out.mkdir(parents=True, exist_ok=True)
    with (out / "sweep_estimates.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    ratios = [r["ratio_actual_over_estimate"] for r in rows]
    inside = sum(r["in_range"] for r in rows)
    low, high = ESTIMATE_RANGE
    lines = [
        "# Sweep estimates against measured wall times",
        "",
        f"Written by `python benchmarks/sweep_estimates.py` ({platform.machine()}, "
        f"{os.cpu_count()} cores; load average at the end "
        f"{os.getloadavg()[0]:.1f}). `ratio` = actual / estimate; the stated range of "
        f"an estimate is {low:g}x to {high:g}x of it. {inside} of {len(rows)} sweeps "
        f"fall in the range; ratios {min(ratios):.2f} to {max(ratios):.2f}.",
        "",
        "| sweep | runs | workers | basis | pilots | estimate | actual | ratio | in range |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['sweep']} | {r['runs']} | {r['workers']} | {r['basis']} | "
            f"{format_duration(r['pilots_s'])} | {format_duration(r['estimate_s'])} | "
            f"{format_duration(r['actual_s'])} | {r['ratio_actual_over_estimate']:.2f} | "
            f"{'yes' if r['in_range'] else 'no'} |"
        )
    lines += [
        "",
        "`pilots` is the time from the start of the sweep to its final estimate (the data",
        "check, the pilot fits and, for a pool of workers, the timing of one worker's",
        "start-up); `actual` is the time from that estimate to the end of the sweep, what",
        "the estimate predicts. Sweeps of a few seconds are timed at the noise level of a",
        "shared machine; the rows with the longest `actual` say most about long sweeps.",
    ]
    (out / "sweep_estimates.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    """Run every sweep (or ``--only`` some) and write the measurement files."""
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "measurements")
    parser.add_argument("--only", default="", help="Comma-separated sweep names.")
    args = parser.parse_args()
    only = {s for s in args.only.split(",") if s}
    rows = []
    for name, spec, workers, stack in SWEEPS:
        if not only or name in only:
            rows.append(measure(name, spec, workers or args.workers, stack))
            print(rows[-1], flush=True)
    for name, spec, subset in EXTRAPOLATED:
        if not only or name in only:
            rows.append(extrapolate(name, spec, subset, args.workers))
            print(rows[-1], flush=True)
    write(rows, args.out)
    print(f"wrote {args.out / 'sweep_estimates.md'}")


if __name__ == "__main__":
    main()
