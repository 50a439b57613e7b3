"""Reports: trade-off plots and tables from a sweep's result store.

For every dataset and fairness measure the report draws performance (accuracy, AUC or
R^2) against the measure, one line per method (and notion) through its strengths, each
point the mean over seeds with standard-deviation error bars (none, and said so, for a
single seed) and labelled with its strength; the Pareto front of all points (lower
violation, higher performance) is marked. Tables give every method and strength, and,
as in the FTM paper's tables, each method's best performance at matched fairness levels.
``index.md`` links everything; ``index.html`` is the same Markdown rendered by
markdown-it-py, and a smoke-test profile is flagged at the top of both.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from otfair_lab.experiments._labels import method_label
from otfair_lab.experiments._report_apart import split_current
from otfair_lab.experiments._report_plot import (
    _plot,
    _seed_phrase,
    constant_note,
    fit_quality_note,
)
from otfair_lab.experiments._report_plot import pareto_front as pareto_front  # public here
from otfair_lab.experiments._store import STORE_FILENAME, ResultStore

#: Default measures per task: (performance measures, fairness measures).
DEFAULT_MEASURES = {
    "classification": (
        ("accuracy", "auc"),
        ("dp_gap", "mean_score_gap", "wdp", "eo_gap", "pdp_violation", "peo_violation"),
    ),
    "regression": (("r2",), ("error_gap", "wdp", "ksdp")),
}

#: Measures shown in the tables when present: FTM audits and AdapFair's frozen baseline.
EXTRA_MEASURES = (
    "subset_dp_mean",
    "subset_dp_std",
    "subset_dp_q95",
    "subset_var_high_dp_gap",
    "subset_var_low_dp_gap",
    "consistency",
    "matching_cost",
    "sfp_spearman_s0",
    "sfp_spearman_s1",
    "sfp_flip_rate",
    "baseline.accuracy",
    "baseline.dp_gap",
)


def aggregate(frame: pd.DataFrame, measures: Sequence[str]) -> pd.DataFrame:
    """Mean, standard deviation and seed count per (dataset, method, notion, strength).

    Returns one row per group with columns ``<m>_mean`` and ``<m>_std`` (sample std,
    0 for a single seed) for every measure ``m`` present, plus ``n_seeds``.
    """
    keys = ["dataset", "method", "notion", "strength"]
    df = frame.copy()
    df["notion"] = df["notion"].fillna("")
    df["strength"] = pd.to_numeric(df["strength"], errors="coerce")
    present = [m for m in measures if m in df.columns]
    for m in present:
        df[m] = pd.to_numeric(df[m], errors="coerce")
    grouped = df.groupby(keys, dropna=False, sort=True)
    out = grouped.size().rename("n_seeds").to_frame()
    for m in present:
        out[f"{m}_mean"] = grouped[m].mean()
        out[f"{m}_std"] = grouped[m].std(ddof=1).fillna(0.0)
    for flag in ("constant", "fit_quality_warning"):  # flagged runs, per group
        if flag in df.columns:
            df[flag] = df[flag].map(lambda v: v is True or v == 1).astype(int)
            out[flag] = df.groupby(keys, dropna=False, sort=True)[flag].sum()
    out = out.reset_index()
    out["label"] = [method_label(m, n) for m, n in zip(out["method"], out["notion"], strict=True)]
    return out


def _fmt(mean: float, std: float | None = None) -> str:
    if mean is None or not math.isfinite(mean):
        return "-"
    if std is None or not math.isfinite(std):
        return f"{mean:.4f}"
    return f"{mean:.4f} ± {std:.4f}"


def _dataset_heading(label: str, task: str) -> str:
    """``"label (task)"``, unless the label already names its task."""
    return label if f"({task})" in label else f"{label} ({task})"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "x"


def _cell(text: str) -> str:
    """Make ``text`` a Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


@dataclass
class _Table:
    title: str
    header: list[str]
    rows: list[list[str]]
    note: str = ""

    def markdown(self) -> str:
        lines = [f"### {self.title}", ""]
        if self.note:
            lines += [self.note, ""]
        lines.append("| " + " | ".join(self.header) + " |")
        lines.append("|" + "|".join("---" for _ in self.header) + "|")
        lines += ["| " + " | ".join(_cell(c) for c in r) + " |" for r in self.rows]
        return "\n".join(lines) + "\n"


def _strength_table(agg: pd.DataFrame, dataset: str, cols: Sequence[str]) -> _Table:
    header = ["method", "strength", "seeds", *cols]
    rows = []
    for _, r in agg.sort_values(["label", "strength"], na_position="first").iterrows():
        strength = "default" if pd.isna(r["strength"]) else f"{r['strength']:g}"
        cells = [_fmt(r.get(f"{c}_mean", np.nan), r.get(f"{c}_std", np.nan)) for c in cols]
        label = r["label"]
        if int(r.get("constant", 0) or 0) > 0:  # a constant predictor: marked and explained
            label = f"{label} **constant** {int(r['constant'])}/{int(r['n_seeds'])}"
        warned = int(r.get("fit_quality_warning", 0) or 0)
        if warned > 0:  # its fit ended below the constant on its training rows
            label = f"{label} **below constant (training)** {warned}/{int(r['n_seeds'])}"
        rows.append([label, strength, str(int(r["n_seeds"])), *cells])
    title = f"{dataset}: every method and strength (mean ± std over seeds)"
    return _Table(title, header, rows)


def _timing_note(rows: pd.DataFrame) -> str:
    """Say what the ``fit_time_s`` column means for this dataset's runs (stacked or not)."""
    k = pd.to_numeric(rows.get("stacked_k", pd.Series(dtype=float)), errors="coerce")
    old = pd.to_numeric(rows.get("stacked_runs", pd.Series(dtype=float)), errors="coerce")
    text = "`fit_time_s`: wall seconds of training per run."
    if (k > 1).any():
        text += (
            f" {int((k > 1).sum())} of {len(rows)} runs were fitted stacked (K strengths of "
            "one model in one training run, `stacked_k` = K in results.csv): each of them "
            "is given the stacked fit's time / K."
        )
    elif (old > 1).any():  # a store written before runs got their share of the fit
        text += (
            " Stacked runs of this store (`stacked_runs` > 1) hold the whole stacked fit "
            "on their first strength and ~0 on the others."
        )
    return text


def _auto_levels(values: np.ndarray) -> list[float]:
    values = values[np.isfinite(values)]
    if values.size == 0:
        return []
    qs = np.quantile(values, [0.25, 0.5, 0.75])
    return sorted({float(f"{q:.3g}") for q in qs})


def _matched_tables(
    agg: pd.DataFrame,
    dataset: str,
    measure: str,
    perf: str,
    levels: Sequence[float],
    extras: Sequence[str],
) -> list[_Table]:
    """Each method at matched fairness levels, one table per level (FTM paper, Tables 1-4).

    For a level, a method is represented by its strength with the best mean ``perf``
    among those whose mean ``measure`` is at most the level.
    """
    cols = [perf, measure, *extras]
    header = ["method", "strength", *cols]
    tables = []
    for level in levels:
        rows = []
        for label, grp in agg.groupby("label", sort=True):
            ok = grp[grp[f"{measure}_mean"] <= level]
            if ok.empty:
                rows.append([str(label), "-", *["-" for _ in cols]])
                continue
            best = ok.loc[ok[f"{perf}_mean"].idxmax()]
            strength = "default" if pd.isna(best["strength"]) else f"{best['strength']:g}"
            cells = [
                _fmt(best.get(f"{c}_mean", np.nan), best.get(f"{c}_std", np.nan)) for c in cols
            ]
            rows.append([str(label), strength, *cells])
        note = (
            f"Each method at its strength with the best mean {perf} among those whose mean "
            f"{measure} is at most {level:g} ('-': no strength reaches it)."
        )
        tables.append(_Table(f"{dataset}: matched {measure} <= {level:g}", header, rows, note))
    return tables


#: Profile names treated as smoke tests when the store does not say.
SMOKE_PROFILES = frozenset({"quick", "smoke"})


def profile_banner(profile: Any) -> list[str]:
    """Markdown lines naming the sweep's profile, with a warning for a smoke test.

    ``profile`` is what the store recorded, read defensively: ``None`` (nothing
    recorded), a profile name, or a mapping with optional ``name``, ``description`` and
    ``smoke`` keys. An explicit ``smoke`` flag wins; otherwise a profile is a smoke test
    when its name is in :data:`SMOKE_PROFILES` or its description says "smoke".
    """
    if profile is None or profile == "":
        return []
    if isinstance(profile, Mapping):
        name = str(profile.get("name") or "?")
        description = str(profile.get("description") or "")
        flag = profile.get("smoke")
    else:
        name, description, flag = str(profile), "", None
    smoke = (
        bool(flag)
        if flag is not None
        else (name in SMOKE_PROFILES or "smoke" in description.lower())
    )
    detail = f": {description.rstrip('.')}" if description else ""
    if smoke:
        # the description usually says "Smoke test: ... checks that the pipeline runs":
        # say each thing once
        text = re.sub(r"^\s*smoke[ -]test\s*[:.,-]?\s*", "", description, flags=re.I).strip()
        says_why = "pipeline" in text.lower()
        parts = [f"> **Smoke test** (profile `{name}`)."]
        if text:
            parts.append(text[0].upper() + text[1:] + ("" if text.endswith(".") else "."))
        if not says_why:
            parts.append(
                "These runs only check that the pipeline works (few epochs, rows or seeds)."
            )
        parts.append(
            "Do not compare them with the papers."
            if says_why
            else "Their numbers are not results and must not be compared with the papers."
        )
        return [" ".join(parts), ""]
    return [f"Profile: `{name}`{detail}.", ""]


def _budget_lines(frame: pd.DataFrame) -> list[str]:
    """Say how the runs were trained when the sweep capped rows or epochs (the demo)."""
    parts = []
    for column, text in (
        ("max_train_rows", "training rows per split at most"),
        ("epochs", "epochs"),
    ):
        given = pd.to_numeric(frame.get(column, pd.Series(dtype=float)), errors="coerce")
        values = sorted({int(v) for v in given.dropna()})
        if values:
            shown = f"{', '.join(f'{v:,}' for v in values)} {text}"
            if given.isna().any() and "method" in frame:  # the others: their own defaults
                named = sorted(frame.loc[given.notna(), "method"].astype(str).unique())
                shown += f" ({', '.join(named)}; the other methods at their own defaults)"
            parts.append(shown)
    return [f"Training budget of these runs: {'; '.join(parts)}.", ""] if parts else []


def _store_profile(store: ResultStore) -> Any:
    """Return the recorded profile: meta ``profile`` (name or mapping), else ``last_profile``."""
    profile = store.get_meta("profile")
    return profile if profile not in (None, "") else store.get_meta("last_profile")


def render_html(markdown: str, title: str = "otfair report") -> str:
    """Render the report's Markdown to a standalone HTML page (markdown-it-py, with tables).

    Raw HTML in the Markdown is escaped, not passed through.
    """
    from markdown_it import MarkdownIt

    body = MarkdownIt("commonmark", {"html": False}).enable("table").render(markdown)
    style = (
        "body{font-family:sans-serif;max-width:1100px;margin:auto}"
        "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 6px}"
        "img{max-width:100%}blockquote{border-left:4px solid #c00;margin:1em 0;padding:.2em 1em;"
        "background:#fee}"
    )
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{style}</style></head><body>\n{body}</body></html>\n"
    )


def _dataset_section(
    dataset: str, rows: pd.DataFrame, options: Mapping[str, Any], out: Path
) -> list[str]:
    """Write one dataset's plots and table file; return its Markdown lines."""
    task = str(rows["task"].iloc[0]) if "task" in rows else "classification"
    perf_default, fair_default = DEFAULT_MEASURES.get(task, DEFAULT_MEASURES["classification"])
    asked = {
        "performance": list(options.get("performance", perf_default)),
        "fairness": list(options.get("fairness", fair_default)),
    }
    present = {m for m in rows.columns if rows[m].notna().any()}
    perf = [m for m in asked["performance"] if m in present]
    fair = [m for m in asked["fairness"] if m in present]
    extras = [m for m in EXTRA_MEASURES if m in present]
    agg = aggregate(rows, [*perf, *fair, *extras, "fit_time_s"])
    md = [f"## {_dataset_heading(dataset, task)}", ""]
    absent = [f"`{m}` ({key})" for key, ms in asked.items() for m in ms if m not in present]
    if absent:  # a misspelled measure in [report], or one this dataset's runs lack
        md += [f"> Not in any run of this dataset, so not drawn: {', '.join(absent)}.", ""]
    for measure in fair if perf else []:
        stem = out / "plots" / f"{_slug(dataset)}__{_slug(measure)}"
        png, svg = _plot(agg, measure, perf, f"{dataset}: {measure}", stem)
        rel_png, rel_svg = png.relative_to(out).as_posix(), svg.relative_to(out).as_posix()
        md += [f"![{dataset} {measure}]({rel_png})", "", f"[SVG]({rel_svg})", ""]
    tables = [_strength_table(agg, dataset, [*perf, *fair, *extras, "fit_time_s"])]
    notes = (_timing_note(rows), constant_note(agg), fit_quality_note(agg))
    tables[0].note = " ".join(t for t in notes if t)
    levels_cfg = options.get("matched_levels", {})
    for measure in fair[:2] if perf else []:
        levels = levels_cfg.get(measure) or _auto_levels(agg[f"{measure}_mean"].to_numpy())
        if levels:
            tables += _matched_tables(agg, dataset, measure, perf[0], levels, extras)
    table_path = out / "tables" / f"{_slug(dataset)}.md"
    table_path.write_text("\n".join(t.markdown() for t in tables), encoding="utf-8")
    md += [f"Tables: [{table_path.name}](tables/{table_path.name})", ""]
    return md + [t.markdown() for t in tables]


def _apart_table(apart: Sequence[Mapping[str, Any]]) -> _Table:
    """Table the successful runs left out of the report (:func:`split_current`), with why."""
    rows = [
        [
            str(r["dataset"]),
            method_label(str(r["method"]), r["notion"]),
            "default" if r["strength"] is None else f"{r['strength']:g}",
            str(r["seed"]),
            str(r["why"]),
        ]
        for r in apart
    ]
    note = (
        "Successful runs of another configuration than the reported ones (an earlier, "
        "edited spec, another profile, or an edited row): they are in results.csv but in "
        "no mean, plot or table above, where they would pass for more seeds."
    )
    return _Table(
        "Runs outside this spec", ["dataset", "method", "strength", "seed", "why"], rows, note
    )


def _read_store(
    db: Path, out: Path
) -> tuple[pd.DataFrame, list[dict[str, Any]], list[dict[str, Any]], dict[str, Any], Any]:
    """Read what the report shows (read only) and export ``results.csv`` into ``out``.

    Returns the successful runs of the current spec, the rows listed apart, the failed
    runs, the spec's meta and the profile. Raises ``ValueError`` before anything is
    written when there is no successful run (of the current spec).
    """
    with ResultStore(db, read_only=True) as store:  # a report never writes the store
        frame = store.to_frame("ok")
        if frame.empty:  # checked before anything is written
            raise ValueError(f"The result store {db} has no successful run to report.")
        keys, apart = split_current(store)
        frame = frame[frame["key"].isin(keys)].reset_index(drop=True)
        if frame.empty:
            raise ValueError(
                f"The result store {db} has no successful run of its current spec (its "
                f"{len(apart)} successful runs are of an earlier, edited spec or another "
                "profile); rerun `otfair sweep` to complete it."
            )
        errors = store.rows("error")
        meta = store.get_meta("spec", {}) or {}
        profile = _store_profile(store)
        (out / "plots").mkdir(parents=True, exist_ok=True)
        (out / "tables").mkdir(parents=True, exist_ok=True)
        store.export_csv(out / "results.csv", status=None)
    return frame, apart, errors, meta, profile


def _failed_table(errors: list[dict[str, Any]]) -> _Table:
    """Return the table of the failed runs (the error's first 200 characters)."""
    return _Table(
        "Failed runs",
        ["dataset", "method", "strength", "seed", "error"],
        [
            [
                str(e["dataset"]),
                str(e["method"]),
                str(e["strength"]),
                str(e["seed"]),
                str(e["error"])[:200],
            ]
            for e in errors
        ],
    )


def make_report(results: str | Path, out_dir: str | Path | None = None) -> Path:
    """Write trade-off plots (PNG + SVG), Markdown tables and index pages for a sweep.

    ``index.md`` is the report; ``index.html`` is the same Markdown rendered by
    markdown-it-py, so the two never disagree. A smoke-test profile is flagged at the top.

    Parameters
    ----------
    results : str or Path
        A sweep output directory (holding ``results.sqlite``) or the database file.
    out_dir : str or Path, optional
        Where to write the report; default ``<results dir>/report``.

    Returns
    -------
    Path
        The ``index.md`` of the report (``index.html`` is beside it).

    Raises
    ------
    FileNotFoundError
        If there is no result store.
    ValueError
        If the store has no successful run to report.
    """
    results = Path(results)
    db = results / STORE_FILENAME if results.is_dir() else results
    if not db.is_file():
        raise FileNotFoundError(f"No result store at {db} (run `otfair sweep` first).")
    out = Path(out_dir) if out_dir is not None else db.parent / "report"
    frame, apart, errors, meta, profile = _read_store(db, out)
    options = meta.get("report", {}) or {}
    title = f"Sweep report: {meta.get('name', db.parent.name)}"
    md: list[str] = [f"# {title}", "", *profile_banner(profile), *_budget_lines(frame)]
    if meta.get("description"):
        md += [str(meta["description"]), ""]
    seeds = frame.groupby(["dataset", "method", "notion", "strength"], dropna=False).size()
    outside = (
        f" ({len(apart)} more successful runs are of another configuration: listed apart "
        "at the end, in no mean, plot or table)"
        if apart
        else ""
    )
    md += [
        f"{len(frame)} successful runs{outside}, {len(errors)} failed; all rows in "
        f"[results.csv](results.csv). Points: {_seed_phrase(seeds)}, labelled with their "
        "strength; circled points form the Pareto front (lower violation, higher "
        "performance).",
        "",
    ]
    for dataset, rows in frame.groupby("dataset", sort=True):
        md += _dataset_section(str(dataset), rows, options, out)
    if apart:
        md.append(_apart_table(apart).markdown())
    if errors:
        md.append(_failed_table(errors).markdown())
    index = out / "index.md"
    text = "\n".join(md)
    index.write_text(text, encoding="utf-8")
    (out / "index.html").write_text(render_html(text, title), encoding="utf-8")
    return index
