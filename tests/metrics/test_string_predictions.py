"""String predictions (what ``pipe.predict`` returns) with ``pos_label`` (issue 47).

``pos_label`` maps the predicted labels passed as ``y_score`` as it maps ``y_true``: every
metric then equals itself on the 0/1 predictions, and DP / EO equal fairlearn's on the
0/1-mapped predictions.
"""

from __future__ import annotations

import numpy as np
import pytest
from fairlearn.metrics import demographic_parity_difference, equalized_odds_difference

from otfair import metrics
from otfair.utils import check_predictions

POS, NEG = ">50K", "<=50K"

#: every metric that takes ``y_true``, ``y_score`` and ``pos_label``
GROUP_METRICS = [
    metrics.demographic_parity_gap,
    metrics.mean_score_gap,
    metrics.true_positive_rate_gap,
    metrics.false_positive_rate_gap,
    metrics.equal_opportunity_gap,
    metrics.equalized_odds_gap,
    metrics.max_equalized_odds_gap,
    metrics.wasserstein_demographic_parity,
    metrics.ks_demographic_parity,
    metrics.tv_demographic_parity,
    metrics.pdp_violation,
    metrics.peo_violation,
]
PLAIN_METRICS = [metrics.accuracy, metrics.roc_auc, metrics.log_loss]


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    s = (rng.random(n) < 0.6).astype(int)  # numeric: PDP/PEO take it too
    y01 = (rng.random(n) < 0.3 + 0.2 * s).astype(int)
    pred01 = np.where(rng.random(n) < 0.8, y01, 1 - y01)  # right 80% of the time
    return y01, pred01, np.where(y01 == 1, POS, NEG), np.where(pred01 == 1, POS, NEG), s


@pytest.mark.parametrize("metric", GROUP_METRICS, ids=lambda f: f.__name__)
def test_group_metrics_take_string_predictions(metric):
    y01, pred01, y, pred, s = _data()
    want = metric(y01, pred01.astype(float), sensitive_features=s)
    assert metric(y, pred, sensitive_features=s, pos_label=POS) == pytest.approx(want)


@pytest.mark.parametrize("metric", PLAIN_METRICS, ids=lambda f: f.__name__)
def test_performance_metrics_take_string_predictions(metric):
    y01, pred01, y, pred, _ = _data()
    want = metric(y01, pred01.astype(float))
    assert metric(y, pred, pos_label=POS) == pytest.approx(want)


def test_against_fairlearn_on_the_mapped_predictions():
    y01, pred01, y, pred, s = _data(seed=3)
    dp = metrics.demographic_parity_gap(y, pred, sensitive_features=s, pos_label=POS)
    assert dp == pytest.approx(demographic_parity_difference(y01, pred01, sensitive_features=s))
    assert dp > 0.05  # a real gap: the test could fail
    eo = metrics.max_equalized_odds_gap(y, pred, sensitive_features=s, pos_label=POS)
    assert eo == pytest.approx(equalized_odds_difference(y01, pred01, sensitive_features=s))
    report = metrics.fairness_report(y, pred, sensitive_features=s, pos_label=POS)
    assert report.summary["dp_gap"] == pytest.approx(dp)
    assert report.summary["accuracy"] == pytest.approx(np.mean(y01 == pred01))


def test_the_other_class_as_positive_flips_predictions_and_labels():
    y01, pred01, y, pred, s = _data()
    flipped = metrics.accuracy(y, pred, pos_label=NEG)
    assert flipped == pytest.approx(np.mean(y01 == pred01))
    tpr_neg = metrics.true_positive_rate_gap(y, pred, sensitive_features=s, pos_label=NEG)
    fpr = metrics.false_positive_rate_gap(y01, pred01, sensitive_features=s)
    assert tpr_neg == pytest.approx(fpr)  # TPR of "<=50K" = 1 - FPR of ">50K"


def test_numeric_labels_other_than_0_1_are_predicted_labels():
    y = np.array([1, 2, 2, 1, 2, 1])
    assert metrics.accuracy(y, [1, 2, 1, 1, 2, 2], pos_label=2) == pytest.approx(4 / 6)
    # scores in [0, 1] stay scores of the positive class
    assert metrics.accuracy(y, [0.1, 0.9, 0.2, 0.3, 0.8, 0.6], pos_label=2) == pytest.approx(4 / 6)


def test_string_predictions_without_pos_label_name_it():
    y01, _, _, pred, s = _data()
    with pytest.raises(ValueError, match=r"`y_score` holds non-numeric values .*`pos_label`"):
        metrics.demographic_parity_gap(y01, pred, sensitive_features=s)
    with pytest.raises(ValueError, match="`pos_label`"):
        metrics.fairness_report(y01, pred, sensitive_features=s)


def test_a_predicted_label_outside_the_labels_is_refused():
    _, _, y, pred, s = _data()
    typo = np.where(pred == POS, POS + ".", NEG)  # the adult test file's ">50K."
    with pytest.raises(ValueError, match=r"predicted labels \['>50K\.'\] that are not labels"):
        metrics.demographic_parity_gap(y, typo, sensitive_features=s, pos_label=POS)


def test_check_predictions_edge_cases():
    # one class of labels: the predictions may still hold pos_label
    got = check_predictions(["a", "b"], y_true=["b", "b"], pos_label="a")
    np.testing.assert_array_equal(got, [1.0, 0.0])
    with pytest.raises(ValueError, match="missing"):
        check_predictions(np.array(["a", None], dtype=object), y_true=["a", "b"], pos_label="a")
    # numbers written as text stay scores without pos_label, as before
    np.testing.assert_array_equal(check_predictions(["0.25", "1"]), [0.25, 1.0])
    # numeric values outside [0, 1] that are not labels: the usual range error
    with pytest.raises(ValueError, match="probabilities in"):
        check_predictions([3.0, 0.5], y_true=[1, 2], pos_label=2)


def test_predicted_01_labels_under_another_positive_label_are_labels_not_scores():
    # clf.predict's 0/1 with pos_label=0 used to be read as scores (1 = positive): the
    # accuracy and the AUC came out inverted (scikit-learn is the reference)
    from sklearn.metrics import accuracy_score, roc_auc_score

    from otfair.metrics import accuracy, roc_auc

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 400)
    pred = np.where(rng.random(400) < 0.8, y, 1 - y)
    assert accuracy(y, pred, pos_label=0) == pytest.approx(accuracy_score(y, pred))
    assert roc_auc(y, pred, pos_label=0) == pytest.approx(roc_auc_score(y == 0, pred == 0))
    # labels 1/2, the positive one 2, a predictor that always says 1
    y12 = np.where(rng.random(400) < 0.8, 1, 2)
    always = np.ones(400, dtype=int)
    assert accuracy(y12, always, pos_label=2) == pytest.approx(accuracy_score(y12, always))
    # under pos_label=1 the 0/1 labels and the 0/1 scores agree, and scores stay scores
    assert accuracy(y, pred, pos_label=1) == pytest.approx(accuracy_score(y, pred))
    np.testing.assert_array_equal(check_predictions([0.2, 0.9], pos_label=0), [0.2, 0.9])
    # a saturated predict_proba column of the positive class 0 (floats 0.0/1.0) is a
    # score of that class, not labels: P(y = 0) = 1 where the prediction is 0
    p0 = (pred == 0).astype(np.float64)
    assert accuracy(y, p0, pos_label=0) == pytest.approx(accuracy_score(y, pred))
    assert roc_auc(y, p0, pos_label=0) == pytest.approx(roc_auc_score(y == 0, p0))
