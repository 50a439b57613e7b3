"""otfair: train and audit fair machine-learning models with optimal transport.

Subpackages
-----------
datasets
    Real fairness benchmarks and synthetic generators, returned as ``FairDataset``.
metrics
    Fairness and performance measures with fairlearn's calling convention.
ot
    Optimal-transport primitives in torch (exact 1-D OT, matching, Sinkhorn, OTF duals).
penalties
    Small composable torch fairness losses built on :mod:`otfair.ot`.
models
    Small torch modules (logistic regression, MLP, flows, adversaries).
estimators
    scikit-learn compatible fair estimators and baselines.
experiments
    Resumable sweeps, a result store and trade-off reports.
reproduction
    The four papers' published values and the verdict on otfair's reruns.
notions
    Fairness notions as objects (the label cells they compare).
utils
    Shared helpers: input validation, parameter constraints, torch plumbing.

Each subpackage is imported on first attribute access (PEP 562, as SciPy and
scikit-learn do): ``import otfair`` stays light (it imports neither torch nor
scikit-learn) and ``otfair.estimators.FairClassifier`` works right after it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from otfair._version import __version__

if TYPE_CHECKING:  # the static view of the lazy attributes, for type checkers
    from otfair import (
        datasets,
        estimators,
        experiments,
        metrics,
        models,
        notions,
        ot,
        penalties,
        reproduction,
        utils,
    )

__all__ = [
    "__version__",
    "datasets",
    "estimators",
    "experiments",
    "metrics",
    "models",
    "notions",
    "ot",
    "penalties",
    "reproduction",
    "utils",
]

#: Subpackages reached lazily as attributes of :mod:`otfair`.
_SUBMODULES = frozenset(__all__) - {"__version__"}


def __getattr__(name: str) -> Any:
    """Import the subpackage ``otfair.<name>`` on first access (PEP 562)."""
    if name in _SUBMODULES:
        return importlib.import_module(f"otfair.{name}")
    raise AttributeError(f"module 'otfair' has no attribute {name!r}")


def __dir__() -> list[str]:
    """Return the module's names, the lazily imported subpackages included."""
    return sorted({*globals(), *_SUBMODULES})
