"""pos_label on string labels, the small-group warning, and the training refusal."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from otfair import metrics
from otfair.utils import MIN_GROUP_SIZE, MIN_TRAIN_GROUP_SIZE, check_group_sizes


def _data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    s = np.where(np.arange(n) % 2 == 0, "F", "M")
    proba = rng.uniform(size=n)
    y01 = (rng.uniform(size=n) < proba).astype(int)
    return y01, np.where(y01 == 1, "yes", "no"), proba, s


LABEL_METRICS = [
    metrics.demographic_parity_gap,
    metrics.mean_score_gap,
    metrics.true_positive_rate_gap,
    metrics.false_positive_rate_gap,
    metrics.equalized_odds_gap,
    metrics.max_equalized_odds_gap,
    metrics.wasserstein_demographic_parity,
    metrics.ks_demographic_parity,
    metrics.tv_demographic_parity,
]


@pytest.mark.parametrize("metric", LABEL_METRICS, ids=lambda f: f.__name__)
def test_string_labels_with_pos_label_equal_the_0_1_labels(metric):
    y01, yes_no, proba, s = _data()
    want = metric(y01, proba, sensitive_features=s)
    assert metric(yes_no, proba, sensitive_features=s, pos_label="yes") == want
    # the other class as positive flips the labels (a label-free measure does not move)
    flipped = metric(1 - y01, proba, sensitive_features=s)
    assert metric(yes_no, proba, sensitive_features=s, pos_label="no") == flipped


@pytest.mark.parametrize(
    "metric", [metrics.accuracy, metrics.roc_auc, metrics.log_loss], ids=lambda f: f.__name__
)
def test_performance_metrics_take_pos_label(metric):
    y01, yes_no, proba, _ = _data()
    assert metric(yes_no, proba, pos_label="yes") == metric(y01, proba)


def test_linear_violations_take_pos_label():
    y01, yes_no, proba, s = _data()
    s01 = (s == "F").astype(float)
    for metric in (metrics.pdp_violation, metrics.peo_violation):
        got = metric(yes_no, proba, sensitive_features=s01, pos_label="yes")
        assert got == metric(y01, proba, sensitive_features=s01)


def test_string_labels_without_pos_label_say_to_pass_it():
    _, yes_no, proba, s = _data()
    with pytest.raises(ValueError, match="pos_label"):
        metrics.demographic_parity_gap(yes_no, proba, sensitive_features=s)
    with pytest.raises(ValueError, match="`pos_label`='maybe' is not one of the labels"):
        metrics.accuracy(yes_no, proba, pos_label="maybe")


def test_fairness_report_with_pos_label_and_a_one_row_group_warns():
    y01, yes_no, proba, s = _data()
    s = s.copy()
    s[0] = "X"  # a group of one row
    with pytest.warns(UserWarning, match=r"X \(n=1\)"):
        rep = metrics.fairness_report(yes_no, proba, sensitive_features=s, pos_label="yes")
    with pytest.warns(UserWarning, match=r"X \(n=1\)"):
        want = metrics.fairness_report(y01, proba, sensitive_features=s)
    assert rep.summary == pytest.approx(want.summary, nan_ok=True)
    assert bool(rep.by_group.loc["X", "small"])
    # the one-row group is left out of the gaps: they equal the report without its row
    keep = s != "X"
    base = metrics.fairness_report(y01[keep], proba[keep], sensitive_features=s[keep])
    assert rep.summary["dp_gap"] == base.summary["dp_gap"]


def test_two_groups_one_of_them_a_single_row_still_warns():
    # fewer than two groups reach the minimum: every group is kept, but it is not silent
    y01, _, proba, _ = _data(n=40)
    s = np.zeros(40, dtype=int)
    s[0] = 1
    # the one row lacks a class: its TPR or FPR is undefined, and said so too
    with (
        pytest.warns(metrics.UndefinedMetricWarning, match="have no row with y_true"),
        pytest.warns(UserWarning, match=r"1 \(n=1\)"),
    ):
        rep = metrics.fairness_report(y01, proba, sensitive_features=s)
    assert rep.notes and "1 (n=1)" in rep.notes[0]


@pytest.mark.parametrize("metric", LABEL_METRICS[:2], ids=lambda f: f.__name__)
def test_metrics_warn_on_a_group_under_the_minimum(metric):
    y01, _, proba, s = _data(n=2 * MIN_GROUP_SIZE)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        metric(y01, proba, sensitive_features=s)  # both groups at the minimum: silent
    s = s.copy()
    s[:3] = "Z"
    with pytest.warns(
        UserWarning, match=rf"Z \(n=3\) have fewer than min_group_size={MIN_GROUP_SIZE}"
    ):
        metric(y01, proba, sensitive_features=s)


def test_check_group_sizes_names_the_group_and_its_size():
    check_group_sizes(np.array([0, 0, 1, 1]), np.array(["F", "M"]))  # at the minimum
    assert MIN_TRAIN_GROUP_SIZE == 2
    with pytest.raises(ValueError, match=r"`sensitive_features` group\(s\) M \(n=1\)"):
        check_group_sizes(np.array([0, 0, 1]), np.array(["F", "M"]))


@pytest.mark.parametrize("penalty", ["otf", "ftm", "gapreg"])
def test_training_with_a_one_row_group_fails_before_the_first_epoch(penalty):
    from otfair.estimators import FairClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3)).astype(np.float32)
    y = (X[:, 0] > 0).astype(int)
    s = np.zeros(60, dtype=int)
    s[5] = 1  # group 1 has one row
    strength = 0.5 if penalty == "otf" else 1.0  # OTF's convex alpha is below 1
    clf = FairClassifier(penalty=penalty, strength=strength, epochs=10_000, random_state=0)
    # 10,000 epochs: a check after the first epoch would make this test run for minutes
    with pytest.raises(ValueError, match=r"group\(s\) 1 \(n=1\) have fewer than 2 rows"):
        clf.fit(X, y, sensitive_features=s)


def test_a_representation_learner_refuses_a_one_row_group():
    from otfair.estimators import LAFTRClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3)).astype(np.float32)
    y = (X[:, 0] > 0).astype(int)
    s = np.zeros(60, dtype=int)
    s[7] = 1
    with pytest.raises(ValueError, match=r"group\(s\) 1 \(n=1\) have fewer than 2 rows"):
        LAFTRClassifier(epochs=10_000, random_state=0).fit(X, y, sensitive_features=s)
