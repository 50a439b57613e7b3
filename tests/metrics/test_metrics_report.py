"""fairness_report: stable keys and every value against an independent reference."""

from __future__ import annotations

import json
import math
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
import sklearn.metrics as skm
from fairlearn.metrics import (
    MetricFrame,
    count,
    demographic_parity_difference,
    equalized_odds_difference,
    false_positive_rate,
    false_positive_rate_difference,
    selection_rate,
    true_positive_rate,
    true_positive_rate_difference,
)
from scipy.stats import ks_2samp, pearsonr, wasserstein_distance

from otfair.metrics import (
    CLASSIFICATION_KEYS,
    REGRESSION_KEYS,
    UndefinedMetricWarning,
    fairness_report,
)

#: hand-computed cases use groups of a few rows: the small-group warning is expected there
#: (tests/metrics/test_small_groups_pos_label.py checks it)
pytestmark = pytest.mark.filterwarnings("ignore:.*group.s. .* have fewer than:UserWarning")

# The keys promised in issue 3 / docs/architecture.md (the experiment runner relies on them).
PROMISED_CLASSIFICATION = {
    "accuracy", "auc", "dp_gap", "mean_score_gap", "wdp", "ksdp", "tvdp", "tpr_gap",
    "fpr_gap", "eo_gap", "max_eo_gap", "pdp_violation", "peo_violation", "log_loss", "n",
}  # fmt: skip
PROMISED_REGRESSION = {
    "mse", "r2", "error_gap", "wdp", "ksdp", "mean_score_gap", "pdp_violation", "n",
}  # fmt: skip


def _max_pair(values_by_group, fn):
    return max(
        fn(values_by_group[a], values_by_group[b]) for a, b in combinations(values_by_group, 2)
    )


def test_keys_are_stable():
    rng = np.random.default_rng(0)
    y, p, s = rng.integers(0, 2, 50), rng.random(50), rng.integers(0, 2, 50)
    cls = fairness_report(y, p, sensitive_features=s)
    reg = fairness_report(y + p, p, sensitive_features=s, task="regression")
    assert (
        set(cls.summary) >= PROMISED_CLASSIFICATION and tuple(cls.summary) == CLASSIFICATION_KEYS
    )
    assert set(reg.summary) >= PROMISED_REGRESSION and tuple(reg.summary) == REGRESSION_KEYS
    # JSON friendly: plain floats / ints, by_group as records
    json.dumps(cls.to_dict(), allow_nan=False)


def test_to_dict_is_strict_json_when_a_gap_is_undefined():
    rng = np.random.default_rng(0)
    s = rng.integers(0, 2, 100)
    y = np.where(s == 1, 1, rng.integers(0, 2, 100))  # group 1 has no negatives: no FPR
    score = np.clip(0.25 + 0.5 * y + rng.normal(0, 0.2, 100), 0, 1)  # ranks well
    with pytest.warns(UndefinedMetricWarning):
        rep = fairness_report(y, score, sensitive_features=s)
    assert np.isnan(rep.summary["fpr_gap"])
    out = rep.to_dict()
    assert out["fpr_gap"] is None and out["dp_gap"] == rep.summary["dp_gap"]
    back = json.loads(json.dumps(out, allow_nan=False))
    assert back["by_group"][0].keys() == out["by_group"][0].keys()
    target = rng.random(100)
    reg = fairness_report(target, target + 0.1, sensitive_features=s, task="regression")
    json.dumps(reg.to_dict(), allow_nan=False)


def test_classification_panel_on_adult(adult_panel):
    y, p = adult_panel.y, adult_panel.score
    sex = adult_panel.sensitive["sex"].to_numpy()
    rep = fairness_report(y, p, sensitive_features=adult_panel.sensitive[["sex"]])
    yhat = (p >= 0.5).astype(int)
    m = rep.summary
    assert m["n"] == y.size and m["n_groups"] == 2
    assert m["accuracy"] == pytest.approx(skm.accuracy_score(y, yhat))
    assert m["auc"] == pytest.approx(skm.roc_auc_score(y, p))
    assert m["log_loss"] == pytest.approx(skm.log_loss(y, p))
    assert m["dp_gap"] == pytest.approx(
        demographic_parity_difference(y, yhat, sensitive_features=sex)
    )
    assert m["tpr_gap"] == pytest.approx(
        true_positive_rate_difference(y, yhat, sensitive_features=sex)
    )
    assert m["fpr_gap"] == pytest.approx(
        false_positive_rate_difference(y, yhat, sensitive_features=sex)
    )
    assert m["eo_gap"] == pytest.approx(
        equalized_odds_difference(y, yhat, sensitive_features=sex, agg="mean")
    )
    assert m["max_eo_gap"] == pytest.approx(
        equalized_odds_difference(y, yhat, sensitive_features=sex, agg="worst_case")
    )
    assert m["mean_score_gap"] == pytest.approx(abs(p[sex == 0].mean() - p[sex == 1].mean()))
    assert m["wdp"] == pytest.approx(wasserstein_distance(p[sex == 0], p[sex == 1]))
    assert m["ksdp"] == pytest.approx(ks_2samp(p[sex == 0], p[sex == 1]).statistic)
    h0 = np.histogram(p[sex == 0], np.linspace(0, 1, 101))[0] / np.sum(sex == 0)
    h1 = np.histogram(p[sex == 1], np.linspace(0, 1, 101))[0] / np.sum(sex == 1)
    assert m["tvdp"] == pytest.approx(0.5 * np.abs(h0 - h1).sum())
    assert m["pdp_violation"] == pytest.approx(abs(pearsonr(p, sex).statistic))
    peo = max(abs(pearsonr(p[y == k], sex[y == k]).statistic) for k in (0, 1))
    assert m["peo_violation"] == pytest.approx(peo)
    # per-group table against fairlearn's MetricFrame
    frame = MetricFrame(
        metrics={
            "n": count,
            "selection_rate": selection_rate,
            "tpr": true_positive_rate,
            "fpr": false_positive_rate,
        },
        y_true=y,
        y_pred=yhat,
        sensitive_features=pd.Series(sex.astype(str), name="group"),
    ).by_group
    for col in ("n", "selection_rate", "tpr", "fpr"):
        assert rep.by_group[col].to_numpy() == pytest.approx(frame[col].to_numpy(dtype=float))
    assert rep.by_group["base_rate"].tolist() == pytest.approx(
        [y[sex == 0].mean(), y[sex == 1].mean()]
    )


def test_intersectional_groups_and_mixed_continuous(adult_panel):
    y, p = adult_panel.y, adult_panel.score
    s = adult_panel.sensitive
    yhat = (p >= 0.5).astype(int)
    # sex, race (categorical), age (continuous); every group kept, as fairlearn does
    rep = fairness_report(y, p, sensitive_features=s, min_group_size=0)
    assert rep.sensitive.categorical == ["sex", "race"] and rep.sensitive.continuous == ["age"]
    cats = s[["sex", "race"]]
    assert rep.summary["n_groups"] == len(cats.drop_duplicates())
    assert rep.summary["dp_gap"] == pytest.approx(
        demographic_parity_difference(y, yhat, sensitive_features=cats)
    )
    keys = cats.astype(str).agg(",".join, axis=1).to_numpy()
    by = {k: p[keys == k] for k in np.unique(keys)}
    assert rep.summary["wdp"] == pytest.approx(_max_pair(by, wasserstein_distance))
    # PDP over sex, race one-hot and continuous age
    cols = [s["sex"].to_numpy(float), s["age"].to_numpy(float)]
    cols += [(s["race"] == r).to_numpy(float) for r in s["race"].unique()]
    expected = max(abs(pearsonr(p, c).statistic) for c in cols)
    assert rep.summary["pdp_violation"] == pytest.approx(expected)
    # several groups have no positives at this size: the TPR gap is NaN, not an error;
    # intersectional group labels carry the column names
    named = "sex=" + cats["sex"].astype(str) + ",race=" + cats["race"].astype(str)
    assert set(rep.by_group.index) == set(named)


def test_continuous_only_gives_nan_group_measures(adult_panel):
    y, p, age = adult_panel.y, adult_panel.score, adult_panel.sensitive["age"]
    rep = fairness_report(y, p, sensitive_features=age)
    for key in ("dp_gap", "wdp", "ksdp", "tvdp", "tpr_gap", "eo_gap", "max_eo_gap"):
        assert math.isnan(rep.summary[key])
    assert rep.summary["n_groups"] == 0 and rep.by_group.empty
    assert rep.summary["pdp_violation"] == pytest.approx(abs(pearsonr(p, age).statistic))
    # raising max_categories turns the same column into (many) groups
    few = fairness_report(y, p, sensitive_features=age.clip(30, 33), max_categories=10)
    assert few.summary["n_groups"] == 4


def test_undefined_values_are_nan_not_errors():
    y = np.array([1, 1, 0, 0, 0, 0])
    p = np.array([0.9, 0.2, 0.6, 0.1, 0.7, 0.3])
    s = np.array([0, 0, 0, 1, 1, 1])  # group 1 has no positive: TPR undefined
    with pytest.warns(UndefinedMetricWarning, match=r"tpr_gap .*group\(s\) 1 have no row"):
        m = fairness_report(y, p, sensitive_features=s, min_group_size=0).summary
    assert math.isnan(m["tpr_gap"]) and math.isnan(m["eo_gap"]) and math.isnan(m["max_eo_gap"])
    # FPR: group 0 has one negative (score .6 -> 1): 1 ; group 1: (.1, .7, .3) -> 1/3
    assert m["fpr_gap"] == pytest.approx(1 - 1 / 3)
    with pytest.warns(UndefinedMetricWarning, match="one class only"):
        single = fairness_report(np.ones(4), [0.2, 0.4, 0.6, 0.8], sensitive_features=[0, 0, 1, 1])
    assert math.isnan(single.summary["auc"])


def test_regression_panel():
    rng = np.random.default_rng(5)
    n = 400
    s = rng.integers(0, 2, n)
    y = rng.normal(size=n) + s
    pred = y + rng.normal(scale=np.where(s == 1, 1.0, 0.3), size=n)
    rep = fairness_report(y, pred, sensitive_features=s, task="regression")
    m = rep.summary
    assert m["mse"] == pytest.approx(skm.mean_squared_error(y, pred))
    assert m["r2"] == pytest.approx(skm.r2_score(y, pred))
    mse0 = skm.mean_squared_error(y[s == 0], pred[s == 0])
    mse1 = skm.mean_squared_error(y[s == 1], pred[s == 1])
    assert m["error_gap"] == pytest.approx(abs(mse0 - mse1))
    assert m["wdp"] == pytest.approx(wasserstein_distance(pred[s == 0], pred[s == 1]))
    assert m["ksdp"] == pytest.approx(ks_2samp(pred[s == 0], pred[s == 1]).statistic)
    assert m["mean_score_gap"] == pytest.approx(abs(pred[s == 0].mean() - pred[s == 1].mean()))
    assert m["pdp_violation"] == pytest.approx(abs(pearsonr(pred, s).statistic))
    assert rep.by_group["mse"].tolist() == pytest.approx([mse0, mse1])


def test_regression_report_carries_the_accuracy_disparity_audit():
    from otfair.metrics import accuracy_disparity_audit

    rng = np.random.default_rng(5)
    n = 300
    s = rng.integers(0, 2, n)
    y = rng.normal(size=n) + s
    pred = y + rng.normal(scale=0.5 + 0.5 * s, size=n)
    rep = fairness_report(y, pred, sensitive_features=s, task="regression")
    expected = accuracy_disparity_audit(y, pred, sensitive_features=s)
    assert set(rep.accuracy_disparity) == set(expected)
    for key, value in expected.items():
        if isinstance(value, float):
            assert rep.accuracy_disparity[key] == pytest.approx(value), key
    assert rep.to_dict()["accuracy_disparity"] == rep.accuracy_disparity
    assert rep.accuracy_disparity["error_gap"] == pytest.approx(rep.summary["error_gap"])
    assert rep.accuracy_disparity["groups"] == [0, 1]
    sex = np.where(s == 1, "male", "female")  # the audit names the groups by their labels
    named = fairness_report(y, pred, sensitive_features=sex, task="regression")
    assert named.accuracy_disparity["groups"] == ["female", "male"]
    assert named.accuracy_disparity["n_0"] == int((s == 0).sum())
    assert named.accuracy_disparity["mse_1"] == pytest.approx(expected["mse_1"])
    three = fairness_report(y, pred, sensitive_features=rng.integers(0, 3, n), task="regression")
    assert three.accuracy_disparity is None and "found 3" in three.notes[0]
    clf = fairness_report((y > 0).astype(int), 1 / (1 + np.exp(-pred)), sensitive_features=s)
    assert clf.accuracy_disparity is None and "accuracy_disparity" not in clf.to_dict()


def test_max_categories_validated():
    with pytest.raises(ValueError, match="max_categories"):
        fairness_report([0, 1], [0.2, 0.7], sensitive_features=[0, 1], max_categories=-3)
