"""benchmarks/mlp_vs_logistic_splits.py: its summary, its CSV and its committed report."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import mlp_vs_logistic_splits as bench  # noqa: E402

MEASUREMENTS = Path(__file__).resolve().parents[2] / "docs" / "measurements"


def _rows(diffs: list[float], model: str = "mlp (default)") -> list[dict]:
    return [
        {
            "dataset": "german",
            "split": i // 2,
            "seed": i % 2,
            "model": model,
            "test_auc": 0.77 + d,
            "logistic_auc": 0.77,
            "auc_diff": d,
            "n_iter": 10,
        }
        for i, d in enumerate(diffs)
    ]


def test_summary_is_the_mean_its_standard_error_the_worst_and_the_share_below():
    diffs = [0.004, -0.02, 0.0, -0.004]
    (row,) = bench.summary(_rows(diffs))
    assert row["runs"] == 4
    assert row["mean"] == pytest.approx(np.mean(diffs))
    assert row["se"] == pytest.approx(np.std(diffs, ddof=1) / 2)
    assert row["worst"] == -0.02 and row["below"] == 0.25  # one of four under -0.01


def test_csv_round_trip_and_report(tmp_path):
    rows = _rows([0.01, -0.03]) + _rows([0.0, 0.002], model="mlp small-data")
    path = tmp_path / "out.csv"
    bench.write_rows(path, rows)
    back = bench.read_rows(path)
    assert back == rows
    text = bench.report(back, path.name, "python benchmarks/mlp_vs_logistic_splits.py")
    assert "| german | mlp (default) | 2 | -0.0100 ± 0.0200 | -0.0300 | 50% |" in text
    assert "| german | mlp small-data | 2 | +0.0010 ± 0.0010 | +0.0000 | 0% |" in text


def test_the_committed_report_is_the_one_its_csv_gives():
    csv_path = MEASUREMENTS / "mlp_vs_logistic.csv"
    text = (MEASUREMENTS / "mlp_vs_logistic.md").read_text()
    rows = bench.read_rows(csv_path)
    assert {r["dataset"] for r in rows} >= {"german", "compas"}
    for s in bench.summary(rows):
        assert f"| {s['dataset']} | {s['model']} | {s['runs']} | {s['mean']:+.4f}" in text


def test_one_split_measures_each_setting_against_the_same_logistic_fit(data_dir):
    rows = bench.measure("german", 0, seeds=1)
    assert [r["model"] for r in rows] == list(bench.MODELS)
    assert len({r["logistic_auc"] for r in rows}) == 1
    for r in rows:
        assert 0.5 < r["test_auc"] < 1.0
        assert r["auc_diff"] == pytest.approx(r["test_auc"] - r["logistic_auc"])


def test_the_classifiers_page_quotes_the_committed_summary():
    """docs/classifiers.md quotes each setting's mean AUC difference and share below."""
    page = (MEASUREMENTS.parent / "classifiers.md").read_text()
    page = " ".join(page.split())  # the quotes may wrap
    summary = {
        (s["dataset"], s["model"]): s
        for s in bench.summary(bench.read_rows(MEASUREMENTS / "mlp_vs_logistic.csv"))
    }
    for dataset in ("german", "compas"):
        for model in ("mlp (default)", "mlp two layers of d", "mlp small-data"):
            s = summary[dataset, model]
            assert f"{s['mean']:+.4f} ± {s['se']:.4f}".lstrip("+") in page.replace("+", ""), (
                dataset,
                model,
            )
    for model in ("mlp (default)", "mlp two layers of d"):
        share = f"{summary['german', model]['below']:.0%}"
        assert f"{share} of the runs more than 0.01 below" in page or (
            f"({share} more than 0.01 below)" in page
        ), model
