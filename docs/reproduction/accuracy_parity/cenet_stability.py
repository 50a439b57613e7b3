"""CENet's stability: how far the same run moves under float-level perturbations.

Two perturbations of the committed runs (``runs/``, every dataset, 10 seeds, the 5
lambdas of a (dataset, seed) fitted as one stacked curve, as the sweep did):

1. **torch threads** (``--measure``): each CENet group re-fitted with 2 torch threads
   instead of the sweep's 1, the metrics written beside the archived ones in
   ``cenet_threads.csv`` (seeds in the order given; what is committed is what finished);
2. **a float-level code change**: ``cenet_rerun.csv`` holds each CENet run as archived
   before (revisions 59adede on Adult, b4af523 elsewhere) and re-run at today's code
   (the runs now in ``runs/``). The code between them changed how CENet's losses are
   computed (one discriminator through the built-in loss, the gradient reversal's scale
   as a float), not what they compute.

Adult's split (the UCI train / test files) is the same for every seed, so there the seed
changes only the initialisation and the batches: its range over the 10 seeds is a third
measure of where a trajectory can land. A (dataset, lambda) is **unstable** when the
code change moved R^2 or the error gap of some seed by more than ``DEFAULT_TOLERANCE``
of ``otfair_lab.reproduction._verify``; its spread (the tolerance of ``otfair reproduce
accuracy_parity --verify`` for it, written to ``unstable.csv``) is the largest such move
over the seeds and, on Adult, at least the seed range. Its rows are marked ``level =
mean``: ``--verify`` judges such a (dataset, lambda) by its seed mean (within 3 standard
errors), stating each run's move as the per-run spread. ``cenet_stability.md`` shows the
table.

Usage (from the repository root)::

    python docs/reproduction/accuracy_parity/cenet_stability.py --measure --seeds 4 0 1
    python docs/reproduction/accuracy_parity/cenet_stability.py             # the tables
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from otfair_lab.experiments._archive import read_archive
from otfair_lab.reproduction._verify import (
    DEFAULT_TOLERANCE,
    UNSTABLE_COLUMNS,
    UNSTABLE_FILE,
    read_unstable,
    rerun,
    work_items,
)

HERE = Path(__file__).resolve().parent
RUNS = HERE / "runs"
THREADS_CSV = HERE / "cenet_threads.csv"
METRICS = ("r2", "error_gap")
METHOD = "cenet"
FIXED_SPLIT = "adult (regression)"  # the same train / test files for every seed


def measure(datasets: list[str] | None, seeds: list[int] | None) -> None:
    """Re-fit the archive's CENet groups with 2 threads into ``cenet_threads.csv``."""
    rows = [r for r in read_archive(RUNS) if r["method"] == METHOD]
    if datasets:
        rows = [r for r in rows if r["dataset"] in datasets]
    if seeds:  # these seeds, in this order
        rows = sorted(
            (r for r in rows if r["seed"] in seeds), key=lambda r: seeds.index(r["seed"])
        )
    done = pd.read_csv(THREADS_CSV) if THREADS_CSV.is_file() else pd.DataFrame()
    have = set(done["key"]) if not done.empty else set()
    items = [i for i in work_items(rows, rows) if not {r["key"] for r in i} <= have]
    for n, item in enumerate(items, 1):
        news = rerun(item, threads=2)
        out = []
        for row, new in zip(item, news, strict=True):
            rec = {k: row[k] for k in ("key", "dataset", "strength", "seed", "git_revision")}
            for m in METRICS:
                rec[f"{m}_threads1"] = row["metrics"][m]
                rec[f"{m}_threads2"] = new[m]
            out.append(rec)
        done = pd.concat([done, pd.DataFrame(out)], ignore_index=True)
        done = done.sort_values(["dataset", "seed", "strength"], kind="stable")
        done.to_csv(THREADS_CSV, index=False, float_format="%.6g")
        print(f"{n}/{len(items)}: {item[0]['dataset']} seed {item[0]['seed']}", flush=True)


RERUN_CSV = HERE / "cenet_rerun.csv"


def tables() -> pd.DataFrame:
    """Per dataset and lambda: the moves under each perturbation and the unstable spread."""
    archive = {r["key"]: r for r in read_archive(RUNS) if r["method"] == METHOD}
    rerun_ = pd.read_csv(RERUN_CSV)
    stale = [k for k in rerun_["key"] if k not in archive]
    if stale or len(rerun_) != len(archive):
        raise SystemExit(f"{RERUN_CSV.name} does not list the archive's CENet runs")
    for m in METRICS:  # today's side is the archive's
        head = [archive[k]["metrics"][m] for k in rerun_["key"]]
        if max(abs(a - b) for a, b in zip(head, rerun_[f"{m}_head"], strict=True)) > 1e-6:
            raise SystemExit(f"{RERUN_CSV.name}'s {m}_head is not the archive's")
        rerun_[f"{m}_head"] = head
    threads = pd.read_csv(THREADS_CSV) if THREADS_CSV.is_file() else pd.DataFrame()
    out = []
    for (dataset, strength), g in rerun_.groupby(["dataset", "strength"], sort=True):
        rec: dict = {"dataset": dataset, "strength": strength, "seeds": len(g)}
        t = threads[(threads["dataset"] == dataset) & (threads["strength"] == strength)]
        t = t[t["key"].isin(archive)] if not t.empty else t
        rec["thread_seeds"] = len(t)
        unstable = False
        for m in METRICS:
            move = (g[f"{m}_head"] - g[f"{m}_archived"]).abs()
            rec[f"{m}_code_move"] = move.max()
            rec[f"{m}_seed_range"] = g[f"{m}_head"].max() - g[f"{m}_head"].min()
            if len(t):
                head = t["key"].map(lambda k, m=m: archive[k]["metrics"][m])
                rec[f"{m}_thread_move"] = (t[f"{m}_threads2"] - head).abs().max()
            else:
                rec[f"{m}_thread_move"] = float("nan")
            unstable |= bool(move.max() > DEFAULT_TOLERANCE)
        rec["unstable"] = unstable
        for m in METRICS:
            spread = rec[f"{m}_code_move"]
            if dataset == FIXED_SPLIT:
                spread = max(spread, rec[f"{m}_seed_range"])
            rec[f"{m}_spread"] = spread if unstable else float("nan")
        out.append(rec)
    return pd.DataFrame(out)


def write(table: pd.DataFrame) -> None:
    """Write the CENet rows of ``unstable.csv`` and ``cenet_stability.md``."""
    path = HERE / UNSTABLE_FILE
    old = read_unstable(path)
    old = old[old["method"] != METHOD]
    new = [
        {
            "method": METHOD,
            "dataset": r["dataset"],
            "strength": r["strength"],
            "metric": m,
            "spread": r[f"{m}_spread"],
            "measured": (
                "max(largest move under a float-level code change, range over 10 seeds on "
                "the fixed split)"
                if r["dataset"] == FIXED_SPLIT
                else "largest move of a seed under a float-level code change"
            ),
            "level": "mean",
        }
        for _, r in table[table["unstable"]].iterrows()
        for m in METRICS
    ]
    merged = pd.concat([old, pd.DataFrame(new, columns=[*UNSTABLE_COLUMNS, "level"])])
    merged["spread"] = merged["spread"].astype(float)
    merged.to_csv(path, index=False, float_format="%.6g")
    n_threads = int(table["thread_seeds"].sum())
    moved = table[["r2_thread_move", "error_gap_thread_move"]].max().max()
    lines = [
        "# CENet's stability (accuracy parity's runs)",
        "",
        "Generated by [cenet_stability.py](cenet_stability.py) from [runs/](runs/), "
        f"[{RERUN_CSV.name}]({RERUN_CSV.name}) (each CENet run as archived before and "
        f"re-run at today's code) and [{THREADS_CSV.name}]({THREADS_CSV.name}) (runs "
        "re-fitted with 2 torch threads instead of 1).",
        "",
        f"- **Threads**: {n_threads} runs re-fitted with 2 threads; the largest move of "
        f"R^2 or the error gap is {moved:.2g} (CENet's matrices are below torch's "
        "parallel grain: the thread count does not change a bit here).",
        "- **A float-level code change** (how the losses are computed, not what): moves "
        "per seed up to the `code move` columns; at lambda 0.1 nothing moves, and the "
        "moves grow with lambda, the weight of the adversarial game.",
        "- **Seeds** on Adult (one split for every seed: only the initialisation and the "
        "batches change): the `seed range` columns.",
        "",
        f"A (dataset, lambda) is **unstable** when the code change moved a seed's R^2 or "
        f"error gap by more than {DEFAULT_TOLERANCE:g}; its spread, the tolerance "
        f"`--verify` uses for it ([{UNSTABLE_FILE}]({UNSTABLE_FILE})), is the largest "
        "move, on Adult at least the seed range.",
        "",
        "**Verified by the seed mean** (`level = mean` in the CSV): a single run of an "
        "unstable (dataset, lambda) does not travel between machines (on another CPU 11 "
        "of 20 Adult runs moved beyond a per-run tolerance; the largest, lambda 50 seed "
        "4, R^2 0.3967 -> 0.3668), and a tolerance as wide as the seed range catches "
        "nothing. So `--verify` re-runs every seed of such a (dataset, lambda) and "
        "compares the seed means: |mean_new - mean_archived| within 3 standard errors of "
        "the difference, sqrt(var_archived / n + var_new / n) over the n seeds; each "
        "run's own move is printed as the per-run spread, not judged.",
        "",
        "| dataset | lambda | seeds | code move R^2 | code move error gap | seed range R^2 "
        "| seed range error gap | unstable | spread R^2 | spread error gap |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for _, r in table.iterrows():
        lines.append(
            f"| {r['dataset']} | {r['strength']:g} | {r['seeds']} | "
            f"{r['r2_code_move']:.4f} | {r['error_gap_code_move']:.4f} | "
            f"{r['r2_seed_range']:.4f} | {r['error_gap_seed_range']:.4f} | "
            f"{'**yes**' if r['unstable'] else 'no'} | "
            + (
                f"{r['r2_spread']:.4f} | {r['error_gap_spread']:.4f} |"
                if r["unstable"]
                else "- | - |"
            )
        )
    (HERE / "cenet_stability.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Measure (``--measure``) and write the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--measure", action="store_true", help="re-fit with 2 threads first")
    parser.add_argument("--datasets", nargs="*", help="only these dataset labels (--measure)")
    parser.add_argument("--seeds", nargs="*", type=int, help="only these seeds, in order")
    args = parser.parse_args(argv)
    if args.measure:
        measure(args.datasets, args.seeds)
    write(tables())
    return 0


if __name__ == "__main__":
    sys.exit(main())
