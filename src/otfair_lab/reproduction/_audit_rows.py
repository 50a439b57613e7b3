"""Paper rows produced by otfair's sweep audits (FTM Tables 1, 8, 9, 11 and Figure 4).

The comparison (:mod:`otfair_lab.reproduction._compare`) matches most rows by dataset, method
and matched level alone. Rows of an audit key also carry setting parts that describe the
key (a subset, a group, a cell of a 2x2 table): :func:`audit_setting_part` checks that
they agree with the key. Table 11's cells are counts of test rows in one group; otfair's
test groups have other sizes than the paper's, so :func:`sfp_cell_values` compares the
counts only when the sizes agree and shares of the group otherwise.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pandas as pd

from otfair_lab.experiments._audits import SUBSET_VARIABLES, sfp_cell_key

#: ``sfp_s{g}_unfair{a}_fair{b}``: one cell of a 2x2 self-fulfilling-prophecy table.
SFP_CELL = re.compile(r"^sfp_s([01])_unfair([01])_fair([01])$")
_SUBSET_VAR = re.compile(r"^subset_var_(high|low)_")

#: Random subsets drawn by the ``ftm`` audit against the paper's (Figure 4).
_RANDOM_SUBSETS_NOTE = "otfair's audit draws 200 random subsets per run (the paper 1,000)"


def audit_setting_part(part: str, metric: str, dataset: str) -> bool | None:
    """Whether a setting part describes the audit key ``metric``; None if it is not such a part.

    ``group S=g``, ``unfair Yhat=a`` and ``fair Yhat=b`` describe
    ``sfp_s{g}_unfair{a}_fair{b}``; ``subset=LABEL (...)`` describes
    ``subset_var_{side}_*`` when LABEL is the label of that side of ``dataset`` in
    :data:`otfair_lab.experiments._audits.SUBSET_VARIABLES`; ``N random subsets`` describes
    ``subset_dp_*``.
    """
    cell = SFP_CELL.match(metric)
    if cell is not None and re.match(r"^(group S|unfair Yhat|fair Yhat)\s*=", part):
        g, a, b = cell.groups()
        return part in {f"group S={g}", f"unfair Yhat={a}", f"fair Yhat={b}"}
    side = _SUBSET_VAR.match(metric)
    if side is not None and part.startswith("subset="):
        table = SUBSET_VARIABLES.get(dataset)
        label = part.removeprefix("subset=").split(" (")[0].strip()
        return table is not None and label == getattr(table, side.group(1))
    if metric.startswith("subset_dp_") and "random subsets" in part:
        return True
    return None


def subset_note(metric: str, dataset: str) -> str:
    """How otfair's subsets are drawn for a ``subset_dp_*`` / ``subset_var_*`` row."""
    if metric.startswith("subset_dp_"):
        return _RANDOM_SUBSETS_NOTE
    table = SUBSET_VARIABLES.get(dataset)
    if _SUBSET_VAR.match(metric) is None or table is None:
        return ""
    if table.indicator is None:
        what = f"{table.variable} above its median over the test rows"
    else:
        what = f"{table.variable} == {table.indicator}"
    return f"otfair's halves: {what} ({table.high}) vs the rest ({table.low})"


def _group_key(row: pd.Series) -> tuple[str, ...] | None:
    cell = SFP_CELL.match(str(row["metric"]))
    if cell is None:
        return None
    level = str(row["setting"]).split("; unfair Yhat")[0]
    return (row["ref"], row["dataset"], row["sensitive"], row["method"], level, cell.group(1))


def paper_group_sizes(paper_values: pd.DataFrame) -> dict[tuple[str, ...], float]:
    """Return the paper's group sizes behind its 2x2 tables (the sum of a group's cells).

    Keyed by (ref, dataset, sensitive, method, setting up to the cell, group).
    """
    sizes: dict[tuple[str, ...], float] = {}
    for _, row in paper_values.iterrows():
        key = _group_key(row)
        if key is not None:
            sizes[key] = sizes.get(key, 0.0) + float(row["value"])
    return sizes


def sfp_cell_values(
    runs: pd.DataFrame, row: pd.Series, sizes: dict[tuple[str, ...], float]
) -> tuple[pd.Series, dict[str, Any]] | str:
    r"""Return otfair's values of one Table 11 cell and how the paper's count is compared.

    With :math:`n_g` the group's size (the sum of its four cells) in the paper and in
    each of otfair's runs: when every run has the paper's :math:`n_g`, the counts
    :math:`N_{g,a,b}` are compared (random counts: the ``gap`` kind of
    :func:`otfair_lab.reproduction.judge`); otherwise the shares :math:`N_{g,a,b} / n_g`
    (the audit's ``_share`` key against the paper's count over its group size, an
    accuracy-like rate). Returns the values and the changes to the comparison row
    (``paper_value``, ``metric``, ``resolution_scale``: the
    factor from the printed count to the compared value, ``note``), or the reason
    the cell cannot be compared.
    """
    cell = SFP_CELL.match(str(row["metric"]))
    if cell is None:
        raise ValueError(f"{row['metric']!r} is not a 2x2 cell key.")
    g, a, b = (int(v) for v in cell.groups())
    paper_n = sizes.get(_group_key(row) or (), math.nan)
    cells = [sfp_cell_key(g, x, y) for x in (0, 1) for y in (0, 1)]
    if any(c not in runs for c in cells):
        return "the 2x2 counts are not recorded by these runs (`sfp` audit)"
    ours_n = runs[cells].sum(axis=1)
    if not paper_n > 0:
        return f"the paper's group S={g} has no rows in this table"
    if (ours_n == paper_n).all():
        note = f"counts: otfair's S={g} has the paper's {paper_n:,.0f} test rows"
        return runs[sfp_cell_key(g, a, b)].astype(float), {"note": note}
    sizes_text = ", ".join(f"{n:,.0f}" for n in sorted(set(ours_n.astype(int))))
    note = (
        f"shares of group S={g}: the paper's {row['value']:,.0f} of {paper_n:,.0f} rows; "
        f"otfair's S={g} has {sizes_text} test rows"
    )
    share = sfp_cell_key(g, a, b, share=True)
    changes = {"paper_value": float(row["value"]) / paper_n, "metric": share}
    return runs[share].astype(float), {**changes, "resolution_scale": 1 / paper_n, "note": note}
