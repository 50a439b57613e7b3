"""ReductionClassifier.predict: fairlearn's randomized rule by default, or deterministic."""

import numpy as np
import pytest
from fairlearn.reductions import DemographicParity, EqualizedOdds, ExponentiatedGradient
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.utils import check_random_state

from otfair.estimators import ReductionClassifier


def _data(n=800, seed=0):
    """Two groups; the group shifts the first feature, which drives the label."""
    X, y = make_classification(
        n_samples=n, n_features=4, n_informative=3, n_redundant=0, random_state=seed
    )
    s = (X[:, 0] + np.random.default_rng(seed).normal(size=n) > 0.3).astype(int)
    return X, y, s


def _fairlearn(X, y, s, eps, notion, random_state):
    """The same mitigator fitted directly with fairlearn (the base learner's seed drawn
    from ``random_state`` as the estimator does)."""
    seed = int(check_random_state(random_state).randint(2**31 - 1))
    moment = (DemographicParity if notion == "dp" else EqualizedOdds)(difference_bound=eps)
    base = LogisticRegression(max_iter=1000, random_state=seed)
    return ExponentiatedGradient(base, constraints=moment, eps=eps, max_iter=50).fit(
        X, y, sensitive_features=s
    )


@pytest.mark.parametrize("notion", ["dp", "eo"])
def test_randomized_default_equals_fairlearn_predict_with_the_same_random_state(notion):
    X, y, s = _data()
    est = ReductionClassifier(0.01, notion=notion, random_state=3).fit(X, y, sensitive_features=s)
    assert est.prediction_ == "randomized" and est.get_params()["prediction"] == "randomized"
    ref = _fairlearn(X, y, s, 0.01, notion, 3)
    expected = ref.predict(X, random_state=3)
    pred = est.predict(X)
    np.testing.assert_array_equal(pred, expected)
    np.testing.assert_array_equal(est.predict(X), pred)  # an int seed: the same labels
    p = est.predict_proba(X)[:, 1]
    assert bool(((p > 0) & (p < 1)).any())  # a genuinely randomized mixture here
    # labels are 1 iff p >= u: certain rows stay certain
    assert bool((pred[p >= 1.0] == 1).all()) and bool((pred[p <= 0.0] == 0).all())


def test_randomized_labels_have_the_mixture_probability_on_average():
    X, y, s = _data(n=3000, seed=1)
    est = ReductionClassifier(0.005, random_state=0).fit(X, y, sensitive_features=s)
    p = est.predict_proba(X)[:, 1]
    pred = est.predict(X)
    # per group the positive rate is within sampling error of the mean probability,
    # so the labels inherit the mixture's demographic parity
    for g in (0, 1):
        m = s == g
        sd = np.sqrt((p[m] * (1 - p[m])).sum()) / m.sum()
        assert abs(pred[m].mean() - p[m].mean()) <= 5 * sd + 1e-12


def test_deterministic_option_thresholds_the_expected_probability():
    X, y, s = _data()
    est = ReductionClassifier(0.01, prediction="deterministic", random_state=0)
    est.fit(X, y, sensitive_features=s)
    assert est.prediction_ == "deterministic"
    assert est.get_params()["prediction"] == "deterministic"
    np.testing.assert_array_equal(est.predict(X), est.predict_proba(X)[:, 1] >= 0.5)


def test_bad_prediction_names_the_argument():
    X, y, s = _data(n=100)
    with pytest.raises(ValueError, match="'prediction' parameter of ReductionClassifier"):
        ReductionClassifier(prediction="vote").fit(X, y, sensitive_features=s)


@pytest.mark.parametrize("eps", [0.0, -0.01])
def test_a_bound_not_above_zero_names_eps(eps):
    X, y, s = _data(n=100)
    with pytest.raises(ValueError, match="'eps' parameter of ReductionClassifier must be"):
        ReductionClassifier(eps).fit(X, y, sensitive_features=s)


def test_fairlearns_own_deprecation_warnings_stay_inside_fit():
    """fairlearn's pandas deprecations (about its own lines) do not reach the user; the
    user's warnings inside the same block still do, and the filters are restored."""
    import warnings

    from otfair.estimators import BGLRegressor
    from otfair.utils._warnings import quiet_fairlearn_deprecations

    X, y, s = _data(300)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ReductionClassifier(max_iter=5, random_state=0).fit(X, y, sensitive_features=s)
        BGLRegressor(max_iter=5, random_state=0).fit(X, X[:, 0], sensitive_features=s)
        with quiet_fairlearn_deprecations():
            warnings.warn("the user's own", DeprecationWarning, stacklevel=1)
        warnings.warn("after the block", DeprecationWarning, stacklevel=1)
    messages = [str(w.message) for w in caught]
    assert not [w for w in caught if "fairlearn" in w.filename], messages
    # the user's own pass, in order (other libraries' warnings, if any, are not ours)
    assert [m for m in messages if m in ("the user's own", "after the block")] == [
        "the user's own",
        "after the block",
    ]
