"""Judge a comparison table: verdicts per row, repeated published numbers, counts.

:func:`judge_table` applies :func:`otfair_lab.reproduction.judge` to each row of the table
built by :func:`otfair_lab.reproduction._compare.compare_values` (the difference with its
standard error, ``|ours - paper| <= k * se``), marks a number the paper publishes twice
(counted once), and ``verdict_counts`` counts the outcomes of :data:`VERDICTS`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any, Literal, cast

import pandas as pd

from otfair_lab.reproduction._verdict import judge

#: Columns of the comparison table (:func:`compare_values`).
COMPARISON_COLUMNS: tuple[str, ...] = (
    "ref",
    "dataset",
    "sensitive",
    "method",
    "strength",
    "setting",
    "metric",
    "paper_value",
    "paper_std",
    "ours_mean",
    "ours_std",
    "seeds",
    "paper_seeds",
    "ours_strength",
    "verdict",
    "reason",
    "notes",
    "protocol",
    "kind",
    "claim",
    "paper_std_kind",
    "paper_resolution",
    "se",
    "tolerance",
    "repeats",
)

#: Row outcomes: the three verdicts, a value from a model with a constant prediction on some
#: seed (never counted as reproduced), a value shown without a verdict, a value not produced.
VERDICTS = ("reproduced", "close", "differs", "constant", "no verdict", "not run")


#: How a row's notes mark a constant model (:func:`constant_runs`).
_CONSTANT_NOTE = r"(?:^|; )constant: "

#: Notes that :func:`judge_table` adds (and recognizes on a second pass).
_REPEAT_NOTE = "the same published number as {ref} (counted there)"
_REPEAT_SE_NOTE = "judged with the standard error {ref} prints for the same number"
_NUMBER = re.compile(r"\d+\.\d+|\d+")


def _norm_setting(text: Any) -> str:
    """Normalize the numbers of a setting (``dp_gap=0.120`` and ``dp_gap=0.12`` agree)."""
    text = text if isinstance(text, str) else ""
    return _NUMBER.sub(lambda m: f"{float(m.group()):g}", text)


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value == ""


def _judge_row(row: pd.Series) -> tuple[str, float, float]:
    """Apply :func:`otfair_lab.reproduction.judge` to one comparison row."""
    paper_n = row["paper_seeds"]
    kind_of_std = cast(
        Literal["std", "se"],
        row["paper_std_kind"] if row["paper_std_kind"] in ("std", "se") else "std",
    )
    result = judge(
        float(row["paper_value"]),
        float(row["ours_mean"]),
        None if _blank(row["ours_std"]) else float(row["ours_std"]),
        n_ours=int(row["seeds"]) if not _blank(row["seeds"]) else 1,
        paper_std=None if _blank(row["paper_std"]) else float(row["paper_std"]),
        n_paper=int(paper_n) if not _blank(paper_n) else 1,
        paper_std_kind=kind_of_std,
        kind=row["kind"],
        claim=row["claim"] if not _blank(row["claim"]) else "equal",
        resolution=0.0 if _blank(row["paper_resolution"]) else float(row["paper_resolution"]),
    )
    return result.verdict, result.se, result.tolerance


def _add_note(notes: Any, text: str) -> str:
    notes = notes if isinstance(notes, str) else ""
    if text in notes:
        return notes
    return f"{text}; {notes}" if notes else text


def judge_table(table: pd.DataFrame) -> pd.DataFrame:
    """Judge every comparison row that has otfair's value, and mark repeated paper numbers.

    A row is judged (``verdict``, ``se``, ``tolerance``; :func:`otfair_lab.reproduction.judge`
    with the row's ``kind``, ``claim``, ``paper_std_kind``, ``paper_resolution``, the
    paper's ``paper_seeds`` and otfair's ``seeds``) unless it is ``not run`` or ``no
    verdict``. Rows that print the same number of the same comparison (dataset,
    sensitive, method, strength, metric, setting up to number formatting, value) in a
    later table (FTM Tables 8 and 9 repeat Table 1 with standard errors) are the same
    published number: ``repeats`` names the first table, they are counted there only
    (``verdict_counts``), and all copies take the verdict judged with the copy that
    prints a spread. Idempotent: judging a judged table changes nothing.
    """
    table = table.copy()
    for column in ("se", "tolerance"):
        table[column] = table[column].astype(float)
    table["repeats"] = table["repeats"].astype(object).where(table["repeats"].notna(), "")
    table["notes"] = table["notes"].astype(object).where(table["notes"].notna(), "")
    judged = (
        ~table["verdict"].isin(["not run", "no verdict"])
        & pd.to_numeric(table["ours_mean"], errors="coerce").notna()
    )
    constant = table["notes"].astype(str).str.contains(_CONSTANT_NOTE)
    for i in table.index[judged]:
        verdict_, se, tol = _judge_row(table.loc[i])
        table.loc[i, ["verdict", "se", "tolerance"]] = [verdict_, se, tol]
        table.loc[i, "reason"] = ""
        if constant[i]:  # a constant model's number is never counted as reproduced
            table.loc[i, "reason"] = (
                f"constant: a seed's model predicts one class (see notes); on the numbers: "
                f"{verdict_}"
            )
            table.loc[i, "verdict"] = "constant"
    key = pd.Series(
        [
            (r.dataset, r.sensitive, r.method, r.strength, r.metric, _norm_setting(r.setting))
            + (round(float(r.paper_value), 9),)
            for r in table.itertuples()
        ],
        index=table.index,
    )
    for _, rows in table.groupby(key, sort=False):
        if rows["ref"].nunique() < 2:
            continue
        first = rows["ref"].iloc[0]
        spread = rows[pd.to_numeric(rows["paper_std"], errors="coerce").notna()]
        source = spread.index[0] if len(spread) else rows.index[0]
        for i in rows.index:
            if rows.loc[i, "ref"] != first:
                table.loc[i, "repeats"] = first
                table.loc[i, "notes"] = _add_note(
                    table.loc[i, "notes"], _REPEAT_NOTE.format(ref=first)
                )
            if i != source and judged[i] and judged[source]:
                table.loc[i, ["verdict", "se", "tolerance"]] = table.loc[
                    source, ["verdict", "se", "tolerance"]
                ].to_numpy()
                if rows.loc[source, "ref"] != rows.loc[i, "ref"] and len(spread):
                    note = _REPEAT_SE_NOTE.format(ref=rows.loc[source, "ref"])
                    table.loc[i, "notes"] = _add_note(table.loc[i, "notes"], note)
    return table


def verdict_counts(table: pd.DataFrame, refs: Sequence[str] | None = None) -> dict[str, int]:
    """Count each outcome of :data:`VERDICTS` (optionally per refs), repeated numbers once.

    Rows whose ``repeats`` names another table (the same published number) are not
    counted; see :func:`judge_table`.
    """
    sub = table if refs is None else table[table["ref"].isin(refs)]
    if "repeats" in sub:
        sub = sub[sub["repeats"].fillna("") == ""]
    counts = sub["verdict"].value_counts()
    return {v: int(counts.get(v, 0)) for v in VERDICTS}
