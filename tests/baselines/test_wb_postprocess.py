"""WassersteinBarycenterClassifier (Xian et al. 2023) against brute force and fairlearn."""

from __future__ import annotations

import numpy as np
import pytest
from _bad_inputs import check_bad_fit_inputs
from sklearn.linear_model import LogisticRegression

from otfair.estimators.postprocessing.wb_postprocess import WassersteinBarycenterClassifier


def _toy(n: int = 3000, seed: int = 0):
    rng = np.random.default_rng(seed)
    s = (rng.uniform(size=n) < 0.35).astype(int)
    X = rng.normal(size=(n, 3)) + np.outer(s, [1.0, 0.5, 0.0])
    logits = X @ np.array([1.5, -1.0, 0.7]) - 0.5
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-logits))).astype(int)
    return X, y, s


def _expected_error(accept: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean(accept * (1 - y) + (1 - accept) * y))


def test_exact_rates_on_the_calibration_set():
    X, y, s = _toy()
    base = LogisticRegression().fit(X, y)
    model = WassersteinBarycenterClassifier(base, prefit=True).fit(X, y, sensitive_features=s)
    acc = model.predict_acceptance(X, sensitive_features=s)
    rates = [acc[s == g].mean() for g in (0, 1)]
    np.testing.assert_allclose(rates, model.rates_, atol=1e-12)
    assert model.rates_[0] == pytest.approx(model.rates_[1])


def test_common_rate_is_the_brute_force_optimum():
    X, y, s = _toy()
    base = LogisticRegression().fit(X, y)
    p = base.predict_proba(X)[:, 1]
    model = WassersteinBarycenterClassifier(base, prefit=True).fit(X, y, sensitive_features=s)
    # independent objective: plug-in error of accepting the top r share of each group,
    # with the calibrated scores as the label probabilities
    best = np.inf
    for r in np.linspace(0, 1, 2001):
        err = 0.0
        for g in (0, 1):
            q = np.sort(p[s == g])[::-1]
            k = int(round(r * len(q)))
            err += (np.sum(1 - q[:k]) + np.sum(q[k:])) / len(p)
        best = min(best, err)
    acc = model.predict_acceptance(X, sensitive_features=s)
    ours = float(np.mean(acc * (1 - p) + (1 - acc) * p))
    assert ours <= best + 1e-3


def test_matches_fairlearn_threshold_optimizer_at_dp():
    from fairlearn.postprocessing import ThresholdOptimizer

    X, y, s = _toy()
    base = LogisticRegression().fit(X, y)
    ours = WassersteinBarycenterClassifier(base, prefit=True).fit(X, y, sensitive_features=s)
    theirs = ThresholdOptimizer(
        estimator=base,
        constraints="demographic_parity",
        prefit=True,
        predict_method="predict_proba",
    ).fit(X, y, sensitive_features=s)
    err_ours = _expected_error(ours.predict_acceptance(X, sensitive_features=s), y)
    err_theirs = _expected_error(theirs._pmf_predict(X, sensitive_features=s)[:, 1], y)
    assert abs(err_ours - err_theirs) < 0.01


def test_strength_zero_is_the_bayes_rule_and_relaxation_is_monotone():
    X, y, s = _toy()
    base = LogisticRegression().fit(X, y)
    free = WassersteinBarycenterClassifier(base, strength=0.0, prefit=True, random_state=0)
    pred = free.fit(X, y, sensitive_features=s).predict(X, sensitive_features=s)
    np.testing.assert_array_equal(pred, base.predict(X))
    gaps = []
    for lam in (0.0, 0.5, 0.9, 1.0):
        m = free.set_params(strength=lam).fit(X, y, sensitive_features=s)
        gaps.append(m.rates_.max() - m.rates_.min())
    assert gaps[0] > gaps[1] > gaps[2] > gaps[3] - 1e-12
    np.testing.assert_allclose(gaps[1], 0.5 * gaps[0], atol=1e-9)


def test_ties_are_randomized_to_exact_rates_and_seeded():
    rng = np.random.default_rng(0)
    s = rng.integers(0, 2, 1000)
    X = (rng.integers(0, 4, size=(1000, 1)) + s[:, None]).astype(float)  # few scores
    y = (rng.uniform(size=1000) < X[:, 0] / 5).astype(int)
    base = LogisticRegression().fit(X, y)
    m = WassersteinBarycenterClassifier(base, prefit=True, random_state=1)
    m.fit(X, y, sensitive_features=s)
    acc = m.predict_acceptance(X, sensitive_features=s)
    assert acc[s == 0].mean() == pytest.approx(acc[s == 1].mean(), abs=1e-12)
    np.testing.assert_array_equal(
        m.predict(X, sensitive_features=s), m.predict(X, sensitive_features=s)
    )


def test_bad_inputs():
    X, y, s = _toy(200)
    model = WassersteinBarycenterClassifier(LogisticRegression(), random_state=0)
    check_bad_fit_inputs(lambda X_, s_: model.fit(X_, y, sensitive_features=s_), X, s, n_short=20)
    with pytest.raises(ValueError, match="binary"):  # three classes
        model.fit(X, y + (np.arange(len(y)) % 3 == 0), sensitive_features=s)
    model.fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="not seen during fit"):
        model.predict(X[:2], sensitive_features=[0, 9])


def test_adult_dp_gap_at_full_strength():
    from otfair.datasets import load_dataset

    split = load_dataset("adult").split(random_state=0)
    keep = np.random.default_rng(0).choice(len(split.y_train), size=15000, replace=False)
    X, y, s = split.X_train[keep], split.y_train[keep], split.s_train[keep]
    model = WassersteinBarycenterClassifier(LogisticRegression(max_iter=500), random_state=0)
    model.fit(X, y, sensitive_features=s)
    pred = model.predict(split.X_test, sensitive_features=split.s_test)
    st = split.s_test
    assert abs(pred[st == 0].mean() - pred[st == 1].mean()) <= 0.02
    base = model.estimator_.predict(split.X_test)
    assert abs(base[st == 0].mean() - base[st == 1].mean()) > 0.1
