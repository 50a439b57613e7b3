"""Bad input gets a clear ValueError naming the argument."""

from __future__ import annotations

import numpy as np
import pytest
from _metric_families import GROUP_GAPS, LINEAR

from otfair.metrics import (
    accuracy,
    demographic_parity_gap,
    equalized_odds_gap,
    error_gap,
    fairness_report,
    false_positive_rate_gap,
    log_loss,
    max_equalized_odds_gap,
    mean_score_gap,
    pdp_violation,
    peo_violation,
    roc_auc,
    self_fulfilling_prophecy,
    subset_fairness,
    true_positive_rate_gap,
    tv_demographic_parity,
    wasserstein_demographic_parity,
)

#: hand-computed cases use groups of a few rows: the small-group warning is expected there
#: (tests/metrics/test_small_groups_pos_label.py checks it)
pytestmark = pytest.mark.filterwarnings("ignore:.*group.s. .* have fewer than:UserWarning")

Y = np.array([0, 1, 0, 1, 0, 1])
P = np.array([0.1, 0.8, 0.3, 0.6, 0.4, 0.9])
S = np.array([0, 0, 0, 1, 1, 1])

ALL = GROUP_GAPS + LINEAR
BINARY_LABELS = [
    demographic_parity_gap,
    true_positive_rate_gap,
    false_positive_rate_gap,
    equalized_odds_gap,
    max_equalized_odds_gap,
    peo_violation,
]
PROBABILITY_SCORES = [
    demographic_parity_gap,
    true_positive_rate_gap,
    false_positive_rate_gap,
    equalized_odds_gap,
    tv_demographic_parity,
]


def _report(y, p, *, sensitive_features):
    return fairness_report(y, p, sensitive_features=sensitive_features)


@pytest.mark.parametrize("metric", [*ALL, _report])
def test_mismatched_lengths(metric):
    with pytest.raises(ValueError, match="Inconsistent numbers of samples"):
        metric(Y, P[:-1], sensitive_features=S)
    with pytest.raises(ValueError, match="sensitive_features"):
        metric(Y, P, sensitive_features=S[:-1])


@pytest.mark.parametrize("metric", [*ALL, _report])
def test_nan_scores_and_sensitive(metric):
    with pytest.raises(ValueError, match="y_score.*NaN"):
        metric(Y, np.where(np.arange(6) == 2, np.nan, P), sensitive_features=S)
    with pytest.raises(ValueError, match="sensitive_features.*(NaN|missing)"):
        metric(Y, P, sensitive_features=np.where(S == 0, np.nan, 1.0))


@pytest.mark.parametrize("metric", [*ALL, error_gap, _report])
def test_nan_labels_rejected_even_where_labels_are_unused(metric):
    # DP, WDP, KSDP, TVDP, mean score gap and PDP ignore y_true but a hole is a data error
    for bad in (np.where(Y == 1, np.nan, 0.0), np.array([0, 1, None, 1, 0, 1], dtype=object)):
        with pytest.raises(ValueError, match="y_true.*(NaN|missing)"):
            metric(bad, P, sensitive_features=S)


@pytest.mark.parametrize("metric", [*GROUP_GAPS, _report])
def test_single_group(metric):
    with pytest.raises(ValueError, match="sensitive_features.*at least 2 groups"):
        metric(Y, P, sensitive_features=np.zeros(6))


@pytest.mark.parametrize("metric", [*BINARY_LABELS, _report])
def test_non_binary_labels(metric):
    with pytest.raises(ValueError, match=r"y_true.*binary labels in \{0, 1\}.*\[2\.0\]"):
        metric(np.where(Y == 1, 2, 0), P, sensitive_features=S)


@pytest.mark.parametrize("metric", [*PROBABILITY_SCORES, _report])
def test_scores_outside_unit_interval(metric):
    with pytest.raises(ValueError, match=r"y_score.*(\[0, 1\]|score_range)"):
        metric(Y, P * 3, sensitive_features=S)


def test_regression_measures_accept_any_real_scores():
    assert wasserstein_demographic_parity(Y, P * 3, sensitive_features=S) >= 0
    assert mean_score_gap(Y, P - 5, sensitive_features=S) >= 0
    assert pdp_violation(Y, P * 10, sensitive_features=S) >= 0


def test_performance_and_other_entry_points():
    with pytest.raises(ValueError, match="threshold"):
        accuracy(Y, P, threshold=1.5)
    with pytest.raises(ValueError, match="y_true"):
        roc_auc([0, 3], [0.1, 0.2])
    with pytest.raises(ValueError, match="Inconsistent"):
        log_loss(Y, P[:3])
    with pytest.raises(ValueError, match="y_pred.*NaN"):
        error_gap([1.0, 2.0], [np.nan, 1.0], sensitive_features=[0, 1])
    with pytest.raises(ValueError, match="fair_score"):
        self_fulfilling_prophecy(P, P + 1, sensitive_features=S)
    with pytest.raises(ValueError, match="two groups"):
        self_fulfilling_prophecy(P, P, sensitive_features=[0, 1, 2, 0, 1, 2])
    with pytest.raises(ValueError, match="X"):
        subset_fairness(np.zeros((5, 2)), P, sensitive_features=S)
    with pytest.raises(ValueError, match="task"):
        fairness_report(Y, P, sensitive_features=S, task="ranking")
    with pytest.raises(TypeError, match="sensitive_features.*array-like"):
        demographic_parity_gap(Y, P, sensitive_features=3)


@pytest.mark.parametrize("score_range", [(0.0, np.inf), 5, (0, 1, 2), ("a", "b"), (1.0, 0.0)])
def test_tvdp_names_a_bad_score_range(score_range):
    # (0, inf) returned 0.0 with numpy's "invalid value"; the others raised TypeErrors
    from otfair.metrics import tv_demographic_parity

    y, p, s = [0, 1, 0, 1], [0.1, 0.9, 0.2, 0.8], [0, 0, 1, 1]
    with pytest.raises(ValueError, match="`score_range` must be two finite numbers"):
        tv_demographic_parity(y, p, sensitive_features=s, score_range=score_range)


def test_hard_labels_of_any_two_values_are_constant_only_when_one_occurs():
    from otfair.metrics import is_constant_prediction

    assert not is_constant_prediction([1, 2, 1, 2])  # read as scores >= 0.5: "one class"
    assert is_constant_prediction([2, 2, 2]) and is_constant_prediction([0.2, 0.3])
    assert not is_constant_prediction([0, 1, 1])
