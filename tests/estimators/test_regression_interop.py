"""otfair's regressors in scikit-learn's and each other's hands (a practitioner's battery).

The barycenter post-processors wrap otfair's own models (the groups reach a base fit
that takes them) and score with the groups their predictions need; ``UnfairRegressor``
fits without groups; BGL says when its bound is not met; COD solves the same problem on
raw feature scales; the fit-quality warning speaks in the units of ``y``.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import accuracy_score, r2_score
from sklearn.model_selection import cross_val_score

from otfair.estimators import (
    BGLRegressor,
    CENet,
    CODRegressor,
    FairClassifier,
    FitQualityWarning,
    UnfairRegressor,
    WassersteinBarycenterClassifier,
    WassersteinBarycenterRegressor,
)


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 4)) + 0.8 * s[:, None]
    y = X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.5, size=n)
    return X, y, s


@pytest.mark.parametrize("base", [UnfairRegressor(epochs=3), CENet(epochs=3)])
def test_barycenter_regressor_wraps_otfair_regressors_and_scores_with_groups(base):
    X, y, s = _data()
    model = WassersteinBarycenterRegressor(base.set_params(random_state=0), random_state=0)
    model.fit(X, y, sensitive_features=s)
    pred = model.predict(X, sensitive_features=s)
    assert model.score(X, y, sensitive_features=s) == pytest.approx(r2_score(y, pred))
    if isinstance(base, CENet):  # the groups reached the base fit
        np.testing.assert_array_equal(model.estimator_.groups_, [0, 1])


def test_barycenter_classifier_wraps_fair_classifier_and_scores_with_groups():
    X, y, s = _data()
    labels = (y > 0).astype(int)
    model = WassersteinBarycenterClassifier(FairClassifier("gapreg", 0.5), random_state=0)
    model.fit(X, labels, sensitive_features=s)
    assert model.estimator_.penalty_ is not None  # fitted with the groups, penalized
    pred = model.predict(X, sensitive_features=s)
    score = model.score(X, labels, sensitive_features=s)
    assert score == pytest.approx(accuracy_score(labels, pred))
    plain = WassersteinBarycenterClassifier(LogisticRegression(), random_state=0)
    assert plain.fit(X, labels, sensitive_features=s).score(X, labels, sensitive_features=s) > 0.5


def test_jitter_far_above_the_predictions_spread_warns_with_a_scaled_value():
    X, y, s = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # unit-scale targets: the default jitter is fine
        WassersteinBarycenterRegressor(LinearRegression(), random_state=0).fit(
            X, y, sensitive_features=s
        )
    with pytest.warns(UserWarning, match=r"sigma=0.0001 is .* times .* pass sigma=") as rec:
        WassersteinBarycenterRegressor(LinearRegression(), random_state=0).fit(
            X, y * 1e-6, sensitive_features=s
        )
    suggested = float(re.search(r"pass sigma=([0-9.e+-]+)", str(rec[0].message)).group(1))
    model = WassersteinBarycenterRegressor(LinearRegression(), sigma=suggested, random_state=0)
    model.fit(X, y * 1e-6, sensitive_features=s)  # the suggested jitter keeps the fit
    assert model.score(X, y * 1e-6, sensitive_features=s) > 0.3


def test_unfair_regressor_fits_without_groups_and_in_cross_validation():
    X, y, s = _data()
    a = UnfairRegressor(epochs=3, random_state=0).fit(X, y)
    b = UnfairRegressor(epochs=3, random_state=0).fit(X, y, sensitive_features=s)
    np.testing.assert_allclose(a.predict(X), b.predict(X))  # the groups are unused
    assert np.isfinite(
        cross_val_score(UnfairRegressor(epochs=2, random_state=0), X, y, cv=2)
    ).all()
    with pytest.raises(ValueError, match="`sensitive_features` has 10"):
        UnfairRegressor(epochs=2).fit(X, y, sensitive_features=s[:10])
    with pytest.raises(ValueError, match="`sensitive_features` is required"):
        CENet(epochs=2).fit(X, y, sensitive_features=None)


def test_bgl_reports_the_group_losses_and_warns_when_the_bound_is_not_met():
    rng = np.random.default_rng(0)
    X, s = rng.normal(size=(600, 3)), rng.integers(0, 2, 600)
    y = X[:, 0] + rng.normal(scale=0.3 + 0.5 * s, size=600)
    with pytest.warns(FitQualityWarning, match=r"eps=0.001 is not met"):
        tight = BGLRegressor(eps=0.001, max_iter=10).fit(X, y, sensitive_features=s)
    scaled = (y - y.min()) / (y.max() - y.min())
    err = (tight.predict(X) - y) / (y.max() - y.min())
    expected = [np.mean(err[s == g] ** 2) for g in (0, 1)]
    np.testing.assert_allclose(tight.group_losses_, expected, rtol=1e-9)
    assert tight.group_losses_.max() > 0.001
    loose_bound = 2 * float(np.var(scaled))
    with warnings.catch_warnings():
        warnings.simplefilter("error", FitQualityWarning)
        loose = BGLRegressor(eps=loose_bound, max_iter=10).fit(X, y, sensitive_features=s)
    assert loose.group_losses_.max() <= loose_bound


def test_cod_solves_the_same_problem_on_raw_feature_scales():
    pytest.importorskip("cvxpy")
    X, y, s = _data(n=300)
    unit = CODRegressor(eps=0.05).fit(X, y, sensitive_features=s)
    assert unit.cod_ <= 0.05 + 1e-6
    raw = CODRegressor(eps=0.05).fit(X * 1e6, y, sensitive_features=s)
    assert raw.cod_ <= 0.05 + 1e-6
    np.testing.assert_allclose(raw.predict(X * 1e6), unit.predict(X), atol=1e-3)
    np.testing.assert_allclose(raw.coef_ * 1e6, unit.coef_, rtol=1e-3, atol=1e-4)


def test_regression_fit_quality_warning_speaks_in_the_units_of_y_and_names_the_scale():
    rng = np.random.default_rng(0)
    X, s = rng.normal(size=(300, 3)), rng.integers(0, 2, 300)
    y = 100 * X[:, 0] + rng.normal(size=300)
    with pytest.warns(FitQualityWarning) as rec:
        model = UnfairRegressor(epochs=1, lr=1e-3, random_state=0)
        model.fit(X * 1e6, y, sensitive_features=s)
    texts = [str(w.message) for w in rec]
    below = next(t for t in texts if "below the best constant" in t)
    mse, constant = (
        float(v) for v in re.search(r"error ([0-9.e+]+) vs ([0-9.e+]+)", below).groups()
    )
    assert constant == pytest.approx(np.var(y), rel=1e-3)
    assert mse == pytest.approx(np.mean((model.predict(X * 1e6) - y) ** 2), rel=1e-3)
    assert "unit scale" in below and "StandardScaler" in below
