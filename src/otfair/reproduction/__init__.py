"""Reproduction of the four source papers: their published values, the verdict rule, reports.

``load_paper_values(paper)`` returns every number of the paper's tables (and the numbers
its text states for figures) with its table/figure reference; ``verdict`` compares one
of them with otfair's mean over seeds. ``reproduce(paper, out_dir, profile=...)`` (the
``otfair reproduce PAPER`` command) runs the paper's config through the sweep runner and
``write_comparison`` writes the report that puts the published value beside otfair's for
every number (``compare_values`` the table behind it; ``docs/reproduction/``).
"""

from otfair.reproduction._compare import COMPARISON_COLUMNS, compare_values
from otfair.reproduction._run import Reproduction, find_config, reproduce
from otfair.reproduction._values import (
    COLUMNS,
    PAPERS,
    UNAVAILABLE_DATASETS,
    load_paper_values,
)
from otfair.reproduction._verdict import Verdict, verdict
from otfair.reproduction._write import FIGURES, write_comparison

__all__ = [
    "COLUMNS",
    "COMPARISON_COLUMNS",
    "FIGURES",
    "PAPERS",
    "Reproduction",
    "UNAVAILABLE_DATASETS",
    "Verdict",
    "compare_values",
    "find_config",
    "load_paper_values",
    "reproduce",
    "verdict",
    "write_comparison",
]
