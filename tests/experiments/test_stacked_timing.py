"""Stacked runs get their share of the stacked fit and say they were stacked (issue 28)."""

from __future__ import annotations

import pytest

from otfair_lab.experiments import load_spec, make_report, open_store, run_sweep
from otfair_lab.experiments._execute import share_fit_time

SPEC = """
name = "timing"
seeds = 1
epochs = 2
max_train_rows = 300

[[datasets]]
name = "synthetic"

[[methods]]
name = "gapreg"
strengths = [0.0, 1.0, 5.0]
options = { batch_size = 100 }

[[methods]]
name = "reduction"
strengths = [0.1]
"""


def test_share_fit_time_by_hand():
    records = [
        {"status": "ok", "result": {"fit_time_s": 3.0}},  # the stacked fit of all three
        {"status": "ok", "result": {"fit_time_s": 0.01}},  # reuses the fitted curve
        {"status": "error", "error": "boom"},
    ]
    out = share_fit_time(records)
    assert [r["result"]["fit_time_s"] for r in out[:2]] == pytest.approx([3.01 / 3, 3.01 / 3])
    assert [r["result"]["stacked_k"] for r in out[:2]] == [3, 3]
    assert "result" not in out[2]


def test_sweep_rows_and_report_say_stacked(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(SPEC)
    run_sweep(load_spec(path), tmp_path / "out", progress=False)
    with open_store(tmp_path / "out") as store:
        frame = store.to_frame()
    gap = frame[frame["method"] == "gapreg"]
    assert gap["stacked_k"].tolist() == [3, 3, 3]
    assert gap["fit_time_s"].nunique() == 1 and gap["fit_time_s"].iloc[0] > 0
    assert frame.loc[frame["method"] == "reduction", "stacked_k"].tolist() == [1]
    text = make_report(tmp_path / "out").read_text(encoding="utf-8")
    assert "3 of 4 runs were fitted stacked" in text and "time / K" in text
