"""benchmarks/budget_on_new_data.py: its CSV round-trips and its report counts what it read."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import budget_on_new_data as bench  # noqa: E402


def _rows() -> list[dict]:
    base = {"case": "adult-otf-dp", "dataset": "adult", "penalty": "otf", "notion": "dp"}
    base.update(metric="dp_gap", budget=0.02)
    rows = []
    for seed, (acc, violation) in enumerate([(0.83, 0.01), (0.82, 0.03), (0.84, 0.02)]):
        row = {**base, "seed": seed, "method": "fairnesscv", "strength": 0.03}
        row.update(cv_violation=0.015, test_accuracy=acc, test_violation=violation)
        row.update(exceeded=violation > 0.02, note="", test_violation_sd=0.004)
        row.update(exceeded_noise=violation > 0.02 + 2 * 0.004)
        rows.append(row)
    refused = {**base, "seed": 0, "method": "fairnesscv_margin1"}
    refused["note"] = "refused: No strength meets max_violation=0.02"
    grid = {**base, "seed": 0, "method": "gridsearch_budget", "cv_violation": 0.03}
    grid.update(test_accuracy=0.8, test_violation=0.05, exceeded=True, note="none within")
    grid.update(test_violation_sd=0.01, exceeded_noise=True)
    return [*rows, refused, grid]


def test_csv_round_trip_keeps_numbers_flags_and_notes(tmp_path):
    path = tmp_path / "out.csv"
    bench.write_rows(path, _rows())
    back = bench.read_rows(path)
    assert len(back) == 5
    first = back[0]
    assert first["seed"] == 0 and first["strength"] == 0.03 and first["exceeded"] is False
    assert back[1]["exceeded"] is True and back[1]["test_violation"] == 0.03
    assert "test_accuracy" not in back[3] and back[3]["note"].startswith("refused")
    assert back[4]["note"] == "none within" and back[4]["exceeded_noise"] is True
    assert back[4]["test_violation_sd"] == 0.01


def back_sd(summary: dict) -> float:
    return summary["sd"]


def test_summary_counts_exceedances_refusals_and_the_standard_error():
    rows = _rows()
    cv = bench.summary(rows, "adult-otf-dp", "fairnesscv")
    assert cv["splits"] == cv["measured"] == 3 and cv["refused"] == 0
    assert cv["exceeded"] == 1  # 0.03 > 0.02; 0.02 is within the budget
    assert cv["exceeded_noise"] == 1  # 0.03 > 0.02 + 2 x 0.004
    assert back_sd(cv) == pytest.approx(0.004)
    assert cv["accuracy"] == pytest.approx(0.83)
    assert cv["accuracy_se"] == pytest.approx(0.01 / 3**0.5)  # sd 0.01 over 3 splits
    assert cv["violation_max"] == pytest.approx(0.03)
    margin = bench.summary(rows, "adult-otf-dp", "fairnesscv_margin1")
    assert margin["refused"] == 1 and margin["measured"] == 0
    text = bench.report(rows, "x.csv")
    line = next(ln for ln in text.splitlines() if "| gridsearch_budget |" in ln)
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[4] == "1" and cells[5] == "1 (1) of 1"  # none within; over the budget
    assert "budget_on_new_data.py --splits 3 --fresh" in text  # seeds 0-2


def test_a_bad_split_count_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        bench.main(["--splits", "0"])
    assert exc.value.code == 2
    assert "--splits" in capsys.readouterr().err


def test_paired_difference_pairs_by_split():
    rows = _rows()
    for seed, acc in enumerate([0.82, 0.80, 0.83]):  # GridSearch's budget choice per split
        row = {"case": "adult-otf-dp", "seed": seed, "method": "gridsearch_budget"}
        row.update(test_accuracy=acc)
        rows = [r for r in rows if not (r["method"] == row["method"] and r["seed"] == seed)]
        rows.append(row)
    mean, se, n = bench.paired_difference(rows, "adult-otf-dp", "fairnesscv")
    # differences 0.83-0.82, 0.82-0.80, 0.84-0.83 = 0.01, 0.02, 0.01
    assert n == 3 and mean == pytest.approx(0.04 / 3)
    assert se == pytest.approx(0.005773502691896258 / 3**0.5)
    assert bench.paired_difference(rows, "adult-otf-dp", "fairnesscv_margin1")[2] == 0
