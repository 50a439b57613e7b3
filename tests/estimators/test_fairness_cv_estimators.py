"""FairnessCV beyond FairClassifier: the representation classifiers' grids and refusals."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression

from otfair.estimators import (
    CFairClassifier,
    DiscreteFairNFClassifier,
    FairnessCV,
    FairNormalizingFlowClassifier,
    LAFTRClassifier,
    SIPMClassifier,
    default_strengths,
)
from otfair.metrics import demographic_parity_gap
from otfair.penalties._representation import (
    ConditionalAlignment,
    LAFTRAdversary,
    SigmoidIPMCritic,
)

REPRESENTATION_GRIDS = [
    (LAFTRClassifier, LAFTRAdversary),
    (SIPMClassifier, SigmoidIPMCritic),
    (CFairClassifier, ConditionalAlignment),
]


@pytest.mark.parametrize(("cls", "adversary"), REPRESENTATION_GRIDS)
def test_a_representation_classifier_searches_its_adversary_grid(cls, adversary):
    """Strength 0 (no adversary) first, then increasing weights of the adversary."""
    grid = default_strengths(cls())
    np.testing.assert_array_equal(grid, adversary.strength_grids["additive"])
    assert grid[0] == 0.0
    assert np.all(np.diff(grid) > 0)
    assert len(grid) >= 5


@pytest.mark.parametrize("cls", [FairNormalizingFlowClassifier, DiscreteFairNFClassifier])
def test_the_flows_grid_stays_inside_their_convex_weight(cls):
    grid = default_strengths(cls())
    assert grid[0] == 0.0 and grid[-1] < 1.0  # gamma = 1 drops the task
    assert np.all(np.diff(grid) > 0)


def _data(n: int = 400):
    rng = np.random.default_rng(0)
    s = rng.integers(0, 2, n)
    X = np.c_[rng.normal(size=(n, 3)), 0.8 * s + rng.normal(size=n)]
    y = (X[:, 0] + 0.7 * s + 0.5 * rng.normal(size=n) > 0.3).astype(int)
    return X, y, s


def test_fairness_cv_runs_a_representation_classifier_at_its_default_grid():
    X, y, s = _data()
    base = LAFTRClassifier(epochs=3, random_state=0)
    search = FairnessCV(base, max_violation=0.5, cv=3).fit(X, y, sensitive_features=s)
    grid = default_strengths(base)
    measured = search.cv_results_["strength"][:-1]  # the constant's row last
    np.testing.assert_array_equal(measured, grid)
    assert search.strength_ in grid
    assert search.best_estimator_.strength == search.strength_
    # the refit's violation on the training rows, as FairnessCV measures it (check_refit)
    proba = search.best_estimator_.predict_proba(X)[:, 1]
    gap = demographic_parity_gap(y, (proba >= 0.5).astype(int), sensitive_features=s)
    assert search.refit_history_[-1]["train_violation"] == pytest.approx(gap, abs=1e-12)


@pytest.mark.parametrize("cls", [FairNormalizingFlowClassifier, DiscreteFairNFClassifier])
def test_a_group_wise_flow_is_refused_unless_the_group_is_a_column(cls):
    X, y, s = _data()
    with pytest.raises(ValueError, match=f"cannot score {cls.__name__}.*sensitive_column"):
        FairnessCV(cls(epochs=1), max_violation=0.1).fit(X, y, sensitive_features=s)


def test_a_fair_flow_with_the_group_in_a_column_is_searched():
    X, y, s = _data(300)
    Xs = np.c_[X, s]
    base = FairNormalizingFlowClassifier(epochs=10, sensitive_column=-1, random_state=0)
    search = FairnessCV(base, strengths=[0.0, 0.5], max_violation=1.0, cv=3)
    search.fit(Xs, y, sensitive_features=s)
    assert search.strength_ in (0.0, 0.5)
    # the held-out scores were measured: the strengths' rows and the constant's
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    np.testing.assert_array_equal(search.predict(Xs), search.best_estimator_.predict(Xs))


class _Weighted(ClassifierMixin, BaseEstimator):
    """A third-party estimator with a strength but neither a penalty nor a grid."""

    def __init__(self, strength: float = 1.0):
        self.strength = strength

    def fit(self, X, y, sensitive_features=None):
        self.model_ = LogisticRegression(C=1.0 / (1.0 + self.strength)).fit(X, y)
        self.classes_ = self.model_.classes_
        return self

    def predict_proba(self, X):
        return self.model_.predict_proba(X)

    def predict(self, X):
        return self.model_.predict(X)


def test_an_estimator_without_a_grid_is_asked_for_strengths():
    X, y, s = _data()
    with pytest.raises(ValueError, match=r"no default strength grid for _Weighted.*strengths="):
        FairnessCV(_Weighted(), max_violation=0.5).fit(X, y, sensitive_features=s)
    search = FairnessCV(_Weighted(), strengths=[0.0, 10.0], max_violation=1.0, cv=3)
    assert search.fit(X, y, sensitive_features=s).strength_ in (0.0, 10.0)


def test_adapfair_is_searched_with_its_fairer_strengths_the_smaller():
    from otfair.estimators import AdapFairClassifier
    from otfair.estimators._strength_grids import larger_is_fairer

    X, y, s = _data(300)
    aware = AdapFairClassifier(epochs=2, base_epochs=5, random_state=0)
    assert not larger_is_fairer(aware)
    grid = default_strengths(aware)
    assert grid[0] == 0.0 and grid[-1] == 1.0  # the Wasserstein term alone, the labels alone
    with pytest.raises(ValueError, match="aware AdapFairClassifier.*sensitive_column"):
        FairnessCV(aware, max_violation=0.1).fit(X, y, sensitive_features=s)
    blind = aware.set_params(mode="blind")
    with pytest.raises(ValueError, match="search='ascending'.*smaller"):
        FairnessCV(blind, max_violation=0.1, search="ascending").fit(X, y, sensitive_features=s)
    search = FairnessCV(blind, strengths=[0.1, 1.0], max_violation=1.0, cv=3, refine=1)
    search.fit(X, y, sensitive_features=s)
    assert search.strength_ in search.cv_results_["strength"]
    assert search.best_estimator_.strength == search.strength_
    assert search.predict(X).shape == (len(y),)
