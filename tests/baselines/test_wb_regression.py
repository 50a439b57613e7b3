"""WassersteinBarycenterRegressor (Chzhen et al. 2020) against scipy, sklearn and EquiPy."""

from __future__ import annotations

import numpy as np
import pytest
from _bad_inputs import check_bad_fit_inputs
from scipy.stats import ks_2samp
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score

from otfair.estimators.postprocessing.wb_regression import WassersteinBarycenterRegressor


def _toy(n: int = 600, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    s = rng.integers(0, 2, n)
    s2 = rng.integers(0, 3, n)
    X[:, 0] += s
    X[:, 1] += 0.5 * s2
    y = X @ np.array([1.0, 2.0, 0.5]) + 0.1 * rng.normal(size=n)
    return X, y, s, s2


def _ks_groups(pred: np.ndarray, s: np.ndarray) -> float:
    return float(ks_2samp(pred[s == 0], pred[s == 1]).statistic)


def test_calibration_distributions_equal_within_one_over_n():
    X, y, s, _ = _toy()
    model = WassersteinBarycenterRegressor(LinearRegression(), random_state=0)
    model.fit(X, y, sensitive_features=s)
    pred, sens = model.calibration_predictions_, model.calibration_sensitive_[:, 0]
    n_min = min(np.sum(sens == 0), np.sum(sens == 1))
    assert _ks_groups(pred, sens) <= 1.0 / n_min + 1e-12


def test_ties_are_broken_by_the_jitter():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 3, size=(800, 1)).astype(float)  # 3 distinct predictions only
    s = rng.integers(0, 2, 800)
    X[:, 0] += s
    model = WassersteinBarycenterRegressor(LinearRegression(), random_state=0)
    model.fit(X, X[:, 0], sensitive_features=s)
    sens = model.calibration_sensitive_[:, 0]
    n_min = min(np.sum(sens == 0), np.sum(sens == 1))
    assert _ks_groups(model.calibration_predictions_, sens) <= 1.0 / n_min + 1e-12


def test_strength_zero_is_the_base_model_and_strength_is_the_geodesic():
    X, y, s, _ = _toy()
    full = WassersteinBarycenterRegressor(LinearRegression(), random_state=0)
    full.fit(X, y, sensitive_features=s)
    base = full.estimator_.predict(X)
    g = full.predict(X, sensitive_features=s)
    half = full.set_params(strength=0.3).predict(X, sensitive_features=s)
    np.testing.assert_allclose(half, 0.3 * g + 0.7 * base, atol=1e-12)
    zero = full.set_params(strength=0.0).predict(X, sensitive_features=s)
    np.testing.assert_allclose(zero, base, atol=1e-12)


def test_seeded_reproducibility():
    X, y, s, _ = _toy()
    a = WassersteinBarycenterRegressor(LinearRegression(), random_state=3).fit(
        X, y, sensitive_features=s
    )
    b = WassersteinBarycenterRegressor(LinearRegression(), random_state=3).fit(
        X, y, sensitive_features=s
    )
    np.testing.assert_array_equal(
        a.predict(X, sensitive_features=s), b.predict(X, sensitive_features=s)
    )


def test_bad_inputs():
    X, y, s, _ = _toy(100)
    model = WassersteinBarycenterRegressor(LinearRegression(), random_state=0)
    check_bad_fit_inputs(lambda X_, s_: model.fit(X_, y, sensitive_features=s_), X, s, n_short=50)
    with pytest.raises(ValueError, match="strength"):
        WassersteinBarycenterRegressor(LinearRegression(), strength=1.5).fit(
            X, y, sensitive_features=s
        )
    model.fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="not seen during fit"):
        model.predict(X[:3], sensitive_features=[0, 1, 7])


def test_prefit_needs_a_fitted_estimator():
    from sklearn.exceptions import NotFittedError

    X, y, s, _ = _toy(100)
    with pytest.raises(NotFittedError):
        WassersteinBarycenterRegressor(LinearRegression(), prefit=True).fit(
            X, sensitive_features=s
        )


def test_agrees_with_equipy_one_attribute():
    equipy = pytest.importorskip("equipy.fairness", reason="EquiPy is not installed")
    X, y, s, _ = _toy()
    base = LinearRegression().fit(X, y)
    Xt, _, st, _ = _toy(200, seed=5)
    ours = WassersteinBarycenterRegressor(base, prefit=True, sigma=1e-9, strength=0.75)
    ours.fit(X, sensitive_features=s)
    theirs = equipy.FairWasserstein(sigma=1e-9)
    theirs.fit(base.predict(X), s)
    np.testing.assert_allclose(
        ours.predict(Xt, sensitive_features=st),
        theirs.transform(base.predict(Xt), st, epsilon=0.25),
        atol=1e-6,
    )


def test_agrees_with_equipy_two_attributes_sequentially():
    equipy = pytest.importorskip("equipy.fairness", reason="EquiPy is not installed")
    X, y, s, s2 = _toy()
    base = LinearRegression().fit(X, y)
    Xt, _, st, s2t = _toy(200, seed=5)
    # sigma=0: EquiPy re-jitters the calibration values between attributes, we keep the
    # fit-time jitter; without jitter (continuous predictions, no ties) both coincide.
    ours = WassersteinBarycenterRegressor(base, prefit=True, sigma=0.0, strength=[0.6, 0.8])
    ours.fit(X, sensitive_features=np.c_[s, s2])
    theirs = equipy.MultiWasserstein(sigma=0.0)
    theirs.fit(base.predict(X), np.c_[s, s2])
    np.testing.assert_allclose(
        ours.predict(Xt, sensitive_features=np.c_[st, s2t]),
        theirs.transform(base.predict(Xt), np.c_[st, s2t], epsilon=[0.4, 0.2]),
        atol=1e-9,
    )


@pytest.mark.parametrize("name", ["law_school", "communities_crime"])
def test_real_data_exact_dp_on_calibration_and_test(name):
    from otfair.datasets import load_dataset

    split = load_dataset(name).split(random_state=0)
    model = WassersteinBarycenterRegressor(LinearRegression(), random_state=0)
    model.fit(split.X_train, split.y_train, sensitive_features=split.s_train)
    sens = model.calibration_sensitive_[:, 0]
    n_min = min(np.sum(sens == 0), np.sum(sens == 1))
    assert _ks_groups(model.calibration_predictions_, sens) <= 1.0 / n_min + 1e-12
    fair = model.predict(split.X_test, sensitive_features=split.s_test)
    base = model.estimator_.predict(split.X_test)
    # ~400 test rows: a KS of 0.05 is below the two-sample noise floor (the 95% null
    # quantile is ~0.14), so the test asks that equality is not rejected.
    assert ks_2samp(fair[split.s_test == 0], fair[split.s_test == 1]).pvalue > 0.05
    assert r2_score(split.y_test, fair) <= r2_score(split.y_test, base) + 0.02


def test_equals_equipy_on_law_school_without_jitter():
    """Chzhen et al.'s map without jitter is EquiPy's (Hu et al. 2024) on Law School."""
    equipy = pytest.importorskip("equipy.fairness", reason="EquiPy is not installed")
    from otfair.datasets import load_dataset

    split = load_dataset("law_school").split(random_state=0)
    base = LinearRegression().fit(split.X_train, split.y_train)
    ours = WassersteinBarycenterRegressor(base, prefit=True, sigma=0.0, strength=1.0)
    ours.fit(split.X_train, sensitive_features=split.s_train)

    # Law School's features are float32: hand EquiPy the predictions in float64 as ours
    # uses them (EquiPy would otherwise interpolate in float32).
    def predict(X):
        return base.predict(X).astype(np.float64)

    theirs = equipy.FairWasserstein(sigma=0.0)
    theirs.fit(predict(split.X_train), np.asarray(split.s_train))
    expected = theirs.transform(predict(split.X_test), np.asarray(split.s_test))
    got = ours.predict(split.X_test, sensitive_features=split.s_test)
    scale = np.max(np.abs(expected))
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12 * scale)
    # the calibration rows themselves (ties included) map identically too
    calib = theirs.transform(predict(split.X_train), np.asarray(split.s_train))
    np.testing.assert_allclose(ours.calibration_predictions_, calib, rtol=0, atol=1e-12 * scale)
