"""CODRFFRegressor (Komiyama et al. 2018, kernel version) against sklearn references."""

from __future__ import annotations

import numpy as np
import pytest
from _bad_inputs import check_bad_fit_inputs
from sklearn.linear_model import LinearRegression
from sklearn.metrics.pairwise import rbf_kernel

from otfair.estimators.regression.cod_rff import CODRFFRegressor

pytest.importorskip("cvxpy", reason="COD needs cvxpy (pip install otfair[cod])")


def _toy(n: int = 400, seed: int = 0):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 3)) + np.outer(s, [1.0, 0.0, 0.5])
    y = np.sin(X[:, 0]) + X[:, 1] ** 2 / 4 + 0.5 * s + 0.1 * rng.normal(size=n)
    return X, y, s


def _cod(pred: np.ndarray, s: np.ndarray) -> float:
    """R^2 of regressing the predictions on the group (sklearn, independent of the solver)."""
    S = s.reshape(-1, 1).astype(float)
    return LinearRegression().fit(S, pred).score(S, pred)


def test_random_features_approximate_the_rbf_kernel():
    X, y, s = _toy(200)
    model = CODRFFRegressor(1.0, gamma=0.5, n_components=3000, random_state=0)
    Z = model.fit(X, y, sensitive_features=s).rff_.transform(X)
    assert np.abs(Z @ Z.T - rbf_kernel(X, gamma=0.5)).max() < 0.15


@pytest.mark.parametrize("eps", [0.01, 0.1])
def test_cod_constraint_holds_and_binds(eps):
    X, y, s = _toy()
    free = CODRFFRegressor(1.0, gamma=0.5, n_components=40, random_state=0)
    free.fit(X, y, sensitive_features=s)
    assert _cod(free.predict(X), s) > 0.1
    model = CODRFFRegressor(eps, gamma=0.5, n_components=40, random_state=0)
    model.fit(X, y, sensitive_features=s)
    # the solver's constraint uses Sigma_Z + ridge*I on float32 features: 1e-3 slack
    assert _cod(model.predict(X), s) <= eps + 1e-3


def test_eps_one_is_least_squares_on_the_features():
    X, y, s = _toy()
    model = CODRFFRegressor(1.0, gamma=0.5, n_components=40, random_state=3)
    model.fit(X, y, sensitive_features=s)
    Z = model.rff_.transform(X)
    ref = LinearRegression().fit(Z, y).predict(Z)
    mse_ours = np.mean((model.predict(X) - y) ** 2)
    mse_ref = np.mean((ref - y) ** 2)
    assert mse_ref <= mse_ours <= mse_ref * (1 + 1e-3)  # the unconstrained optimum


def test_seeded_reproducibility():
    X, y, s = _toy()
    a = CODRFFRegressor(0.1, n_components=30, random_state=7).fit(X, y, sensitive_features=s)
    b = CODRFFRegressor(0.1, n_components=30, random_state=7).fit(X, y, sensitive_features=s)
    np.testing.assert_allclose(a.predict(X), b.predict(X), atol=1e-8)


def test_bad_inputs():
    X, y, s = _toy(60)
    model = CODRFFRegressor(n_components=10, random_state=0)
    check_bad_fit_inputs(
        lambda X_, s_: model.fit(X_, y, sensitive_features=s_),
        X,
        s,
        n_short=10,
        rows="Inconsistent|rows",
    )
    with pytest.raises(ValueError, match="gamma"):
        CODRFFRegressor(gamma=-1.0).fit(X, y, sensitive_features=s)
    model.fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="not seen during fit"):
        model.predict(X[:2], sensitive_features=[0, 3])


def test_minmax_rescale_is_the_raw_features_unit_cube():
    """rescale="minmax" = RFF on [0, 1] features, whatever per-column scaling came before."""
    X, y, s = _toy(200)
    unit = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
    ref = CODRFFRegressor(0.5, gamma=1.0, n_components=30, random_state=4)
    ref.fit(unit, y, sensitive_features=s)
    standardized = (X - X.mean(axis=0)) / X.std(axis=0)  # as otfair's splits
    model = CODRFFRegressor(0.5, gamma=1.0, rescale="minmax", n_components=30, random_state=4)
    model.fit(standardized, y, sensitive_features=s)
    np.testing.assert_allclose(model.predict(standardized), ref.predict(unit), atol=1e-6)
    assert model.scaler_.transform(standardized).min() == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="rescale"):
        CODRFFRegressor(rescale="unit").fit(X, y, sensitive_features=s)


def test_gamma_grid_keeps_the_lowest_training_mse():
    """The paper's protocol (App. B): one fit per gamma, the least training MSE kept."""
    X, y, s = _toy(200)
    grid = [0.01, 1.0, 100.0]
    model = CODRFFRegressor(0.1, gamma=grid, n_components=30, random_state=2)
    model.fit(X, y, sensitive_features=s)
    singles = {
        g: CODRFFRegressor(0.1, gamma=g, n_components=30, random_state=2).fit(
            X, y, sensitive_features=s
        )
        for g in grid
    }
    mse = {g: float(np.mean((m.predict(X) - y) ** 2)) for g, m in singles.items()}
    best = min(mse, key=mse.get)
    assert model.gamma_ == best and len(set(mse.values())) == 3
    assert model.gamma_mse_ == pytest.approx(mse, rel=1e-6)
    np.testing.assert_allclose(model.predict(X), singles[best].predict(X), atol=1e-8)
    for bad in ([], [1.0, -2.0], ["scale", "auto"], True):
        with pytest.raises(ValueError, match="gamma"):
            CODRFFRegressor(gamma=bad).fit(X, y, sensitive_features=s)
