"""FTM's headline claims as rankings: is FTM the best method, in the paper and here.

Reads the committed ``comparison.csv`` (paper value and otfair's mean per row) and, for
every comparison the paper makes between FTM and its baselines at one matched DP level
(one dataset, subset and metric), ranks the methods on the paper's numbers and on
otfair's. Lower is better for gaps and undesirable flips, higher for accuracy,
consistency and Spearman correlation. Rows that otfair did not run (no value) are left
out of otfair's ranking and flagged. The paper's Reduction is otfair's
``fairtorch-reduction`` (FairTorch's penalty on the MLP); rows whose method is
``reduction`` (fairlearn's exponentiated gradient over a logistic regression, which an
older report ran in its place) are left out on both sides, since they are not the
paper's method. otfair's side is also read with its standard errors: FTM is *tied with
the best* when its mean is within 2 SE of the best method's, *ahead of all* when it is
first by more than 2 SE of its difference from the runner-up, SE = sqrt(s_ftm^2 / n_ftm +
s_best^2 / n_best) from the per-seed stds (the seeds differ between methods only where a
metric is undefined on a seed), and *behind* when it is further (on the worse side).
The paper prints no spread for most of these tables (Tables 1, 4, 5, 11), so its side is
ranked on the printed means alone. Writes ``claims_ranks.csv`` (one row per
comparison) and ``claims_ranks.md`` (the counts per claim), which
``docs/reproduction/claims.md`` links to. Run from a checkout:

    python docs/reproduction/ftm/claims_ranks.py
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

HERE = Path(__file__).parent
#: not the paper's method (see the module docstring); absent from today's report
LEFT_OUT = ("reduction",)
#: claim -> (tables, metric filter, higher is better)
CLAIMS = {
    "competitive accuracy (§5.2.1; Table 4)": (("Table 4",), ("accuracy",), True),
    "subset fairness on variable subsets (§5.2.2; Tables 1, 9)": (
        ("Table 1", "Table 9"),
        ("subset_var_",),
        False,
    ),
    "individual fairness (§5.4.2; Table 4 consistency)": (("Table 4",), ("consistency",), True),
    "less self-fulfilling prophecy, Spearman (App. E.3; Table 10)": (
        ("Table 10",),
        ("sfp_spearman",),
        True,
    ),
    "less self-fulfilling prophecy, undesirable flips (App. E.3; Table 11)": (
        ("Table 11",),
        ("sfp_s0_unfair1_fair0", "sfp_s1_unfair0_fair1"),
        False,
    ),
    "FTM above the FRL baselines (§5.4.3; Table 5)": (("Table 5",), ("accuracy",), True),
}


def _rank(values: pd.Series, higher: bool) -> pd.Series:
    return values.rank(ascending=not higher, method="min")


def _seeds(frame: pd.DataFrame) -> str:
    """Return the seed counts behind otfair's means, e.g. ``"3 seeds"``."""
    counts = sorted({int(n) for n in frame["seeds"].dropna()})
    if not counts:
        return "no seeds"
    if len(counts) == 1:
        return f"{counts[0]} seed{'s' if counts[0] != 1 else ''}"
    return f"{counts[0]}-{counts[-1]} seeds"


def _se_of_difference(g: pd.DataFrame, a: str, b: str) -> float:
    """SE of otfair's mean of method ``a`` minus method ``b`` (independent seeds' spreads)."""
    var = 0.0
    for m in (a, b):
        n = g.at[m, "seeds"]
        std = g.at[m, "ours_std"]
        if pd.isna(n) or n < 1:
            return float("nan")
        var += (0.0 if pd.isna(std) else float(std)) ** 2 / float(n)
    return var**0.5


def rank_table(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per comparison of ``frame`` (a ``comparison.csv``): FTM's ranks, both sides."""
    frame = frame[~frame["method"].isin(LEFT_OUT)]
    # Table 8 repeats Table 1's German rows (with stds): Table 1 is used once
    rows = []
    for claim, (tables, metrics, higher) in CLAIMS.items():
        part = frame[frame["ref"].isin(tables)]
        part = part[part["metric"].str.startswith(metrics)]
        if tables == ("Table 1", "Table 9"):
            # Table 9 repeats Table 1's Dutch rows (with stds): keep Table 1's German and
            # Table 9's Dutch rows, each comparison once
            part = part[
                ((part["ref"] == "Table 1") & (part["dataset"] == "german"))
                | ((part["ref"] == "Table 9") & (part["dataset"] == "dutch"))
            ]
        keys = ["ref", "dataset", "setting", "metric"]
        for key, group in part.groupby(keys, sort=False):
            if "ftm" not in set(group["method"]) or len(group) < 2:
                continue
            g = group.set_index("method")
            paper_rank = _rank(g["paper_value"], higher)
            ours = g["ours_mean"].dropna()
            ours_rank = _rank(ours, higher) if "ftm" in ours.index else pd.Series(dtype=float)
            best_paper = g["paper_value"].idxmax() if higher else g["paper_value"].idxmin()
            best_ours = (ours.idxmax() if higher else ours.idxmin()) if len(ours) >= 2 else ""
            se = (
                _se_of_difference(g, "ftm", best_ours)
                if best_ours and "ftm" in ours and best_ours != "ftm"
                else (0.0 if best_ours == "ftm" else None)
            )
            behind = None
            if se is not None:
                behind = bool(abs(ours["ftm"] - ours[best_ours]) > 2 * se)
            # ahead: FTM first and more than 2 SE from the runner-up
            ahead = None
            if best_ours == "ftm":
                others = ours.drop("ftm")
                runner = others.idxmax() if higher else others.idxmin()
                ahead = bool(
                    abs(ours["ftm"] - ours[runner]) > 2 * _se_of_difference(g, "ftm", runner)
                )
            elif se is not None:
                ahead = False
            rows.append(
                {
                    "claim": claim,
                    **dict(zip(keys, key, strict=True)),
                    "methods": "/".join(g.index),
                    "paper_values": "/".join(f"{v:.4f}" for v in g["paper_value"]),
                    "otfair_values": "/".join(
                        "-" if pd.isna(v) else f"{v:.4f}" for v in g["ours_mean"]
                    ),
                    "paper_best": best_paper,
                    "otfair_best": best_ours,
                    "ftm_rank_paper": int(paper_rank["ftm"]),
                    "ftm_rank_otfair": int(ours_rank["ftm"]) if "ftm" in ours_rank else "",
                    "otfair_methods_compared": len(ours),
                    "ftm_minus_best_paper": g.at["ftm", "paper_value"]
                    - g.at[best_paper, "paper_value"],
                    "ftm_minus_best_otfair": (
                        ours["ftm"] - ours[best_ours] if best_ours and "ftm" in ours else None
                    ),
                    "ftm_minus_best_otfair_se": se,
                    "ftm_behind_best_otfair": behind,
                    "ftm_ahead_of_all_otfair": ahead,
                }
            )
    return pd.DataFrame(rows)


def report(table: pd.DataFrame, frame: pd.DataFrame) -> str:
    """Return the markdown of :func:`rank_table`'s counts per claim (``frame``: the comparison)."""
    frame = frame[~frame["method"].isin(LEFT_OUT)]
    lines = [
        "# FTM's claims as rankings (generated by `claims_ranks.py` from `comparison.csv`)",
        "",
        "Per claim: the comparisons (one dataset, subset / group, metric, matched DP level)",
        "where FTM is ranked first among the methods the paper compares, on the paper's",
        f"numbers and on otfair's means ({_seeds(frame)}; a comparison counts for otfair when",
        "FTM and at least one baseline have a value). The paper's Reduction is otfair's",
        "`fairtorch-reduction`; a `reduction` row (fairlearn's EG over a logistic",
        "regression, not the paper's method) would be left out on both sides.",
        "otfair's means are also read with their standard errors: FTM is *best or tied* when",
        "it is first or within 2 SE of the best method (SE of the difference of the two",
        "means, from their per-seed stds), *behind* when further, *ahead of all* when it is",
        "first by more than 2 SE of its difference from the runner-up. The paper prints no spread",
        "for most of these tables, so its side is ranked on the printed means alone.",
        "",
        "| claim | comparisons | FTM best (paper) | FTM best (otfair) | FTM best or tied, "
        "2 SE (otfair) | FTM behind, > 2 SE (otfair) | FTM ahead of all, > 2 SE (otfair) "
        "| otfair comparable | FTM's largest distance from the best (paper / otfair) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for claim, part in table.groupby("claim", sort=False):
        comparable = part[part["otfair_methods_compared"] >= 2]
        behind = comparable["ftm_behind_best_otfair"].astype(bool)
        lines.append(
            f"| {claim} | {len(part)} | {int((part['ftm_rank_paper'] == 1).sum())} | "
            f"{int((comparable['ftm_rank_otfair'] == 1).sum())} | {int((~behind).sum())} | "
            f"{int(behind.sum())} | "
            f"{int(comparable['ftm_ahead_of_all_otfair'].astype(bool).sum())} | "
            f"{len(comparable)} | "
            f"{part['ftm_minus_best_paper'].abs().max():.4f} / "
            f"{comparable['ftm_minus_best_otfair'].abs().max():.4f} |"
        )
    lines += ["", "All comparisons: [claims_ranks.csv](claims_ranks.csv).", ""]
    return "\n".join(lines)


def main() -> None:
    """Write claims_ranks.csv and claims_ranks.md beside this script."""
    frame = pd.read_csv(HERE / "comparison.csv")
    table = rank_table(frame)
    table.to_csv(HERE / "claims_ranks.csv", index=False, float_format="%.4f")
    text = report(table, frame)
    (HERE / "claims_ranks.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
