"""OTF's label-cell solver on the calls of a FairnessCV search, recorded and replayed.

Under equalized odds the logistic model's OTF fits spend their time in
:class:`otfair.ot._otf_cells.CellsOTF0` (on German nearly all of it). This script runs
``FairnessCV(FairClassifier("otf", notion="eo"), max_violation=0.05, metric="max_eo_gap")``
on a dataset (the FairnessCV comparison's rows: the 70/30 seed-0 split, at most 20,000
training rows, standardized), records every solver call (the solver's state before it
and the scores), then replays the calls from those states ``--repeats`` times and
prints the CPU seconds (the minimum over the replays), the evaluations of Phi per call
(a Newton step each, and one per solve to start) and the microseconds per evaluation.
The replay must give the recorded values and gradients bit for bit: the solver is a
function of its state and the scores. A change to the solver
is measured by running this before and after it on the same machine (the replays read
no data beyond the recording, so what is timed is the solver alone).

    OTFAIR_DATA_DIR=... python benchmarks/cells_solver_bench.py [--dataset german]
        [--max-calls 2000] [--repeats 4]
"""

from __future__ import annotations

import copy
import time
import warnings
from typing import Any

import numpy as np
import torch
from _common import ArgumentParser
from fairness_cv_vs_fairlearn import load
from threadpoolctl import threadpool_limits

from otfair.estimators import FairClassifier, FairnessCV
from otfair.ot._otf_cells import CellsOTF0

STATE = ("_s_star", "_s_r", "_radius")  # what a call reads and writes besides its inputs


def record(X: np.ndarray, y: np.ndarray, s: np.ndarray, max_calls: int) -> list[tuple]:
    """Return (solver, its warm state, scores, values, gradients) of each call of the search."""
    calls: list[tuple] = []
    original = CellsOTF0.batch_values

    def recording(self: CellsOTF0, scores: np.ndarray) -> Any:
        if len(calls) >= max_calls:
            return original(self, scores)
        state = {k: getattr(self, k).copy() for k in STATE}
        out = original(self, scores)
        calls.append((self, state, np.array(scores), out[0].copy(), out[1].copy()))
        return out

    CellsOTF0.batch_values = recording  # type: ignore[method-assign]
    try:
        est = FairClassifier("otf", notion="eo", random_state=0)
        cv = FairnessCV(est, max_violation=0.05, metric="max_eo_gap")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cv.fit(X, y, sensitive_features=s)
    finally:
        CellsOTF0.batch_values = original  # type: ignore[method-assign]
    return calls


def replay(calls: list[tuple]) -> tuple[float, int, list[tuple]]:
    """Replay every call from its recorded state; return CPU seconds, passes and outputs."""
    solvers = []
    for solver, state, *_ in calls:
        fresh = copy.copy(solver)  # the same arrays; the warm state its own
        for k in STATE:
            setattr(fresh, k, state[k].copy())
        solvers.append(fresh)
    passes = [0]
    evaluate = CellsOTF0._evaluate

    def counted(self: CellsOTF0, *args: Any) -> Any:
        passes[0] += 1
        return evaluate(self, *args)

    CellsOTF0._evaluate = counted  # type: ignore[method-assign]
    try:
        start = time.process_time()
        outputs = [
            fresh.batch_values(scores)
            for fresh, (_, _, scores, *_) in zip(solvers, calls, strict=True)
        ]
        seconds = time.process_time() - start
    finally:
        CellsOTF0._evaluate = evaluate  # type: ignore[method-assign]
    return seconds, passes[0], outputs


def main() -> None:
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="german")
    parser.add_argument("--max-rows", type=int, default=20_000)
    parser.add_argument("--max-calls", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=4)
    args = parser.parse_args()
    torch.set_num_threads(1)
    (X, y, s), _ = load(args.dataset, args.max_rows)  # the comparison's training rows
    with threadpool_limits(1):
        calls = record(X, y, s, args.max_calls)
        runs = [replay(calls) for _ in range(args.repeats)]
    if not calls:
        raise SystemExit(f"{args.dataset}: the search made no label-cell solver call")
    seconds = min(r[0] for r in runs)
    evaluations = runs[0][1]
    same = all(
        np.array_equal(v, rec[3]) and np.array_equal(g, rec[4])
        for _, _, outputs in runs
        for (v, g), rec in zip(outputs, calls, strict=True)
    )
    if not same:
        raise SystemExit(
            "a replay differs from its recording: the solver is not a function of its state"
        )
    batches = calls[0][0].costs.shape
    print(f"torch {torch.__version__}; {args.dataset}, {X.shape[0]} training rows; "
          f"FairnessCV(FairClassifier('otf', notion='eo')), max_eo_gap <= 0.05; "
          f"one thread")  # fmt: skip
    print(f"{len(calls)} solver calls recorded (batches x rows x classes of the first: "
          f"{batches[0]} x {batches[1]} x {batches[2]})")  # fmt: skip
    print(f"replays (each from the recorded states): {args.repeats}, identical to the "
          f"recording bit for bit: {same}")  # fmt: skip
    print(f"evaluations of Phi per call: {evaluations / len(calls):.1f} "
          f"({evaluations} in all)")  # fmt: skip
    print(f"CPU (the fastest replay): {seconds:.2f} s; {1e3 * seconds / len(calls):.2f} ms a "
          f"call; {1e6 * seconds / evaluations:.0f} us an evaluation and its step")  # fmt: skip


if __name__ == "__main__":
    main()
