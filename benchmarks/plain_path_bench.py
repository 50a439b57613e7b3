"""The plain path's overhead: an unpenalized Adam fit against a bare torch loop.

Both train the same logistic model (``otfair.models.MLP(d, hidden=())``, the same
initial weights) with ``torch.optim.Adam(lr=1e-3)`` on shuffled batches of 1000 rows for
the same number of epochs, on one torch thread, on Adult-like synthetic data
(``benchmarks/_common.synthetic``). ``FairClassifier`` runs with the Adam loop stated
(``solver="adam", tol=None, l2=0, init_intercept=False``) so that the two do the same
optimizer steps; its time includes everything its ``fit`` does (input checks, label
encoding, batching, the end-of-fit checks). The two alternate in one process and the
script prints the median ratio (target: at most 1.15).

    python benchmarks/plain_path_bench.py [--n 30000] [--d 100] [--epochs 20] [--repeats 5]
"""

from __future__ import annotations

import statistics
import time

import numpy as np
import torch
from _common import ArgumentParser, synthetic
from torch.nn import functional as F

from otfair.estimators import FairClassifier
from otfair.models import MLP


def bare_loop(X: torch.Tensor, y: torch.Tensor, epochs: int, batch: int, seed: int) -> MLP:
    """Train the reference: a lean torch loop, nothing else."""
    torch.manual_seed(seed)
    model = MLP(X.shape[1], hidden=())
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(seed)
    n = X.shape[0]
    n_batches = -(-n // batch)
    for _ in range(epochs):
        order = torch.from_numpy(rng.permutation(n))
        for idx in torch.tensor_split(order, n_batches):
            # index_select: the faster row gather (X[idx] costs ~3x more here), so
            # that the reference is the lean loop, not the textbook one
            Xb, yb = X.index_select(0, idx), y.index_select(0, idx)
            loss = F.binary_cross_entropy_with_logits(model(Xb)[:, 0], yb)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
    return model


def otfair_fit(X: np.ndarray, y: np.ndarray, epochs: int, batch: int, seed: int) -> None:
    """Make the same steps through FairClassifier's plain path."""
    FairClassifier(
        solver="adam",
        tol=None,
        l2=0.0,
        init_intercept=False,
        epochs=epochs,
        batch_size=batch,
        random_state=seed,
    ).fit(X, y)


def main() -> None:
    """Alternate the two fits; print each time and the median ratio."""
    parser = ArgumentParser(prog="benchmarks/plain_path_bench.py", description=__doc__)
    parser.add_argument("--n", type=int, default=30_000)
    parser.add_argument("--d", type=int, default=100)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    Xt, yt, _ = synthetic(args.n, args.d)
    X, y = Xt.numpy(), yt.numpy().astype(np.int64)
    bare_loop(Xt, yt, 1, args.batch_size, 0)  # warm-up: first calls, allocations
    otfair_fit(X, y, 1, args.batch_size, 0)
    ratios = []
    for r in range(args.repeats):
        start = time.process_time()
        bare_loop(Xt, yt, args.epochs, args.batch_size, r)
        bare = time.process_time() - start
        start = time.process_time()
        otfair_fit(X, y, args.epochs, args.batch_size, r)
        ours = time.process_time() - start
        ratios.append(ours / bare)
        print(f"repeat {r}: bare loop {bare:.3f} s, FairClassifier {ours:.3f} s, "
              f"ratio {ours / bare:.3f}", flush=True)  # fmt: skip
    print(
        f"plain path: n={args.n}, d={args.d}, {args.epochs} epochs of batch "
        f"{args.batch_size}, 1 torch thread, CPU time; median ratio FairClassifier / bare "
        f"torch loop = {statistics.median(ratios):.3f} (target <= 1.15)"
    )


if __name__ == "__main__":
    main()
