"""The four papers' published numbers, shipped as package data.

One CSV per paper in ``otfair_lab/reproduction/data/``: every number of every table, and
the numbers the text states for figures, each row citing its table or figure.
"""

from __future__ import annotations

import math
from importlib import resources

import pandas as pd

PAPERS: dict[str, str] = {
    "otf": "Buyl & De Bie, Optimal Transport of Classifiers to Fairness (NeurIPS 2022)",
    "ftm": "Kim et al., Fairness Through Matching (TMLR 12/2024)",
    "adapfair": "Huang, Tang & Chang, AdapFair: Ensuring Adaptive Fairness for MLOps",
    "accuracy_parity": (
        "Chi et al., Understanding and Mitigating Accuracy Disparity in Regression (ICML 2021)"
    ),
}
"""Paper keys (the names of their configs in ``configs/``) and their titles."""

COLUMNS: tuple[str, ...] = (
    "paper",
    "ref",
    "dataset",
    "sensitive",
    "method",
    "paper_method",
    "strength",
    "setting",
    "metric",
    "paper_metric",
    "metric_source",
    "value_text",
    "unit",
    "std_text",
    "std_kind",
    "protocol",
    "quote",
    "notes",
)
"""Columns of the data files (all text, as printed in the paper).

``ref``: "Table 5", "Figure 3", "TABLE A.3", "App. C.2". ``dataset`` / ``sensitive`` /
``method``: otfair's names (dataset loader, its ``sensitive`` option, registered method
or the name a planned method will take); ``paper_method`` / ``paper_metric``: what the
paper calls them. ``setting``: the comparison point (``dp_gap=0.045; subset=married``,
a group, a split part). ``metric_source``: ``panel`` (a key of
:data:`otfair.metrics.CLASSIFICATION_KEYS` / :data:`~otfair.metrics.REGRESSION_KEYS`),
``audit`` (a key of a sweep audit, e.g. ``consistency``, ``sfp_spearman_s0``,
``sfp_s1_unfair0_fair1``: :data:`otfair_lab.experiments._audits.AUDIT_KEYS`) or ``paper``
(paper-only: dataset sizes, grids; the accuracy's CV of FTM Table 3 is derived from
the runs' accuracies). ``value_text`` /
``std_text``: the number as printed (``unit`` ``%``, ``count`` or empty); ``std_kind``:
``std``, ``se`` or ``std?`` (not stated). ``quote``: a snippet of the paper text holding
the number where it is printed differently (``10^{-2}``) or to locate it.
"""

UNAVAILABLE_DATASETS: dict[str, str] = {
    "isic": "none (images + DenseNet-201; no image pipeline here)",
    "acs_income (MI)": "adult, domain US (source of the drift scenario)",
    "acs_income (AL)": "adult, domain non-US (target of the drift scenario)",
    "heritage_health (male)": "diabetes by gender, sensitive age >= 60 (source domain)",
    "heritage_health (female)": "diabetes by gender, sensitive age >= 60 (target domain)",
}
"""Datasets the papers use that cannot be had here, and otfair's substitute."""


def _number(text: str) -> float:
    """Parse a number as printed (``30,136``, ``0.052``, ``1e-2``); empty -> NaN."""
    text = text.strip().replace(",", "")
    return float(text) if text else math.nan


def load_paper_values(paper: str) -> pd.DataFrame:
    """Load one paper's published values.

    Parameters
    ----------
    paper : {"otf", "ftm", "adapfair", "accuracy_parity"}
        The paper (see :data:`PAPERS`).

    Returns
    -------
    pandas.DataFrame
        The :data:`COLUMNS` as text plus ``value`` and ``std`` (float, NaN when not
        given) on otfair's scale: percentages are divided by 100, counts and sizes
        stay counts.

    Raises
    ------
    ValueError
        If ``paper`` is not one of :data:`PAPERS`.

    Examples
    --------
    >>> t5 = load_paper_values("ftm").query("ref == 'Table 5' and method == 'ftm'")
    >>> float(t5.loc[t5.dataset == "german", "value"].iloc[0])
    0.743
    """
    if paper not in PAPERS:
        raise ValueError(f"`paper` must be one of {sorted(PAPERS)}; got {paper!r}.")
    source = resources.files("otfair_lab.reproduction").joinpath("data").joinpath(f"{paper}.csv")
    with source.open("r", encoding="utf-8") as fh:
        frame = pd.read_csv(fh, dtype=str, keep_default_na=False)
    if tuple(frame.columns) != COLUMNS:
        raise ValueError(f"{paper}.csv has columns {list(frame.columns)}, expected {COLUMNS}.")
    scale = frame["unit"].map(lambda u: 0.01 if u == "%" else 1.0)
    frame["value"] = frame["value_text"].map(_number) * scale
    frame["std"] = frame["std_text"].map(_number) * scale
    return frame
