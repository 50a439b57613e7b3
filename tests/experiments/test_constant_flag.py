"""Degenerate runs (one class for every test row, or constant scores) are flagged.

The rule is :func:`otfair.metrics.is_constant_prediction`; a run's result carries it as
``constant`` (stored in the sweep store's metrics), the report's table marks the row and
explains it, and the plot crosses the point out.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin

from otfair.metrics import is_constant_prediction
from otfair_lab.experiments import ResultStore, make_report, run_single
from otfair_lab.experiments._spec import RunConfig
from otfair_lab.experiments.methods import MethodSpec, builder, register_method
from otfair_lab.experiments.methods._spec import _REGISTRY


class _Prior(ClassifierMixin, BaseEstimator):
    """Predicts the training base rate for every row (a constant score)."""

    def fit(self, X, y, *, sensitive_features=None):
        self.classes_ = np.unique(y)
        self.rate_ = float(np.mean(y))
        return self

    def predict_proba(self, X):
        p = np.full(len(X), self.rate_)
        return np.column_stack([1 - p, p])


@pytest.fixture
def prior_method():
    spec = MethodSpec(
        name="_prior",
        task="classification",
        build=builder(lambda strength, run, options: _Prior()),
        strength_name=None,
    )
    register_method(spec)
    yield spec.name
    _REGISTRY.pop(spec.name)


@pytest.mark.parametrize(
    ("values", "threshold", "expected"),
    [
        ([0.2, 0.3, 0.45], 0.5, True),  # every score below the threshold: one class
        ([0.6, 0.9, 0.51], 0.5, True),  # every score above: one class
        ([0.2, 0.7], 0.5, False),
        ([0.3, 0.3 + 1e-8], None, True),  # std 5e-9 < 1e-6
        ([0.3, 0.3 + 1e-5], None, False),  # std 5e-6
        ([1, 1, 1], 0.5, True),  # hard labels, one class
        ([0, 1, 1], 0.5, False),
        (["yes", "yes"], 0.5, True),
        (["yes", "no"], 0.5, False),
        ([], 0.5, False),
    ],
)
def test_rule_on_hand_cases(values, threshold, expected):
    assert is_constant_prediction(values, threshold=threshold) is expected


def test_run_result_carries_the_flag(prior_method):
    constant = run_single("synthetic", prior_method, seed=0)
    assert constant["constant"] is True
    fitted = run_single("synthetic", "unfair", seed=0, epochs=5)
    assert fitted["constant"] is False


def test_store_table_and_plot_mark_constant_runs(tmp_path):
    store_dir = tmp_path / "out"
    store_dir.mkdir()
    with ResultStore(store_dir / "results.sqlite") as store:
        for strength, dp, constant in ((0.1, 0.20, False), (1.0, 0.0, True)):
            config = RunConfig(dataset="synthetic", method="otf", seed=0, strength=strength)
            result = {
                "dataset": "synthetic",
                "method": "otf",
                "task": "classification",
                "strength": strength,
                "notion": "dp",
                "seed": 0,
                "accuracy": 0.8 if not constant else 0.6,
                "auc": 0.85 if not constant else 0.5,
                "dp_gap": dp,
                "constant": constant,
                "fit_time_s": 1.0,
            }
            record = {"status": "ok", "result": result, "started_at": 0.0, "finished_at": 1.0}
            store.write(config, record, sweep="t")
        frame = store.to_frame("ok")
    assert sorted(frame["constant"].tolist()) == [False, True]
    index = make_report(store_dir)
    table = (index.parent / "tables" / "synthetic.md").read_text()
    rows = [ln for ln in table.splitlines() if ln.startswith("| otf")]
    marked = [ln for ln in rows if "**constant** 1/1" in ln]
    assert len(marked) == 1 and "| 1 |" in marked[0]  # the strength-1 row only
    assert "predicted one class for every test row" in table
    svg = (index.parent / "plots" / "synthetic__dp_gap.svg").read_text()
    assert "constant prediction" in svg  # the legend entry of the red x
