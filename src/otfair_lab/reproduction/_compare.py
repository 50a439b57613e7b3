"""Match a paper's published values with otfair's stored runs.

One comparison row per published number: the paper's value, otfair's mean and std over
the seeds used, the verdict (:func:`otfair_lab.reproduction.verdict`), or the reason the
number cannot be produced here (``"not run: ..."``). The matching rules are those of
``docs/reproduction/PLAN.md``:

- runs of the same dataset loader, ``sensitive`` option (the loader's default when the
  config sets none) and registered method;
- the strength when the paper prints it (``eps=0.07``), else the comparison point of
  ``setting``: ``dp_gap=0.045`` selects, like the sweep report's matched levels, the
  strength with the best mean performance (accuracy, or R^2 for regression) among those
  whose mean ``dp_gap`` is at most 0.045 ("not run: ... not reached" when none is);
- where the paper's std is printed as 0 (one split, e.g. accuracy parity's BGL), only
  otfair's seed 0 is compared (like with like);
- ``ours_std`` is otfair's per-seed std (ddof=1) and ``seeds`` their count; the verdict
  (:func:`otfair_lab.reproduction.judge`, applied by :func:`judge_table`) compares the
  difference with its standard error, with the paper's printed std or standard error
  (``paper_std_kind``) over its ``paper_seeds`` splits; sizes and input dimensions are
  exact; sizes, the input dimension and positive rates by group come from the loader
  and otfair's split of the profile's first seed (no training needed);
- rows of an audit key (FTM Tables 1, 8, 9: ``subset_var_*``; Table 11:
  ``sfp_s{g}_unfair{a}_fair{b}``; Figure 4: ``subset_dp_std``) are matched by level like
  the others; their setting's subset / group / cell parts must describe the key
  (:mod:`otfair_lab.reproduction._audit_rows`), and a 2x2 cell is compared as a share of its
  group when otfair's group size differs from the paper's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from otfair_lab.reproduction._audit_rows import (
    SFP_CELL,
    paper_group_sizes,
    sfp_cell_values,
    subset_note,
)
from otfair_lab.reproduction._judge_table import COMPARISON_COLUMNS as COMPARISON_COLUMNS
from otfair_lab.reproduction._judge_table import VERDICTS as VERDICTS
from otfair_lab.reproduction._judge_table import judge_table as judge_table
from otfair_lab.reproduction._judge_table import verdict_counts as verdict_counts
from otfair_lab.reproduction._settings import (
    _STATISTICS,
    _parse_setting,
    _runs_with_share,
    _strength_value,
)
from otfair_lab.reproduction._settings import imbalance_share as imbalance_share
from otfair_lab.reproduction._values import UNAVAILABLE_DATASETS
from otfair_lab.reproduction._verdict import metric_kind, print_resolution


def dataset_sensitive(name: str, options: Mapping[str, Any]) -> str | None:
    """Return the ``sensitive`` option of a config's dataset entry (the loader default if unset).

    ``None`` when the loader has no such option (the paper's attribute is then assumed).
    """
    from otfair.datasets import dataset_entries

    entry = dataset_entries().get(name)
    if entry is None:
        return options.get("sensitive")
    value = options.get("sensitive", entry.options().get("sensitive"))
    if value == "auto" and name == "law_school":  # the loader's own rule
        return "gender" if options.get("task", "regression") == "regression" else "race"
    return value


#: Datasets a paper names like an otfair loader but that are other data: (paper, dataset)
#: -> what the paper used and the substitute the config runs (plots only, no verdicts).
SUBSTITUTED: dict[tuple[str, str], str] = {
    ("adapfair", "law_school"): (
        "AdapFair's Law is the law-school admissions data (27 % positives); substitute: "
        "`law_school` bar passage (89 % positives), sensitive race"
    ),
}

#: Published values the report shows beside otfair's without a verdict:
#: (paper, ref, dataset, method) -> why the paper's value is not trusted.
UNRELIABLE: dict[tuple[str, str, str, str], str] = {
    ("accuracy_parity", "Table 5", "law_school", "cod-rff"): (
        "the paper's Law row repeats its Crime row up to one digit (a copy error)"
    ),
}

#: Paper settings that are an option of otfair's method, not its strength:
#: (method, the paper's name) -> the option, compared with the registry's value.
_METHOD_OPTIONS: dict[tuple[str, str], str] = {("ftm-joint", "alpha"): "label_weight"}

#: Paper-only metrics otfair derives from its runs: metric -> how.
_DERIVED = {"accuracy_cv": "std / mean of the accuracy over the seeds (FTM Table 3)"}

#: Why a paper-only number (``metric_source == "paper"``) is not produced by a run.
_PAPER_ONLY = {
    "lambda": "a grid value of the paper (otfair's grid is the config's)",
    "alpha": "a grid value of the paper (otfair's grid is the config's)",
    "epsilon": "a grid value of the paper (otfair's grid is the config's)",
    "age_threshold": "a loader constant (bank `age_binned`: age >= 38), not a run",
    "otf0_gap": "the post-processing protocol (Fig. 2) is not in the config",
    "accuracy_drop": "the ISIC protocol is not available here",
}


#: The note of a row whose paper standard error is printed as 0 (all seeds compared).
_ROUNDED_SE_NOTE = (
    "paper: standard error printed as 0.000, read as a spread rounded to 0 (all seeds compared)"
)

#: Below this, a group's mean score gap and Wasserstein gap count as 0 (constant scores).
CONSTANT_SCORE_ATOL = 1e-6


def constant_runs(runs: pd.DataFrame) -> pd.Series:
    """Flag the runs whose model predicts one class for everyone, or a constant score.

    The rule of ``otfair.metrics.is_constant_prediction`` (a test-set positive rate of 0
    or 1, or a score std below 1e-6), read from the metrics an archived run stores:

    - one class: where the FTM audit's 2x2 cells are stored, the fair model's positives
      ``sum_{g,a} sfp_s{g}_unfair{a}_fair1`` are 0 or all the test rows; otherwise the DP,
      TPR and FPR gaps are all exactly 0 (a one-class model's are; a model that predicts
      both classes would need equal positive, true-positive and false-positive rates in
      both groups as exact fractions);
    - a constant score: the mean score gap and the Wasserstein gap below
      :data:`CONSTANT_SCORE_ATOL` with an AUC of exactly 0.5 (classification: all scores
      tied) or an R^2 <= 0 (regression: a constant is never better than the test mean).
    """

    def col(name: str) -> pd.Series:
        if name not in runs:
            return pd.Series(math.nan, index=runs.index, dtype=float)
        return pd.to_numeric(runs[name], errors="coerce")

    zero = 1e-12
    one_class = (col("dp_gap").abs() <= zero) & (col("tpr_gap").abs() <= zero)
    one_class &= col("fpr_gap").abs() <= zero
    cells = [f"sfp_s{g}_unfair{a}_fair{b}" for g in (0, 1) for a in (0, 1) for b in (0, 1)]
    if all(c in runs for c in cells):
        pos = sum(col(f"sfp_s{g}_unfair{a}_fair1") for g in (0, 1) for a in (0, 1))
        neg = sum(col(f"sfp_s{g}_unfair{a}_fair0") for g in (0, 1) for a in (0, 1))
        known = pos.notna() & neg.notna()
        one_class = one_class.where(~known, (pos == 0) | (neg == 0))
    flat = (col("mean_score_gap").abs() < CONSTANT_SCORE_ATOL) & (
        col("wdp").abs() < CONSTANT_SCORE_ATOL
    )
    tied = ((col("auc") - 0.5).abs() <= zero) | (col("r2") <= 0)
    return (one_class | (flat & tied)).fillna(False).astype(bool)


def _not_run(reason: str) -> dict[str, Any]:
    return {"verdict": "not run", "reason": f"not run: {reason}"}


def _performance(runs: pd.DataFrame) -> str:
    return "r2" if "r2" in runs and runs["r2"].notna().any() else "accuracy"


def _select_level(
    runs: pd.DataFrame, measure: str, level: float, perf: str
) -> tuple[pd.DataFrame, str | None]:
    """Select the runs of the best-``perf`` strength among those with mean ``measure <= level``."""
    keys = ["method", "notion", "strength"]
    frame = runs.assign(notion=runs["notion"].fillna(""), strength=runs["strength"].fillna(-1))
    means = frame.groupby(keys, dropna=False)[[measure, perf]].mean()
    ok = means[means[measure] <= level + 1e-12]
    if ok.empty or ok[perf].isna().all():
        return runs.iloc[0:0], None
    best = ok[perf].idxmax()
    chosen = frame[(frame[keys] == pd.Series(best, index=keys)).all(axis=1)]
    strength = best[2]
    label = "default" if strength == -1 else f"{strength:g}"
    return runs.loc[chosen.index], label


def _statistic_row(
    row: pd.Series, labels: Sequence[str], statistics: Callable[[str], Mapping[str, float]] | None
) -> dict[str, Any]:
    """Compare a dataset statistic (size, input dimension, positive rate) from loader and split."""
    metric = row["metric"]
    if statistics is None:
        return _not_run("dataset statistics were not computed for this report")
    part = next(
        (p.strip()[5:] for p in row["setting"].split(";") if p.strip().startswith("part=")), None
    )
    if part == "validation":
        return _not_run(
            "otfair's split has no validation part (the paper holds out 20 % of train)"
        )
    stats = next((st for st in map(statistics, labels) if st), {})
    key = metric if part is None else f"{metric}@{part}"
    if key not in stats:
        return _not_run(f"{metric} not defined for this dataset (e.g. a regression task)")
    where = "" if part is None else f"{part} part, "
    return {
        "ours_mean": float(stats[key]),
        "ours_std": 0.0,
        "seeds": 1,
        "ours_strength": f"{where}otfair's split",
        "paper_seeds": None,
    }


class _NotRun(Exception):
    """A published value that cannot be compared here; the message says why."""


def _compare_one(
    row: pd.Series,
    frame: pd.DataFrame,
    datasets: Mapping[str, tuple[str, str | None]],
    statistics: Callable[[str], Mapping[str, float]] | None,
    group_sizes: Mapping[tuple[str, ...], float] | None = None,
) -> dict[str, Any]:
    """Compare one published value; see the module docstring for the rules."""
    try:
        is_stat = _check_source(row)
        labels = _config_labels(row, datasets)
        if is_stat:
            return _statistic_row(row, labels, statistics)
        runs = _matching_runs(row, frame, labels)
        runs, chosen, fixed_note = _at_strength(row, runs, datasets[labels[0]][0])
        values, note, changes = _values(row, runs, fixed_note, group_sizes)
        return _summary(str(row["metric"]), values, chosen, note, changes)
    except _NotRun as why:
        return _not_run(str(why))


def _check_source(row: pd.Series) -> bool:
    """Refuse a row whose dataset or number is not run here; return whether it is a statistic."""
    dataset, metric = row["dataset"], row["metric"]
    name = f"{dataset} ({row['sensitive']})" if row["sensitive"] else dataset
    if dataset == "unknown":
        raise _NotRun("the paper's text lost which dataset this row is")
    other = SUBSTITUTED.get((row["paper"], dataset))
    if other is not None:
        raise _NotRun(f"dataset not available here ({other})")
    if dataset in UNAVAILABLE_DATASETS or name in UNAVAILABLE_DATASETS:
        sub = UNAVAILABLE_DATASETS.get(name, UNAVAILABLE_DATASETS.get(dataset))
        raise _NotRun(f"dataset not available here (substitute: {sub})")
    is_stat = metric in _STATISTICS or metric.startswith("positive_rate")
    if row["metric_source"] == "paper" and not is_stat and metric not in _DERIVED:
        why = _PAPER_ONLY.get(metric, "not produced by a run")
        raise _NotRun(f"paper-only number ({metric}): {why}")
    return bool(is_stat)


def _config_labels(row: pd.Series, datasets: Mapping[str, tuple[str, str | None]]) -> list[str]:
    """Return the config's dataset labels of the row's dataset and sensitive attribute."""
    dataset = row["dataset"]
    labels = [
        label
        for label, (ds, sens) in datasets.items()
        if ds == dataset and (sens is None or not row["sensitive"] or sens == row["sensitive"])
    ]
    if not labels:
        have = sorted({f"{ds}/{s}" for ds, s in datasets.values() if ds == dataset})
        detail = f"; the config has {', '.join(have)}" if have else ""
        raise _NotRun(f"{dataset} with sensitive={row['sensitive']!r} not in this run{detail}")
    return labels


def _matching_runs(row: pd.Series, frame: pd.DataFrame, labels: Sequence[str]) -> pd.DataFrame:
    """Return the runs of the row's dataset labels, training share and method."""
    dataset, metric, method = row["dataset"], row["metric"], row["method"]
    runs = frame[frame["dataset"].isin(labels)] if not frame.empty else frame
    if runs.empty:
        raise _NotRun(f"{', '.join(labels)} not in this profile's runs")
    share = imbalance_share(row["setting"])
    runs = _runs_with_share(runs, share)
    if runs.empty:
        if share is None:
            raise _NotRun(f"only runs of {dataset} with an imbalanced training part here")
        raise _NotRun(
            f"no run of {dataset} with a training group-0 share of {share:g} "
            "(`train_group_share` of a dataset entry; FTM Table 3's imbalance protocol)"
        )
    if method and method != "all":
        from otfair_lab.experiments.methods import list_methods

        if method not in list_methods():
            raise _NotRun(f"method `{method}` is not a registered otfair method yet")
        runs = runs[runs["method_name"] == method]
        if runs.empty:
            raise _NotRun(f"method `{method}` not in this profile's runs on {dataset}")
        if "method" in runs and runs["method"].nunique() > 1 and (runs["method"] == method).any():
            # several entries of one method (e.g. FTM Fig. 6's label-weight variants of
            # ftm-joint): the entry labeled by the method's name has the registry settings
            runs = runs[runs["method"] == method]
    source_metric = "accuracy" if metric == "accuracy_cv" else metric
    if source_metric not in runs or runs[source_metric].isna().all():
        raise _NotRun(f"metric `{metric}` not recorded by these runs (not in their audits)")
    return runs


def _at_strength(row: pd.Series, runs: pd.DataFrame, loader: str) -> tuple[pd.DataFrame, str, str]:
    """Return the runs of the row's strength or matched level, its label and a note."""
    dataset, metric, method = row["dataset"], row["metric"], row["method"]
    strength, fixed_note = _paper_strength(row)
    level, unsupported = _parse_setting(row["setting"], metric, dataset)
    if unsupported:
        raise _NotRun(unsupported)
    if strength is not None:
        runs = runs[np.isclose(runs["strength"].astype(float), strength, rtol=1e-9, atol=0)]
        if runs.empty:
            raise _NotRun(f"strength {strength:g} not in the config's grid")
        return runs, f"{strength:g}", fixed_note
    if level is not None:
        measure, value = level
        if measure not in runs:
            raise _NotRun(f"matched measure `{measure}` not recorded")
        runs, label = _select_level(runs, measure, value, _performance(runs))
        if label is None:
            raise _NotRun(f"{measure} <= {value:g} not reached by any strength")
        return runs, f"{label} ({measure} <= {value:g})", fixed_note
    if "lowest level reached" in row["setting"]:
        keys = [runs["notion"].fillna(""), runs["strength"].fillna(-1)]
        means = runs.groupby(keys)[metric].mean()
        runs = runs[(keys[0] == means.idxmin()[0]) & (keys[1] == means.idxmin()[1])]
        return runs, "the strength with the lowest mean", fixed_note
    if runs["strength"].nunique(dropna=False) > 1:
        # the paper names no strength ("retain the original paper's parameters"): the
        # method's registered default for the dataset, said in the row's notes
        from otfair_lab.experiments.methods import get_method

        default = get_method(str(method)).strength_for(loader) if method else None
        if default is None:
            raise _NotRun("no strength or matched level given and the runs have several")
        runs = runs[np.isclose(runs["strength"].astype(float), float(default), rtol=1e-9)]
        if runs.empty:
            raise _NotRun(
                f"no strength given and the registered default {default:g} is not in the grid"
            )
        note = "the paper gives no strength: otfair's registered default"
        return runs, f"{default:g} (registered default)", note
    return runs, "default", fixed_note


def _paper_strength(row: pd.Series) -> tuple[float | None, str]:
    """Return the strength the paper prints (``None``: none) and a note on a method option."""
    method, strength = row["method"], _strength_value(row["strength"])
    option = _METHOD_OPTIONS.get((str(method), str(row["strength"]).split("=")[0].strip()))
    if option is not None and strength is not None and not isinstance(strength, str):
        # a setting of the method (FTM's joint-map label weight alpha), not its strength
        from otfair_lab.experiments.methods import get_method

        own = get_method(method).defaults.get(option)
        if own is None or not math.isclose(float(own), strength):
            raise _NotRun(f"the paper's {row['strength']} is not otfair's {option}={own}")
        return None, f"otfair's {option}={own:g} (the paper's {row['strength']})"
    if isinstance(strength, str):
        raise _NotRun(f"strength '{strength}' not recoverable from the paper's text")
    return strength, ""


def _values(
    row: pd.Series,
    runs: pd.DataFrame,
    fixed_note: str,
    group_sizes: Mapping[tuple[str, ...], float] | None,
) -> tuple[pd.Series, str, dict[str, Any]]:
    """Return the compared values of ``runs``, the row's note and the cell's changes."""
    metric, dataset = row["metric"], row["dataset"]
    note = fixed_note or subset_note(metric, dataset)
    if row["std"] == 0 and runs["seed"].nunique() > 1:
        if row.get("std_kind") == "se":  # a standard error printed as 0.000: rounded
            note = "; ".join(filter(None, [note, _ROUNDED_SE_NOTE]))
        else:
            runs = runs[runs["seed"] == runs["seed"].min()]
            note = "paper: one split (std 0): otfair's first seed only"
    changes: dict[str, Any] = {}
    if SFP_CELL.match(metric):
        cell = sfp_cell_values(runs, row, dict(group_sizes or {}))
        if isinstance(cell, str):
            raise _NotRun(cell)
        values, changes = cell
    else:
        values = runs["accuracy" if metric == "accuracy_cv" else metric]
    constant = constant_runs(runs)
    if constant.any():
        seeds = sorted(int(x) for x in runs.loc[constant, "seed"])
        text = (
            f"constant: {len(seeds)} of {len(runs)} seeds (seed {', '.join(map(str, seeds))}) "
            "predict one class for everyone (or a constant score) at this strength"
        )
        note = "; ".join(filter(None, [text, note]))
    if "note" in changes:  # the 2x2 cell's own note comes last
        note = "; ".join(filter(None, [note, changes.pop("note")]))
    return values.astype(float).dropna(), note, changes


def _summary(
    metric: str, values: pd.Series, chosen: str, note: str, changes: dict[str, Any]
) -> dict[str, Any]:
    """Return otfair's side of the row: the mean (or CV) and std over the seeds."""
    n = len(values)
    if metric == "accuracy_cv":  # FTM Table 3: std / mean of the accuracy over repetitions
        if n < 2:
            raise _NotRun(f"the accuracy's CV needs >= 2 repetitions (seeds); {n} here")
        return {
            "ours_mean": float(values.std(ddof=1) / values.mean()),
            "ours_std": 0.0,
            "seeds": n,
            "ours_strength": chosen,
            "notes_extra": (
                "CV = std / mean of the accuracy over the seeds; compared on the log scale, "
                "where an estimate from n draws has the standard error 1 / sqrt(2 (n - 1)) "
                "(0.35 for 5)"
            ),
        }
    return {
        "ours_mean": float(values.mean()),
        "ours_std": float(values.std(ddof=1)) if n > 1 else 0.0,
        "seeds": n,
        "ours_strength": chosen,
        "notes_extra": note,
        **changes,
    }


def compare_values(
    paper_values: pd.DataFrame,
    frame: pd.DataFrame,
    datasets: Mapping[str, tuple[str, str | None]],
    *,
    paper_seeds: int | None = None,
    statistics: Callable[[str], Mapping[str, float]] | None = None,
) -> pd.DataFrame:
    """One comparison row per published value (the :data:`COMPARISON_COLUMNS`).

    Parameters
    ----------
    paper_values : pandas.DataFrame
        :func:`otfair_lab.reproduction.load_paper_values` of one paper.
    frame : pandas.DataFrame
        The successful runs (:meth:`otfair_lab.experiments.ResultStore.to_frame`).
    datasets : mapping of str to (str, str or None)
        Dataset label in the config -> (loader name, ``sensitive`` option), see
        ``dataset_sensitive``.
    paper_seeds : int, optional
        The paper's number of seeds/splits (the config's full profile), shown per row.
    statistics : callable, optional
        ``statistics(label)`` -> dataset statistics of a config dataset
        (``otfair_lab.reproduction._data.statistics_lookup``): sizes, input dimension
        and positive rates are compared with those, not with runs.

    Returns
    -------
    pandas.DataFrame
        ``verdict`` is ``reproduced`` / ``close`` / ``differs`` (rule of
        :func:`otfair_lab.reproduction.judge`, see :func:`judge_table`) or
        ``not run`` with the reason in ``reason`` (``no verdict``: otfair's value is
        shown but the paper's is not trusted, see ``UNRELIABLE``).
    """
    out = []
    sizes = paper_group_sizes(paper_values)
    for _, row in paper_values.iterrows():
        rec: dict[str, Any] = {
            "ref": row["ref"],
            "dataset": row["dataset"],
            "sensitive": row["sensitive"],
            "method": row["method"] or row["paper_method"],
            "strength": row["strength"],
            "setting": row["setting"],
            "metric": row["metric"],
            "paper_value": row["value"],
            "paper_std": row["std"],
            "paper_seeds": paper_seeds,
            "notes": row["notes"],
            "protocol": row["protocol"],
        }
        if not math.isfinite(float(row["value"])):
            result = _not_run("the paper prints no number here")
        else:
            result = _compare_one(row, frame, datasets, statistics, sizes)
        extra = result.pop("notes_extra", "")
        scale = float(result.pop("resolution_scale", 1.0))
        rec.update(result)
        if extra:
            rec["notes"] = f"{extra}; {rec['notes']}" if rec["notes"] else extra
        rec["kind"] = metric_kind(str(rec["metric"]))
        rec["claim"] = "at_least" if "lowest level reached" in str(row["setting"]) else "equal"
        has_std = math.isfinite(float(row["std"]))
        rec["paper_std_kind"] = ("se" if row["std_kind"] == "se" else "std") if has_std else ""
        rec["paper_resolution"] = print_resolution(row["value_text"], row["unit"]) * scale
        if "ours_mean" in rec:
            rec["verdict"], rec["reason"] = "", ""
            doubt = UNRELIABLE.get((row["paper"], row["ref"], row["dataset"], row["method"]))
            if doubt is not None:
                rec["verdict"], rec["reason"] = "no verdict", f"no verdict: {doubt}"
        out.append(rec)
    return judge_table(pd.DataFrame.from_records(out, columns=list(COMPARISON_COLUMNS)))
