r"""Two trade-off fronts compared at matched fairness levels, paired by seed.

A paper's claim about a figure ("OTF outperforms Norm in the lower violation range",
"AdapFair demonstrates a favourable balance") compares fronts, not single numbers. Here
both methods of a comparison are trained on the same split of each seed, so their
difference at a level is *paired*:

- a level :math:`v` is a point of one front (its mean fairness measure over seeds);
- the other front's value there is its best mean performance among its strengths whose
  mean fairness measure is at most :math:`v` (no interpolation; "does not reach" if none
  is), the reports' matched-level rule;
- :math:`d` is the target's mean performance minus the baseline's at the two chosen
  strengths, and :math:`SE = \operatorname{std}(d_s) / \sqrt{n}` over the :math:`n \ge 2`
  seeds both have (:math:`d_s` the per-seed differences);
- with the reports' tolerance for accuracy-like values, :math:`t = \max(2 SE, 0.005)`:
  **target higher** if :math:`d > t`, **baseline higher** if :math:`d < -t`, else
  **similar**.

Both directions are compared: at each baseline point's level and at each target point's
level. A front is favoured at its own levels (its own point is there, while the other's
best lies at a strictly lower level), so a front that is better overall shows as "target
higher" at the *baseline's* levels, and two fronts that interleave as each winning at its
own levels.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

#: The reports' floor for accuracy-like values (docs/reproduction/README.md).
FLOOR = 0.005

#: The verdicts of :func:`compare_fronts`, in reading order.
FRONT_VERDICTS = (
    "target higher", "similar", "baseline higher", "target does not reach",
    "baseline does not reach",
)  # fmt: skip


def _means(runs: pd.DataFrame, performance: str, fairness: str) -> pd.DataFrame:
    keys = ["label", "strength"]
    df = runs.assign(strength=pd.to_numeric(runs["strength"], errors="coerce"))
    grouped = df.groupby(keys, dropna=False)
    out = grouped[[performance, fairness]].mean()
    out["n_seeds"] = grouped.size()
    return out.reset_index()


def _best_at(front: pd.DataFrame, performance: str, fairness: str, level: float):
    ok = front[front[fairness] <= level + 1e-12]
    return None if ok.empty else ok.loc[ok[performance].idxmax()]


def _per_seed(runs: pd.DataFrame, point: pd.Series, performance: str) -> pd.Series:
    sel = runs[runs["label"] == point["label"]]
    strength = pd.to_numeric(sel["strength"], errors="coerce")
    same = strength.isna() if pd.isna(point["strength"]) else strength == point["strength"]
    sel = sel[same]
    return sel.groupby("seed")[performance].mean()


def paired_difference(
    runs: pd.DataFrame, a: pd.Series, b: pd.Series, performance: str
) -> tuple[float, float, int]:
    """Mean and standard error of ``a`` minus ``b`` over the seeds both have, and their count.

    ``a`` and ``b`` are points (``label``, ``strength``) of ``runs``; the SE is NaN below
    two common seeds.
    """
    sa, sb = _per_seed(runs, a, performance), _per_seed(runs, b, performance)
    seeds = sa.index.intersection(sb.index)
    diffs = (sa.loc[seeds] - sb.loc[seeds]).to_numpy()
    n = len(diffs)
    if n == 0:
        return math.nan, math.nan, 0
    se = float(diffs.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan
    return float(diffs.mean()), se, n


def _verdict(d: float, se: float, floor: float) -> str:
    t = max(2 * se, floor) if math.isfinite(se) else floor
    if d > t:
        return "target higher"
    if d < -t:
        return "baseline higher"
    return "similar"


def compare_fronts(
    runs: pd.DataFrame,
    target: str,
    baselines: Sequence[str],
    *,
    performance: str,
    fairness: str,
    floor: float = FLOOR,
) -> pd.DataFrame:
    """Compare the front of ``target`` with each baseline's at matched levels (module doc).

    Parameters
    ----------
    runs : pandas.DataFrame
        One row per run of one dataset: ``label`` (the front), ``strength``, ``seed`` and
        the ``performance`` (higher is better) and ``fairness`` (lower is fairer) columns.
    target : str
        The label of the front under test.
    baselines : sequence of str
        The labels to compare it with (absent ones are skipped).
    performance, fairness : str
        Column names, e.g. ``"auc"`` and ``"pdp_violation"``.
    floor : float, default=0.005
        The smallest difference called a difference (the reports' accuracy-like floor).

    Returns
    -------
    pandas.DataFrame
        One row per matched level: ``baseline``, ``direction`` ("at the baseline's
        levels" / "at the target's levels"), ``level``, the chosen strengths and values
        of both fronts, ``d``, ``se``, ``seeds`` and ``verdict`` (:data:`FRONT_VERDICTS`).

    Raises
    ------
    ValueError
        If a required column is missing or ``target`` has no runs.
    """
    missing = {"label", "strength", "seed", performance, fairness} - set(runs.columns)
    if missing:
        raise ValueError(f"`runs` lacks the columns {sorted(missing)}.")
    means = _means(runs, performance, fairness)
    front = means[means["label"] == target]
    if front.empty:
        raise ValueError(f"`target` {target!r} has no runs; labels: {sorted(means['label'])}.")
    rows = []
    for name in baselines:
        other = means[means["label"] == name]
        if other.empty:
            continue
        for direction, levels in (
            ("at the baseline's levels", other),
            ("at the target's levels", front),
        ):
            for level in levels[fairness]:
                row = {"baseline": name, "direction": direction, "level": level}
                a = _best_at(front, performance, fairness, level)
                b = _best_at(other, performance, fairness, level)
                if a is None or b is None:
                    who = "target" if a is None else "baseline"
                    rows.append({**row, "verdict": f"{who} does not reach"})
                    continue
                d, se, n = paired_difference(runs, a, b, performance)
                rows.append({
                    **row, "target_strength": a["strength"], "target_value": a[performance],
                    "baseline_strength": b["strength"], "baseline_value": b[performance],
                    "d": a[performance] - b[performance], "se": se, "seeds": n,
                    "verdict": _verdict(a[performance] - b[performance], se, floor),
                })  # fmt: skip
    return pd.DataFrame(rows)
