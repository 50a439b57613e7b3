"""Single-strength (K = 1) fit time of two source trees: a git revision vs the work tree.

Usage: ``python benchmarks/k1_fit_bench.py [--quick] [--json] [--ref HEAD]
[--methods otf gapreg ftm norm cenet wassersteinnet] [--epochs 5] [--only PATH ...]``.

Issue 25 made a single fit a stacked run of one model (one engine, one path: the
stacked trainers of ``FairClassifier`` and of the regression nets train every fit) and
asks that a single fit be no slower than the two-path code before it (<= 1.05x at
K = 1, CPU; ``--ref 72ab176``, the last commit with the single path). This script
times one fit per
method on Adult's seed-0 split (the regression nets CENet and WassersteinNet on Law
School's) with the registered method defaults (``otfair methods
describe``; the middle strength of the method's grid) except for the epoch budget, in
two source trees:

* ``old``: ``git archive <ref> src/otfair`` unpacked into a temporary directory (a
  read-only git command; nothing in the repository changes);
* ``new``: ``src/`` of the work tree; with ``--only PATH ...``, the old tree with just
  those work-tree paths copied over it (to time one change while others are in flight;
  a deleted path is deleted).

Each tree runs in its own worker processes (``PYTHONPATH`` first on ``sys.path``), the
trees alternating round by round so that both see the same machine load; a worker does
one untimed 1-epoch fit per method (imports, FTM's matchings in a shared on-disk cache)
then ``repeats`` timed fits. Times are CPU seconds of the worker (``time.process_time``,
one torch and one BLAS thread: other processes on a shared machine do not count); the
table shows the minimum over all rounds and repeats and ``ratio = new / old``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ArgumentParser

ROOT = Path(__file__).resolve().parents[1]
METHODS = ("otf", "gapreg", "ftm", "norm", "cenet", "wassersteinnet")


def _worker(methods: list[str], epochs: int, repeats: int, cache_dir: str) -> dict:
    """Time the fits in this process (the tree is whatever ``import otfair`` finds)."""
    import torch
    from threadpoolctl import threadpool_limits

    import otfair
    from otfair.datasets import load_dataset
    from otfair_lab.experiments.methods import get_method

    torch.set_num_threads(1)
    out: dict = {"otfair": str(Path(otfair.__file__).parent), "times": {}}
    with threadpool_limits(1):
        for method in methods:
            spec = get_method(method)
            dataset = "adult" if spec.task == "classification" else "law_school"
            split = load_dataset(dataset).split(
                random_state=0, sensitive_as_input=spec.sensitive_as_input
            )
            grid = spec.default_strengths
            fit = {"sensitive_features": split.s_train}

            def build(n_epochs: int, spec=spec, grid=grid, method=method, dataset=dataset):
                est = spec.build(
                    grid[len(grid) // 2],
                    random_state=0,
                    epochs=n_epochs,
                    dataset=dataset,
                    notion="dp" if spec.notions else None,
                )
                if method != "ftm":
                    return est
                # the FTM setting of either tree: on the penalty object, or (before issue
                # 25's penalty objects) on the classifier
                nested = "penalty__cache_dir" in est.get_params()
                key = "penalty__cache_dir" if nested else "matching_cache_dir"
                return est.set_params(**{key: cache_dir})

            build(1).fit(split.X_train, split.y_train, **fit)  # warm-up
            times = []
            for _ in range(repeats):
                est = build(epochs)
                t0 = time.process_time()
                est.fit(split.X_train, split.y_train, **fit)
                times.append(time.process_time() - t0)
            out["times"][method] = times
    return out


def _run_tree(src: Path, methods: list[str], epochs: int, repeats: int, cache: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(src), OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    cmd = [sys.executable, __file__, "--worker", "--epochs", str(epochs)]
    cmd += ["--repeats", str(repeats), "--cache-dir", cache, "--methods", *methods]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"worker on {src} failed:\n{proc.stderr[-3000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    if Path(result["otfair"]).resolve() != (src / "otfair").resolve():
        raise RuntimeError(f"worker imported {result['otfair']}, not the tree {src}.")
    return result["times"]


def _unpack(ref: str, dest: Path) -> Path:
    """Unpack ``src/otfair`` of git revision ``ref`` under ``dest``; return its ``src``."""
    dest.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "src/otfair"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest / "src"


def _overlay(src: Path, only: list[str]) -> None:
    """Copy the work tree's ``only`` paths (files or folders) over the tree ``src``."""
    for rel in only:
        here, there = ROOT / rel, src.parent / rel
        if there.is_dir():
            shutil.rmtree(there)
        elif there.exists():
            there.unlink()
        if here.is_dir():
            shutil.copytree(here, there, ignore=shutil.ignore_patterns("__pycache__"))
        elif here.exists():
            there.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(here, there)


def run(
    ref: str,
    methods: list[str],
    epochs: int,
    repeats: int,
    rounds: int,
    only: list[str] | None = None,
) -> dict:
    """Alternate old/new workers ``rounds`` times; return min times and ratios."""
    with tempfile.TemporaryDirectory(prefix="k1bench-") as tmp:
        trees = {"old": _unpack(ref, Path(tmp) / "old"), "new": ROOT / "src"}
        if only:
            trees["new"] = _unpack(ref, Path(tmp) / "new")
            _overlay(trees["new"], only)
        cache = str(Path(tmp) / "matchings")
        times: dict[str, dict[str, list[float]]] = {t: {m: [] for m in methods} for t in trees}
        for _ in range(rounds):
            for tree, src in trees.items():
                for method, values in _run_tree(src, methods, epochs, repeats, cache).items():
                    times[tree][method].extend(values)
    rows = {}
    for method in methods:
        old, new = min(times["old"][method]), min(times["new"][method])
        rows[method] = {"old_s": old, "new_s": new, "ratio": new / old}
    return {
        "ref": ref,
        "only": only,
        "epochs": epochs,
        "repeats": repeats,
        "rounds": rounds,
        "rows": rows,
    }


def _format(result: dict) -> str:
    lines = [
        f"K = 1 fit, Adult, {result['epochs']} epochs; CPU s, min of "
        f"{result['rounds']} rounds x {result['repeats']} fits; old = {result['ref']}"
        + (f", new = old + {' '.join(result['only'])}" if result["only"] else ", new = work tree"),
        f"{'method':<8} {'old s':>8} {'new s':>8} {'new/old':>8}",
    ]
    for method, row in result["rows"].items():
        lines.append(f"{method:<8} {row['old_s']:>8.3f} {row['new_s']:>8.3f} {row['ratio']:>8.3f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 epochs, 1 round, 2 fits")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--ref", default="HEAD", help="git revision of the old tree")
    parser.add_argument("--methods", nargs="+", default=list(METHODS))
    parser.add_argument("--epochs", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--only", nargs="+", default=None, help="work-tree paths to time")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--cache-dir", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    epochs = args.epochs or (2 if args.quick else 5)
    repeats = args.repeats or (2 if args.quick else 3)
    if args.worker:
        print(json.dumps(_worker(args.methods, epochs, repeats, args.cache_dir)))
        return
    rounds = args.rounds or (1 if args.quick else 2)
    result = run(args.ref, args.methods, epochs, repeats, rounds, args.only)
    print(json.dumps(result, indent=2) if args.json else _format(result))


if __name__ == "__main__":
    main()
