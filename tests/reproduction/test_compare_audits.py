"""Paper rows produced by the sweep audits (FTM Tables 1, 8, 9, 11, Fig. 4), by hand."""

from __future__ import annotations

import pandas as pd
import pytest
from _hand_rows import paper_row, run_row

from otfair_lab.reproduction import verdict
from otfair_lab.reproduction._compare import compare_values

DATASETS = {"german": ("german", "sex"), "dutch": ("dutch", "sex")}
HIGH = "subset=high age (first subset: label lost in the text)"


def _paper(**kw):
    return paper_row("Table 1", 0.05, **{"metric_source": "audit", **kw})


def _runs(dataset="german", groups=(62, 138)):
    """ftm: strength 1 (dp 0.04 / 0.06, acc 0.70 / 0.72), strength 2 (dp 0.02, acc 0.66).

    Audits: subset_var_high/low_dp_gap, subset_dp_std, and one 2x2 table per group whose
    cells add up to ``groups`` (S=1 cell unfair 0 -> fair 1: 3 and 5 rows at strength 1).
    """
    rows = []
    for strength, seed, acc, dp, high, low, std, flip in [
        (1.0, 0, 0.70, 0.04, 0.03, 0.09, 0.012, 3),
        (1.0, 1, 0.72, 0.06, 0.05, 0.11, 0.018, 5),
        (2.0, 0, 0.66, 0.02, 0.01, 0.02, 0.005, 0),
        (2.0, 1, 0.66, 0.02, 0.01, 0.02, 0.005, 0),
    ]:
        row = run_row(
            strength,
            seed,
            acc,
            dp,
            dataset,
            subset_var_high_dp_gap=high,
            subset_var_low_dp_gap=low,
            subset_dp_std=std,
        )
        for g, n in enumerate(groups):
            cells = {(0, 0): n - 20 - flip, (0, 1): flip, (1, 0): 5, (1, 1): 15}
            for (a, b), count in cells.items():
                row[f"sfp_s{g}_unfair{a}_fair{b}"] = count
                row[f"sfp_s{g}_unfair{a}_fair{b}_share"] = count / n
        rows.append(row)
    return pd.DataFrame(rows)


def test_variable_subset_rows_are_matched_by_level_and_label():
    paper = pd.DataFrame(
        [
            _paper(setting=f"dp_gap=0.05; {HIGH}", metric="subset_var_high_dp_gap", value=0.045),
            _paper(setting="dp_gap=0.05; subset=low age", metric="subset_var_low_dp_gap"),
            _paper(setting="dp_gap=0.03; subset=low age", metric="subset_var_low_dp_gap"),
            # the label of the other half: refused, not silently compared
            _paper(setting="dp_gap=0.05; subset=low age", metric="subset_var_high_dp_gap"),
            _paper(setting="dp_gap=0.05; subset=married", metric="subset_var_high_dp_gap"),
        ]
    )
    out = compare_values(paper, _runs(), DATASETS)
    # dp <= 0.05: strength 1 (mean dp 0.05, mean accuracy 0.71 > 0.66)
    assert out["ours_mean"].iloc[0] == pytest.approx(0.04)  # mean of 0.03, 0.05
    assert out["ours_std"].iloc[0] == pytest.approx(pd.Series([0.03, 0.05]).std())
    assert out["verdict"].iloc[0] == verdict(0.045, 0.04, out["ours_std"].iloc[0])
    assert "age above its median over the test rows (high age)" in out["notes"].iloc[0]
    assert out["ours_mean"].iloc[1] == pytest.approx(0.10)
    assert out["ours_mean"].iloc[2] == pytest.approx(0.02)  # dp <= 0.03: strength 2
    assert (out["verdict"].iloc[3:] == "not run").all()
    assert "does not describe `subset_var_high_dp_gap`" in out["reason"].iloc[3]
    assert "does not describe" in out["reason"].iloc[4]  # German has no "married" half


def test_dutch_married_is_the_high_half():
    paper = pd.DataFrame(
        [
            _paper(dataset="dutch", setting="dp_gap=0.12; subset=married", metric=m)
            for m in ("subset_var_high_dp_gap", "subset_var_low_dp_gap")
        ]
        + [
            _paper(
                dataset="dutch", setting="dp_gap=0.12; subset=not married", metric=m, value=0.07
            )
            for m in ("subset_var_low_dp_gap", "subset_var_high_dp_gap")
        ]
    )
    out = compare_values(paper, _runs("dutch"), DATASETS)
    assert list(out["verdict"] == "not run") == [False, True, False, True]
    assert out["ours_mean"].iloc[2] == pytest.approx(0.10)  # the low half at strength 1


def test_random_subset_std_is_compared_with_the_subset_count_noted():
    row = _paper(
        ref="Figure 4",
        setting="dp_gap=0.03; 1,000 random subsets",
        metric="subset_dp_std",
        value=0.0151,
    )
    out = compare_values(pd.DataFrame([row]), _runs(), DATASETS).iloc[0]
    # dp <= 0.03: strength 2 (std 0.005 on both seeds, so SE 0); a gap: floor
    # max(0.002, 10 % of 0.0151) = 0.002; d = 0.0101 > 2 x 0.002: differs
    assert out["ours_mean"] == pytest.approx(0.005) and out["kind"] == "gap"
    assert out["se"] == pytest.approx(0.0) and out["verdict"] == "differs"
    assert "200 random subsets" in out["notes"]


def _table11(counts, group=1):
    """One group's four cells of FTM Table 11 (dp_gap=0.05), as the paper stores them."""
    return [
        _paper(
            ref="Table 11",
            setting=f"dp_gap=0.05; group S={group}; unfair Yhat={a}; fair Yhat={b}",
            metric=f"sfp_s{group}_unfair{a}_fair{b}",
            unit="count",
            value=value,
        )
        for (a, b), value in counts.items()
    ]


def test_table11_cells_are_counts_when_the_group_sizes_agree():
    # the paper's S=1: 98 + 1 + 1 + 32 = 132 rows; otfair's runs: 132 too
    paper = pd.DataFrame(_table11({(0, 0): 98, (0, 1): 4, (1, 0): 1, (1, 1): 29}))
    out = compare_values(paper, _runs(groups=(68, 132)), DATASETS)
    flip = out.iloc[1]  # unfair 0 -> fair 1, strength 1: 3 and 5 rows
    assert flip["metric"] == "sfp_s1_unfair0_fair1" and flip["paper_value"] == 4
    assert flip["ours_mean"] == pytest.approx(4.0)
    assert flip["verdict"] == "reproduced" and "counts" in flip["notes"]
    # counts use the relative tolerance (5 % of 29 = 1.45): 15 vs 29 differs
    assert out.iloc[3]["ours_mean"] == 15 and out.iloc[3]["verdict"] == "differs"
    assert out.iloc[0]["ours_mean"] == pytest.approx(132 - 20 - 4)


def test_table11_cells_are_shares_when_the_group_sizes_differ():
    # the paper's S=1 has 132 rows, otfair's 138: shares of the group are compared
    paper = pd.DataFrame(_table11({(0, 0): 98, (0, 1): 4, (1, 0): 1, (1, 1): 29}))
    out = compare_values(paper, _runs(groups=(62, 138)), DATASETS)
    flip = out.iloc[1]
    assert flip["metric"] == "sfp_s1_unfair0_fair1_share"
    assert flip["paper_value"] == pytest.approx(4 / 132)
    assert flip["ours_mean"] == pytest.approx((3 / 138 + 5 / 138) / 2)
    assert flip["ours_std"] == pytest.approx(pd.Series([3 / 138, 5 / 138]).std())
    # the rule of rates (abs. tolerance 0.01): 0.0290 vs 0.0303
    assert flip["verdict"] == "reproduced"
    assert "4 of 132 rows" in flip["notes"] and "138 test rows" in flip["notes"]
    # 15 / 138 = 0.109 vs 29 / 132 = 0.220: differs
    assert out.iloc[3]["paper_value"] == pytest.approx(29 / 132)
    assert out.iloc[3]["verdict"] == "differs"


def test_table11_cell_settings_must_describe_the_key():
    rows = _table11({(0, 0): 98, (0, 1): 4, (1, 0): 1, (1, 1): 29})
    rows[1]["metric"] = "sfp_s0_unfair0_fair1"  # the setting says group S=1
    out = compare_values(pd.DataFrame(rows), _runs(), DATASETS)
    assert out.iloc[1]["verdict"] == "not run"
    assert "'group S=1' does not describe `sfp_s0_unfair0_fair1`" in out.iloc[1]["reason"]
    # runs without the 2x2 counts (an older store): said so
    runs = _runs().drop(columns=[c for c in _runs() if c.startswith("sfp_s1_unfair1")])
    out = compare_values(pd.DataFrame(rows[:1]), runs, DATASETS)
    assert "2x2 counts are not recorded" in out.iloc[0]["reason"]
