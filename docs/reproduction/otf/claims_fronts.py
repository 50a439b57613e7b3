"""OTF paper, claims O1-O3 (claims.md): OTF against Norm and Barycenter, decided on numbers.

The paper's Figure 1 has no printed numbers, and its claims compare trade-off fronts ("a
similar trade-off between AUC and PDP fairness as the baselines", "OTF clearly outperforms
Norm ... when trained to minimize PEO, especially in the lower violation range"). This
script reads the committed runs (``runs/seed-*.jsonl``) and compares the fronts at matched
violation levels. The rule is :func:`otfair_lab.reproduction.compare_fronts` (its module
docstring): a level is a point of one front; the other front's value there is its best mean
AUC among strengths whose mean violation is at most the level (the reports' matched-level
rule); the AUC difference is paired by seed (both are trained on the same splits) and called
"OTF higher" / "baseline higher" beyond max(2 SE, 0.005), else "similar"; both directions
(at the baseline's levels and at OTF's) are compared. PDP for the DP-trained series, PEO for
the EO-trained ones. Barycenter is trained on one binary attribute: on Adult it runs on sex
only (dataset ``adult (sex)``), where OTF does not, so Adult's Barycenter is not compared.
Also writes, per dataset and notion, the unfair model's violation and the lowest one OTF
reaches (claim O3, from the report's ``figure_points.csv``), and every matched level where a
baseline is higher (O1's exceptions). Writes ``claims_fronts.csv`` and ``claims_fronts.md``
beside it (seconds, no training); with ``--claims`` it also rewrites the O1-O3 rows of
``../claims.md`` from the same numbers (:func:`claim_rows`), so that the rows' verdicts and
numbers follow the committed seeds:

    python docs/reproduction/otf/claims_fronts.py --claims
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import pandas as pd

from otfair_lab.experiments import load_archive
from otfair_lab.reproduction import compare_fronts

HERE = Path(__file__).parent
MEASURE = {"dp": "pdp_violation", "eo": "peo_violation"}


def compare(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per matched level: dataset, notion, baseline, direction, values, verdict.

    :func:`otfair_lab.reproduction.compare_fronts` per dataset and notion: OTF [dp] against
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


#: A point whose mean AUC is more than this below the unfair model's has collapsed (claim
#: O3 reads the lowest violation among the points that have not).
COLLAPSE_AUC_DROP = 0.05


def lowest_violations(points: pd.DataFrame) -> pd.DataFrame:
    """Per dataset and notion: the unfair model's violation and OTF's and Norm's lowest (O3).

    The lowest is taken among the points whose mean AUC is within
    :data:`COLLAPSE_AUC_DROP` of the unfair model's (a model that has not collapsed);
    ``collapsed_*`` is the lowest over every point, where it differs.
    """
    rows = []
    for (dataset, notion), otf in points[points["method"] == "otf"].groupby(["dataset", "notion"]):
        measure = MEASURE[notion]
        here = points[points["dataset"] == dataset]
        unfair = here[here["method"] == "unfair"]
        floor = unfair["auc_mean"].iloc[0] - COLLAPSE_AUC_DROP if len(unfair) else -math.inf
        kept = otf[otf["auc_mean"] >= floor]
        pool = kept if len(kept) else otf
        low = pool.loc[pool[f"{measure}_mean"].idxmin()]
        low_all = otf.loc[otf[f"{measure}_mean"].idxmin()]
        norm = here[(here["method"] == "norm") & (here["notion"] == notion)]
        norm = norm[norm["auc_mean"] >= floor]
        rows.append({
            "dataset": dataset, "notion": notion, "measure": measure,
            "unfair": unfair[f"{measure}_mean"].iloc[0] if len(unfair) else math.nan,
            "unfair_se": unfair[f"{measure}_se"].iloc[0] if len(unfair) else math.nan,
            "otf_lowest": low[f"{measure}_mean"], "otf_lowest_se": low[f"{measure}_se"],
            "otf_strength": low["strength"], "otf_auc": low["auc_mean"],
            "norm_lowest": norm[f"{measure}_mean"].min() if len(norm) else math.nan,
            "collapsed_lowest": low_all[f"{measure}_mean"],
            "collapsed_strength": low_all["strength"], "collapsed_auc": low_all["auc_mean"],
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


def _ranked(table: pd.DataFrame) -> pd.DataFrame:
    keys = ["dataset", "notion", "baseline", "direction"]
    rank = table.groupby(keys)["level"].rank(method="first").astype(int)
    return table.assign(rank=rank)


def exceptions(table: pd.DataFrame) -> pd.DataFrame:
    """Return the matched levels where a baseline is higher, with their rank among the levels.

    ``rank`` 1 is the lowest violation level of its comparison (dataset, notion, baseline,
    direction).
    """
    ranked = _ranked(table)
    return ranked[ranked["verdict"] == "baseline higher"].reset_index(drop=True)


#: A baseline ahead by more than this much AUC is reported as OTF collapsing, not trailing.
COLLAPSE = 0.05

CLAIMS = HERE.parent / "claims.md"
LINK = "[otf/claims_fronts.md](otf/claims_fronts.md)"
SHORT = {
    "adult (sex+race)": "Adult", "bank (age)": "Bank (age)",
    "bank (age binned)": "Bank (age binned)", "diabetes": "Diabetes", "dutch": "Dutch",
}  # fmt: skip


def _f(x: float) -> str:
    return f"{x:.4f}"


def _exception_text(ex: pd.DataFrame, measure: str = "PDP") -> str:
    parts = []
    for r in ex.itertuples(index=False):
        where = f"{SHORT[r.dataset]}, {r.direction} ({measure} {_f(r.level)}, its level {r.rank})"
        if -r.d > COLLAPSE:
            parts.append(
                f"{where}: OTF gets there only at alpha {r.otf_strength:g}, where its AUC "
                f"falls to {_f(r.otf_auc)} against {r.baseline}'s {_f(r.other_auc)}"
            )
        else:
            parts.append(f"{where}: {r.baseline} {_f(r.other_auc)} against OTF {_f(r.otf_auc)}")
    return "; ".join(parts)


def claim_rows(table: pd.DataFrame, low: pd.DataFrame) -> dict[str, str]:
    """Write the O1-O3 rows of claims.md from the comparison and the lowest violations.

    Every verdict word and number in the rows is computed here from ``table``
    (:func:`compare`) and ``low`` (:func:`lowest_violations`); the test suite keeps
    claims.md's rows equal to this function's output on the committed files.
    """
    seeds = int(low["seeds"].max())
    lo = {(r.dataset, r.notion): r for r in low.itertuples(index=False)}
    dp = table[table["notion"] == "dp"]
    others = dp[dp["dataset"] != "dutch"]
    ex = exceptions(others)
    n_both = int(others["verdict"].isin(["OTF higher", "similar", "baseline higher"]).sum())
    at_lowest = bool(len(ex)) and bool((ex["rank"] <= 2).all())
    unreached = sorted(set(others.loc[others["verdict"] == "OTF does not reach", "dataset"]))
    dutch = dp[(dp["dataset"] == "dutch") & (dp["baseline"] == "norm [dp]")]
    dutch_norm = dutch[dutch["direction"] == "at norm [dp]'s levels"]
    du_nr = int((dutch_norm["verdict"] == "OTF does not reach").sum())
    du_bh = int((dutch_norm["verdict"] == "baseline higher").sum())
    dutch_fails = du_nr + du_bh > 0
    if ex.empty:
        o1_here = (
            "**holds here** on Adult, Bank (both encodings) and Diabetes, at every PDP level "
            "both reach"
        )
        o1_ex = (
            "OTF [dp] is similar to or above Norm [dp] and Barycenter at every level both "
            "fronts reach, in both directions"
        )
    else:
        o1_here = (
            "**holds here** on Adult, Bank (both encodings) and Diabetes, "
            + ("except at the lowest PDP levels" if at_lowest else f"except at {len(ex)} levels")
            + f", where a baseline is ahead ({len(ex)} of the {n_both} levels both reach)"
        )
        o1_ex = (
            f"OTF [dp] is similar to or above Norm [dp] and Barycenter at {n_both - len(ex)} "
            f"of the {n_both} levels both fronts reach, in both directions; a baseline is "
            f"higher at {len(ex)}: {_exception_text(ex)}"
        )
    o1_here += (
        "; **does not hold here** on Dutch, where OTF does not reach the baselines' low PDP"
        if dutch_fails
        else "; **holds here** on Dutch too"
    )
    A, DI, DU = lo[("adult (sex+race)", "dp")], lo[("diabetes", "dp")], lo[("dutch", "dp")]
    reach = (
        f"; only the baselines reach the lowest PDP levels of "
        f"{' and '.join(SHORT[d] for d in unreached)}"
        if unreached
        else ""
    )
    o1 = (
        '| O1 | "On all datasets, our OTF method makes a similar trade-off between AUC and PDP '
        'fairness as the baselines for various α values" (§5.3, Fig. 1) | '
        + o1_here
        + f" | {LINK} ({seeds} seeds; the fronts compared at each other's violation levels, AUC "
        'differences paired by seed, "similar" within max(2 SE, 0.005); a level\'s rank counts '
        f"from the lowest): on Adult, Bank and Diabetes {o1_ex}{reach} (OTF's lowest: "
        f"{_f(A.otf_lowest)} on Adult at AUC {_f(A.otf_auc)}, {_f(DI.otf_lowest)} on Diabetes)."
        f" Dutch: OTF's lowest PDP is {_f(DU.otf_lowest)} (alpha {DU.otf_strength:g}, AUC "
        f"{_f(DU.otf_auc)}); at Norm's 5 levels it does not reach {du_nr} and is lower at "
        f"{du_bh}, where Norm and Barycenter go to ~0.01; isolated in "
        "[otf/dutch_otf.md](otf/dutch_otf.md) (at the paper's eps OTF goes no lower on "
        "Dutch's one-hot features) |"
    )
    eo = table[table["notion"] == "eo"]
    ae = eo[eo["dataset"] == "adult (sex+race)"]
    a_otf = int(((ae["direction"] == "at OTF's levels") & (ae["verdict"] == "OTF higher")).sum())
    n_otf = int((ae["direction"] == "at OTF's levels").sum())
    norm_dir = ae["direction"] == "at norm [eo]'s levels"
    a_norm = int((norm_dir & (ae["verdict"] == "OTF higher")).sum())
    n_norm = int(norm_dir.sum())
    a_lower = int((ae["verdict"] == "baseline higher").sum())
    de = eo[eo["dataset"] == "diabetes"]
    d_similar = set(de["verdict"]) <= {"similar", "OTF does not reach"}
    d_unreached = bool((de["verdict"] == "OTF does not reach").any())
    d_max = float(de["d"].abs().max())
    d_ahead = int((de["verdict"] == "OTF higher").sum())
    d_behind = exceptions(de)
    d_both = int(de["verdict"].isin(["OTF higher", "similar", "baseline higher"]).sum())
    adult_holds = a_otf + a_norm > 0 and a_lower == 0
    if d_similar:
        d_here = "; **does not hold here** on Diabetes (the fronts are similar)"
    elif d_ahead == 0:
        d_here = (
            "; **does not hold here** on Diabetes (the fronts are similar, except where Norm "
            "is ahead)"
        )
    else:
        d_here = "; on Diabetes OTF is ahead at some levels (see the counts)"
    o2_here = (
        "**holds here** on Adult" if adult_holds else "**does not hold here** on Adult"
    ) + d_here
    lower = "never lower" if a_lower == 0 else f"lower at {a_lower}"
    o2 = (
        '| O2 | "OTF clearly outperforms Norm ... on the Adult dataset ... when they are '
        'trained to minimize PEO, especially in the lower violation range" and "a better '
        'trade-off between AUC and PEO violation on the Diabetes dataset" (§5.3) | '
        + o2_here
        + f" | {LINK}, rows `eo` ({seeds} seeds, paired by seed): on Adult OTF [eo] is higher "
        f"than Norm [eo] at {a_otf} of OTF's {n_otf} PEO levels and at {a_norm} of Norm's "
        f"{n_norm}, and {lower}. On Diabetes "
        + (
            "every comparison is similar (AUCs 0.61 throughout: the differences, at most "
            f"{_f(d_max)}, are below the 0.005 floor)"
            + (", and OTF does not reach Norm's lowest PEO" if d_unreached else "")
            if d_similar
            else f"OTF is higher at {d_ahead} of the {d_both} PEO levels both reach and Norm "
            f"at {len(d_behind)}: {_exception_text(d_behind, 'PEO')}; every other difference "
            "is below the 0.005 floor (AUCs 0.61 throughout)"
        )
        + '. The paper places the advantage "especially on the train set": refitted on 3 of '
        "the splits and evaluated on the training part too "
        "([otf/diabetes_train.md](otf/diabetes_train.md)), OTF is not higher at any matched "
        "PEO level there either, so the difference is not a train-versus-test one. What "
        "remains is not isolated: Diabetes' AUC varies by about one point over the whole "
        "trade-off here, so no method can be clearly better on it; the paper's Diabetes "
        "preprocessing is not stated beyond App. C.2 |"
    )
    AE, BE, BD = lo[("adult (sex+race)", "eo")], lo[("bank (age)", "eo")], lo[("bank (age)", "dp")]
    collapsed = (
        f"; OTF goes lower only at alpha {BD.collapsed_strength:g}, PDP "
        f"{_f(BD.collapsed_lowest)}, by collapsing to AUC {_f(BD.collapsed_auc)}"
        if BD.collapsed_lowest < BD.otf_lowest
        else ""
    )
    o3 = (
        '| O3 | "our OTF method is as flexible as the Norm baseline in minimizing either PDP '
        "or PEO with respect to multiple sensitive attributes ... and the continuous age "
        f'attribute" (§5.3) | **holds here** | {LINK}, "Lowest violation OTF reaches" '
        f"({seeds} seeds; the lowest among the points within {COLLAPSE_AUC_DROP:g} AUC of "
        f"the unfair model's): Adult (sex + race) PDP from {_f(A.unfair)} to "
        f"{_f(A.otf_lowest)} (Norm's lowest {_f(A.norm_lowest)}) and PEO from "
        f"{_f(AE.unfair)} to {_f(AE.otf_lowest)} (Norm {_f(AE.norm_lowest)}); Bank with the "
        f"continuous age, PEO from {_f(BE.unfair)} to {_f(BE.otf_lowest)} at AUC "
        f"{_f(BE.otf_auc)} (Norm {_f(BE.norm_lowest)}) and PDP from {_f(BD.unfair)} to "
        f"{_f(BD.otf_lowest)} at AUC {_f(BD.otf_auc)}, alpha {BD.otf_strength:g} (Norm "
        f"{_f(BD.norm_lowest)}){collapsed} |"
    )
    return {"O1": o1, "O2": o2, "O3": o3}


def write_claims(rows: dict[str, str], seeds: int, path: Path = CLAIMS) -> None:
    """Replace the rows ``| O1 |`` ... of ``path`` with ``rows`` and its OTF seed count."""
    text = re.sub(
        r"OTF \d+ of the paper's 10 splits", f"OTF {seeds} of the paper's 10 splits",
        path.read_text(encoding="utf-8"),
    )  # fmt: skip
    lines = text.split("\n")
    for key, row in rows.items():
        (i,) = [k for k, line in enumerate(lines) if line.startswith(f"| {key} |")]
        lines[i] = row
    path.write_text("\n".join(lines), encoding="utf-8")


def main() -> None:
    """Write claims_fronts.csv and claims_fronts.md from figure_points.csv."""
    points = pd.read_csv(HERE / "figure_points.csv")
    points["notion"] = points["notion"].fillna("")
    table = compare(load_archive(HERE / "runs"))
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
        "| dataset | notion | unfair model | OTF's lowest | at alpha | its AUC | Norm's lowest "
        "| lowest over every alpha | at alpha | its AUC | seeds |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in low.itertuples(index=False):
        md.append(
            f"| {r.dataset} | {r.notion} | {r.unfair:.4f} ± {r.unfair_se:.4f} | "
            f"{r.otf_lowest:.4f} ± {r.otf_lowest_se:.4f} | {r.otf_strength:g} | "
            f"{r.otf_auc:.4f} | {r.norm_lowest:.4f} | {r.collapsed_lowest:.4f} | "
            f"{r.collapsed_strength:g} | {r.collapsed_auc:.4f} | {r.seeds} |"
        )
    md += [
        "",
        "(± one standard error over the seeds. OTF's and Norm's lowest are taken among the "
        f"points whose mean AUC is within {COLLAPSE_AUC_DROP:g} of the unfair model's; the "
        "lowest over every alpha may be a collapsed model.)",
        "",
    ]
    md += [
        "## Where a baseline is higher (claim O1's exceptions)",
        "",
        "Rank: the level's place among its comparison's levels, 1 the lowest violation.",
        "",
        "| dataset | notion | baseline | direction | level | rank | OTF alpha | OTF AUC | "
        "baseline strength | baseline AUC | d | SE |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in exceptions(table).itertuples(index=False):
        md.append(
            f"| {r.dataset} | {r.notion} | {r.baseline} | {r.direction} | {_f(r.level)} | "
            f"{r.rank} | {r.otf_strength:g} | {_f(r.otf_auc)} | {r.other_strength:g} | "
            f"{_f(r.other_auc)} | {_f(r.d)} | {_f(r.se)} |"
        )
    md.append("")
    (HERE / "claims_fronts.md").write_text("\n".join(md), encoding="utf-8")
    if "--claims" in sys.argv[1:]:
        write_claims(claim_rows(table, low), int(low["seeds"].max()))


if __name__ == "__main__":
    main()
