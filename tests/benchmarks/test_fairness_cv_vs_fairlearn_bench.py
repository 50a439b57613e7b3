"""benchmarks/fairness_cv_vs_fairlearn.py: its CSV round-trips and its report reads it."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import fairness_cv_vs_fairlearn as bench  # noqa: E402


def _rows() -> list[dict]:
    base = {"dataset": "adult", "notion": "dp", "metric": "dp_gap", "budget": 0.02}
    base.update(n_train=1000, n_test=500)
    grid = {**base, "method": "gridsearch", "model": "logistic (sklearn)", "penalty": ""}
    grid.update(cpu_s=2.0, gridsearch_cpu_s=2.0, test_accuracy=0.83, test_violation=0.01)
    grid.update(test_violation_sd=0.004, within_budget=True, within_budget_noise=True)
    cv = {**base, "method": "fairnesscv", "model": "logistic", "penalty": "otf", "cv": 5}
    cv.update(strength=0.1, n_strengths=11, cv_cpu_s=5.0, refit_cpu_s=1.0, cpu_s=6.0)
    cv.update(gridsearch_cpu_s=2.0, test_accuracy=0.831, test_violation=0.023)
    cv.update(test_violation_sd=0.003, within_budget=False, within_budget_noise=True)
    cv.update(margin=0.0, m0_5_strength=0.3, m0_5_test_accuracy=0.825)
    cv.update(m0_5_test_violation=0.015, m1_error="No strength meets")
    failed = {**base, "method": "fairnesscv", "model": "mlp", "penalty": "otf"}
    failed.update(error="No strength meets max_violation=0.02")
    return [grid, cv, failed]


def test_csv_round_trip_keeps_numbers_flags_and_text(tmp_path):
    path = tmp_path / "out.csv"
    bench.write_rows(path, _rows())
    back = {bench._key(r): r for r in bench.read_rows(path)}
    assert len(back) == 3
    cv = back[("adult", "dp", "fairnesscv", "logistic", "otf")]
    assert cv["strength"] == 0.1 and cv["n_strengths"] == 11 and cv["within_budget"] is False
    assert cv["test_violation"] == 0.023
    grid = back[("adult", "dp", "gridsearch", "logistic (sklearn)", "")]
    assert "penalty" not in grid  # an empty cell is absent, as it was never set
    assert back[("adult", "dp", "fairnesscv", "mlp", "otf")]["error"].startswith("No strength")
    bench.write_rows(path, list(back.values()))  # a resumed run writes what it read
    assert {bench._key(r) for r in bench.read_rows(path)} == set(back)


def test_report_states_the_ratio_the_noise_mark_and_the_cost_parts():
    text = bench.report(_rows(), "x.csv", "cmd")
    line = next(ln for ln in text.splitlines() if "| fairnesscv | logistic | otf |" in ln)
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[5] == "0.8310" and cells[6] == "0.0230 ± 0.0030"
    assert cells[7] == "noise"  # 0.023 > 0.02 but within 2 sd
    assert cells[-1] == "3.00x"  # 6.0 / 2.0
    assert "No strength meets max_violation=0.02" in text
    margins, cost = text.split("## The margin")[1].split("## FairnessCV's cost")
    line = next(ln for ln in margins.splitlines() if ln.startswith("| adult | dp_gap"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[4] == "0.1: 0.8310 / 0.0230"  # margin 0: the row itself
    assert cells[5] == "0.3: 0.8250 / 0.0150" and cells[6] == "No strength meets"
    line = next(ln for ln in cost.splitlines() if ln.startswith("| adult | dp_gap | logistic"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[4] == "5 x 11" and cells[6] == "1.0" and cells[8] == "1.0"  # 5/5 vs 1.0


def test_bootstrap_sd_of_a_dp_gap_is_the_binomial_one():
    """Independent check: the sd of a difference of two proportions."""
    rng = np.random.default_rng(1)
    n = 4000
    s = rng.integers(0, 2, n)
    pred = (rng.random(n) < np.where(s == 1, 0.3, 0.2)).astype(float)
    y = rng.integers(0, 2, n)
    sd = bench.bootstrap_sd("dp_gap", y, pred, s)
    p = [pred[s == g].mean() for g in (0, 1)]
    m = [np.sum(s == g) for g in (0, 1)]
    expected = np.sqrt(sum(p[g] * (1 - p[g]) / m[g] for g in (0, 1)))
    assert abs(sd - expected) < 0.25 * expected  # 200 resamples: ~5% relative noise
