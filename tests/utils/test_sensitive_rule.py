"""One rule for sensitive columns across estimators and metrics (issue 28, item 8)."""

from __future__ import annotations

import numpy as np
import pytest

from otfair.estimators import FairClassifier
from otfair.metrics import fairness_report
from otfair.notions import LinearConstraints
from otfair.utils._sensitive import split_sensitive


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)).astype(np.float32)
    return rng, X, (X[:, 0] > 0).astype(int)


@pytest.mark.filterwarnings("ignore::otfair.metrics.DegeneratePredictorWarning")  # 2 epochs
def test_codes_0_1_2_are_three_groups_for_the_estimator_and_the_report():
    rng, X, y = _data()
    s3 = rng.integers(0, 3, len(y))
    clf = FairClassifier("norm", 0.5, epochs=2, random_state=0).fit(X, y, sensitive_features=s3)
    # three one-hot groups, two rows each, exactly as LinearConstraints on the indicators
    onehot = np.column_stack([(s3 == g).astype(float) for g in range(3)])
    assert clf.penalty_.constraints.rows_ == LinearConstraints("dp").fit(onehot).rows_
    rep = fairness_report(y, clf.predict_proba(X)[:, 1], sensitive_features=s3)
    assert rep.summary["n_groups"] == 3
    # declared continuous: one standardized row, and no groups in the report
    cont = FairClassifier("norm", 0.5, epochs=2, random_state=0, sensitive_type="continuous")
    cont.fit(X, y, sensitive_features=s3)
    assert [r[1] for r in cont.penalty_.constraints.rows_] == ["continuous"]
    assert (
        fairness_report(
            y, cont.predict_proba(X)[:, 1], sensitive_features=s3, sensitive_type="continuous"
        ).summary["n_groups"]
        == 0
    )


def test_strings_are_groups_and_give_the_0_1_fit():
    rng, X, y = _data()
    s = rng.integers(0, 2, len(y))
    names = np.array(["female", "male"])[s]
    kw = {"epochs": 2, "random_state": 0, "model": "mlp"}
    a = FairClassifier("gapreg", 1.0, **kw).fit(X, y, sensitive_features=s)
    b = FairClassifier("gapreg", 1.0, **kw).fit(X, y, sensitive_features=names)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


@pytest.mark.parametrize("penalty", ["gapreg", "adv", "barycenter", "ftm"])
def test_binary_only_penalty_names_the_alternative(penalty):
    rng, X, y = _data()
    s3 = rng.integers(0, 3, len(y))
    with pytest.raises(ValueError, match=rf"{penalty} supports two groups.*use otf or norm"):
        FairClassifier(penalty, 0.5, epochs=1).fit(X, y, sensitive_features=s3)
    with pytest.raises(ValueError, match="continuous; use otf or norm"):
        FairClassifier(penalty, 0.5, epochs=1).fit(X, y, sensitive_features=rng.normal(size=300))


def test_binary_01_column_is_used_unchanged():
    s = np.array([0, 1, 1, 0, 1])
    cols = split_sensitive(s)
    np.testing.assert_array_equal(cols.linear[:, 0], s)
    assert cols.codes.tolist() == s.tolist()
