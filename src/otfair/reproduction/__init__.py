"""Reproduction of the four source papers: their published values and the verdict rule.

``load_paper_values(paper)`` returns every number of the paper's tables (and the numbers
its text states for figures) with its table/figure reference; ``verdict`` compares one
of them with otfair's mean over seeds. The ``otfair reproduce PAPER`` report that puts
them side by side is planned in ``docs/reproduction/PLAN.md``.
"""

from otfair.reproduction._values import (
    COLUMNS,
    PAPERS,
    UNAVAILABLE_DATASETS,
    load_paper_values,
)
from otfair.reproduction._verdict import Verdict, verdict

__all__ = [
    "COLUMNS",
    "PAPERS",
    "UNAVAILABLE_DATASETS",
    "Verdict",
    "load_paper_values",
    "verdict",
]
