"""OTF paper, claims O1-O3 (claims.md): OTF against Norm and Barycenter, decided on numbers.

The paper's Figure 1 has no printed numbers, and its claims compare trade-off fronts ("a
similar trade-off between AUC and PDP fairness as the baselines", "OTF clearly outperforms
Norm ... when trained to minimize PEO, especially in the lower violation range"). This
script reads the committed runs (``runs/seed-*.jsonl``) and compares the fronts at matched
violation levels. The rule is :func:`otfair.reproduction.compare_fronts` (its module
docstring): a level is a point of one front; the other front's value there is its best mean
AUC among strengths whose mean violation is at most the level (the reports' matched-level
rule); the AUC difference is paired by seed (both are trained on the same splits) and called
"OTF higher" / "baseline higher" beyond max(2 SE, 0.005), else "similar"; both directions
(at the baseline's levels and at OTF's) are compared. PDP for the DP-trained series, PEO for
the EO-trained ones. Barycenter is trained on one binary attribute: on Adult it runs on sex
only (dataset ``adult (sex)``), where OTF does not, so Adult's Barycenter is not compared.
Also writes, per dataset and notion, the unfair model's violation and the lowest one OTF
reaches (claim O3, from the report's ``figure_points.csv``). Writes ``claims_fronts.csv``
and ``claims_fronts.md`` beside it (seconds, no training):

    python docs/reproduction/otf/claims_fronts.py
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from otfair.experiments import load_archive
from otfair.reproduction import compare_fronts

HERE = Path(__file__).parent
MEASURE = {"dp": "pdp_violation", "eo": "peo_violation"}


def load_runs(folder: Path) -> pd.DataFrame:
    """Return the archive's runs with a series label (``otf [dp]``, ``barycenter``)."""
    runs = load_archive(folder)
    notion = runs["notion"].fillna("")
    label = [m if not n else f"{m} [{n}]" for m, n in zip(runs["method"], notion, strict=True)]
    return runs.assign(label=label)


def compare(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per matched level: dataset, notion, baseline, direction, values, verdict.

    :func:`otfair.reproduction.compare_fronts` per dataset and notion: OTF [dp] against
    Norm [dp] and both Barycenter grids on the PDP violation, OTF [eo] against Norm [eo] on
    the PEO violation.
    """
    tables = []
    for dataset, here in runs.groupby("dataset"):
        for notion, measure in MEASURE.items():
            target = f"otf [{notion}]"
            if target not in set(here["label"]):
                continue
            baselines = [f"norm [{notion}]"]
            if notion == "dp":  # Barycenter is a DP method (no notion)
                baselines += sorted({x for x in here["label"] if x.startswith("barycenter")})
            t = compare_fronts(here, target, baselines, performance="auc", fairness=measure)
            t.insert(0, "measure", measure)
            t.insert(0, "notion", notion)
            t.insert(0, "dataset", dataset)
            tables.append(t)
    table = pd.concat(tables, ignore_index=True)
    table["direction"] = [
        "at OTF's levels" if d == "at the target's levels" else f"at {b}'s levels"
        for d, b in zip(table["direction"], table["baseline"], strict=True)
    ]
    table["verdict"] = table["verdict"].str.replace("target", "OTF", regex=False)
    return table.rename(
        columns={
            "target_strength": "otf_strength",
            "target_value": "otf_auc",
            "baseline_strength": "other_strength",
            "baseline_value": "other_auc",
        }  # fmt: skip
    )


def lowest_violations(points: pd.DataFrame) -> pd.DataFrame:
    """Per dataset and notion: the unfair model's violation and OTF's lowest (claim O3)."""
    rows = []
    for (dataset, notion), otf in points[points["method"] == "otf"].groupby(["dataset", "notion"]):
        measure = MEASURE[notion]
        unfair = points[(points["dataset"] == dataset) & (points["method"] == "unfair")]
        low = otf.loc[otf[f"{measure}_mean"].idxmin()]
        rows.append({
            "dataset": dataset, "notion": notion, "measure": measure,
            "unfair": unfair[f"{measure}_mean"].iloc[0] if len(unfair) else math.nan,
            "unfair_se": unfair[f"{measure}_se"].iloc[0] if len(unfair) else math.nan,
            "otf_lowest": low[f"{measure}_mean"], "otf_lowest_se": low[f"{measure}_se"],
            "otf_strength": low["strength"], "otf_auc": low["auc_mean"],
            "seeds": int(low["n_seeds"]),
        })  # fmt: skip
    return pd.DataFrame(rows)


VERDICTS = (
    "OTF higher", "similar", "baseline higher", "OTF does not reach", "baseline does not reach",
)  # fmt: skip


def _summary(table: pd.DataFrame) -> pd.DataFrame:
    keys = ["dataset", "notion", "baseline", "direction"]
    counts = table.groupby(keys)["verdict"].value_counts().unstack(fill_value=0)
    present = [v for v in VERDICTS if v in counts.columns]
    return counts.reindex(columns=present).reset_index()


def main() -> None:
    """Write claims_fronts.csv and claims_fronts.md from figure_points.csv."""
    points = pd.read_csv(HERE / "figure_points.csv")
    points["notion"] = points["notion"].fillna("")
    table = compare(load_runs(HERE / "runs"))
    table.to_csv(HERE / "claims_fronts.csv", index=False, float_format="%.6g")
    low = lowest_violations(points)
    seeds = sorted(set(points["n_seeds"]))
    md = [
        "# OTF paper, claims O1-O3: the fronts compared at matched violation levels",
        "",
        f"Written by [claims_fronts.py](claims_fronts.py) from [figure_points.csv]"
        f"(figure_points.csv) and the runs in [runs/](runs/) (seeds per point: "
        f"{', '.join(map(str, seeds))}); the rule is in the script's docstring: differences "
        "are paired by seed (OTF and the baseline are trained on the same splits). All rows: "
        "[claims_fronts.csv](claims_fronts.csv).",
        "",
        "## Counts of matched levels per comparison",
        "",
        "AUC of OTF minus the baseline's at the same violation level (PDP for the DP-trained "
        "series, PEO for the EO-trained ones).",
        "",
    ]
    summary = _summary(table)
    cols = list(summary.columns)
    md += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    md += ["| " + " | ".join(str(v) for v in r) + " |" for r in summary.itertuples(index=False)]
    md += [
        "",
        "## Lowest violation OTF reaches (claim O3)",
        "",
        "| dataset | notion | unfair model | OTF's lowest | at alpha | its AUC | seeds |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in low.itertuples(index=False):
        md.append(
            f"| {r.dataset} | {r.notion} | {r.unfair:.4f} ± {r.unfair_se:.4f} | "
            f"{r.otf_lowest:.4f} ± {r.otf_lowest_se:.4f} | {r.otf_strength:g} | "
            f"{r.otf_auc:.4f} | {r.seeds} |"
        )
    md += ["", "(± one standard error over the seeds.)", ""]
    (HERE / "claims_fronts.md").write_text("\n".join(md), encoding="utf-8")


if __name__ == "__main__":
    main()
