"""Parse a published number's setting: imbalance share, strength, levels, group.

The ``setting`` text of a published value (``"dp_gap=0.045"``, ``"group S = 1"``,
``"train imbalance 1:4"``) selects the runs and the comparison point used by
:func:`otfair_lab.reproduction._compare.compare_values`.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from otfair_lab.reproduction._audit_rows import audit_setting_part

#: Dataset statistics checked from the loader and split (``n_rows`` = train + test).
_STATISTICS = {"n_train", "n_test", "n_rows", "n_features"}

_LEVEL = re.compile(r"^([a-z_0-9.]+)\s*=\s*([-+0-9.eE]+)$")
_GROUP = re.compile(r"^group S\s*=\s*([01])$")
_IMBALANCE = re.compile(r"train imbalance\s*([0-9.]+)\s*:\s*([0-9.]+)", re.IGNORECASE)


def imbalance_share(setting: str) -> float | None:
    """Group 0's training share of a setting's ``train imbalance A:B`` part (5:95 -> 0.05)."""
    match = _IMBALANCE.search(setting or "")
    if match is None:
        return None
    a, b = float(match.group(1)), float(match.group(2))
    return a / (a + b)


def _runs_with_share(runs: pd.DataFrame, share: float | None) -> pd.DataFrame:
    """Select the runs trained with ``train_group_share == share`` (None: as split)."""
    have = runs.get("train_group_share", None)
    if have is None:
        return runs if share is None else runs.iloc[0:0]
    values = pd.to_numeric(have, errors="coerce")
    if share is None:
        return runs[values.isna()]
    return runs[np.isclose(values.fillna(-1.0), share, rtol=0, atol=1e-9)]


def _strength_value(text: str) -> float | None | str:
    """``"eps=0.07"`` -> 0.07, ``""`` -> None, anything else -> the text (unparseable)."""
    text = text.strip()
    if not text:
        return None
    match = _LEVEL.match(text)
    return float(match.group(2)) if match else text


def _unsupported_reason(part: str, metric: str) -> str:
    """Why a setting part is not produced by otfair's runs."""
    low = part.lower()
    if "random subsets" in low:
        return f"random subsets ({part}) given for `{metric}`, not a `subset_dp_*` audit key"
    if "subset=" in low:
        return (
            f"subset ({part}) given for `{metric}`: the `ftm` audit's subset keys are "
            "`subset_var_high_*` / `subset_var_low_*`"
        )
    if "yhat" in low:
        return f"a 2x2 cell ({part}) given for `{metric}`, not an `sfp_s*_unfair*_fair*` key"
    if low.startswith("part="):
        return f"split statistic ({part}) not computed by the runs"
    if "matched level of the boxplots" in low:
        return "the level at which Fig. 4 compares the methods, not a result (see `subset_dp_*`)"
    if "grid point" in low:
        return "the paper's grid is compared in docs, not by a run"
    return f"setting '{part}' is not produced by otfair's runs"


def _parse_setting(
    setting: str, metric: str, dataset: str = ""
) -> tuple[tuple[str, float] | None, str | None]:
    """Return the matched level ``(measure, level)`` and the reason a part is unsupported."""
    level: tuple[str, float] | None = None
    for raw in setting.split(";"):
        part = raw.strip()
        describes = audit_setting_part(part, metric, dataset)
        if describes is not None:
            if describes:
                continue
            return level, f"setting part '{part}' does not describe `{metric}` on {dataset}"
        if _IMBALANCE.fullmatch(part):  # selects the runs (:func:`imbalance_share`)
            continue
        if not part or part in {
            "dataset",
            "pretrained classifier before adaptation",
            "lowest level reached",
        }:
            continue
        group = _GROUP.match(part)
        if group is not None:
            if metric.endswith(f"_s{group.group(1)}"):
                continue
            return level, f"per-group value ({part}) of {metric} not recorded"
        match = _LEVEL.match(part)
        if match is not None and level is None:
            level = (match.group(1), float(match.group(2)))
            continue
        return level, _unsupported_reason(part, metric)
    return level, None
