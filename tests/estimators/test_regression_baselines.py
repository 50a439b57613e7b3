"""Tests of the regression baselines: BGL (fairlearn) and COD (cvxpy)."""

from __future__ import annotations

import numpy as np
import pytest
from fairlearn.reductions import BoundedGroupLoss, ExponentiatedGradient, SquareLoss
from scipy.optimize import minimize
from sklearn.linear_model import LinearRegression

from otfair.estimators.regression.baselines import BGLRegressor, CODRegressor


def _data(n: int = 400, seed: int = 0):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 4))
    X[:, 0] += 1.0 * s  # a proxy of the sensitive attribute
    y = 0.5 + 0.15 * X[:, 0] + 0.1 * X[:, 1] + rng.normal(0, np.where(s == 1, 0.1, 0.03))
    return X, np.clip(y, 0, 1), s


def _cod_of(pred, s):
    """R^2 of regressing the predictions on S (sklearn as the reference)."""
    S = s.reshape(-1, 1).astype(float)
    return LinearRegression().fit(S, pred).score(S, pred)


def test_cod_with_loose_bound_is_ordinary_least_squares():
    X, y, s = _data()
    pred = CODRegressor(1.0).fit(X, y, sensitive_features=s).predict(X)
    np.testing.assert_allclose(pred, LinearRegression().fit(X, y).predict(X), atol=1e-6)


@pytest.mark.parametrize("eps", [0.0, 0.01, 0.1])
def test_cod_constraint_holds_and_is_optimal(eps):
    X, y, s = _data()
    est = CODRegressor(eps).fit(X, y, sensitive_features=s)
    pred = est.predict(X)
    assert _cod_of(pred, s) <= eps + 1e-5
    mse = np.mean((y - pred) ** 2)
    assert mse >= np.mean((y - LinearRegression().fit(X, y).predict(X)) ** 2) - 1e-12
    # independent reference: SLSQP on the non-convex constraint from several starts
    Xc = np.c_[X, np.ones(len(y))]
    ref = np.inf
    for seed in range(4):
        start = np.random.default_rng(seed).normal(0, 0.1, Xc.shape[1])
        res = minimize(
            lambda w: np.mean((y - Xc @ w) ** 2),
            start,
            method="SLSQP",
            constraints=[{"type": "ineq", "fun": lambda w: eps - _cod_of(Xc @ w, s)}],
        )
        if res.success and _cod_of(Xc @ res.x, s) <= eps + 1e-5:
            ref = min(ref, res.fun)
    assert np.isfinite(ref)
    assert mse <= ref + 1e-5


def test_cod_rejects_non_binary_sensitive():
    X, y, _ = _data(60)
    with pytest.raises(ValueError, match="binary"):
        CODRegressor(0.1).fit(X, y, sensitive_features=np.arange(60) % 3)


def test_bgl_predicts_the_expectation_of_fairlearn_ensemble():
    X, y, s = _data(200)
    est = BGLRegressor(0.005).fit(X, y, sensitive_features=s)
    pred = est.predict(X)
    np.testing.assert_array_equal(pred, est.predict(X))  # deterministic
    ref = ExponentiatedGradient(
        LinearRegression(), constraints=BoundedGroupLoss(SquareLoss(0, 1), upper_bound=0.005)
    ).fit(X, y, sensitive_features=s)
    # fairlearn documents predict() as: draw a predictor with probabilities `weights_`,
    # then apply it; the expectation is the weighted mean of the `predictors_`.
    members = np.stack([p.predict(X) for p in ref.predictors_])
    spread = np.ptp(members, axis=0).max()
    assert spread > 0  # a genuinely randomized ensemble
    np.testing.assert_allclose(pred, np.asarray(ref.weights_) @ members, atol=1e-8)
    Xs = X[:10]  # and the randomized predict agrees (one python draw per row: keep it small)
    draws = np.mean([ref.predict(Xs, random_state=k) for k in range(100)], axis=0)
    np.testing.assert_allclose(pred[:10], draws, atol=0.3 * spread + 1e-9)


def test_bgl_bounds_the_worst_group_loss():
    X, y, s = _data(400)
    ols = LinearRegression().fit(X, y).predict(X)
    worst = max(np.mean((y - ols)[s == g] ** 2) for g in (0, 1))
    pred = BGLRegressor(0.5 * worst).fit(X, y, sensitive_features=s).predict(X)
    assert max(np.mean((y - pred)[s == g] ** 2) for g in (0, 1)) < worst


def test_bgl_subsample_and_errors():
    X, y, s = _data(300)
    est = BGLRegressor(0.01, max_samples=100, random_state=0).fit(X, y, sensitive_features=s)
    assert est.predict(X).shape == (300,)
    with pytest.raises(ValueError, match=r"'eps' parameter of BGLRegressor .* \(0.0, inf\)"):
        BGLRegressor(0.0).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="`sensitive_features`"):
        BGLRegressor(0.1).fit(X, y, sensitive_features=np.zeros(300))
