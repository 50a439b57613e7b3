"""Reproduction of the four source papers: their published values, the verdict rule, reports.

``load_paper_values(paper)`` returns every number of the paper's tables (and the numbers
its text states for figures) with its table/figure reference; ``verdict`` compares one
of them with otfair's mean over seeds (:func:`judge`: the difference against its standard
error, with small floors). ``reproduce(paper, out_dir, profile=...)`` (the
``otfair reproduce PAPER`` command) runs the paper's config through the sweep runner and
``write_comparison`` writes the report that puts the published value beside otfair's for
every number (``compare_values`` the table behind it; ``docs/reproduction/``).
``rejudge_report`` re-judges a committed report from its ``comparison.csv`` alone
(``python -m otfair_lab.reproduction`` for every report and the counts quoted in the docs).
``compare_fronts`` decides a claim about a figure: two trade-off fronts compared at
matched levels, paired by seed.
"""

from otfair_lab.reproduction._compare import COMPARISON_COLUMNS, compare_values, judge_table
from otfair_lab.reproduction._fronts import FRONT_VERDICTS, compare_fronts, paired_difference
from otfair_lab.reproduction._rejudge import counts_markdown, rejudge_report
from otfair_lab.reproduction._run import Reproduction, find_config, reproduce
from otfair_lab.reproduction._values import (
    COLUMNS,
    PAPERS,
    UNAVAILABLE_DATASETS,
    load_paper_values,
)
from otfair_lab.reproduction._verdict import Judgement, Verdict, judge, metric_kind, verdict
from otfair_lab.reproduction._write import FIGURES, write_comparison

__all__ = [
    "COLUMNS",
    "COMPARISON_COLUMNS",
    "FIGURES",
    "FRONT_VERDICTS",
    "PAPERS",
    "Judgement",
    "Reproduction",
    "UNAVAILABLE_DATASETS",
    "Verdict",
    "compare_fronts",
    "compare_values",
    "counts_markdown",
    "find_config",
    "judge",
    "judge_table",
    "load_paper_values",
    "paired_difference",
    "metric_kind",
    "rejudge_report",
    "reproduce",
    "verdict",
    "write_comparison",
]
