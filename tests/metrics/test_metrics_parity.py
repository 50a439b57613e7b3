"""Group-parity gaps against fairlearn and hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest
from fairlearn.metrics import (
    demographic_parity_difference,
    equalized_odds_difference,
    false_positive_rate_difference,
    true_positive_rate_difference,
)

from otfair.metrics import (
    demographic_parity_gap,
    equal_opportunity_gap,
    equalized_odds_gap,
    error_gap,
    false_positive_rate_gap,
    max_equalized_odds_gap,
    mean_score_gap,
    true_positive_rate_gap,
)

#: hand-computed cases use groups of a few rows: the small-group warning is expected there
#: (tests/metrics/test_small_groups_pos_label.py checks it)
pytestmark = pytest.mark.filterwarnings("ignore:.*group.s. .* have fewer than:UserWarning")


def _hard(score, tau=0.5):
    return (np.asarray(score) >= tau).astype(int)


def test_hand_computed_two_groups():
    # group 0: scores .9 .2 .6 .1 -> hard 1 0 1 0 ; labels 1 1 0 0
    # group 1: scores .7 .8 .3 .4 -> hard 1 1 0 0 ; labels 1 0 0 1
    y = [1, 1, 0, 0, 1, 0, 0, 1]
    p = [0.9, 0.2, 0.6, 0.1, 0.7, 0.8, 0.3, 0.4]
    s = [0, 0, 0, 0, 1, 1, 1, 1]
    assert demographic_parity_gap(y, p, sensitive_features=s) == pytest.approx(0.0)
    # mean scores: 1.8/4 = .45 and 2.2/4 = .55
    assert mean_score_gap(y, p, sensitive_features=s) == pytest.approx(0.10)
    # TPR: g0 1/2, g1 1/2 -> 0 ; FPR: g0 1/2, g1 1/2 -> 0
    assert true_positive_rate_gap(y, p, sensitive_features=s) == pytest.approx(0.0)
    # threshold 0.65: hard g0 1 0 0 0, g1 1 1 0 0 -> DP |1/4 - 2/4|
    assert demographic_parity_gap(y, p, sensitive_features=s, threshold=0.65) == pytest.approx(
        0.25
    )
    # at 0.65: TPR g0 1/2, g1 1/2 ; FPR g0 0/2, g1 1/2 -> EO = (0 + .5)/2, maxEO = .5
    assert equalized_odds_gap(y, p, sensitive_features=s, threshold=0.65) == pytest.approx(0.25)
    assert max_equalized_odds_gap(y, p, sensitive_features=s, threshold=0.65) == pytest.approx(0.5)
    assert false_positive_rate_gap(y, p, sensitive_features=s, threshold=0.65) == pytest.approx(
        0.5
    )


@pytest.mark.parametrize("columns", [["sex"], ["race"], ["sex", "race"]])
@pytest.mark.parametrize("tau", [0.5, 0.7])
def test_against_fairlearn_random(random_panel, columns, tau):
    y, p = random_panel.y, random_panel.score
    s = random_panel.sensitive[columns]
    yhat = _hard(p, tau)
    kw = {"sensitive_features": s}
    assert demographic_parity_gap(y, p, threshold=tau, **kw) == pytest.approx(
        demographic_parity_difference(y, yhat, **kw)
    )
    assert true_positive_rate_gap(y, p, threshold=tau, **kw) == pytest.approx(
        true_positive_rate_difference(y, yhat, **kw)
    )
    assert equal_opportunity_gap(y, p, threshold=tau, **kw) == pytest.approx(
        true_positive_rate_difference(y, yhat, **kw)
    )
    assert false_positive_rate_gap(y, p, threshold=tau, **kw) == pytest.approx(
        false_positive_rate_difference(y, yhat, **kw)
    )
    worst = equalized_odds_difference(y, yhat, agg="worst_case", **kw)
    mean = equalized_odds_difference(y, yhat, agg="mean", **kw)
    assert max_equalized_odds_gap(y, p, threshold=tau, **kw) == pytest.approx(worst)
    assert equalized_odds_gap(y, p, threshold=tau, **kw) == pytest.approx(mean)
    # the FTM "1/2 sum" form is the mean of the TPR and FPR gaps
    tpr = true_positive_rate_difference(y, yhat, **kw)
    half_sum = 0.5 * (tpr + false_positive_rate_difference(y, yhat, **kw))
    assert equalized_odds_gap(y, p, threshold=tau, **kw) == pytest.approx(half_sum)


def test_against_fairlearn_adult(adult_panel):
    y, p, s = adult_panel.y, adult_panel.score, adult_panel.sensitive["sex"]
    yhat = _hard(p)
    dp = demographic_parity_gap(y, p, sensitive_features=s)
    assert dp == pytest.approx(demographic_parity_difference(y, yhat, sensitive_features=s))
    assert dp > 0.05  # the sex-aware model on Adult is visibly unfair
    assert max_equalized_odds_gap(y, p, sensitive_features=s) == pytest.approx(
        equalized_odds_difference(y, yhat, sensitive_features=s, agg="worst_case")
    )


def test_mean_score_gap_matches_pandas_groupby(random_panel):
    frame = random_panel.sensitive.assign(p=random_panel.score)
    means = frame.groupby("race")["p"].mean()
    got = mean_score_gap(random_panel.y, random_panel.score, sensitive_features=frame["race"])
    assert got == pytest.approx(means.max() - means.min())


def test_error_gap_hand_and_multigroup():
    y = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    pred = np.array([0.0, 2.0, 2.0, 5.0, 4.0, 4.0])
    s = np.array([0, 0, 1, 1, 2, 2])
    # group MSEs: (0 + 1)/2 = .5 ; (0 + 4)/2 = 2 ; (0 + 1)/2 = .5
    assert error_gap(y, pred, sensitive_features=s) == pytest.approx(1.5)
    assert error_gap(y, pred, sensitive_features=s == 1) == pytest.approx(2.0 - 0.5)


def test_tpr_gap_undefined_group_is_an_error():
    y = [1, 1, 0, 0]
    p = [0.9, 0.2, 0.6, 0.1]
    s = [0, 0, 1, 1]  # group 1 has no positives
    with pytest.raises(ValueError, match="true positive rate.*no samples with y_true=1"):
        true_positive_rate_gap(y, p, sensitive_features=s)
    with pytest.raises(ValueError, match="agg"):
        equalized_odds_gap([0, 1, 0, 1], [0.1] * 4, sensitive_features=[0, 0, 1, 1], agg="max")
