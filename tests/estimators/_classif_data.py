"""Two-group classification data shared by the FairClassifier and registry tests."""

from __future__ import annotations

import numpy as np


def two_group_data(
    n: int = 600, seed: int = 0, d: int = 3
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return ``(X, y, s)``: group 1 (40%) shifted along feature 0, which sets the label."""
    rng = np.random.default_rng(seed)
    s = (rng.random(n) < 0.4).astype(int)
    X = rng.normal(size=(n, d))
    X[:, 0] += 1.5 * s
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0.7).astype(int)
    return X, y, s


def drift_data(
    n: int = 600, d: int = 4, seed: int = 0, shift: float = 0.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return float32 ``(X, y, s)`` for AdapFair: group 1 shifted on feature 0, which sets
    the label; ``shift`` moves feature 2 (a drifted domain)."""
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, d)).astype(np.float32)
    X[:, 0] += 1.5 * s
    X[:, 2] += shift
    y = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.7, size=n) > 0.75).astype(int)
    return X, y, s
