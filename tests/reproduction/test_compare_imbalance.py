"""FTM Table 3's imbalance rows: run selection by training share and the accuracy's CV."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from _hand_rows import paper_row, run_row

from otfair_lab.reproduction._compare import compare_values, imbalance_share

DATASETS = {"adult": ("adult", "sex"), "adult-imbalance": ("adult", "sex")}
SETTING = "dp_gap=0.064; train imbalance 5:95"


def _runs() -> pd.DataFrame:
    """Balanced runs (acc 0.80) and imbalanced ones (acc 0.82 / 0.84 / 0.83), all dp 0.05."""
    rows = [run_row(1.0, seed, 0.80, 0.05, dataset="adult") for seed in range(3)]
    for seed, acc in enumerate((0.82, 0.84, 0.83)):
        row = run_row(1.0, seed, acc, 0.05, dataset="adult-imbalance", train_group_share=0.05)
        row["key"] += "i"
        rows.append(row)
    return pd.DataFrame(rows)


def _compare(metric: str, setting: str, frame: pd.DataFrame, value: float = 0.83) -> pd.Series:
    source = "paper" if metric == "accuracy_cv" else "panel"
    paper = pd.DataFrame(
        [
            paper_row(
                "Table 3",
                value,
                dataset="adult",
                metric=metric,
                metric_source=source,
                setting=setting,
            )
        ]
    )
    return compare_values(paper, frame, DATASETS).iloc[0]


def test_share_is_read_from_the_setting():
    assert imbalance_share(SETTING) == pytest.approx(0.05)
    assert imbalance_share("dp_gap=0.1; train imbalance 1:3") == pytest.approx(0.25)
    assert imbalance_share("dp_gap=0.064") is None


def test_imbalance_rows_use_only_the_imbalanced_runs():
    out = _compare("accuracy", SETTING, _runs())
    assert out["verdict"] != "not run"
    assert out["ours_mean"] == pytest.approx((0.82 + 0.84 + 0.83) / 3)
    assert out["seeds"] == 3


def test_other_rows_ignore_the_imbalanced_runs():
    out = _compare("accuracy", "dp_gap=0.064", _runs())
    assert out["ours_mean"] == pytest.approx(0.80)


def test_accuracy_cv_is_std_over_mean_of_the_seeds():
    accs = pd.Series([0.82, 0.84, 0.83])
    cv = accs.std(ddof=1) / accs.mean()  # 0.0120
    out = _compare("accuracy_cv", SETTING, _runs(), value=0.010)
    assert out["ours_mean"] == pytest.approx(cv) and out["kind"] == "cv"
    # log scale: SE of log(cv_ours / cv_paper) = sqrt(1 / (2 * 2) + 1 / (2 * 4)) with
    # 3 seeds here and the paper's 5 repetitions; log(0.012 / 0.010) = 0.18 is inside
    paper = pd.DataFrame(
        [
            paper_row(
                "Table 3",
                0.010,
                dataset="adult",
                metric="accuracy_cv",
                metric_source="paper",
                setting=SETTING,
            )
        ]
    )
    row = compare_values(paper, _runs(), DATASETS, paper_seeds=5).iloc[0]
    assert row["se"] == pytest.approx(math.sqrt(1 / 4 + 1 / 8))
    assert row["verdict"] == "reproduced"
    # 0.012 vs 0.0005: log ratio 3.2 > 2t = 2 x 2 x 0.61
    paper["value"] = 0.0005
    row = compare_values(paper, _runs(), DATASETS, paper_seeds=5).iloc[0]
    assert row["verdict"] == "differs"


def test_imbalance_row_without_imbalanced_runs_is_not_run():
    frame = _runs()
    frame = frame[frame["dataset"] == "adult"]
    out = _compare("accuracy", SETTING, frame)
    assert out["verdict"] == "not run"
    assert "train_group_share" in out["reason"]


def test_accuracy_cv_needs_two_seeds():
    frame = _runs()
    frame = frame[(frame["dataset"] == "adult") | (frame["seed"] == 0)]
    out = _compare("accuracy_cv", SETTING, frame)
    assert out["verdict"] == "not run"
    assert ">= 2 repetitions" in out["reason"]


def test_balanced_rows_without_balanced_runs_are_not_run():
    frame = _runs()
    frame = frame[frame["dataset"] == "adult-imbalance"]
    out = _compare("accuracy", "dp_gap=0.064", frame)
    assert out["verdict"] == "not run"
    assert "imbalanced training part" in out["reason"]
