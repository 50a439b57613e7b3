"""Small groups (``min_group_size``) and declared sensitive kinds in ``fairness_report``."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from fairlearn.metrics import demographic_parity_difference
from scipy.stats import pearsonr

from otfair.metrics import DegeneratePredictorWarning, fairness_report


def _three_groups():
    # A: 40 people, 20 selected; B: 40, 10 selected; C: 3, all selected
    group = np.array(["A"] * 40 + ["B"] * 40 + ["C"] * 3)
    score = np.r_[np.repeat([0.9, 0.1], 20), np.repeat([0.9, 0.1], [10, 30]), [0.9] * 3]
    y = np.tile([0, 1], 42)[: len(group)]
    return y, score, group


@pytest.mark.filterwarnings("ignore::otfair.metrics.DegeneratePredictorWarning")  # AUC 0.49
def test_small_group_left_out_of_the_gaps_and_named():
    y, score, group = _three_groups()
    with pytest.warns(UserWarning, match=r"C \(n=3\).*min_group_size=30"):
        rep = fairness_report(y, score, sensitive_features=group)
    big = group != "C"
    expected = demographic_parity_difference(
        y[big], score[big] >= 0.5, sensitive_features=group[big]
    )
    assert rep.summary["dp_gap"] == pytest.approx(expected) == pytest.approx(0.25)
    assert rep.by_group["small"].tolist() == [False, False, True]
    assert rep.by_group.loc["C", "selection_rate"] == 1.0  # still reported, flagged
    assert rep.summary["n_groups"] == 3 and any("C (n=3)" in note for note in rep.notes)
    # PDP/PEO use every sample, small groups included
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", DegeneratePredictorWarning)  # the scores: AUC 0.49
        everyone = fairness_report(y, score, sensitive_features=group, min_group_size=0)
    assert everyone.summary["dp_gap"] == pytest.approx(
        demographic_parity_difference(y, score >= 0.5, sensitive_features=group)
    )
    assert everyone.summary["dp_gap"] == pytest.approx(0.75)
    assert everyone.summary["pdp_violation"] == rep.summary["pdp_violation"]


def test_regression_error_gap_without_the_small_group():
    y, score, group = _three_groups()
    pred = score + np.where(group == "C", 3.0, 0.0)  # C's error would dominate
    with pytest.warns(UserWarning, match="C"):
        rep = fairness_report(y, pred, sensitive_features=group, task="regression")
    mse = {g: np.mean((pred[group == g] - y[group == g]) ** 2) for g in ("A", "B")}
    assert rep.summary["error_gap"] == pytest.approx(abs(mse["A"] - mse["B"]))


def test_all_groups_small_keeps_them_and_warns():
    with pytest.warns(UserWarning, match=r"0 \(n=2\), 1 \(n=2\) have fewer than"):
        rep = fairness_report([0, 1, 1, 0], [0.2, 0.9, 0.6, 0.4], sensitive_features=[0, 0, 1, 1])
    assert rep.summary["dp_gap"] == 0.0 and rep.by_group["small"].all()
    assert "fewer than two groups reach it" in rep.notes[0]


@pytest.mark.parametrize("bad", [-1, 2.5, True, "30"])
def test_min_group_size_validated(bad):
    with pytest.raises(ValueError, match="min_group_size"):
        fairness_report([0, 1], [0.2, 0.7], sensitive_features=[0, 1], min_group_size=bad)


def test_one_rule_for_sensitive_kinds():
    rng = np.random.default_rng(0)
    code = np.repeat([0, 1, 2], 40)  # 0/1/2: three groups, not a quantity
    score = rng.random(120)
    y = rng.integers(0, 2, 120)
    rep = fairness_report(y, score, sensitive_features=code)
    assert rep.summary["n_groups"] == 3 and rep.sensitive.linear.shape == (120, 3)
    names = np.array(["a", "b", "c"])[code]  # strings: the same three groups
    assert fairness_report(y, score, sensitive_features=names).summary == pytest.approx(
        rep.summary, nan_ok=True
    )
    declared = fairness_report(y, score, sensitive_features=code, sensitive_type="continuous")
    assert declared.summary["n_groups"] == 0 and np.isnan(declared.summary["dp_gap"])
    assert declared.summary["pdp_violation"] == pytest.approx(abs(pearsonr(score, code).statistic))
    frame = pd.DataFrame({"g": code, "age": rng.normal(40, 10, 120)})
    mixed = fairness_report(
        y, score, sensitive_features=frame, sensitive_type={"age": "continuous"}
    )
    assert mixed.sensitive.categorical == ["g"] and mixed.sensitive.continuous == ["age"]
    with pytest.raises(ValueError, match="declared continuous"):
        fairness_report(y, score, sensitive_features=names, sensitive_type="continuous")
    with pytest.raises(ValueError, match="does not have"):
        fairness_report(y, score, sensitive_features=frame, sensitive_type={"x": "continuous"})
    with pytest.raises(ValueError, match="'categorical' or 'continuous'"):
        fairness_report(y, score, sensitive_features=code, sensitive_type="ordinal")
