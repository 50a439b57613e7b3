"""fairness_path / FairnessPath: the path's API, its score frame and plot, its fallback."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from scipy.stats import wasserstein_distance
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from otfair.estimators import CENet, FairClassifier, FairnessPath, OTRepair, fairness_path
from otfair.estimators._path import strength_param, supports_stacking


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    s = (rng.random(n) < 0.4).astype(int)
    y = (X[:, 0] + s + 0.3 * rng.normal(size=n) > 0.5).astype(int)
    return X, y, s


def _rate_gap(pred, s, mask=None):
    mask = np.ones(len(s), bool) if mask is None else mask
    return abs(pred[mask & (s == 0)].mean() - pred[mask & (s == 1)].mean())


def test_score_frame_matches_hand_computed_measures():
    X, y, s = _data()
    path = fairness_path(
        FairClassifier("gapreg", epochs=2, batch_size=100, random_state=0, notion="eo"),
        X,
        y,
        sensitive_features=s,
        strengths=[0.0, 2.0, 8.0],
    )
    frame = path.score_frame(X, y, sensitive_features=s)
    assert frame["strength"].tolist() == [0.0, 2.0, 8.0]
    assert {"accuracy", "auc", "dp_gap", "wdp", "pdp_violation", "eo_gap"} <= set(frame)
    for k, est in enumerate(path.estimators_):
        p = est.predict_proba(X)[:, 1]
        assert frame["accuracy"][k] == pytest.approx(np.mean((p >= 0.5) == y))
        pred = (p >= 0.5).astype(float)
        assert frame["dp_gap"][k] == pytest.approx(_rate_gap(pred, s))
        eo = 0.5 * (_rate_gap(pred, s, y == 0) + _rate_gap(pred, s, y == 1))
        assert frame["eo_gap"][k] == pytest.approx(eo)
        w1 = wasserstein_distance(p[s == 0], p[s == 1])  # scipy: W1 of the score laws
        assert frame["wdp"][k] == pytest.approx(w1, abs=1e-9)


def test_dp_frame_has_no_label_measures_and_regressors_get_error_gap():
    X, y, s = _data()
    path = fairness_path(
        FairClassifier("otf", epochs=1, batch_size=100, random_state=0),
        X, y, sensitive_features=s, strengths=[0.0, 0.5],
    )  # fmt: skip
    assert "eo_gap" not in path.score_frame(X, y, sensitive_features=s)
    target = 1 / (1 + np.exp(-X[:, 0]))
    net = CENet(encoder_hidden=(4,), adversary_hidden=(4,), epochs=1, random_state=0)
    path = fairness_path(net, X, target, sensitive_features=s, strengths=[0.0, 1.0])
    frame = path.score_frame(X, target, sensitive_features=s)
    for k, est in enumerate(path.estimators_):
        pred = est.predict(X)
        sq = (pred - target) ** 2
        assert frame["error_gap"][k] == pytest.approx(abs(sq[s == 0].mean() - sq[s == 1].mean()))
        assert frame["mae"][k] == pytest.approx(np.mean(np.abs(pred - target)))
        assert frame["rmse"][k] == pytest.approx(np.sqrt(np.mean((pred - target) ** 2)))
    assert {"r2", "mse", "wdp"} <= set(frame)


def test_plot_labels_every_strength_and_returns_the_axes():
    X, y, s = _data()
    path = fairness_path(
        FairClassifier("gapreg", epochs=1, batch_size=100, random_state=0),
        X, y, sensitive_features=s, strengths=[0.0, 1.0, 4.0],
    )  # fmt: skip
    ax = path.plot(X, y, sensitive_features=s)
    assert [t.get_text() for t in ax.texts] == ["0", "1", "4"]
    assert ax.get_xlabel() == "dp_gap" and ax.get_ylabel() == "accuracy"
    with pytest.raises(ValueError, match="`metric`='nope'"):
        path.plot(X, y, sensitive_features=s, metric="nope", ax=ax)


def test_each_model_works_in_a_pipeline():
    X, y, s = _data()
    path = fairness_path(
        FairClassifier("otf", epochs=1, batch_size=100, random_state=0),
        StandardScaler().fit_transform(X), y, sensitive_features=s, strengths=[0.2, 0.6],
    )  # fmt: skip
    pipe = make_pipeline(StandardScaler().fit(X), path.estimators_[1])
    assert (
        pipe.predict(X).shape == (len(X),) and pipe.get_params()["fairclassifier__strength"] == 0.6
    )


def test_a_non_stacking_estimator_is_fitted_once_per_strength():
    X, y, s = _data()
    repair = OTRepair(random_state=0)
    assert not supports_stacking(repair) and strength_param(repair) == "strength"
    path = fairness_path(repair, X, y, sensitive_features=s, strengths=[0.0, 1.0])
    assert isinstance(path, FairnessPath) and len(path) == 2
    for value, est in zip([0.0, 1.0], path.estimators_, strict=True):
        alone = OTRepair(strength=value, random_state=0).fit(X, y, sensitive_features=s)
        np.testing.assert_array_equal(
            est.transform(X, sensitive_features=s), alone.transform(X, sensitive_features=s)
        )


def test_an_estimator_without_strength_is_refused():
    from sklearn.linear_model import LogisticRegression

    X, y, s = _data(50)
    with pytest.raises(ValueError, match="no strength parameter"):
        fairness_path(LogisticRegression(), X, y, sensitive_features=s, strengths=[1.0])


def test_a_path_indexes_and_iterates_its_estimators_and_refuses_no_penalty():
    X, y, s = _data()
    path = fairness_path(
        FairClassifier("gapreg", random_state=0), X, y, sensitive_features=s, strengths=[0.0, 1.0]
    )
    assert path[1] is path.estimators_[1] and list(path) == path.estimators_
    assert [est.strength for est in path] == path.strengths_.tolist() == [0.0, 1.0]
    # no penalty: every strength is the same model (FairnessCV refuses it too)
    with pytest.raises(ValueError, match="penalty='none': every strength fits the same"):
        fairness_path(FairClassifier("none"), X, y, sensitive_features=s, strengths=[0.0, 5.0])
    assert (
        len(fairness_path(FairClassifier("none"), X, y, sensitive_features=s, strengths=[0])) == 1
    )
