"""OTRepair (Gordaliza et al. 2019) against scipy, POT-free hand checks and sklearn."""

from __future__ import annotations

import numpy as np
import pytest
from _bad_inputs import check_bad_fit_inputs
from scipy.optimize import linear_sum_assignment
from scipy.stats import wasserstein_distance
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

from otfair.estimators.preprocessing.ot_repair import OTRepair


def _toy(n: int = 400, d: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, d)) + np.outer(s, np.linspace(1.0, 2.0, d))
    return X, s


def _max_w1(X: np.ndarray, s: np.ndarray) -> float:
    return max(wasserstein_distance(X[s == 0, j], X[s == 1, j]) for j in range(X.shape[1]))


def test_one_dimensional_repair_is_feldmans_geometric_repair():
    # equal group sizes: T_0(x_(i)) = x_(i)/2 + y_(i)/2 (the median of the order statistics)
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=50), rng.normal(2.0, 3.0, size=50)
    X = np.r_[x, y][:, None]
    s = np.r_[np.zeros(50), np.ones(50)]
    out = OTRepair(quantile_method="inverted_cdf", random_state=0).fit_transform(
        X, sensitive_features=s
    )
    expected = 0.5 * np.sort(x) + 0.5 * np.sort(y)
    np.testing.assert_allclose(np.sort(out[:50, 0]), expected, atol=1e-12)
    np.testing.assert_allclose(np.sort(out[50:, 0]), expected, atol=1e-12)


def test_joint_repair_matches_the_assignment_barycenter():
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(40, 2)), rng.normal(size=(40, 2)) + [3.0, -1.0]
    X, s = np.r_[x, y], np.r_[np.zeros(40), np.ones(40)]
    out = OTRepair(method="joint", random_state=0).fit_transform(X, sensitive_features=s)
    cost = ((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)
    rows, cols = linear_sum_assignment(cost)  # scipy's exact assignment, independent of POT
    bary = 0.5 * x[rows] + 0.5 * y[cols]
    np.testing.assert_allclose(out[:40][rows], bary, atol=1e-10)
    np.testing.assert_allclose(out[40:][cols], bary, atol=1e-10)


def test_partial_repair_is_monotone_in_strength():
    X, s = _toy()
    for mode in ("geometric", "random"):
        w = [
            _max_w1(
                OTRepair(lam, mode=mode, random_state=0).fit_transform(X, sensitive_features=s), s
            )
            for lam in (0.0, 0.25, 0.5, 0.75, 1.0)
        ]
        assert all(a > b for a, b in zip(w[:-1], w[1:], strict=True)), (mode, w)
    geo = OTRepair(0.5, random_state=0).fit(X, sensitive_features=s)
    total = clone(geo).set_params(strength=1.0).fit(X, sensitive_features=s)
    np.testing.assert_allclose(
        geo.transform(X, sensitive_features=s),
        0.5 * X + 0.5 * total.transform(X, sensitive_features=s),
        atol=1e-12,
    )


def test_random_repair_repairs_a_strength_share_of_rows():
    X, s = _toy(2000)
    out = OTRepair(0.3, mode="random", random_state=0).fit_transform(X, sensitive_features=s)
    changed = np.any(out != X, axis=1).mean()
    assert abs(changed - 0.3) < 0.05


def test_columns_pass_through_and_seeded():
    X, s = _toy()
    rep = OTRepair(columns=[1], random_state=4).fit(X, sensitive_features=s)
    out = rep.transform(X, sensitive_features=s)
    np.testing.assert_array_equal(out[:, [0, 2]], X[:, [0, 2]])
    again = clone(rep).fit(X, sensitive_features=s).transform(X, sensitive_features=s)
    np.testing.assert_array_equal(out, again)


def test_bad_inputs():
    X, s = _toy(100)
    check_bad_fit_inputs(
        lambda X_, s_: OTRepair().fit(X_, sensitive_features=s_), X, s, n_short=10, nan_at=(3, 1)
    )
    with pytest.raises(ValueError, match="strength"):
        OTRepair(2.0).fit(X, sensitive_features=s)
    with pytest.raises(ValueError, match="two groups"):
        OTRepair(method="joint").fit(X, sensitive_features=np.arange(100) % 3)
    rep = OTRepair().fit(X, sensitive_features=s)
    with pytest.raises(ValueError, match="not seen during fit"):
        rep.transform(X[:2], sensitive_features=[0, 5])
    with pytest.raises(ValueError, match="features"):
        rep.transform(X[:, :2], sensitive_features=s)


@pytest.mark.slow
def test_adult_total_repair_and_downstream_dp():
    from otfair.datasets import load_dataset

    split = load_dataset("adult").split(random_state=0)
    rng = np.random.default_rng(0)
    keep = rng.choice(len(split.y_train), size=10000, replace=False)
    X, y, s = split.X_train[keep], split.y_train[keep], split.s_train[keep]
    continuous = [
        i
        for i, f in enumerate(split.feature_names)
        if f in ("age", "education-num", "capital-gain", "capital-loss", "hours-per-week")
    ]
    assert len(continuous) == 5
    dps = []
    for lam in (0.0, 0.5, 1.0):
        rep = OTRepair(lam, random_state=0).fit(X, sensitive_features=s)
        R = rep.transform(X, sensitive_features=s)
        if lam == 1.0:
            assert _max_w1(R[:, continuous], s) <= 0.01
            # held out, the groups' repaired marginals differ by no more than two samples
            # of ONE distribution of these sizes would (the floor: W1 after shuffling the
            # group labels of the repaired test rows), and far less than before repair
            Rt = rep.transform(split.X_test, sensitive_features=split.s_test)[:, continuous]
            st = split.s_test
            floor = np.mean([_max_w1(Rt, rng.permutation(st)) for _ in range(10)])
            raw = _max_w1(split.X_test[:, continuous], st)
            assert _max_w1(Rt, st) <= 2.0 * floor and _max_w1(Rt, st) <= raw / 5, (floor, raw)
        clf = LogisticRegression(max_iter=500).fit(R, y)
        pred = clf.predict(rep.transform(split.X_test, sensitive_features=split.s_test))
        dps.append(abs(pred[split.s_test == 0].mean() - pred[split.s_test == 1].mean()))
    assert dps[0] > dps[1] > dps[2], dps
