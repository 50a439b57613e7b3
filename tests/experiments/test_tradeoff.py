"""fairness_tradeoff: one stacked fit gives the same table as separate fits."""

import numpy as np
import pytest

from otfair.estimators import FairClassifier, ReductionClassifier
from otfair.metrics import accuracy, demographic_parity_gap
from otfair_lab.experiments.tradeoff import fairness_tradeoff, pareto_mask


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    s = (rng.random(n) < 0.5).astype(int)
    y = (X[:, 0] + s > 0.5).astype(int)
    return X, y, s


def test_table_matches_separate_fits_and_plot():
    X, y, s = _data()
    est = FairClassifier("gapreg", epochs=2, batch_size=100, random_state=0)
    table, fig = fairness_tradeoff(est, [0.0, 1.0, 5.0], X, y, s, X, y, s)
    assert list(table["strength"]) == [0.0, 1.0, 5.0]
    for a, row in zip([0.0, 1.0, 5.0], table.itertuples(), strict=True):
        p = est.set_params(strength=a).fit(X, y, sensitive_features=s).predict_proba(X)[:, 1]
        assert row.accuracy == pytest.approx(accuracy(y, p), abs=1 / len(y))
        assert row.dp == pytest.approx(
            demographic_parity_gap(y, p, sensitive_features=s), abs=1e-5
        )
    np.testing.assert_array_equal(table["pareto"], pareto_mask(table["dp"], table["accuracy"]))
    assert fig.axes[0].get_xlabel().startswith("dp")


def test_other_estimators_fit_per_strength():
    X, y, s = _data(200)
    table, _ = fairness_tradeoff(
        ReductionClassifier(random_state=0),
        [0.1, 0.02],
        X,
        y,
        s,
        X,
        y,
        s,
        violation="pdp",
        param="eps",
    )
    assert len(table) == 2 and table["pareto"].any()


def test_pareto_mask_hand_case():
    # (violation, accuracy): b dominates a; c and b are incomparable; d equals b
    v = np.array([0.2, 0.1, 0.05, 0.1])
    a = np.array([0.8, 0.85, 0.7, 0.85])
    np.testing.assert_array_equal(pareto_mask(v, a), [False, True, True, True])


def test_errors():
    X, y, s = _data(100)
    est = FairClassifier("gapreg", epochs=1)
    with pytest.raises(ValueError, match="violation"):
        fairness_tradeoff(est, [0.0], X, y, s, X, y, s, violation="eo")
    with pytest.raises(ValueError, match="strengths"):
        fairness_tradeoff(est, [], X, y, s, X, y, s)
    with pytest.raises(ValueError, match="param"):
        fairness_tradeoff(est, [0.1], X, y, s, X, y, s, param="alpha")
