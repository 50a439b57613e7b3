"""FairClassifier(strength=[...]): one stacked run equals separate fits (issue 17).

Tolerance: the same integer seed and strength give predicted probabilities within 1e-5
(measured: ~1e-8 after 3 epochs, float32 rounding of batched vs separate products) and
the same accuracy and demographic-parity gap within 1e-5 (plus one test point for the
accuracy, in case a probability sits at the threshold).
"""

import numpy as np
import pytest
from sklearn.base import clone

from otfair.estimators import FairClassifier
from otfair.penalties import FTM

TOL = 1e-5


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    s = (rng.random(n) < 0.4).astype(int)
    y = (X[:, 0] + s + 0.3 * rng.normal(size=n) > 0.5).astype(int)
    return X, y, s


def _metrics(p, y, s):
    pred = p >= 0.5
    return (pred == y).mean(), abs(p[s == 0].mean() - p[s == 1].mean())


CASES = [
    ("otf", [0.0, 0.3, 0.8], {}),
    ("otf", [0.2, 0.6], {"notion": "eo"}),
    ("norm", [0.0, 0.5], {}),
    ("gapreg", [0.0, 1.0, 5.0], {}),
    ("gapreg", [0.5, 2.0], {"notion": "eopp"}),
    ("adv", [0.0, 1.0], {"model": "mlp", "hidden": (8,)}),
    ("ftm", [0.0, 1.0, 3.0], {"model": "mlp", "hidden": (8, 8), "lr_decay": 0.9}),
    ("barycenter", [0.0, 0.5], {}),
    ("none", [0.0], {"model": "mlp", "hidden": (6,)}),
]


@pytest.mark.parametrize("penalty,strengths,kw", CASES, ids=[f"{c[0]}-{len(c[1])}" for c in CASES])
def test_curve_equals_separate_fits(penalty, strengths, kw):
    X, y, s = _data()
    params = dict(epochs=3, batch_size=100, random_state=0, **kw)
    if penalty == "ftm":
        penalty = FTM(group_batch_size=60)
    curve = FairClassifier(penalty, strengths, **params).fit(X, y, sensitive_features=s)
    assert list(curve.strengths_) == strengths and len(curve.estimators_) == len(strengths)
    for k, a in enumerate(strengths):
        sep = FairClassifier(penalty, a, **params).fit(X, y, sensitive_features=s)
        p_sep = sep.predict_proba(X)[:, 1]
        p_cur = curve.predict_proba(X, strength=a)[:, 1]
        np.testing.assert_allclose(p_cur, p_sep, rtol=0, atol=TOL)
        np.testing.assert_allclose(curve.estimators_[k].predict_proba(X)[:, 1], p_cur)
        acc_sep, dp_sep = _metrics(p_sep, y, s)
        acc_cur, dp_cur = _metrics(p_cur, y, s)
        assert abs(acc_sep - acc_cur) <= 1 / len(y) + 1e-12
        assert abs(dp_sep - dp_cur) <= TOL
        np.testing.assert_allclose(curve.history_[k], sep.history_, rtol=1e-4)
        assert curve.estimators_[k].strength == a


def test_predict_selects_strength_and_errors():
    X, y, s = _data(200)
    curve = FairClassifier("gapreg", [0.0, 2.0], epochs=1, batch_size=50, random_state=0)
    curve.fit(X, y, sensitive_features=s)
    assert curve.predict(X, strength=2.0).shape == (200,)
    assert curve.decision_function(X, strength=0.0).shape == (200,)
    with pytest.raises(ValueError, match="strength="):
        curve.predict_proba(X)
    with pytest.raises(ValueError, match="not on the fitted curve"):
        curve.predict(X, strength=1.0)
    single = FairClassifier("gapreg", 2.0, epochs=1, batch_size=50, random_state=0)
    single.fit(X, y, sensitive_features=s)
    assert single.predict(X, strength=2.0).shape == (200,)
    with pytest.raises(ValueError, match="fitted at"):
        single.predict(X, strength=1.0)
    assert clone(curve).get_params()["strength"] == [0.0, 2.0]


@pytest.mark.parametrize(
    "strength,match",
    [([], "at least one"), ([1.0, 1.0], "distinct"), ([0.5, 2.0], "alpha"), ([-1.0], "strength")],
)
def test_invalid_curves(strength, match):
    X, y, s = _data(100)
    penalty = "otf" if match == "alpha" else "gapreg"
    with pytest.raises(ValueError, match=match):
        FairClassifier(penalty, strength, epochs=1).fit(X, y, sensitive_features=s)


def test_fixed_batches_single_equals_its_curve_and_learns():
    X, y, s = _data()
    params = {"epochs": 3, "batch_size": 100, "random_state": 0, "fixed_batches": True}
    single = FairClassifier("otf", 0.3, **params).fit(X, y, sensitive_features=s)
    curve = FairClassifier("otf", [0.0, 0.3], **params).fit(X, y, sensitive_features=s)
    np.testing.assert_allclose(
        single.predict_proba(X)[:, 1], curve.predict_proba(X, strength=0.3)[:, 1], atol=TOL
    )
    assert not hasattr(single, "estimators_") and len(single.history_) == 3
    assert single.history_[-1] < single.history_[0]


def test_a_refit_replaces_the_earlier_fit_whole():
    """A curve refitted at one strength predicts with the new model (and the reverse)."""
    from otfair.estimators import CENet

    X, y, s = _data()
    clf = FairClassifier("gapreg", [0.0, 1.0], epochs=1, batch_size=100, random_state=0)
    clf.fit(X, y, sensitive_features=s)
    clf.set_params(strength=0.5).fit(X, y, sensitive_features=s)
    assert not hasattr(clf, "estimators_") and not hasattr(clf, "strengths_")
    assert clf.predict_proba(X).shape == (len(X), 2)
    clf.set_params(strength=[0.5, 2.0]).fit(X, y, sensitive_features=s)
    assert not hasattr(clf, "model_") and list(clf.strengths_) == [0.5, 2.0]
    target = X[:, 0] * 0.3 + 0.5
    net = CENet(lam=[0.0, 1.0], encoder_hidden=(4,), adversary_hidden=(4,), epochs=1,
                random_state=0).fit(X, target, sensitive_features=s)  # fmt: skip
    net.set_params(lam=1.0).fit(X, target, sensitive_features=s)
    assert not hasattr(net, "estimators_") and net.predict(X).shape == (len(X),)
