"""The paper-vs-otfair report: Markdown, CSV and the papers' figure axes as PNG."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from otfair_lab.reproduction._compare import VERDICTS, compare_values, judge_table, verdict_counts
from otfair_lab.reproduction._values import PAPERS, load_paper_values

#: how ``comparison.csv`` prints its numbers (6 significant digits)
CSV_FLOAT_FORMAT = "%.6g"

#: The papers' figures without printed numbers: (ref, performance measures, fairness
#: measures on the x axis, caption). otfair's points are drawn on the same axes.
FIGURES: dict[str, tuple[tuple[str, tuple[str, ...], tuple[str, ...], str], ...]] = {
    "otf": (("Figure 1", ("auc",), ("pdp_violation", "peo_violation"), "test AUC vs PDP / PEO"),),
    "ftm": (
        ("Figure 3", ("accuracy",), ("wdp",), "accuracy vs WDP"),
        ("Figure 5", ("accuracy",), ("dp_gap",), "accuracy vs DP gap"),
        ("Figure 8", ("accuracy",), ("mean_score_gap",), "accuracy vs mean score gap"),
    ),
    "adapfair": (
        ("Figures 2-4", ("accuracy",), ("dp_gap", "tpr_gap"), "accuracy vs DP / EOpp gap"),
    ),
    "accuracy_parity": (("Figure 2", ("r2",), ("error_gap",), "R^2 vs error gap"),),
}

VERDICT_RULE = (
    '**Verdict rule** (`otfair_lab.reproduction.judge`; docs/reproduction/README.md, "The '
    'verdict rule", has worked cases): d = otfair mean - paper value, SE = '
    "sqrt(s_ours^2 / n_ours + s_paper^2 / n_paper) from otfair's per-seed std over its seeds "
    "and the paper's std over its splits (a printed standard error is used as is; a side "
    "without a spread, e.g. one split or a paper value printed without std, takes the "
    "other side's per-seed std; no spread on either side: no SE). Tolerance t = max(2 SE, "
    "floor), floor = max(0.005, print) for accuracy-like values (accuracy, AUC, R^2, "
    "consistency, Spearman, rates, shares), max(0.002, 10 % of the paper's value, print) "
    "for gaps and other small quantities, where print is half a unit of the paper's last "
    "printed digit. **reproduced** if |d| <= t, **close** if |d| <= 2t, else **differs**; "
    'dataset sizes and input dimensions must be equal; a claimed floor ("cannot go below '
    "X\") is reproduced only if otfair's value is not below X (close: below, within t). "
    "Where the paper prints a std of 0 (one split), only otfair's first seed is compared; "
    "a standard error printed as 0.000 is a spread rounded to 0, and every seed is compared. "
    "**constant**: the chosen strength has a seed whose model predicts one class for "
    "everyone or a constant score (`otfair_lab.reproduction._compare.constant_runs`): the row is "
    "never counted as reproduced; its reason gives the verdict on the numbers. "
    "A number a later table repeats (same comparison, same value) is counted once, under "
    "the first table. A cell of a 2x2 table (FTM Table 11) is compared as a share of its "
    "group (metric `..._share`) when otfair's group size differs from the paper's. Matched "
    "levels (`dp_gap=0.045`): per method, the strength with the best mean accuracy (R^2 for "
    "regression) among those whose mean dp_gap is at most the level (no interpolation), as "
    "in the sweep report. **not run**: the reason otfair's runs cannot produce the number. "
    "**no verdict**: otfair's value is shown, but the paper's value is not trusted, or "
    "otfair ran another method than the paper's (the reason is given)."
)

#: Report folders under ``docs/reproduction/`` and their paper.
REPORTS: dict[str, str] = {
    "otf": "otf",
    "ftm": "ftm",
    "ftm/imbalance": "ftm",
    "ftm/reduction": "ftm",
    "adapfair": "adapfair",
    "accuracy_parity": "accuracy_parity",
}


def _fmt(value: Any, std: Any = None) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    whole = float(value) >= 100 or (float(value) >= 1 and float(value).is_integer())
    text = f"{value:,.0f}" if whole else f"{float(value):.4f}"
    if std is not None and isinstance(std, float) and math.isfinite(std) and std > 0:
        text += f" ± {std:.4f}"
    return text


def _cell(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _point(row: pd.Series) -> str:
    parts = [p for p in (row["strength"], row["setting"]) if isinstance(p, str) and p]
    return "; ".join(parts) or "-"


def _verdict_cell(r: pd.Series) -> str:
    """``**close** (d = +0.0121, t = 0.0080)``, and the table a repeated number is counted in."""
    text = f"**{r['verdict']}**"
    d = float(r["ours_mean"]) - float(r["paper_value"])
    tol = pd.to_numeric(r.get("tolerance"), errors="coerce")
    if r.get("kind") == "cv" and float(r["ours_mean"]) > 0 < float(r["paper_value"]):
        d = math.log(float(r["ours_mean"]) / float(r["paper_value"]))
        if pd.notna(tol):
            text += f" (log(otfair / paper) = {d:+.2f}, t = {float(tol):.2f})"
    elif math.isfinite(d) and pd.notna(tol) and r.get("kind") != "count":
        text += f" (d = {d:+.4f}, t = {float(tol):.4f})"
    repeats = r.get("repeats")
    if isinstance(repeats, str) and repeats:
        text += f", counted under {repeats}"
    return text


def _ref_table(rows: pd.DataFrame) -> list[str]:
    header = ["dataset", "method", "comparison point", "metric", "paper", "otfair", "seeds"]
    header += ["otfair strength", "verdict", "notes"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for _, r in rows.iterrows():
        dataset = f"{r['dataset']} ({r['sensitive']})" if r["sensitive"] else r["dataset"]
        ours = "-" if r["verdict"] == "not run" else _fmt(r["ours_mean"], r["ours_std"])
        seeds = "-" if r["verdict"] == "not run" else f"{int(r['seeds'])}"
        if pd.notna(r["paper_seeds"]) and r["verdict"] != "not run":
            seeds += f" (paper {int(r['paper_seeds'])})"
        verdict = r["reason"] if r["reason"] else _verdict_cell(r)
        cells = [dataset, r["method"] or "-", _point(r), r["metric"]]
        cells += [_fmt(r["paper_value"], r["paper_std"]), ours, seeds]
        strength = r["ours_strength"]
        cells += [strength if isinstance(strength, str) and strength else "-", verdict]
        notes = r["notes"] if isinstance(r["notes"], str) and r["verdict"] != "not run" else ""
        cells.append(notes)
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return lines


def _summary_table(table: pd.DataFrame) -> list[str]:
    repeats = table["repeats"].fillna("") if "repeats" in table else pd.Series("", table.index)
    extra = " repeated (counted once) |" if (repeats != "").any() else ""
    lines = ["| table / figure | numbers | " + " | ".join(VERDICTS) + " |" + extra]
    lines.append("|---|---|" + "---|" * (len(VERDICTS) + bool(extra)))
    refs = list(dict.fromkeys(table["ref"]))
    for ref in [*refs, None]:
        counts = verdict_counts(table, None if ref is None else [ref])
        total = sum(counts.values())
        name = "**all**" if ref is None else ref
        line = f"| {name} | {total} | " + " | ".join(str(counts[v]) for v in VERDICTS) + " |"
        if extra:
            mine = repeats if ref is None else repeats[table["ref"] == ref]
            line += f" {int((mine != '').sum())} |"
        lines.append(line)
    if extra:
        for ref, rows in table[repeats != ""].groupby("ref", sort=False):
            firsts = ", ".join(dict.fromkeys(rows["repeats"]))
            spread = pd.to_numeric(rows["paper_std"], errors="coerce").notna().all()
            adds = f"; {ref} prints their spread, used for both" if spread else ""
            lines += [
                "",
                f"{ref}: {len(rows)} of its numbers are the same published numbers as "
                f"{firsts} (same comparison, same value{adds}): counted once, under {firsts}.",
            ]
    return lines


#: The plotted points of every figure, as numbers (written beside the PNGs).
FIGURE_POINTS = "figure_points.csv"


def figure_points(agg: pd.DataFrame, ref: str, measures: Sequence[str]) -> pd.DataFrame:
    """One figure panel's points as a table: mean, std and standard error per measure.

    ``agg`` is :func:`otfair_lab.experiments._report.aggregate`'s output for one dataset;
    the standard error of a mean over ``n`` seeds is ``std / sqrt(n)`` (NaN for one seed).
    """
    cols = ["dataset", "label", "method", "notion", "strength", "n_seeds"]
    points = agg[cols].copy()
    points.insert(0, "ref", ref)
    n = agg["n_seeds"].astype(float)
    for m in measures:
        points[f"{m}_mean"] = agg[f"{m}_mean"]
        points[f"{m}_std"] = agg[f"{m}_std"].where(n > 1)
        points[f"{m}_se"] = points[f"{m}_std"] / n.pow(0.5)
    return points


def _figures(paper: str, frame: pd.DataFrame, out: Path, smoke: bool) -> list[str]:
    """Draw otfair's points on each paper figure's axes and write them to a CSV.

    The PNGs use the sweep report's plotting; :data:`FIGURE_POINTS` holds every plotted
    point with its mean, std and standard error over the seeds, so that a statement
    about a figure can be checked against numbers.
    """
    from otfair_lab.experiments._report import _plot, _slug, aggregate

    md: list[str] = []
    tables: list[pd.DataFrame] = []
    note = " (smoke test: the points mean nothing)" if smoke else ""
    for ref, perf, fair, caption in FIGURES.get(paper, ()):
        images: list[str] = []
        for dataset, rows in frame.groupby("dataset", sort=True):
            p = [m for m in perf if m in rows and rows[m].notna().any()]
            measures = [m for m in fair if m in rows and rows[m].notna().any()] if p else []
            if measures:  # one row per point, every measure of the figure
                every = [*p, *measures]
                tables.append(figure_points(aggregate(rows, every), ref, every))
            for measure in measures:
                agg = aggregate(rows, [*p, measure])
                stem = out / f"{_slug(ref)}__{_slug(str(dataset))}__{_slug(measure)}"
                png, svg = _plot(agg, measure, p, f"{ref}, {dataset}", stem)
                svg.unlink(missing_ok=True)
                images += [f"![{ref} {dataset} {measure}]({png.name})", ""]
        if images:
            md += [f"### {ref}: {caption}, otfair's points on the paper's axes{note}", ""]
            md += images
    if tables:
        points = pd.concat(tables, ignore_index=True)
        points.to_csv(out / FIGURE_POINTS, index=False, float_format=CSV_FLOAT_FORMAT)
        md = [
            f"Every plotted point as numbers (mean, std and standard error over the seeds, "
            f"per dataset, method, notion and strength): [{FIGURE_POINTS}]({FIGURE_POINTS}).",
            "",
            *md,
        ]
    return md


def _body(table: pd.DataFrame) -> list[str]:
    """Render the rule, the summary and one table per paper table / figure."""
    md = [VERDICT_RULE, "", "## Summary", "", *_summary_table(table), ""]
    md += ["All rows: [comparison.csv](comparison.csv).", ""]
    for ref, rows in table.groupby("ref", sort=False):
        protocols = "; ".join(p for p in dict.fromkeys(rows["protocol"].fillna("")) if p)
        md += [f"## {ref}", ""]
        md += [f"The paper's protocol: {protocols}.", ""] if protocols else []
        md += [*_ref_table(rows), ""]
    return md


def _timing(frame: pd.DataFrame) -> str:
    if frame.empty or "started_at" not in frame:
        return "no runs"
    start = pd.to_datetime(pd.to_numeric(frame["started_at"]), unit="s", utc=True).min()
    end = pd.to_datetime(pd.to_numeric(frame["finished_at"]), unit="s", utc=True).max()
    cpu = float(pd.to_numeric(frame["wall_time_s"], errors="coerce").sum())
    span = (end - start).total_seconds() if pd.notna(start) and pd.notna(end) else math.nan
    return (
        f"{len(frame)} successful runs; first started {start:%Y-%m-%d %H:%M} UTC, last "
        f"finished {end:%H:%M} UTC ({span / 60:.1f} min span), {cpu / 60:.1f} min of run "
        "time summed over runs"
    )


def revision_range(frame: pd.DataFrame) -> str:
    """Return the code revisions that wrote the runs, oldest first, with their run counts.

    ``"59adede (40 runs), oldest, to 4a7938f (200 runs), newest; 3 revisions: ..."``; a
    revision's age is its runs' earliest ``finished_at``.
    """
    if frame.empty or "git_revision" not in frame:
        return "not recorded"
    revs = frame.assign(
        rev=frame["git_revision"].fillna("unknown").astype(str).str[:7],
        at=pd.to_numeric(frame.get("finished_at"), errors="coerce"),
    )
    order = revs.groupby("rev")["at"].min().sort_values(kind="stable")
    counts = revs["rev"].value_counts()
    parts = [f"{rev} ({int(counts[rev])} runs)" for rev in order.index]
    if len(parts) == 1:
        return f"{parts[0]}, one revision"
    return f"{parts[0]}, oldest, to {parts[-1]}, newest; {len(parts)} revisions: " + ", ".join(
        parts
    )


def write_comparison(
    paper: str,
    frame: pd.DataFrame,
    datasets: Mapping[str, tuple[str, str | None]],
    out_dir: str | Path,
    *,
    profile: str = "full",
    profile_info: Mapping[str, Any] | None = None,
    seeds: Sequence[int] = (),
    paper_seeds: int | None = None,
    command: str | None = None,
    wall_time_s: float | None = None,
    unfinished: str | None = None,
    config_description: str = "",
    statistics: Callable[[str], Mapping[str, float]] | None = None,
) -> Path:
    """Write ``index.md``, ``comparison.csv`` and the figure PNGs for one paper.

    Parameters
    ----------
    paper : str
        A key of :data:`otfair_lab.reproduction.PAPERS`.
    frame : pandas.DataFrame
        otfair's successful runs (``ResultStore.to_frame("ok")``).
    datasets : mapping
        Config dataset label -> (loader name, ``sensitive``); see
        ``otfair_lab.reproduction._compare.dataset_sensitive``.
    out_dir : str or Path
        Report directory (created).
    profile, profile_info : str, mapping
        The profile run and its stored description / ``smoke`` flag.
    seeds : sequence of int
        The seeds of the profile; ``paper_seeds`` the paper's count (the full profile).
    command, wall_time_s, unfinished : optional
        The command that produced the runs, its wall time, and what did not finish.
    config_description : str, optional
        The config's description (otfair's protocol).
    statistics : callable, optional
        Dataset statistics by config label (see :func:`compare_values`).

    Returns
    -------
    Path
        The ``index.md`` written.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    table = compare_values(
        load_paper_values(paper), frame, datasets, paper_seeds=paper_seeds, statistics=statistics
    )
    # judge the numbers as the CSV holds them, so that re-judging the CSV alone
    # (`python -m otfair_lab.reproduction`) gives the same verdicts, even at an exact tie
    table = judge_table(as_written(table))
    table.to_csv(out / "comparison.csv", index=False, float_format=CSV_FLOAT_FORMAT)
    info = dict(profile_info or {})
    smoke = bool(info.get("smoke"))
    md = _title(paper, profile, info, seeds, paper_seeds)
    if config_description:
        md.append(f"- otfair's config: {config_description}")
    md += _provenance(frame, command, wall_time_s, unfinished)
    md += ["", *_body(table)]
    figures = _figures(paper, frame, out, smoke) if not frame.empty else []
    if figures:
        md += ["## Figures without numbers", "", *figures]
    return write_index(out, "\n".join(md), f"otfair reproduction: {paper}")


def _title(
    paper: str,
    profile: str,
    info: dict[str, Any],
    seeds: Sequence[int],
    paper_seeds: int | None,
) -> list[str]:
    """Return the page's title, the profile's banner and its seeds."""
    from otfair_lab.experiments._report import profile_banner

    # a profile other than the full protocol names itself: one title per page of the site
    title = f"# Reproduction: {PAPERS[paper]}"
    md = [title + (f", profile `{profile}`" if profile != "full" else ""), ""]
    md += profile_banner({"name": profile, **info})
    if info.get("smoke"):
        md += [
            "> The verdicts below are computed to test the plumbing; with a smoke-test "
            "profile they say nothing about the methods.",
            "",
        ]
    md += [
        f"- Profile `{profile}`: seeds {list(seeds)} ({len(seeds)} seed(s); the paper: "
        f"{paper_seeds if paper_seeds is not None else '?'})."
    ]
    return md


def _provenance(
    frame: pd.DataFrame, command: str | None, wall_time_s: float | None, unfinished: str | None
) -> list[str]:
    """Return the lines on how the runs were made: command, time, revisions, what is left."""
    md = []
    if command:
        md.append(f"- Command: `{command}`")
    if wall_time_s is not None:
        md.append(
            f"- Wall time of this call: {wall_time_s / 60:.1f} min (runs already stored are "
            "skipped; the span below is the sweep's)."
        )
    md.append(f"- Runs: {_timing(frame)}.")
    md.append(
        f"- Code revisions of the runs (`git_revision`): {revision_range(frame)}. "
        "`otfair reproduce PAPER --verify N --runs DIR` re-runs archived runs at today's code."
    )
    md.append(f"- Written {datetime.now().astimezone():%Y-%m-%d %H:%M %Z}.")
    if unfinished:
        md.append(f"- **Not finished**: {unfinished}")
    return md


def as_written(table: pd.DataFrame) -> pd.DataFrame:
    """Return ``table`` with its float columns rounded as ``comparison.csv`` prints them.

    The verdicts are judged on these numbers: a reader re-judging the CSV (or
    ``python -m otfair_lab.reproduction``) gets the same verdicts. Without this, a difference
    exactly at a tolerance (FTM Table 11's cell shares are multiples of 1/62, so a mean
    of 4/62 with per-seed shares 2..6/62 sits exactly on 2t) could fall on one side in
    full precision and on the other after rounding.
    """
    table = table.copy()
    for column in table.columns:
        if pd.api.types.is_float_dtype(table[column]):
            table[column] = [
                x if not math.isfinite(x) else float(CSV_FLOAT_FORMAT % x) for x in table[column]
            ]
    return table


def write_index(out: Path, markdown: str, title: str) -> Path:
    """Write ``out/index.md`` and ``out/index.html`` (the same page rendered); return the md."""
    from otfair_lab.experiments._report import render_html

    index = out / "index.md"
    index.write_text(markdown, encoding="utf-8")
    (out / "index.html").write_text(render_html(markdown, title), encoding="utf-8")
    return index
