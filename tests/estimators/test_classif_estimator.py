import numpy as np
import pytest
from _classif_data import two_group_data
from sklearn.base import clone

from otfair.estimators.classification.fair_classifier import FairClassifier
from otfair.penalties import FTM


def _data(n=600, seed=0):
    X, y, s = two_group_data(n, seed, d=4)
    return X.astype(np.float32), y, s


def _gap(p, s):
    return abs(p[s == 0].mean() - p[s == 1].mean())


def test_binary_sklearn_behaviour_and_clone():
    X, y, s = _data()
    clf = FairClassifier(
        "gapreg", 2.0, model="mlp", epochs=5, lr=1e-2, batch_size=100, random_state=1
    )
    twin = clone(clf)
    assert twin.get_params() == clf.get_params() and not hasattr(twin, "model_")
    clf.fit(X, y, sensitive_features=s)
    proba = clf.predict_proba(X)
    assert proba.shape == (len(y), 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.predict(X), (proba[:, 1] >= 0.5).astype(int))
    np.testing.assert_allclose(1 / (1 + np.exp(-clf.decision_function(X))), proba[:, 1])
    assert 0.5 < clf.score(X, y) <= 1.0
    assert len(clf.history_) == 5 and clf.n_features_in_ == 4


@pytest.mark.parametrize("penalty,strength", [("none", 0.0), ("norm", 0.5), ("adv", 1.0),
                                              ("ftm", 1.0), ("barycenter", 0.5)])  # fmt: skip
def test_reproducible_with_random_state(penalty, strength):
    X, y, s = _data(300)
    kw = {"epochs": 2, "batch_size": 64, "model": "mlp"}
    penalty = FTM(group_batch_size=32) if penalty == "ftm" else penalty
    a = FairClassifier(penalty, strength, random_state=3, **kw).fit(X, y, sensitive_features=s)
    b = FairClassifier(penalty, strength, random_state=3, **kw).fit(X, y, sensitive_features=s)
    c = FairClassifier(penalty, strength, random_state=4, **kw).fit(X, y, sensitive_features=s)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    assert not np.allclose(a.predict_proba(X), c.predict_proba(X))


@pytest.mark.parametrize("penalty,strength", [("gapreg", 20.0), ("norm", 0.9),
                                              ("barycenter", 0.9), ("ftm", 5.0)])  # fmt: skip
def test_penalty_reduces_gap(penalty, strength):
    X, y, s = _data(800)
    kw = {"epochs": 15, "batch_size": 100, "lr": 1e-2, "random_state": 0}
    penalty = FTM(group_batch_size=64) if penalty == "ftm" else penalty
    base = FairClassifier(penalty, 0.0, **kw).fit(X, y, sensitive_features=s)
    fair = FairClassifier(penalty, strength, **kw).fit(X, y, sensitive_features=s)
    g0 = _gap(base.predict_proba(X)[:, 1], s)
    g1 = _gap(fair.predict_proba(X)[:, 1], s)
    assert g1 < 0.5 * g0, (g0, g1)


def test_bad_input_messages():
    X, y, s = _data(100)
    with pytest.raises(ValueError, match="`y` must contain two classes"):
        FairClassifier(epochs=1).fit(X, np.arange(len(y)) % 3)
    with pytest.raises(ValueError, match="`y` contains only one class"):
        FairClassifier(epochs=1).fit(X, np.ones(len(y)))
    with pytest.raises(ValueError, match="sensitive_features` is required"):
        FairClassifier("gapreg", 1.0, epochs=1).fit(X, y)
    with pytest.raises(ValueError, match="`sensitive_features` must contain at least 2 groups"):
        FairClassifier("gapreg", 1.0, epochs=1).fit(X, y, sensitive_features=np.zeros(100))
    with pytest.raises(ValueError, match="gapreg.* compares two groups, but .* continuous"):
        FairClassifier("gapreg", 1.0, epochs=1).fit(X, y, sensitive_features=X[:, 1])
    with pytest.raises(ValueError, match="has 99 rows"):
        FairClassifier("norm", 0.5, epochs=1).fit(X, y, sensitive_features=s[:99])
    with pytest.raises(ValueError, match="alpha in"):
        FairClassifier("norm", 2.0, epochs=1).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="penalty"):
        FairClassifier("nope").fit(X, y)
    with pytest.raises(ValueError, match="notion='eo'"):
        FairClassifier("barycenter", 0.5, notion="eo").fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="`notion` must be one of dp, eopp, eo"):
        FairClassifier("gapreg", 1.0, notion="xx").fit(X, y, sensitive_features=s)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        FairClassifier(epochs=1).fit(Xn, y)


def test_norm_handles_continuous_and_several_attributes():
    X, y, s = _data(400)
    age = X[:, 0] * 3 + np.random.default_rng(0).normal(size=400)
    S = np.column_stack([s, age])
    kw = {"solver": "adam", "epochs": 10, "batch_size": 100, "lr": 1e-2, "random_state": 0}
    base = FairClassifier("norm", 0.0, **kw).fit(X, y, sensitive_features=S)
    fair = FairClassifier("norm", 0.9, **kw).fit(X, y, sensitive_features=S)

    def corr(est):
        p = est.predict_proba(X)[:, 1]
        return abs(np.corrcoef(p, age)[0, 1])

    assert corr(fair) < 0.5 * corr(base)
