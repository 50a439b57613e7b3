"""``fairness_report`` warns on a degenerate predictor and on one-class labels, and the
max-gap metric functions treat a small group as the report does (issue 47).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from fairlearn.metrics import demographic_parity_difference
from sklearn.metrics import roc_auc_score

from otfair import metrics
from otfair.metrics import (
    DegeneratePredictorWarning,
    UndefinedMetricWarning,
    demographic_parity_gap,
    fairness_report,
)


def _useful(n=400, seed=0):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    y = rng.integers(0, 2, n)
    p = 1 / (1 + np.exp(-(2.0 * (2 * y - 1) + rng.normal(size=n))))
    return y, p, s


def test_a_useful_predictor_is_silent():
    y, p, s = _useful()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rep = fairness_report(y, p, sensitive_features=s)
    assert rep.summary["auc"] > 0.8 and rep.notes == ()


def test_one_predicted_class_warns():
    y, p, s = _useful()
    low = 0.4 * p  # same ranking (AUC > 0.8) but every score under 0.5
    with pytest.warns(DegeneratePredictorWarning, match="negative class for every row") as rec:
        rep = fairness_report(y, low, sensitive_features=s)
    assert len(rec) == 1 and rep.summary["dp_gap"] == 0.0
    assert rep.summary["auc"] == pytest.approx(roc_auc_score(y, low))
    assert any("degenerate predictor" in note for note in rep.notes)
    with pytest.warns(DegeneratePredictorWarning, match="positive class for every row"):
        fairness_report(y, 0.5 + 0.5 * p, sensitive_features=s)


@pytest.mark.parametrize("flip", [True, False], ids=["inverted", "chance"])
def test_auc_at_or_below_one_half_warns(flip):
    y, p, s = _useful()
    if not flip:  # both labels see the scores 0.3 and 0.7 equally often: AUC exactly 0.5
        y, p = np.tile([0, 1], 200), np.tile([0.3, 0.3, 0.7, 0.7], 100)
    score = 1 - p if flip else p
    auc = roc_auc_score(y, score)
    assert auc <= 0.5  # the premise
    with pytest.warns(DegeneratePredictorWarning, match=rf"ROC AUC {auc:.3f} <= 0.5"):
        fairness_report(y, score, sensitive_features=s)


def test_one_class_labels_warn():
    _, p, s = _useful()
    with pytest.warns(UndefinedMetricWarning, match="one class only") as rec:
        rep = fairness_report(np.ones(len(p), dtype=int), p, sensitive_features=s)
    assert np.isnan(rep.summary["auc"])
    assert [w.category for w in rec] == [UndefinedMetricWarning]  # AUC NaN: no AUC verdict


def test_warnings_are_user_warnings_and_reach_the_cli_as_lines(tmp_path):
    assert issubclass(DegeneratePredictorWarning, UserWarning)
    assert issubclass(UndefinedMetricWarning, UserWarning)
    import pandas as pd
    from typer.testing import CliRunner

    from otfair_lab.cli import app

    y, p, s = _useful()
    path = tmp_path / "p.csv"
    pd.DataFrame({"y": y, "p": 0.4 * p, "s": s}).to_csv(path, index=False)
    res = CliRunner().invoke(
        app, ["audit", str(path), "--label", "y", "--score", "p", "--sensitive", "s"]
    )
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.stderr.splitlines() if "degenerate predictor" in ln]
    assert len(lines) == 1 and lines[0].startswith("warning: ")


# ----------------------------------------------------------------- small groups
def _issue_case():
    """Two groups of 150 and a one-row group whose single person is selected."""
    rng = np.random.default_rng(1)
    n = 300
    group = np.where(np.arange(n) < n // 2, "A", "B")
    y = rng.integers(0, 2, n)
    p = 1 / (1 + np.exp(-(2.0 * (2 * y - 1) + 0.5 * (group == "B") + rng.normal(size=n))))
    return np.append(y, 1), np.append(p, 0.95), np.append(group, "C")


def test_demographic_parity_gap_agrees_with_fairness_report_on_a_tiny_group():
    y, p, group = _issue_case()
    with pytest.warns(UserWarning, match=r"C \(n=1\).*left out of the gap"):
        gap = demographic_parity_gap(y, p, sensitive_features=group)
    with pytest.warns(UserWarning, match=r"C \(n=1\)"):
        rep = fairness_report(y, p, sensitive_features=group)
    big = group != "C"
    want = demographic_parity_difference(y[big], p[big] >= 0.5, sensitive_features=group[big])
    assert gap == pytest.approx(want) == pytest.approx(rep.summary["dp_gap"])
    # min_group_size=0 keeps the one person: the gap is then theirs, as fairlearn's is
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        everyone = demographic_parity_gap(y, p, sensitive_features=group, min_group_size=0)
    # the one person has no y_true = 0: their FPR, and the FPR gap, are undefined
    with pytest.warns(UndefinedMetricWarning, match=r"fpr_gap .*group\(s\) C have no row"):
        rep0 = fairness_report(y, p, sensitive_features=group, min_group_size=0)
    assert everyone == pytest.approx(
        demographic_parity_difference(y, p >= 0.5, sensitive_features=group)
    )
    assert everyone == pytest.approx(rep0.summary["dp_gap"]) and everyone > gap + 0.3


MAX_GAPS = {
    "mean_score_gap": metrics.mean_score_gap,
    "tpr_gap": metrics.true_positive_rate_gap,
    "fpr_gap": metrics.false_positive_rate_gap,
    "eo_gap": metrics.equalized_odds_gap,
    "max_eo_gap": metrics.max_equalized_odds_gap,
    "wdp": metrics.wasserstein_demographic_parity,
    "ksdp": metrics.ks_demographic_parity,
    "tvdp": metrics.tv_demographic_parity,
}


@pytest.mark.parametrize("key", sorted(MAX_GAPS))
@pytest.mark.filterwarnings("ignore:.*group.s. .* have fewer than:UserWarning")
def test_every_max_gap_function_agrees_with_the_report(key):
    y, p, group = _issue_case()
    y, p, group = np.append(y, 0), np.append(p, 0.05), np.append(group, "C")  # C: both labels
    rep = fairness_report(y, p, sensitive_features=group)
    assert MAX_GAPS[key](y, p, sensitive_features=group) == pytest.approx(rep.summary[key])
    rep0 = fairness_report(y, p, sensitive_features=group, min_group_size=0)
    got0 = MAX_GAPS[key](y, p, sensitive_features=group, min_group_size=0)
    assert got0 == pytest.approx(rep0.summary[key])


@pytest.mark.filterwarnings("ignore:.*group.s. .* have fewer than:UserWarning")
def test_error_gap_agrees_with_the_regression_report():
    rng = np.random.default_rng(3)
    group = np.append(np.repeat(["A", "B"], 60), ["C", "C"])
    y = rng.normal(size=group.size)
    pred = y + rng.normal(scale=0.3, size=group.size) + 5.0 * (group == "C")
    rep = fairness_report(y, pred, sensitive_features=group, task="regression")
    assert metrics.error_gap(y, pred, sensitive_features=group) == pytest.approx(
        rep.summary["error_gap"]
    )
    mse = {g: np.mean((pred - y)[group == g] ** 2) for g in "AB"}
    assert rep.summary["error_gap"] == pytest.approx(abs(mse["A"] - mse["B"]))


@pytest.mark.parametrize("bad", [-1, 2.5, True])
def test_min_group_size_is_validated_by_the_metric_functions(bad):
    y, p, s = _useful()
    with pytest.raises(ValueError, match="min_group_size"):
        demographic_parity_gap(y, p, sensitive_features=s, min_group_size=bad)


def test_a_gap_left_undefined_by_a_group_says_why():
    # a group without a positive: its TPR is undefined, the gap NaN, and the report said
    # nothing (the standalone tpr gap raises; fairlearn gives NaN too)
    rng = np.random.default_rng(0)
    s = np.repeat([0, 1], 100)
    y = rng.integers(0, 2, 200)
    y[s == 1] = 0
    with pytest.warns(UndefinedMetricWarning, match="group\\(s\\) 1 have no row with y_true = 1"):
        rep = fairness_report(y, rng.random(200), sensitive_features=s)
    assert np.isnan(rep.summary["tpr_gap"]) and np.isnan(rep.summary["max_eo_gap"])
    assert not np.isnan(rep.summary["fpr_gap"]) and any("tpr_gap" in n for n in rep.notes)
