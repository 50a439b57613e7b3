"""FairnessCV's ascending, warm-started search against the grid it shortens."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from tests.estimators._classif_data import two_group_data

from otfair.estimators import FairClassifier, FairnessCV
from otfair.estimators._fairness_cv_search import is_settled


def _data(n: int = 600, seed: int = 0):
    X, y, s = two_group_data(n=n, seed=seed, d=5)
    return X, y, s


@pytest.fixture(scope="module")
def adult(data_dir):
    """3,000 standardized Adult rows (sex), where OTF's trade-off is a real one."""
    from sklearn.preprocessing import StandardScaler

    from otfair.datasets import load_dataset

    split = load_dataset("adult").split(test_size=0.3, random_state=0)
    rows = np.sort(np.random.default_rng(0).choice(len(split.y_train), 3000, replace=False))
    X = StandardScaler().fit_transform(split.X_train[rows])
    return X, np.asarray(split.y_train)[rows], np.asarray(split.s_train)[rows]


@pytest.fixture(scope="module")
def searches(adult):
    """The same OTF search (two groups, DP: L-BFGS) by the grid and by the ascent."""
    X, y, s = adult
    base = FairClassifier("otf", random_state=0)
    out = {}
    for search in ("grid", "ascending"):
        cv = FairnessCV(base, max_violation=0.03, cv=3, search=search)
        out[search] = cv.fit(X, y, sensitive_features=s)
    return out, adult


def test_the_ascent_chooses_the_grids_strength_from_fewer_fits(searches):
    out, _ = searches
    grid, ascent = out["grid"], out["ascending"]
    assert ascent.strength_ == grid.strength_
    grid_strengths = grid.cv_results_["strength"][:-1]
    done = ascent.cv_results_["strength"][:-1]
    assert len(done) < len(grid_strengths)  # it stopped early
    np.testing.assert_array_equal(done, grid_strengths[: len(done)])  # a prefix
    # up to the choice, warm-started fits end where the cold ones do, to the solver's
    # tol: OTF's objective is flat along some directions (a 1e-6 change of the
    # objective moves a few probabilities by ~0.03), so the measures agree, not bitwise
    k = ascent.best_index_ + 1
    for key, atol in (
        ("mean_test_score", 5e-3),
        ("test_violation", 1e-2),
        ("mean_train_loss", 1e-3),
    ):
        np.testing.assert_allclose(
            ascent.cv_results_[key][:k], grid.cv_results_[key][:k], rtol=0, atol=atol
        )
    # the constant's row is measured alike
    assert ascent.cv_results_["mean_test_score"][-1] == grid.cv_results_["mean_test_score"][-1]


def test_the_ascents_model_is_a_fit_from_scratch_at_its_strength(searches):
    out, (X, y, s) = searches
    best = out["ascending"].best_estimator_
    assert best.get_params()["warm_start"] is False  # the user's setting, not the search's
    cold = clone(best).fit(X, y, sensitive_features=s)
    np.testing.assert_array_equal(best.predict_proba(X), cold.predict_proba(X))
    assert not hasattr(best, "_kept_fixed_batches")  # no data work kept on the model


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.filterwarnings("ignore:.*below the best constant")
def test_adam_or_capped_fits_take_the_grid():
    """Warm starts that would not end at a cold fit's solution are not used."""
    X, y, s = _data(600)
    for base in (
        FairClassifier("otf", solver="adam", epochs=3, random_state=0),
        FairClassifier("otf", epochs=2, random_state=0),  # L-BFGS stopped at its cap
    ):
        kw = {"strengths": [0.0, 0.01, 0.1], "max_violation": 1.0, "cv": 3}
        auto = FairnessCV(base, **kw).fit(X, y, sensitive_features=s)
        grid = FairnessCV(base, search="grid", **kw).fit(X, y, sensitive_features=s)
        for key in ("mean_test_score", "test_violation"):
            np.testing.assert_array_equal(auto.cv_results_[key], grid.cv_results_[key])


def _table(strength, score, violation, above=None):
    strength = np.asarray([*strength, np.nan], dtype=float)
    n = len(strength)
    return {
        "strength": strength,
        "mean_test_score": np.asarray([*score, 0.5], dtype=float),
        "upper_test_violation": np.asarray([*violation, 0.0], dtype=float),
        "above_reference": np.asarray(above or [True] * (n - 1) + [True]),
        "reference": np.asarray([False] * (n - 1) + [True]),
    }


@pytest.mark.parametrize(
    ("score", "violation", "settled"),
    [
        ([0.9, 0.85], [0.3, 0.1], False),  # nothing within the budget yet
        ([0.9, 0.85], [0.3, 0.01], False),  # the first eligible: the next may score more
        ([0.9, 0.85, 0.84], [0.3, 0.01, 0.0], True),  # past it the score fell: stop
        ([0.9, 0.85, 0.86], [0.3, 0.01, 0.0], False),  # it rose again: go on
    ],
)
def test_is_settled(score, violation, settled):
    table = _table(np.arange(len(score)) / 10, score, violation)
    assert is_settled(table, 0.02) is settled


def test_the_light_measures_are_scikit_learns():
    """training_loss and accuracy skip scikit-learn's checks, not its arithmetic."""
    from sklearn.metrics import get_scorer, log_loss

    from otfair.estimators._fairness_cv_search import accuracy, training_loss

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 500)
    p = rng.random(500)
    p[:3] = [0.0, 1.0, 1e-20]  # clipped at 1e-15
    expected = log_loss(y, np.clip(p, 1e-15, 1 - 1e-15), labels=[0, 1])
    np.testing.assert_allclose(training_loss(y, p, "classification"), expected, rtol=1e-12)
    X, y2, s = two_group_data(n=300, seed=1, d=3)
    est = FairClassifier(random_state=0).fit(X, y2)
    assert accuracy(est, X, y2) == get_scorer("accuracy")(est, X, y2)
