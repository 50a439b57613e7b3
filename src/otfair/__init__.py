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
notions
    Fairness notions as objects (the label cells they compare).
utils
    Shared helpers: input validation, parameter constraints, torch plumbing.

Each subpackage is imported on first attribute access (PEP 562, as SciPy and
scikit-learn do): ``import otfair`` stays light (it imports neither torch nor
scikit-learn) and ``otfair.estimators.FairClassifier`` works right after it.

The research harness (sweeps, reproduction of the papers, the ``otfair`` command
line) is the separate package :mod:`otfair_lab`, installed with otfair; otfair
imports nothing of it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from otfair._version import __version__

if TYPE_CHECKING:  # the static view of the lazy attributes, for type checkers
    from otfair import (
        datasets,
        estimators,
        metrics,
        models,
        notions,
        ot,
        penalties,
        utils,
    )

__all__ = [
    "__version__",
    "datasets",
    "estimators",
    "metrics",
    "models",
    "notions",
    "ot",
    "penalties",
    "utils",
]

#: Subpackages reached lazily as attributes of :mod:`otfair`.
_SUBMODULES = frozenset(__all__) - {"__version__"}

#: The research harness moved to the package ``otfair_lab``.
_MOVED_TO_LAB = frozenset({"experiments", "reproduction", "cli"})


def __getattr__(name: str) -> Any:
    """Import the subpackage ``otfair.<name>`` on first access (PEP 562)."""
    if name in _SUBMODULES:
        return importlib.import_module(f"otfair.{name}")
    if name in _MOVED_TO_LAB:
        raise AttributeError(
            f"module 'otfair' has no attribute {name!r}: the research harness moved "
            f"to the package otfair_lab (import otfair_lab.{name})."
        )
    raise AttributeError(f"module 'otfair' has no attribute {name!r}")


def __dir__() -> list[str]:
    """Return the module's names, the lazily imported subpackages included."""
    return sorted({*globals(), *_SUBMODULES})
