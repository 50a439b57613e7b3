"""A stacked curve whose models converge at different epochs: finished models frozen or not.

A curve of K strengths trains in one stacked run (``fairness_path``, FairnessCV's grid,
``otfair sweep``) until its last model converges; a model that converged earlier is
exported at its own epoch. Since this change it is also frozen
(``otfair.models.stacked.StackedLayers.freeze``): its later epochs make no products.
This script measures what that buys on the case where it matters most, the default MLP
``FairClassifier("otf", model="mlp")`` under DP on Bank (the FairnessCV comparison's
rows: 20,000 training rows of the 70/30 seed-0 split, standardized), over OTF's default
FairnessCV grid of 12 strengths, whose unpenalized model trains to the 300-epoch cap
while the strong ones stop after 14-31 epochs.

Three arms, one after the other in one process (one torch thread, one BLAS thread;
CPU: ``time.process_time``): the K separate fits, the stacked curve with freezing, and the
stacked curve with ``freeze`` made a no-op (every model computed to the last epoch, as
before). It checks that the two stacked arms' models end at the same epochs and prints
the CPU seconds and the ratios.

    OTFAIR_DATA_DIR=... python benchmarks/stacked_convergence_bench.py [--dataset bank]
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import torch
from _common import ArgumentParser
from threadpoolctl import threadpool_limits

from otfair.datasets import load_dataset
from otfair.estimators import FairClassifier, fairness_path
from otfair.estimators._strength_grids import default_strengths
from otfair.models.stacked import StackedLayers


def _data(name: str, max_rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from sklearn.preprocessing import StandardScaler

    split = load_dataset(name).split(test_size=0.3, random_state=0)
    X, y, s = split.X_train, np.asarray(split.y_train).astype(int), np.asarray(split.s_train)
    if len(y) > max_rows:
        rows = np.sort(np.random.default_rng(0).choice(len(y), max_rows, replace=False))
        X, y, s = X[rows], y[rows], s[rows]
    return StandardScaler().fit_transform(X), y, s


def _timed(fn):  # noqa: ANN001, ANN202
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the unpenalized model's ConvergenceWarning
        out = fn()
    return out, time.process_time() - start


def main() -> None:
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="bank")
    parser.add_argument("--max-rows", type=int, default=20_000)
    args = parser.parse_args()
    torch.set_num_threads(1)
    X, y, s = _data(args.dataset, args.max_rows)
    template = FairClassifier("otf", model="mlp", random_state=0)
    strengths = [float(a) for a in default_strengths(template)]

    def separate() -> list[int]:
        fits = [clone_at(a).fit(X, y, sensitive_features=s) for a in strengths]
        return [f.n_iter_ for f in fits]

    def clone_at(a: float) -> FairClassifier:
        return FairClassifier("otf", a, model="mlp", random_state=0)

    def stacked() -> list[int]:
        path = fairness_path(template, X, y, sensitive_features=s, strengths=strengths)
        return [est.n_iter_ for est in path.estimators_]

    with threadpool_limits(1):
        sep_iters, sep_cpu = _timed(separate)
        frozen_iters, frozen_cpu = _timed(stacked)
        freeze = StackedLayers.freeze
        StackedLayers.freeze = lambda self, k: None  # type: ignore[method-assign]
        try:
            full_iters, full_cpu = _timed(stacked)
        finally:
            StackedLayers.freeze = freeze  # type: ignore[method-assign]
    if frozen_iters != full_iters:  # freezing must not move any model
        raise SystemExit(f"the stacked arms' epochs differ: {frozen_iters} / {full_iters}")
    print(f"torch {torch.__version__}; {args.dataset}, {X.shape[0]} training rows x "
          f"{X.shape[1]} features; FairClassifier('otf', model='mlp'), DP, "
          f"{len(strengths)} strengths {strengths}")  # fmt: skip
    unfrozen = len(frozen_iters) * max(frozen_iters)
    print(f"epochs of each model, stacked (both arms): {frozen_iters}; model-epochs "
          f"{sum(frozen_iters)} against {unfrozen} unfrozen")  # fmt: skip
    print(
        f"epochs of each separate fit: {sep_iters} (a stacked model equals its separate "
        "fit up to float rounding, which can move the epoch its plateau rule ends at)"
    )
    print(f"K separate fits: {sep_cpu:.1f} s CPU")
    print(f"stacked, finished models frozen: {frozen_cpu:.1f} s CPU "
          f"({frozen_cpu / sep_cpu:.2f}x the separate fits)")  # fmt: skip
    print(f"stacked, every model to the last epoch: {full_cpu:.1f} s CPU "
          f"({full_cpu / sep_cpu:.2f}x the separate fits)")  # fmt: skip
    print(f"freezing: {full_cpu / frozen_cpu:.2f}x less CPU for the curve")


if __name__ == "__main__":
    main()
