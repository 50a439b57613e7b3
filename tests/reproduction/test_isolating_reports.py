"""Isolating experiments beside the reports: each committed markdown is its script's report
of the committed CSV (so a quoted number cannot drift from the runs it came from)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd
import pytest

REPRO = Path(__file__).resolve().parents[2] / "docs" / "reproduction"

SCRIPTS = [
    ("adapfair", "crime_dp_grid"),
    ("otf", "diabetes_train"),
    ("ftm", "german_reduction_floor"),
]


def _script(folder: str, name: str):
    spec = importlib.util.spec_from_file_location(name, REPRO / folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("folder", "name"), SCRIPTS)
def test_committed_markdown_is_the_scripts_report_of_the_committed_csv(folder, name):
    m = _script(folder, name)
    fits = pd.read_csv(REPRO / folder / f"{name}.csv")
    committed = (REPRO / folder / f"{name}.md").read_text(encoding="utf-8")
    assert m.report(fits) == committed


def test_crime_dp_grid_reruns_the_committed_runs():
    text = (REPRO / "adapfair" / "crime_dp_grid.md").read_text(encoding="utf-8")
    assert "equal the committed ones (to 4 decimals)" in text


def test_crime_dp_grid_extends_the_papers_grid_on_every_seed():
    fits = pd.read_csv(REPRO / "adapfair" / "crime_dp_grid.csv")
    assert sorted(set(fits["strength"])) == [0.01, 0.02, 0.05, 0.1]
    assert sorted(set(fits["seed"])) == [0, 1, 2, 3, 4]
    assert len(fits) == 20 and fits["dp_gap"].between(0, 1).all()


def test_diabetes_refits_are_the_committed_models_and_otf_is_not_ahead_on_train():
    m = _script("otf", "diabetes_train")
    fits = pd.read_csv(REPRO / "otf" / "diabetes_train.csv")
    assert m.check_against_runs(fits) < 0.002  # the sweep's models, refitted
    parts = m.compare_parts(fits)
    # claims.md, O2: "OTF is not higher at any matched PEO level there either"
    for part in ("train", "test"):
        assert len(parts[part]) >= 8
        assert (parts[part]["verdict"] != "target higher").all(), part


def test_german_reduction_goes_below_the_claimed_floor_in_both_forms():
    # claims.md, F1b: both forms of FairTorch's loss reach WDP < 0.06 before collapsing
    fits = pd.read_csv(REPRO / "ftm" / "german_reduction_floor.csv")
    assert set(fits["rows"]) == {"released", "per-group"} and fits["seed"].nunique() == 5
    means = fits.groupby(["rows", "strength"])[["accuracy", "wdp"]].mean().reset_index()
    fair = means[(means["accuracy"] > 0.71) & (means["wdp"] < 0.06)]
    assert set(fair["rows"]) == {"released", "per-group"}


def test_ftm_figure_6_is_the_scripts_report_of_the_committed_runs():
    # claims.md, F4 links figure_6.md: its table must be what the committed runs give
    m = _script("ftm", "figure_6")
    fresh = m.matched_points(m.committed_runs())
    committed = pd.read_csv(REPRO / "ftm" / "figure_6.csv")
    pd.testing.assert_frame_equal(fresh, committed, check_dtype=False, atol=1e-9)
    text = (REPRO / "ftm" / "figure_6.md").read_text(encoding="utf-8")
    assert m.report(committed, m.COMMITTED_SOURCE) == text
    # the paper's two levels, one row per alpha at each
    assert sorted(set(committed["dp_level"])) == [0.025, 0.073]
    assert len(committed) == 2 * len(m.ALPHA_OF)
    # the paired differences: alpha = 0 against itself is 0 with SE 0
    marginal = committed[committed["alpha"] == 0]
    assert (marginal["acc_vs_alpha0"] == 0).all() and (marginal["cost_vs_alpha0_se"] == 0).all()
    assert (committed["acc_vs_alpha0_se"] >= 0).all()


def test_ftm_figure_6_grid_runs_are_the_configs_runs():
    # the finer grid's archive holds exactly the runs its committed config plans
    from otfair_lab.experiments import load_archive, load_spec

    spec = load_spec(REPRO / "ftm" / "figure_6_grid.toml")
    planned = {run.key() for run in spec.runs()}
    archived = load_archive(REPRO / "ftm" / "figure_6_runs")
    assert set(archived["key"]) == planned and len(archived) == len(planned) == 270
    assert set(archived["seed"]) == {0, 1, 2, 3, 4}


def test_ftm_claims_ranks_are_the_scripts_output_on_the_committed_comparison():
    # claims.md's F rows quote these counts
    m = _script("ftm", "claims_ranks")
    frame = pd.read_csv(REPRO / "ftm" / "comparison.csv")
    table = m.rank_table(frame)
    committed = pd.read_csv(REPRO / "ftm" / "claims_ranks.csv")
    assert len(table) == len(committed)
    assert table["ftm_rank_otfair"].astype(str).tolist() == (
        committed["ftm_rank_otfair"].astype(str).str.replace(".0", "", regex=False).tolist()
    )
    text = (REPRO / "ftm" / "claims_ranks.md").read_text(encoding="utf-8")
    assert m.report(table, frame) == text


def test_ftm_claims_ranks_standard_error_by_hand():
    # Table 4, Adult, accuracy at DP 0.08: FTM against the best method, SE of the
    # difference of two independent means from the comparison's own rows
    m = _script("ftm", "claims_ranks")
    frame = pd.read_csv(REPRO / "ftm" / "comparison.csv")
    table = m.rank_table(frame)
    row = table[(table["ref"] == "Table 4") & (table["dataset"] == "adult")]
    row = row[row["metric"] == "accuracy"].iloc[0]
    rows = frame[(frame["ref"] == "Table 4") & (frame["dataset"] == "adult")]
    rows = rows[rows["metric"] == "accuracy"].set_index("method")
    best = row["otfair_best"]
    ftm, other = rows.loc["ftm"], rows.loc[best]
    se = (ftm["ours_std"] ** 2 / ftm["seeds"] + other["ours_std"] ** 2 / other["seeds"]) ** 0.5
    assert row["ftm_minus_best_otfair_se"] == pytest.approx(se)
    assert row["ftm_behind_best_otfair"] == (abs(ftm["ours_mean"] - other["ours_mean"]) > 2 * se)
    # a hand-made comparison: FTM first by far, with tiny spreads, is ahead of all
    fake = rows.reset_index().copy()
    fake["ours_std"] = 0.001
    fake.loc[fake["method"] == "ftm", "ours_mean"] = fake["ours_mean"].max() + 0.05
    ranked = m.rank_table(fake).iloc[0]
    assert ranked["otfair_best"] == "ftm" and bool(ranked["ftm_ahead_of_all_otfair"])
    fake.loc[fake["method"] == "ftm", "ours_mean"] = fake["ours_mean"].min() - 0.05
    ranked = m.rank_table(fake).iloc[0]
    assert bool(ranked["ftm_behind_best_otfair"]) and not bool(ranked["ftm_ahead_of_all_otfair"])


def test_ftm_sfp_flips_part_a_is_the_committed_comparison():
    # sfp_flips.md's Part A table is written from the committed Table 11 rows; the paper's
    # rows printed by hand before (0.32 %, 2.5 %, 1.3 %, 0.27 %) are the formatter's output
    m = _script("ftm", "sfp_flips")
    cells = m.part_a(REPRO / "ftm" / "comparison.csv")
    table = m.part_a_table(cells)
    page = (REPRO / "ftm" / "sfp_flips.md").read_text(encoding="utf-8")
    assert table in page
    paper = [line for line in table.splitlines() if "| paper |" in line]
    assert [line.split(" | ")[4] for line in paper] == ["0.32 %", "2.5 %", "1.3 %", "0.27 %"]
    committed = pd.read_csv(REPRO / "ftm" / "sfp_flips_cells.csv")
    assert len(committed) == len(cells)


def test_ftm_figure_4_subsets_is_the_scripts_output_on_the_committed_runs(tmp_path):
    """claims.md's F2 random-subset numbers: figure_4_subsets.md/csv equal a fresh run."""
    folder = Path(__file__).resolve().parents[2] / "docs" / "reproduction" / "ftm"
    spec = importlib.util.spec_from_file_location(
        "figure_4_subsets", folder / "figure_4_subsets.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tmp_path)
    for name in ("figure_4_subsets.csv", "figure_4_subsets.md"):
        assert (tmp_path / name).read_text() == (folder / name).read_text(), name
    table = pd.read_csv(tmp_path / "figure_4_subsets.csv")
    german_ftm = table[(table["dataset"] == "german") & (table["method"] == "ftm")].iloc[0]
    assert german_ftm["constant_seeds"] == 4  # the paper's level is reached by one-class models
