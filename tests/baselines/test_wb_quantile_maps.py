"""The sorted-interpolation quantile maps equal the former ``np.quantile`` per query.

``_NpQuantileGroupQuantiles`` below is a verbatim copy of the implementation that called
``numpy.quantile`` on the sorted calibration values for every batch of queries
(quadratic cost in the calibration size); it is the independent reference: the fast
maps must give the same numbers bit for bit, for both quantile methods, on data with
ties, several groups and several sensitive attributes.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

from otfair.estimators import _quantile_barycenter as qb
from otfair.estimators.postprocessing import wb_regression
from otfair.estimators.postprocessing.wb_regression import WassersteinBarycenterRegressor
from otfair.estimators.preprocessing import ot_repair
from otfair.estimators.preprocessing.ot_repair import OTRepair

METHODS = ["linear", "inverted_cdf"]


class _NpQuantileGroupQuantiles:
    """The former implementation (np.quantile on the sorted values per call)."""

    def __init__(self, values, codes, n_groups, *, quantile_method="linear"):
        self.sorted_ = [np.sort(values[codes == g]) for g in range(n_groups)]
        sizes = np.array([len(v) for v in self.sorted_], dtype=np.float64)
        if np.any(sizes == 0):
            raise ValueError("every group needs at least one calibration value.")
        self.weights_ = sizes / sizes.sum()
        self.quantile_method = quantile_method

    def cdf(self, values, group, *, side="right"):
        ref = self.sorted_[group]
        return np.searchsorted(ref, values, side=side) / len(ref)

    def quantile(self, u, group):
        u = np.clip(u, 0.0, 1.0)
        return np.quantile(self.sorted_[group], u, method=self.quantile_method)

    def barycenter_quantile(self, u):
        return sum(w * self.quantile(u, g) for g, w in enumerate(self.weights_))

    def randomized_cdf(self, values, group, rng):
        lo = self.cdf(values, group, side="left")
        hi = self.cdf(values, group, side="right")
        return lo + rng.uniform(size=len(values)) * (hi - lo)

    def to_barycenter(self, values, codes, *, rng=None):
        out = np.empty(len(values), dtype=np.float64)
        for g in range(len(self.sorted_)):
            mask = codes == g
            if not np.any(mask):
                continue
            if rng is None:
                u = self.cdf(values[mask], g)
            else:
                u = self.randomized_cdf(values[mask], g, rng)
            out[mask] = self.barycenter_quantile(u)
        return out


def _tied_data(n: int, n_groups: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Values on a coarse grid (many ties) with group-dependent shifts; group sizes vary."""
    rng = np.random.default_rng(seed)
    codes = rng.choice(n_groups, size=n, p=np.arange(1, n_groups + 1) / sum(range(n_groups + 1)))
    codes[:n_groups] = np.arange(n_groups)  # every group present
    values = np.round(rng.normal(size=n) + 0.7 * codes, 1)
    return values, codes


def _levels(n_max: int, seed: int) -> np.ndarray:
    """Random levels plus every k/n and k/(n - 1) boundary, their float neighbours, 0 and 1."""
    rng = np.random.default_rng(seed)
    grids = [np.arange(n + 1) / n for n in range(1, n_max + 1)]
    grids += [np.arange(n) / (n - 1) for n in range(2, n_max + 1)]
    exact = np.concatenate(grids)
    return np.concatenate(
        [
            rng.uniform(size=500),
            exact,
            np.nextafter(exact, 2.0),
            np.nextafter(exact, -1.0),
            [-0.5, 0.0, 1.0, 1.5],
        ]
    )


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize(("n", "n_groups"), [(7, 3), (60, 2), (400, 4)])
def test_maps_equal_np_quantile_reference(method, n, n_groups):
    values, codes = _tied_data(n, n_groups, seed=n)
    fast = qb.GroupQuantiles(values, codes, n_groups, quantile_method=method)
    ref = _NpQuantileGroupQuantiles(values, codes, n_groups, quantile_method=method)
    u = _levels(min(n, 80), seed=n)
    queries = np.r_[values, np.round(np.linspace(-4, 6, 101), 1), values + 1e-3]
    for g in range(n_groups):
        np.testing.assert_array_equal(fast.quantile(u, g), ref.quantile(u, g))
        for side in ("left", "right"):
            np.testing.assert_array_equal(
                fast.cdf(queries, g, side=side), ref.cdf(queries, g, side=side)
            )
    np.testing.assert_array_equal(fast.barycenter_quantile(u), ref.barycenter_quantile(u))
    query_codes = np.r_[codes, np.arange(len(queries) - len(codes)) % n_groups]
    np.testing.assert_array_equal(
        fast.to_barycenter(queries, query_codes), ref.to_barycenter(queries, query_codes)
    )
    np.testing.assert_array_equal(
        fast.to_barycenter(queries, query_codes, rng=np.random.default_rng(1)),
        ref.to_barycenter(queries, query_codes, rng=np.random.default_rng(1)),
    )


def test_single_value_group_and_scalar_level():
    values, codes = np.array([2.0, 1.0, 1.0, 3.0]), np.array([0, 1, 1, 1])
    for method in METHODS:
        fast = qb.GroupQuantiles(values, codes, 2, quantile_method=method)
        for u in (0.0, 0.3, 0.5, 1.0):
            for g in (0, 1):
                assert fast.quantile(np.float64(u), g) == np.quantile(
                    fast.sorted_[g], u, method=method
                )


def test_unknown_quantile_method_is_named():
    with pytest.raises(ValueError, match="quantile_method"):
        qb.GroupQuantiles(np.ones(3), np.zeros(3, dtype=int), 1, quantile_method="hazen")


def _two_attribute_data(n: int = 900, seed: int = 0):
    rng = np.random.default_rng(seed)
    s1, s2 = rng.integers(0, 3, n), rng.integers(0, 2, n)
    X = np.round(rng.normal(size=(n, 2)) + np.c_[s1, 0.5 * s2], 1)  # ties in predictions
    y = X @ np.array([1.0, -0.5]) + 0.1 * rng.normal(size=n)
    return X, y, np.c_[s1, s2]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("sigma", [0.0, 1e-4])
def test_regressor_predictions_equal_reference(monkeypatch, method, sigma):
    X, y, s = _two_attribute_data()
    Xt, _, st = _two_attribute_data(300, seed=1)

    def run():
        model = WassersteinBarycenterRegressor(
            LinearRegression(),
            sigma=sigma,
            strength=[1.0, 0.7],
            quantile_method=method,
            random_state=0,
        ).fit(X, y, sensitive_features=s)
        return model.calibration_predictions_, model.predict(Xt, sensitive_features=st)

    fast = run()
    monkeypatch.setattr(wb_regression, "GroupQuantiles", _NpQuantileGroupQuantiles)
    ref = run()
    for a, b in zip(fast, ref, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("mode", ["geometric", "random"])
def test_ot_repair_equals_reference(monkeypatch, method, mode):
    X, _, s = _two_attribute_data()
    groups = s[:, 0] * 2 + s[:, 1]  # six groups

    def run():
        rep = OTRepair(strength=0.8, mode=mode, quantile_method=method, random_state=0)
        return rep.fit(X, sensitive_features=groups).transform(X, sensitive_features=groups)

    fast = run()
    monkeypatch.setattr(ot_repair, "GroupQuantiles", _NpQuantileGroupQuantiles)
    np.testing.assert_array_equal(fast, run())
