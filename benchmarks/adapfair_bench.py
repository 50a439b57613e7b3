"""AdapFair benchmarks: the OT term inside the training loop, and the paper's targets.

``run(quick)`` times one epoch of :class:`~otfair.estimators.AdapFairPreprocessor`
training with three choices of the fairness distance, alternated in one process:

- ``w2``: exact 1-D :math:`W_2^2` by sorting (:func:`otfair.ot.wasserstein_1d_power`);
- ``sharp_sinkhorn``: the paper's sharp Sinkhorn value with our closed-form backward
  (:func:`otfair.ot.sharp_sinkhorn`);
- ``pot_sinkhorn2``: POT's ``ot.sinkhorn2`` (log-domain solver, torch backend, gradient
  through POT's plan) on the same cost matrix.

``targets(...)`` measures the issue's quality targets (DP gap of the frozen classifier
vs. after AdapFair on Crime and Law over seeds; the drift scenario) through
:func:`otfair_lab.experiments.run_single`. Run ``python benchmarks/adapfair_bench.py --help``
(or ``otfair bench adapfair`` from a checkout).
Threads: torch uses one thread and ``OPENBLAS_NUM_THREADS`` should be 1 (set it in the
environment) so that variants are compared on equal terms.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from _common import ArgumentParser


def _pot_sinkhorn2(eps: float) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    import ot

    def distance(u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        a = u.new_full((u.shape[0],), 1.0 / u.shape[0])
        b = v.new_full((v.shape[0],), 1.0 / v.shape[0])
        cost = (u[:, None] - v[None, :]).square()
        return ot.sinkhorn2(a, b, cost, eps, method="sinkhorn_log")

    return distance


def _synthetic(n: int, d: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, d)).astype(np.float32)
    X[:, 0] += 1.5 * s
    y = (X[:, 0] + X[:, 1] + rng.normal(size=n) > 0.75).astype(np.int64)
    return X, y, s


def run(quick: bool = False, *, eps: float = 0.01, repeats: int | None = None) -> dict:
    """Time per epoch of AdapFair training with exact W2 vs sharp Sinkhorn vs POT.

    Parameters
    ----------
    quick : bool, default=False
        1024 samples, batch 256 only and two repeats (under a minute); otherwise
        4096 samples and batches of 256 and 1024.
    eps : float, default=0.01
        Entropic regularization of both Sinkhorn variants (scores and costs in [0, 1]).
    repeats : int, optional
        Timed epochs per variant and size (median reported).

    Returns
    -------
    dict
        ``{"rows": [...], "settings": {...}}``; each row has ``batch_size``,
        ``distance``, ``ms_per_epoch``, ``ratio_vs_w2`` and ``steps_per_epoch``.
    """
    from otfair.estimators import AdapFairPreprocessor
    from otfair.models import MLP

    torch.set_num_threads(1)
    repeats = repeats or (2 if quick else 5)
    sizes = (256,) if quick else (256, 1024)
    n, d = (1024, 10) if quick else (4096, 10)
    X, y, s = _synthetic(n, d)
    torch.manual_seed(0)
    clf = MLP(d, hidden=(20, 20)).eval()
    variants: dict[str, Any] = {
        "w2": "w2",
        "sharp_sinkhorn": "sharp_sinkhorn",
        "pot_sinkhorn2": _pot_sinkhorn2(eps),
    }
    rows = []
    for batch in sizes:
        times: dict[str, list[float]] = {k: [] for k in variants}
        for rep in range(repeats + 1):  # the first round warms up and is dropped
            for name, distance in variants.items():
                est = AdapFairPreprocessor(
                    clf, distance=distance, sinkhorn_eps=eps, epochs=2, batch_size=batch,
                    early_stopping=False, random_state=rep,  # the epoch on every row
                )  # fmt: skip
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # POT's convergence warnings
                    est.fit(X, y, sensitive_features=s)
                if rep > 0:  # epoch 2 of each fit: no set-up cost in the timing
                    times[name].append(1000.0 * est.history_[1]["time_s"])
        base = float(np.median(times["w2"]))
        for name, ts in times.items():
            med = float(np.median(ts))
            rows.append(
                {
                    "benchmark": "adapfair_epoch",
                    "batch_size": batch,
                    "distance": name,
                    "ms_per_epoch": med,
                    "ratio_vs_w2": med / base,
                    "steps_per_epoch": int(np.ceil(n / batch)),
                }
            )
    settings = {"n": n, "d": d, "eps": eps, "repeats": repeats, "torch_threads": 1}
    return {"rows": rows, "settings": settings}


def format_rows(result: dict) -> str:
    """Readable table of :func:`run` or :func:`targets` rows."""
    rows = result["rows"]
    if not rows:
        return "(no rows)"
    keys = list(rows[0])
    lines = ["  ".join(f"{k:>14}" for k in keys)]
    for row in rows:
        cells = [f"{v:>14.4g}" if isinstance(v, float) else f"{v!s:>14}" for v in row.values()]
        lines.append("  ".join(cells))
    return "\n".join(lines)


def targets(
    datasets: tuple[str, ...] = ("communities_crime", "law_school"),
    methods: tuple[str, ...] = ("adapfair", "adapfair-blind"),
    seeds: tuple[int, ...] = (0, 1, 2, 3, 4),
    strength: float | None = None,
    epochs: int | None = None,
    drift: tuple[str, str, str] | None = ("adult_country", "us", "non_us"),
    drift_rows: int = 5000,
) -> dict:
    """Mean over seeds of accuracy and DP gap, frozen classifier vs. AdapFair.

    Returns ``{"rows": [...]}`` with, per dataset and method, ``acc_base``, ``acc``,
    ``dp_base``, ``dp``, ``dp_reduction`` (``1 - dp / dp_base``) and ``acc_loss``
    (points). ``drift`` is ``(dataset, source_domain, target_domain)`` for
    :func:`otfair.datasets.load_domain_shift`, or ``None``; both training parts of the
    drift pair are subsampled to ``drift_rows`` rows (the test part is complete).
    """
    from otfair_lab.experiments import run_single

    torch.set_num_threads(1)
    runs: list[tuple[str, str, dict[str, Any]]] = [
        (ds, m, {"dataset_options": {"task": "classification"}})
        for ds in datasets
        for m in methods
    ]
    if drift is not None:
        name, src, tgt = drift
        runs += [
            (
                f"{name}:{src}->{tgt}",
                m,
                {"source_domain": src, "target_domain": tgt, "max_train_rows": drift_rows},
            )
            for m in methods
        ]
    rows = []
    for label, method, kw in runs:
        dataset = label.split(":")[0]
        res = [
            run_single(dataset, method, strength=strength, seed=seed, epochs=epochs, **kw)
            for seed in seeds
        ]
        acc = float(np.mean([r["accuracy"] for r in res]))
        acc_b = float(np.mean([r["baseline"]["accuracy"] for r in res]))
        dp = float(np.mean([r["dp_gap"] for r in res]))
        dp_b = float(np.mean([r["baseline"]["dp_gap"] for r in res]))
        rows.append(
            {
                "dataset": label,
                "method": method,
                "acc_base": acc_b,
                "acc": acc,
                "acc_loss": 100.0 * (acc_b - acc),
                "dp_base": dp_b,
                "dp": dp,
                "dp_reduction": 1.0 - dp / dp_b if dp_b > 0 else float("nan"),
                "fit_s": float(np.mean([r["fit_time_s"] for r in res])),
            }
        )
    return {"rows": rows, "settings": {"seeds": list(seeds), "strength": strength}}


def main(argv: list[str] | None = None) -> None:
    """Command line: ``python benchmarks/adapfair_bench.py [timing|targets] [--quick]``."""
    parser = ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("timing", "targets"), nargs="?", default="timing")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--strength", type=float, default=None)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--no-drift", action="store_true")
    parser.add_argument(
        "--drift", default="adult_country,us,non_us", help="dataset,source,target of the pair"
    )
    parser.add_argument("--datasets", default="communities_crime,law_school")
    args = parser.parse_args(argv)
    if args.what == "timing":
        result = run(quick=args.quick)
    else:
        result = targets(
            datasets=tuple(d for d in args.datasets.split(",") if d),
            seeds=tuple(range(args.seeds)),
            strength=args.strength,
            drift=None if args.no_drift else tuple(args.drift.split(",")),
        )
    print(json.dumps(result, indent=2) if args.json else format_rows(result))


if __name__ == "__main__":  # pragma: no cover
    main()
