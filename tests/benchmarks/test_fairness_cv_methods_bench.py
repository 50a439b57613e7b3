"""docs/measurements/fairness_cv_methods: the report is the CSV's, and the table is whole."""

from __future__ import annotations

import math

from tests.benchmarks._measured import MEASURED, benchmark_script, measured_rows


def _rows() -> list[dict[str, str]]:
    return measured_rows("fairness_cv_methods")


def test_the_report_is_generated_from_the_csv_alone():
    script = benchmark_script("fairness_cv_methods")
    page = (MEASURED / "fairness_cv_methods.md").read_text(encoding="utf-8")
    command = page.split("Last command: `", 1)[1].split("`", 1)[0]
    assert script.report(_rows(), command) + "\n" == page


def test_every_method_ran_on_every_dataset():
    script = benchmark_script("fairness_cv_methods")
    rows = _rows()
    measured = {(r["dataset"], r["method"]) for r in rows}
    expected = {(d, m) for d in script.DATASETS for m in script.methods()}
    assert measured == expected


def test_a_returned_model_is_within_the_budget_on_the_folds():
    """FairnessCV's own rule, checked on what it returned (not on the test split)."""
    script = benchmark_script("fairness_cv_methods")
    returned = [r for r in _rows() if not r["error"]]
    assert returned  # at least one search returned a model
    for r in returned:
        assert float(r["cv_violation"]) <= script.BUDGET + 1e-12, r["method"]
        assert not math.isnan(float(r["strength"]))
        assert 0.0 <= float(r["test_dp_gap"]) <= 1.0
        assert 0.0 <= float(r["test_accuracy"]) <= 1.0
