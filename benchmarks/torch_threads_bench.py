"""Small fits on one torch thread or two: an MLP's Adam fit on German, idle and loaded.

Every torch estimator's fit on small inputs runs on one torch and one BLAS thread
(``otfair/utils/_threads.py``). This script measures what that rule buys: the default
MLP ``FairClassifier("otf", 0.01, model="mlp")`` on German's training split (700 rows),
fitted with the rule (one thread) and with it lifted (``ONE_BLAS_THREAD_MAX_ENTRIES``
set to 0, so the fit keeps this process's two torch threads), first on an idle machine,
then while a busy-looping child process holds one core (a loaded machine). CPU:
``time.process_time`` of the fit; wall: ``time.perf_counter``. The two arms alternate,
``--repeats`` times each; the script prints the medians and their ratios.

    OTFAIR_DATA_DIR=... python benchmarks/torch_threads_bench.py [--repeats 3]
"""

from __future__ import annotations

import multiprocessing
import statistics
import time
import warnings

import torch
from _common import ArgumentParser

import otfair.utils._threads as threads
from otfair.datasets import load_dataset
from otfair.estimators import FairClassifier


def _spin(stop: float) -> None:
    while time.time() < stop:
        pass


def _fit_seconds(split, one_thread: bool) -> tuple[float, float]:
    """Return the (CPU, wall) seconds of one fit, with the one-thread rule or without."""
    limit = threads.ONE_BLAS_THREAD_MAX_ENTRIES
    threads.ONE_BLAS_THREAD_MAX_ENTRIES = limit if one_thread else 0
    try:
        est = FairClassifier("otf", 0.01, model="mlp", random_state=0)
        cpu, wall = time.process_time(), time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(split.X_train, split.y_train, sensitive_features=split.s_train)
        return time.process_time() - cpu, time.perf_counter() - wall
    finally:
        threads.ONE_BLAS_THREAD_MAX_ENTRIES = limit


def _measure(split, repeats: int) -> dict[bool, tuple[float, float]]:
    times: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    for _ in range(repeats):
        for one in (True, False):
            times[one].append(_fit_seconds(split, one))
    return {
        one: (statistics.median(c for c, _ in ts), statistics.median(w for _, w in ts))
        for one, ts in times.items()
    }


def main() -> None:
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(2)  # the arm without the rule: this machine's two cores
    split = load_dataset("german").split(test_size=0.3, random_state=0)
    _fit_seconds(split, True)  # warm-up: imports, first kernels
    print(f"torch {torch.__version__}, {multiprocessing.cpu_count()} cores, German "
          f"{split.X_train.shape}, FairClassifier('otf', 0.01, model='mlp')")  # fmt: skip
    for state in ("idle", "one core held by a busy loop"):
        child = None
        if state != "idle":
            child = multiprocessing.Process(target=_spin, args=(time.time() + 3600,))
            child.start()
        try:
            found = _measure(split, args.repeats)
        finally:
            if child is not None:
                child.terminate()
                child.join()
        (c1, w1), (c2, w2) = found[True], found[False]
        print(f"{state}: one thread {c1:.2f} s CPU / {w1:.2f} s wall; two threads "
              f"{c2:.2f} s CPU / {w2:.2f} s wall; two / one: CPU {c2 / c1:.2f}x, "
              f"wall {w2 / w1:.2f}x")  # fmt: skip


if __name__ == "__main__":
    main()
