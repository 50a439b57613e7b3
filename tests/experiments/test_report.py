import numpy as np
import pytest
from _exp_helpers import write_spec

from otfair.experiments import load_spec, make_report, pareto_front, run_sweep
from otfair.experiments._report import _dataset_heading


def test_pareto_front_hand_case():
    x = np.array([0.1, 0.2, 0.05, 0.3, np.nan])
    y = np.array([0.8, 0.9, 0.7, 0.85, 1.0])
    # (0.3, 0.85) is dominated by (0.2, 0.9); NaN never on the front
    assert pareto_front(x, y).tolist() == [True, True, True, False, False]
    with pytest.raises(ValueError, match="`x` and `y`"):
        pareto_front(x, y[:2])


def test_report_files_and_methods(plugin_path, tmp_path):
    spec = load_spec(write_spec(tmp_path / "s.toml"))
    run_sweep(spec, tmp_path / "out", progress=False)
    index = make_report(tmp_path / "out")
    out = index.parent
    assert index.name == "index.md" and (out / "index.html").stat().st_size > 0
    for ext in ("png", "svg"):
        plot = out / "plots" / f"synthetic__dp_gap.{ext}"
        assert plot.stat().st_size > 1000
    assert (out / "plots" / "synthetic__dp_gap.png").read_bytes()[:4] == b"\x89PNG"
    svg = (out / "plots" / "synthetic__dp_gap.svg").read_text()
    assert "dummy-lr" in svg and "Pareto front" in svg
    text = index.read_text()
    assert "## synthetic (classification)" in text
    assert "dummy-lr" in text and "matched dp_gap <=" in text
    assert "Failed runs" in text and "dummy-raise" in text
    table = (out / "tables" / "synthetic.md").read_text()
    assert table.split("matched")[0].count("| dummy-lr |") == 3  # one row per strength
    assert len((out / "results.csv").read_text().splitlines()) == 1 + 8


def test_report_without_store(tmp_path):
    with pytest.raises(FileNotFoundError, match="No result store"):
        make_report(tmp_path)


def test_dataset_heading_names_the_task_once():
    assert _dataset_heading("adult", "regression") == "adult (regression)"
    assert _dataset_heading("adult (regression)", "regression") == "adult (regression)"
