"""Dataset statistics the papers print (sizes, input dimension, positive rates by group).

These numbers need no training: they come from the loader and otfair's seeded split
(:meth:`otfair.datasets.FairDataset.split`, the split every run uses), so the report can
check them for every dataset of a config, whatever profile ran.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

#: Statistics :func:`dataset_statistics` returns (``positive_rate*`` per split part).
STATISTICS = ("n_train", "n_test", "n_rows", "n_features")


def dataset_statistics(
    name: str, options: Mapping[str, Any], *, seed: int = 0, test_size: float = 0.2
) -> dict[str, float]:
    r"""Sizes and positive rates of one dataset under otfair's seeded split.

    Parameters
    ----------
    name : str
        Dataset loader name.
    options : mapping
        Loader options (as in the config).
    seed : int, default=0
        Seed of the split (``random_state``).
    test_size : float, default=0.2
        Test fraction of the split.

    Returns
    -------
    dict
        ``n_train``, ``n_test``, ``n_rows``, ``n_features`` (input columns after
        preprocessing, the sensitive attribute not among them) and, for ``part`` in
        ``train`` / ``test``, ``positive_rate@part`` = :math:`P(Y=1)` and
        ``positive_rate_s{k}@part`` = :math:`P(Y=1 \mid S=k)` (classification only).
    """
    from otfair.datasets import load_dataset

    ds = load_dataset(name, **dict(options))
    split = ds.split(test_size=test_size, random_state=seed, sensitive_as_input=False)
    n_train, n_test = len(split.y_train), len(split.y_test)
    out: dict[str, float] = {
        "n_train": n_train,
        "n_test": n_test,
        "n_rows": n_train + n_test,
        "n_features": int(np.asarray(split.X_train).shape[1]),
    }
    if split.task != "classification":
        return out
    for part, y, s in (
        ("train", split.y_train, split.s_train),
        ("test", split.y_test, split.s_test),
    ):
        y, s = np.asarray(y, dtype=float), np.asarray(s)
        out[f"positive_rate@{part}"] = float(y.mean())
        for k in (0, 1) if s.ndim == 1 else ():  # one binary attribute only
            if np.any(s == k):
                out[f"positive_rate_s{k}@{part}"] = float(y[s == k].mean())
    return out


def statistics_lookup(
    datasets: Mapping[str, tuple[str, Mapping[str, Any]]],
    *,
    seed: int,
    test_size: float | Mapping[str, float],
) -> Callable[[str], dict[str, float]]:
    """Return ``lookup(label)``: :func:`dataset_statistics` of a config's dataset, cached.

    ``test_size`` is one fraction for all, or one per label (a config's per-dataset
    ``test_size``; labels not in it use 0.2). A label not in ``datasets`` (e.g. a
    domain-shift pair) gives an empty dict.
    """
    cache: dict[str, dict[str, float]] = {}

    def lookup(label: str) -> dict[str, float]:
        if label not in datasets:
            return {}
        if label not in cache:
            name, options = datasets[label]
            size = test_size.get(label, 0.2) if isinstance(test_size, Mapping) else test_size
            cache[label] = dataset_statistics(name, options, seed=seed, test_size=size)
        return cache[label]

    return lookup
