"""FairnessCV's refit, checked against the budget on its own training rows (check_refit)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from tests.estimators._classif_data import two_group_data

from otfair import metrics as M
from otfair.estimators import FairClassifier, FairnessCV
from otfair.estimators._fairness_cv_refit import checked_refit

STRENGTHS = [0.0, 0.3, 3.0, 30.0, 300.0]


@pytest.fixture(scope="module")
def data():
    return two_group_data(n=600, seed=0, d=5)


@pytest.fixture(scope="module")
def training_gaps(data):
    """The DP gap of each strength's fit on its own training rows, fitted here directly."""
    X, y, s = data
    base = FairClassifier("gapreg", random_state=0)
    gaps = []
    for value in STRENGTHS:
        fit = clone(base).set_params(strength=value).fit(X, y, sensitive_features=s)
        gaps.append(M.demographic_parity_gap(y, fit.predict_proba(X)[:, 1], sensitive_features=s))
    return np.asarray(gaps)


def _table(n: int) -> dict:
    """A ``cv_results_`` table of ``STRENGTHS`` (every row eligible) and the constant's."""
    return {
        "strength": np.asarray([*STRENGTHS[:n], np.nan]),
        "mean_test_score": np.linspace(0.9, 0.7, n + 1),
        "mean_test_violation": np.zeros(n + 1),
        "upper_test_violation": np.zeros(n + 1),
        "test_violation": np.zeros(n + 1),
        "reference": np.asarray([False] * n + [True]),
        "above_reference": np.asarray([True] * n + [False]),
    }


def _refit(data, budget: float, index: int = 0, below_constant: str = "raise"):
    X, y, s = data
    return checked_refit(
        FairClassifier("gapreg", random_state=0),
        X,
        y,
        s,
        results=_table(len(STRENGTHS)),
        index=index,
        param="strength",
        max_violation=budget,
        metric=M.demographic_parity_gap,
        task="classification",
        below_constant=below_constant,
    )


def test_the_training_gap_falls_with_the_strength(training_gaps):
    """The premise of the cases below: the penalty narrows the gap on the training rows."""
    assert training_gaps[0] > 0.05
    assert training_gaps[-1] < training_gaps[0] / 2


def test_a_refit_over_the_budget_moves_to_the_first_larger_strength_within_it(data, training_gaps):
    budget = float((training_gaps[0] + training_gaps[-1]) / 2)
    first_within = int(np.flatnonzero(training_gaps <= budget)[0])
    assert first_within > 0
    done = _refit(data, budget)
    assert done.index == first_within
    assert [h["strength"] for h in done.history] == STRENGTHS[: first_within + 1]
    np.testing.assert_allclose(
        [h["train_violation"] for h in done.history], training_gaps[: first_within + 1]
    )
    assert done.estimator.strength == STRENGTHS[first_within]
    assert done.history[-1]["train_violation"] <= budget < done.history[-2]["train_violation"]


def test_a_refit_within_the_budget_is_kept_as_it_is(data, training_gaps):
    done = _refit(data, float(training_gaps[0]) + 1e-9)
    assert done.index == 0 and len(done.history) == 1
    assert done.estimator.strength == 0.0


def test_none_within_the_budget_keeps_the_least_violating_and_warns(data, training_gaps):
    with pytest.warns(UserWarning, match="over max_violation=1e-09 at every strength"):
        done = _refit(data, 1e-9, index=1)
    assert len(done.history) == len(STRENGTHS) - 1  # the chosen one and every larger one
    least = 1 + int(np.argmin(training_gaps[1:]))
    assert done.index == least
    assert done.history[least - 1]["train_violation"] == pytest.approx(training_gaps[least])


def test_only_eligible_rows_are_moved_to(data, training_gaps):
    """A larger strength over the budget on the folds, or below the constant, is skipped."""
    X, y, s = data
    table = _table(len(STRENGTHS))
    table["upper_test_violation"][1] = 1.0  # over the budget on the folds
    table["above_reference"][2] = False  # below the constant
    budget = float(training_gaps[0]) / 10
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        done = checked_refit(
            FairClassifier("gapreg", random_state=0),
            X,
            y,
            s,
            results=table,
            index=0,
            param="strength",
            max_violation=budget,
            metric=M.demographic_parity_gap,
            task="classification",
        )
    assert [h["strength"] for h in done.history][:2] == [0.0, 30.0]


def test_fairness_cv_keeps_a_refit_within_the_budget_on_its_training_rows(data):
    """End to end: the attributes describe the refit kept, whose training gap is in budget."""
    X, y, s = data
    base = FairClassifier("gapreg", random_state=0)
    search = FairnessCV(base, strengths=STRENGTHS, max_violation=0.2, cv=3).fit(
        X, y, sensitive_features=s
    )
    last = search.refit_history_[-1]
    assert search.strength_ == last["strength"] == search.best_estimator_.strength
    assert search.best_params_ == {"strength": search.strength_}
    assert search.cv_results_["strength"][search.best_index_] == search.strength_
    gap = M.demographic_parity_gap(y, search.predict_proba(X)[:, 1], sensitive_features=s)
    assert gap == pytest.approx(last["train_violation"])
    assert gap <= 0.2
    assert search.refit_time_ > 0


def test_check_refit_false_keeps_the_cross_validated_choice(data):
    X, y, s = data
    base = FairClassifier("gapreg", random_state=0)
    kwargs = {"strengths": STRENGTHS, "max_violation": 0.2, "cv": 3}
    plain = FairnessCV(base, check_refit=False, **kwargs).fit(X, y, sensitive_features=s)
    assert len(plain.refit_history_) == 1
    assert plain.strength_ == plain.refit_history_[0]["strength"]
    assert plain.best_estimator_.strength == plain.strength_


def test_below_constant_warn_may_move_to_a_row_below_the_constant(data, training_gaps):
    """Under ``below_constant="warn"`` the choice may take such a row, so the refit may too."""
    X, y, s = data
    table = _table(len(STRENGTHS))
    table["above_reference"][1:] = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        kwargs = {"results": table, "index": 0, "param": "strength", "task": "classification"}
        kwargs.update(max_violation=float(training_gaps[0]) / 10, metric=M.demographic_parity_gap)
        raised = checked_refit(FairClassifier("gapreg", random_state=0), X, y, s, **kwargs)
        warned = checked_refit(
            FairClassifier("gapreg", random_state=0), X, y, s, below_constant="warn", **kwargs
        )
    assert [h["strength"] for h in raised.history] == [0.0]
    assert [h["strength"] for h in warned.history][:2] == [0.0, 0.3]


def test_the_fairer_candidates_follow_the_strength_direction():
    """A refit over the budget moves to the next fairer eligible strength, nearest first."""
    from otfair.estimators._fairness_cv_refit import _fairer_candidates

    results = {
        "strength": np.array([0.0, 0.1, 0.3, 0.5, 0.9, np.nan]),
        "mean_test_score": np.array([0.8, 0.82, 0.84, 0.85, 0.86, 0.7]),
        "mean_test_violation": np.array([0.0, 0.01, 0.02, 0.04, 0.08, 0.0]),
        "reference": np.array([False] * 5 + [True]),
        "above_reference": np.array([False, True, True, True, True, False]),
    }
    # a penalty's weight: the larger strengths are fairer (none above 0.9 is eligible)
    assert _fairer_candidates(results, 1, 0.05, "raise") == [2, 3]
    # AdapFair's: the smaller ones; strength 0 is below the constant, so excluded
    assert _fairer_candidates(results, 3, 0.05, "raise", larger_is_fairer=False) == [2, 1]
    assert _fairer_candidates(results, 3, 0.05, "warn", larger_is_fairer=False) == [2, 1, 0]
