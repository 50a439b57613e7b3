"""Hand-made paper rows and run rows for the comparison tests."""

from __future__ import annotations

import math

from otfair_lab.reproduction import COLUMNS


def paper_row(default_ref: str, default_value: float, **kw) -> dict:
    """One FTM paper row (German, sex, ftm, ``default_ref`` unless ``kw`` says otherwise)."""
    row = dict.fromkeys(COLUMNS, "")
    row.update(paper="ftm", ref=default_ref, dataset="german", sensitive="sex", method="ftm")
    row.update({k: v for k, v in kw.items() if k not in {"value", "std"}})
    row["value"] = kw.get("value", default_value)
    row["std"] = kw.get("std", math.nan)
    return row


def run_row(strength: float, seed: int, acc: float, dp: float, dataset: str = "german", **metrics):
    """One stored ftm run with its accuracy, DP gap and any other metrics."""
    return {
        "key": f"k{strength}{seed}",
        "dataset": dataset,
        "method": "ftm",
        "method_name": "ftm",
        "notion": None,
        "strength": strength,
        "seed": seed,
        "accuracy": acc,
        "dp_gap": dp,
        **metrics,
    }
