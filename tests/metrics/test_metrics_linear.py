"""PDP and PEO violations against scipy.stats.pearsonr."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import pearsonr

from otfair.metrics import pdp_violation, peo_violation


def _max_abs_pearson(score, sens):
    return max(abs(pearsonr(score, sens[:, k]).statistic) for k in range(sens.shape[1]))


def test_pdp_peo_match_pearsonr_on_adult(adult_panel):
    p, y = adult_panel.score, adult_panel.y
    onehot = pd.get_dummies(adult_panel.sensitive["race"]).to_numpy(dtype=float)
    sens = np.column_stack([adult_panel.sensitive["sex"], onehot, adult_panel.sensitive["age"]])
    assert pdp_violation(y, p, sensitive_features=sens) == pytest.approx(_max_abs_pearson(p, sens))
    expected = max(_max_abs_pearson(p[y == lab], sens[y == lab]) for lab in (0, 1))
    assert peo_violation(y, p, sensitive_features=sens) == pytest.approx(expected)


def test_pdp_continuous_column_and_sign():
    rng = np.random.default_rng(0)
    age = rng.normal(40, 10, 500)
    score = 1 / (1 + np.exp((age - 40) / 10))  # decreasing in age: negative correlation
    y = rng.integers(0, 2, 500)
    got = pdp_violation(y, score, sensitive_features=age)
    assert got == pytest.approx(abs(pearsonr(score, age).statistic))
    assert got > 0.9


def test_constant_column_contributes_zero():
    rng = np.random.default_rng(1)
    score = rng.random(100)
    sens = np.column_stack([np.full(100, 0.1), rng.integers(0, 2, 100)])
    expected = abs(pearsonr(score, sens[:, 1]).statistic)
    assert pdp_violation(np.zeros(100), score, sensitive_features=sens) == pytest.approx(expected)
    # constant scores satisfy every covariance constraint
    assert pdp_violation(np.zeros(100), np.full(100, 0.3), sensitive_features=sens) == 0.0


def test_hand_computed_perfect_correlation():
    s = [0, 0, 1, 1]
    assert pdp_violation([0, 1, 0, 1], [0.2, 0.2, 0.8, 0.8], sensitive_features=s) == 1.0
    # within y=0: scores (.2, .8) vs s (0, 1) -> 1 ; within y=1 likewise
    assert peo_violation([0, 1, 0, 1], [0.2, 0.2, 0.8, 0.8], sensitive_features=s) == 1.0
    # independent within each label: y=0 -> s (0,1,0,1) scores (.1,.1,.9,.9)
    y = [0, 0, 0, 0, 1, 1, 1, 1]
    p = [0.1, 0.1, 0.9, 0.9, 0.3, 0.7, 0.3, 0.7]
    s = [0, 1, 0, 1, 0, 0, 1, 1]
    assert peo_violation(y, p, sensitive_features=s) == pytest.approx(0.0, abs=1e-12)


def test_categorical_columns_are_one_hot_as_in_the_report():
    # a categorical attribute (strings, or integer codes of 3 levels) is one-hot encoded,
    # as fairness_report and FairnessPath.score_frame do: Pearson on the codes 0/1/2
    # used to give another number under the same name (scipy is the reference)
    from scipy.stats import pearsonr

    from otfair.metrics import fairness_report, peo_violation

    rng = np.random.default_rng(0)
    codes = rng.integers(0, 3, 300)
    p = rng.random(300) * 0.5 + 0.2 * (codes == 2)
    y = (rng.random(300) < p).astype(int)
    onehot = np.eye(3)[codes]
    expected = max(abs(pearsonr(p, onehot[:, k])[0]) for k in range(3))
    named = np.array(["a", "b", "c"])[codes]
    for s in (codes, named, onehot):
        assert pdp_violation(y, p, sensitive_features=s) == pytest.approx(expected, rel=1e-9)
    report = fairness_report(y, p, sensitive_features=codes).summary
    assert report["pdp_violation"] == pytest.approx(expected, rel=1e-9)
    assert report["peo_violation"] == pytest.approx(
        peo_violation(y, p, sensitive_features=named), rel=1e-9
    )


def test_peo_says_when_a_label_cell_is_too_small_for_a_correlation():
    # one positive: the max over the two cells ran over the negatives alone, silently
    from scipy.stats import pearsonr

    from otfair.metrics import UndefinedMetricWarning, peo_violation

    rng = np.random.default_rng(0)
    y = np.zeros(100, dtype=int)
    y[0] = 1
    p, s = rng.random(100), rng.integers(0, 2, 100)
    with pytest.warns(UndefinedMetricWarning, match="y_true = 1 has 1 sample"):
        value = peo_violation(y, p, sensitive_features=s)
    negatives = y == 0
    assert value == pytest.approx(abs(pearsonr(p[negatives], s[negatives])[0]))


def test_a_constant_sensitive_column_contributes_zero():
    # docs/metrics.md: zero covariance, so 0 rather than NaN (or an error)
    assert (
        pdp_violation([0, 1, 0, 1], [0.1, 0.9, 0.2, 0.8], sensitive_features=[1, 1, 1, 1]) == 0.0
    )
