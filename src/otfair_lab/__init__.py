"""otfair_lab: the research harness of otfair, on otfair's public API.

Subpackages
-----------
experiments
    Resumable sweeps over the registered methods, a result store and trade-off reports.
reproduction
    The four papers' published values and the verdict on otfair's reruns.
cli
    The ``otfair`` command line (``python -m otfair_lab``).

``otfair_lab`` imports only public names of :mod:`otfair`, and :mod:`otfair` imports
nothing of it (``tests/test_package_split.py``). Both come with one ``pip install``.
Each subpackage is imported on first attribute access (PEP 562), as in :mod:`otfair`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the static view of the lazy attributes, for type checkers
    from otfair_lab import cli, experiments, reproduction

__all__ = ["cli", "experiments", "reproduction"]


def __getattr__(name: str) -> Any:
    """Import the subpackage ``otfair_lab.<name>`` on first access (PEP 562)."""
    if name in __all__:
        return importlib.import_module(f"otfair_lab.{name}")
    raise AttributeError(f"module 'otfair_lab' has no attribute {name!r}")


def __dir__() -> list[str]:
    """Return the module's names, the lazily imported subpackages included."""
    return sorted({*globals(), *__all__})
