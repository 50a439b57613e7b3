"""``otfair reproduce PAPER --verify N``: archived runs re-run with today's code.

The fast tests check the selection (stratified, oldest first, stacked groups whole) and
the tolerances on hand-made rows; the ``slow`` ones re-run a small sample of each
committed archive (the runs whose group took a few seconds when archived) and require
every compared metric within its tolerance.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from otfair_lab.reproduction._verify import (
    DEFAULT_TOLERANCE,
    Difference,
    compare_run,
    read_unstable,
    select_runs,
    tolerance_for,
    verify_archive,
    work_items,
)
from otfair_lab.reproduction._verify_means import judged_outside

DOCS = Path(__file__).resolve().parents[2] / "docs" / "reproduction"


def _row(key, method, dataset, finished, strength=None, k=1, seed=0, **metrics):
    config = {
        "dataset": dataset,
        "dataset_options": {},
        "epochs": None,
        "max_train_rows": None,
        "method": method,
        "method_options": {},
        "notion": None,
        "seed": seed,
        "source_domain": None,
        "strength": strength,
        "target_domain": None,
        "test_size": 0.2,
    }
    return {
        "key": key,
        "method": method,
        "dataset": dataset,
        "finished_at": finished,
        "strength": strength,
        "seed": seed,
        "config": config,
        "metrics": {"stacked_k": k, **metrics},
    }


def test_selection_is_stratified_and_oldest_first():
    rows = [
        _row("a2", "m", "d1", 20.0),
        _row("a1", "m", "d1", 10.0),
        _row("b1", "m", "d2", 15.0),
        _row("c1", "n", "d1", 5.0),
        _row("c2", "n", "d1", 30.0),
    ]
    picked = [r["key"] for r in select_runs(rows, 4)]
    # one per stratum per round, strata by their oldest run, oldest run first in each
    assert picked == ["c1", "a1", "b1", "c2"]
    assert [r["key"] for r in select_runs(rows, 10)] == ["c1", "a1", "b1", "c2", "a2"]
    assert select_runs(rows, 0) == []
    with pytest.raises(ValueError, match="`n`"):
        select_runs(rows, -1)


def test_a_stacked_run_is_rerun_with_its_whole_group():
    from otfair_lab.experiments._spec import RunConfig

    def keyed(strength, seed=0, k=3):
        row = _row("", "cenet", "law_school", strength, strength=strength, k=k, seed=seed)
        row["key"] = RunConfig(**row["config"]).key()
        return row

    group = [keyed(s) for s in (5.0, 0.1, 1.0)]
    other_seed = keyed(1.0, seed=1)
    items = work_items([group[0]], [*group, other_seed])
    assert len(items) == 1
    assert [r["strength"] for r in items[0]] == [0.1, 1.0, 5.0]  # the grid's order
    # a run of the group picked again is not re-run twice
    assert len(work_items([group[0], group[2]], [*group, other_seed])) == 1


def test_a_changed_configuration_is_refused():
    from otfair_lab.reproduction._verify import run_config

    row = _row("not-the-hash", "m", "d", 1.0)
    with pytest.raises(ValueError, match="hashes to"):
        run_config(row)


def test_tolerance_is_the_listed_spread_or_the_default():
    table = pd.DataFrame(
        [
            {
                "method": "cenet",
                "dataset": "adult",
                "strength": 50.0,
                "metric": "r2",
                "spread": 0.06,
                "measured": "x",
            },
            {
                "method": "cenet",
                "dataset": "adult",
                "strength": None,
                "metric": None,
                "spread": 0.0001,
                "measured": "x",
            },
        ]
    )
    assert tolerance_for(table, "cenet", "adult", 50.0, "r2") == (0.06, True)
    # a listed spread below the default does not tighten it
    assert tolerance_for(table, "cenet", "adult", 5.0, "r2") == (DEFAULT_TOLERANCE, True)
    assert tolerance_for(table, "cenet", "crime", 50.0, "r2") == (DEFAULT_TOLERANCE, False)
    assert tolerance_for(read_unstable("/nonexistent.csv"), "a", "b", 1.0, "r2")[1] is False


def test_differences_are_judged_against_their_tolerance():
    row = _row("k", "cenet", "adult", 1.0, strength=50.0, r2=0.348, error_gap=0.06)
    empty = read_unstable("/nonexistent.csv")
    diffs = {d.metric: d for d in compare_run(row, {"r2": 0.397, "error_gap": 0.06}, empty)}
    assert set(diffs) == {"r2", "error_gap"}
    assert not diffs["r2"].within and math.isclose(diffs["r2"].diff, 0.049)
    assert diffs["error_gap"].within
    spread = pd.DataFrame(
        [
            {
                "method": "cenet",
                "dataset": "adult",
                "strength": 50.0,
                "metric": "r2",
                "spread": 0.05,
                "measured": "x",
            }
        ]
    )
    assert all(d.within for d in compare_run(row, {"r2": 0.397, "error_gap": 0.06}, spread))
    nan = Difference("k", "m", "d", None, 0, "r", "auc", math.nan, math.nan, 1e-3, False)
    assert nan.within  # NaN archived and NaN again is the same value


def test_cli_verify_needs_an_archive():
    from otfair_lab.cli import app

    result = CliRunner().invoke(app, ["reproduce", "otf", "--verify", "1"])
    assert result.exit_code == 2 and "--verify needs --runs" in result.output
    result = CliRunner().invoke(app, ["reproduce", "otf", "--help"])
    assert "--verify" in result.output


@pytest.mark.slow
@pytest.mark.parametrize("paper", ["otf", "ftm", "adapfair", "accuracy_parity"])
def test_a_sample_of_each_archive_reproduces_at_head(paper, data_dir):
    """Three runs per paper (three strata, oldest first) whose groups took <= 4 s."""
    diffs = verify_archive(DOCS / paper / "runs", 3, max_seconds=4.0)
    assert len({d.key for d in diffs}) >= 3
    # a mean-level run (unstable.csv's level = mean) is judged by its seed mean
    runs_out, means_out = judged_outside(diffs)
    assert not runs_out and not means_out, (sorted(runs_out)[:3], means_out[:3])


@pytest.mark.slow
def test_the_cenet_runs_reproduce_at_head(data_dir):
    """CENet's re-archived runs (a cheap stacked group: Law, 5 lambdas)."""
    diffs = verify_archive(
        DOCS / "accuracy_parity" / "runs",
        1,
        keep=lambda r: r["method"] == "cenet" and r["dataset"] == "law_school",
    )
    assert len({d.key for d in diffs}) == 5  # the whole stacked group
    assert all(d.within for d in diffs), [d for d in diffs if not d.within][:3]


def _stability():
    import importlib.util

    path = DOCS / "accuracy_parity" / "cenet_stability.py"
    spec = importlib.util.spec_from_file_location("cenet_stability", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_unstable_csv_is_the_stability_scripts_output_on_the_committed_files():
    table = _stability().tables()
    listed = read_unstable(DOCS / "accuracy_parity" / "unstable.csv")
    listed = listed[listed["method"] == "cenet"]
    assert len(listed) == 2 * int(table["unstable"].sum()) > 0
    for _, r in table[table["unstable"]].iterrows():
        for metric in ("r2", "error_gap"):
            tol, flag = tolerance_for(listed, "cenet", r["dataset"], r["strength"], metric)
            want = max(DEFAULT_TOLERANCE, r[f"{metric}_spread"])
            assert flag and tol == pytest.approx(want, rel=1e-5)  # the CSV has 6 digits


def test_every_cenet_move_of_the_code_change_is_within_its_tolerance():
    """The runs archived before (59adede / b4af523) against today's: each move is covered."""
    rerun = pd.read_csv(DOCS / "accuracy_parity" / "cenet_rerun.csv")
    listed = read_unstable(DOCS / "accuracy_parity" / "unstable.csv")
    for _, r in rerun.iterrows():
        for metric in ("r2", "error_gap"):
            tol, _ = tolerance_for(listed, "cenet", r["dataset"], r["strength"], metric)
            move = abs(r[f"{metric}_head"] - r[f"{metric}_archived"])
            assert move <= tol + 2e-6  # the CSVs print 6 significant digits
    # the audit's run: Adult, lambda 50, seed 4 moved by +0.049 and is marked unstable
    row = rerun[
        (rerun["dataset"] == "adult (regression)")
        & (rerun["strength"] == 50)
        & (rerun["seed"] == 4)
    ].iloc[0]
    assert row["r2_head"] - row["r2_archived"] == pytest.approx(0.049, abs=0.001)
    assert tolerance_for(listed, "cenet", "adult (regression)", 50.0, "r2")[1]


def test_revision_range_orders_revisions_by_their_first_run():
    from otfair_lab.reproduction._write import revision_range

    frame = pd.DataFrame(
        {
            "git_revision": ["bbbbbbbbbb", "aaaaaaaaaa", "bbbbbbbbbb", "cccccccccc"],
            "finished_at": [20.0, 10.0, 30.0, 40.0],
        }
    )
    text = revision_range(frame)
    assert text.startswith("aaaaaaa (1 runs), oldest, to ccccccc (1 runs), newest; 3 revisions")
    assert "bbbbbbb (2 runs)" in text
    assert revision_range(frame.iloc[:1]) == "bbbbbbb (1 runs), one revision"


@pytest.mark.parametrize(
    "folder", ["otf", "ftm", "ftm/imbalance", "ftm/reduction", "adapfair", "accuracy_parity"]
)
def test_each_report_header_states_its_runs_revisions(folder):
    from otfair_lab.experiments._archive import read_archive

    runs = read_archive(DOCS / folder.split("/")[0] / "runs")
    index = (DOCS / folder / "index.md").read_text(encoding="utf-8")
    line = next(x for x in index.splitlines() if x.startswith("- Code revisions of the runs"))
    oldest = min(runs, key=lambda r: r["finished_at"])["git_revision"][:7]
    assert oldest in line  # the profile's runs are a subset; its oldest is at least as new
    newest = max(runs, key=lambda r: r["finished_at"])["git_revision"][:7]
    assert folder != "accuracy_parity" or newest in line  # the CENet re-runs


@pytest.mark.slow
def test_cli_verify_exits_1_when_an_archived_value_was_altered(tmp_path, data_dir):
    import json

    from otfair_lab.cli import app
    from otfair_lab.experiments._archive import read_archive

    rows = read_archive(DOCS / "otf" / "runs")
    oldest = select_runs(rows, 1)[0]  # the run --verify 1 picks: a cheap unfair model
    assert (oldest.get("metrics") or {}).get("stacked_k") in (None, 1)
    altered = json.loads(json.dumps(oldest))
    altered["metrics"]["auc"] += 0.01  # beyond the 0.001 tolerance
    (tmp_path / f"seed-{altered['seed']}.jsonl").write_text(json.dumps(altered) + "\n")
    result = CliRunner().invoke(
        app, ["reproduce", "otf", "--verify", "1", "--runs", str(tmp_path)]
    )
    assert result.exit_code == 1, result.output
    assert "OUT" in result.output and "auc" in result.output and "1 outside" in result.output
