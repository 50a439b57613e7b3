"""What :class:`~otfair.estimators.FairnessCV` prints as it goes (``verbose=1``).

One line on standard error per fold fit measured, and one for the refit, in the manner
of scikit-learn's ``GridSearchCV(verbose=...)``: a search of an MLP over twelve
strengths and five folds runs for minutes, and a silent one looks hung.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import numpy as np

__all__ = ["ProgressLine", "announce_refit"]

#: the prefix of every line
PREFIX = "[FairnessCV]"


class ProgressLine:
    """Print ``fold f/F, param=value: score ..., violation ... (t s)`` for each fold fit.

    Parameters
    ----------
    strengths : ndarray
        The search's strengths (grid and refinement midpoints), by index.
    n_splits : int
        The number of folds.
    param : str
        The strength parameter's name.
    metric_name : str
        The violation measure's name.
    """

    def __init__(self, strengths: np.ndarray, n_splits: int, param: str, metric_name: str):
        self.strengths = np.asarray(strengths, dtype=float)
        self.n_splits = int(n_splits)
        self.param = param
        self.metric_name = metric_name
        self.start = time.perf_counter()

    def __call__(self, fold: int, k: int, score: float, violation: float) -> None:
        """Report the measurement of fold ``fold``'s fit at strength index ``k``."""
        elapsed = time.perf_counter() - self.start
        print(
            f"{PREFIX} fold {fold + 1}/{self.n_splits}, {self.param}={self.strengths[k]:.4g}: "
            f"held-out score {score:.4f}, {self.metric_name} {violation:.4f} "
            f"({elapsed:.1f} s)",
            file=sys.stderr,
            flush=True,
        )


def announce_refit(param: str, value: float, line: Callable[..., None] | None) -> None:
    """Print the refit's line (``line`` is the search's :class:`ProgressLine`, or None)."""
    if isinstance(line, ProgressLine):
        elapsed = time.perf_counter() - line.start
        print(
            f"{PREFIX} refit at {param}={value:.4g} on all rows ({elapsed:.1f} s)",
            file=sys.stderr,
            flush=True,
        )
