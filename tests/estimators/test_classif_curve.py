"""fairness_path(FairClassifier(...)): one stacked run equals separate fits.

Tolerance: the same integer seed and strength give predicted probabilities within 1e-5
(measured: ~1e-8 after 3 epochs, float32 rounding of batched vs separate products) and
the same accuracy and demographic-parity gap within 1e-5 (plus one test point for the
accuracy, in case a probability sits at the threshold).
"""

import numpy as np
import pytest
from sklearn.base import clone

from otfair.estimators import FairClassifier, fairness_path
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
    template = FairClassifier(penalty, **params)
    path = fairness_path(template, X, y, sensitive_features=s, strengths=strengths)
    assert list(path.strengths_) == strengths and len(path.estimators_) == len(strengths)
    assert not hasattr(template, "model_")  # the template is left unfitted
    for k, a in enumerate(strengths):
        sep = FairClassifier(penalty, a, **params).fit(X, y, sensitive_features=s)
        p_sep = sep.predict_proba(X)[:, 1]
        p_cur = path.estimators_[k].predict_proba(X)[:, 1]
        np.testing.assert_allclose(p_cur, p_sep, rtol=0, atol=TOL)
        acc_sep, dp_sep = _metrics(p_sep, y, s)
        acc_cur, dp_cur = _metrics(p_cur, y, s)
        assert abs(acc_sep - acc_cur) <= 1 / len(y) + 1e-12
        assert abs(dp_sep - dp_cur) <= TOL
        np.testing.assert_allclose(path.estimators_[k].history_, sep.history_, rtol=1e-4)
        assert path.estimators_[k].get_params()["strength"] == a


def test_each_model_is_a_plain_single_strength_classifier():
    X, y, s = _data(200)
    path = fairness_path(
        FairClassifier("gapreg", epochs=1, batch_size=50, random_state=0),
        X,
        y,
        sensitive_features=s,
        strengths=[0.0, 2.0],
    )
    model = path.estimators_[1]
    assert model.predict(X).shape == (200,) and model.decision_function(X).shape == (200,)
    assert clone(model).get_params()["strength"] == 2.0
    assert not hasattr(model, "estimators_")


@pytest.mark.parametrize(
    "strengths,match",
    [([], "at least one"), ([1.0, 1.0], "distinct"), ([0.5, 2.0], "alpha"), ([-1.0], "strength")],
)
def test_invalid_paths(strengths, match):
    X, y, s = _data(100)
    penalty = "otf" if match == "alpha" else "gapreg"
    with pytest.raises(ValueError, match=match):
        fairness_path(
            FairClassifier(penalty, epochs=1), X, y, sensitive_features=s, strengths=strengths
        )


@pytest.mark.parametrize("strength", [[0.1, 0.5], (0.2,), np.array([0.3, 0.4])])
def test_a_list_strength_is_refused_naming_fairness_path(strength):
    X, y, s = _data(100)
    with pytest.raises(ValueError, match=r"`strength` must be a number.*fairness_path"):
        FairClassifier("otf", strength, epochs=1).fit(X, y, sensitive_features=s)


def test_fixed_batches_single_equals_its_curve_and_learns():
    X, y, s = _data()
    params = {"epochs": 3, "batch_size": 100, "random_state": 0, "fixed_batches": True}
    single = FairClassifier("otf", 0.3, **params).fit(X, y, sensitive_features=s)
    path = fairness_path(
        FairClassifier("otf", **params), X, y, sensitive_features=s, strengths=[0.0, 0.3]
    )
    np.testing.assert_allclose(
        single.predict_proba(X)[:, 1], path.estimators_[1].predict_proba(X)[:, 1], atol=TOL
    )
    assert not hasattr(single, "estimators_") and len(single.history_) == 3
    assert single.history_[-1] < single.history_[0]


def test_a_refit_replaces_the_earlier_fit_whole():
    """A refit forgets every fitted attribute of the earlier fit."""
    X, y, s = _data()
    clf = FairClassifier("gapreg", 1.0, epochs=1, batch_size=100, random_state=0)
    clf.fit(X, y, sensitive_features=s)
    clf.stale_ = "from an earlier fit"
    clf.set_params(strength=0.5).fit(X, y, sensitive_features=s)
    assert not hasattr(clf, "stale_") and clf.predict_proba(X).shape == (len(X), 2)


@pytest.mark.parametrize(
    "penalty,strengths,kw",
    [
        ("gapreg", [0.0, 1.0, 5.0], {"solver": "adam"}),
        ("otf", [0.0, 0.3, 0.8], {"model": "mlp", "hidden": (8,)}),
    ],
    ids=["gapreg-adam", "otf-mlp"],
)
def test_a_curves_models_stop_where_their_separate_fits_do(penalty, strengths, kw):
    """Each model of a stacked curve ends at its own convergence, as its separate fit.

    The curve trains until its last model converges; a model that converged before is
    kept as it was at its own epoch (its ``n_iter_`` and ``history_``), not trained on.
    """
    X, y, s = _data()
    params = dict(epochs=300, batch_size=100, tol=1e-3, n_iter_no_change=3, random_state=0, **kw)
    path = fairness_path(
        FairClassifier(penalty, **params), X, y, sensitive_features=s, strengths=strengths
    )
    n_iters = [est.n_iter_ for est in path.estimators_]
    assert len(set(n_iters)) > 1 and max(n_iters) < 300  # they converge at different epochs
    for k, a in enumerate(strengths):
        sep = FairClassifier(penalty, a, **params).fit(X, y, sensitive_features=s)
        cur = path.estimators_[k]
        assert cur.n_iter_ == sep.n_iter_ == len(cur.history_)
        np.testing.assert_allclose(cur.history_, sep.history_, rtol=1e-4)
        np.testing.assert_allclose(
            cur.predict_proba(X)[:, 1], sep.predict_proba(X)[:, 1], rtol=0, atol=1e-4
        )
