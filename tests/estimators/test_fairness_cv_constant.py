"""FairnessCV(below_constant="constant"): the best constant predictor when no strength is."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.dummy import DummyClassifier, DummyRegressor

from otfair.estimators import CENet, FairClassifier, FairnessCV
from otfair.estimators._budget_rule import select_strength
from otfair.metrics import demographic_parity_gap


def _table(strength, score, bound, reference_bound=0.0, above=None) -> dict:
    """A cv_results_-like table: the strengths' rows, then the constant's (last)."""
    n = len(strength)
    return {
        "strength": np.append(np.asarray(strength, dtype=float), np.nan),
        "mean_test_score": np.append(np.asarray(score, dtype=float), 0.6),
        "mean_test_violation": np.append(np.asarray(bound, dtype=float), reference_bound),
        "reference": np.array([False] * n + [True]),
        "above_reference": np.append(
            np.ones(n, dtype=bool) if above is None else np.asarray(above), False
        ),
    }


def test_rule_returns_the_constant_when_no_strength_is_within_the_budget():
    table = _table([0.0, 1.0, 10.0], [0.9, 0.8, 0.7], [0.2, 0.1, 0.05])
    with pytest.raises(ValueError, match="No strength meets"):
        select_strength(table, 0.02)
    with pytest.raises(ValueError, match="No strength meets"):  # "warn" has none to choose
        select_strength(table, 0.02, below_constant="warn")
    with pytest.warns(UserWarning, match=r"No strength meets.*below_constant='constant'"):
        assert select_strength(table, 0.02, below_constant="constant") == 3
    # a strength within the budget and above the constant is chosen as before, silently
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert select_strength(table, 0.06, below_constant="constant") == 2


def test_rule_returns_the_constant_when_every_strength_in_budget_is_below_it():
    table = _table([0.0, 1.0, 10.0], [0.9, 0.8, 0.55], [0.2, 0.1, 0.0], above=[1, 1, 0])
    with pytest.raises(ValueError, match="below the best constant"):
        select_strength(table, 0.02)
    with pytest.warns(UserWarning, match="below the best constant"):
        assert select_strength(table, 0.02, below_constant="warn") == 2
    with pytest.warns(UserWarning, match=r"below the best constant.*instead"):
        assert select_strength(table, 0.02, below_constant="constant") == 3


def test_the_refusal_suggests_larger_strengths_only_when_the_largest_was_the_fairest():
    table = _table([0.0, 1.0, 10.0], [0.9, 0.8, 0.7], [0.2, 0.05, 0.1])
    with pytest.raises(ValueError, match=r"\(strength=1\)\. .*the strengths above 1 violate more"):
        select_strength(table, 0.02)
    table = _table([0.0, 1.0, 10.0], [0.9, 0.8, 0.7], [0.2, 0.1, 0.05])
    with pytest.raises(ValueError, match=r"\(strength=10\)\. .*or add larger `strengths`"):
        select_strength(table, 0.02)


def test_a_tie_with_the_constant_names_the_training_loss_that_excluded_it():
    """The held-out scores tie (0.6 = 0.6): the refusal says the training loss did it,
    not that 0.6 is below 0.6."""
    table = _table([0.0, 1.0], [0.9, 0.6], [0.2, 0.0], above=[1, 0])
    table["mean_train_loss"] = np.array([0.40, 0.66, 0.61])
    with pytest.raises(
        ValueError,
        match=r"scores 0\.6 as well, but its training loss \(0\.66\) "
        r"is above the constant's \(0\.61\)",
    ):
        select_strength(table, 0.02)


def test_rule_does_not_return_a_constant_over_the_budget():
    """A regressor's constant has an error gap: it is returned only within the budget."""
    table = _table([0.0, 1.0], [0.3, 0.2], [0.5, 0.4], reference_bound=0.3)
    with pytest.raises(ValueError, match="No strength meets"):
        select_strength(table, 0.1, below_constant="constant")
    with pytest.warns(UserWarning, match="below_constant='constant'"):
        assert select_strength(table, 0.35, below_constant="constant") == 2


@pytest.fixture(scope="module")
def unfair_data():
    """The label follows the group: a DP budget of 0.001 is out of every strength's reach."""
    rng = np.random.default_rng(0)
    n = 600
    s = rng.integers(0, 2, n)
    X = np.c_[rng.normal(size=(n, 2)), s + 0.1 * rng.normal(size=n)]
    y = (1.5 * s + X[:, 0] + 0.5 * rng.normal(size=n) > 1.0).astype(int)
    return X, y, s


def test_fit_returns_a_fitted_constant_classifier(unfair_data):
    X, y, s = unfair_data
    base = FairClassifier("gapreg", random_state=0)
    search = FairnessCV(base, strengths=[0.0, 1.0], max_violation=0.001, cv=3, refine=2)
    with pytest.raises(ValueError, match="No strength meets"):
        clone(search).fit(X, y, sensitive_features=s)
    search.set_params(below_constant="constant")
    with pytest.warns(UserWarning, match="Returning the best constant predictor"):
        search.fit(X, y, sensitive_features=s)
    assert isinstance(search.best_estimator_, DummyClassifier)
    assert np.isnan(search.strength_)
    assert search.best_params_ == {"constant": "prior"}
    assert search.best_index_ == len(search.cv_results_["strength"]) - 1
    assert bool(search.cv_results_["reference"][search.best_index_])
    # the chosen row is rank 1 (the ranking's own first was a strength over the budget)
    rank = search.cv_results_["rank_test_score"]
    assert rank[search.best_index_] == 1 and sorted(rank) == [1, 2, 3]
    # refine found nothing to bisect: only the two strengths and the constant were measured
    assert len(search.cv_results_["strength"]) == 3
    # the training base rate for every row: no DP gap, the majority class's accuracy
    proba = search.predict_proba(X)[:, 1]
    np.testing.assert_allclose(proba, np.mean(y), rtol=1e-12)
    pred = search.predict(X)
    assert demographic_parity_gap(y, pred, sensitive_features=s) == 0.0
    assert search.score(X, y) == pytest.approx(max(np.mean(y), 1 - np.mean(y)))
    # weighted as the scorer weighs (a Pipeline's score routes sample_weight here)
    weights = np.where(y == 1, 3.0, 1.0)
    majority = float(np.mean(y) >= 0.5)
    expected = np.average(y == majority, weights=weights)
    assert search.score(X, y, sample_weight=weights) == pytest.approx(expected)
    assert search.refit_history_ == [
        {"strength": pytest.approx(np.nan, nan_ok=True), "train_violation": 0.0}
    ]
    assert search.classes_.tolist() == [0, 1]
    assert search.n_features_in_ == X.shape[1]


def _spread(y_true, y_score, *, sensitive_features):
    """A violation measure that only a constant prediction meets exactly: the spread."""
    return float(np.std(y_score))


def _always_one(y_true, y_score, *, sensitive_features):
    return 1.0


def test_a_regressor_constant_is_returned_only_within_its_own_violation(unfair_data):
    """CENet's constant predicts the training mean; its measured violation decides."""
    X, _, s = unfair_data
    target = X[:, 0] + 2.0 * s
    net = CENet(epochs=2, random_state=0)
    search = FairnessCV(
        net,
        strengths=[0.0],
        max_violation=1e-9,
        metric=_spread,
        cv=3,
        pooled_violation=False,  # each fold's constant: spread 0 (pooled: the fold means)
        below_constant="constant",
    )
    with pytest.warns(UserWarning, match="below_constant='constant'"):
        search.fit(X, target, sensitive_features=s)
    assert search.cv_results_["test_violation"][0] > 1e-9  # the net's spread
    assert search.cv_results_["test_violation"][-1] < 1e-12  # rounding of a constant
    assert isinstance(search.best_estimator_, DummyRegressor)
    assert search.best_params_ == {"constant": "mean"}
    np.testing.assert_allclose(search.predict(X[:5]), np.mean(target), rtol=1e-12)
    # a measure the constant fails too: nothing is within the budget, fit says so
    with pytest.raises(ValueError, match="No strength meets"):
        clone(search).set_params(metric=_always_one).fit(X, target, sensitive_features=s)


def test_default_strengths_of_an_estimator_without_a_strength_says_so():
    # LogisticRegression has a `penalty` parameter (deprecated, 'deprecated' by default
    # in recent scikit-learn): the message used to be about that penalty's value
    from sklearn.linear_model import LogisticRegression

    from otfair.estimators import default_strengths

    with pytest.raises(ValueError, match="LogisticRegression has no strength parameter"):
        default_strengths(LogisticRegression())


def test_a_continuous_attribute_is_budgeted_on_its_correlation_not_on_groups():
    # dp_gap would make each value a group of one row (every violation 1, a flood of
    # small-group warnings): "auto" takes the correlation measure, dp_gap is refused
    from otfair.metrics import pdp_violation

    rng = np.random.default_rng(0)
    X, age = rng.normal(size=(300, 3)), rng.normal(size=300)
    y = (X[:, 0] + age + rng.normal(size=300) > 0).astype(int)
    base = FairClassifier("norm", sensitive_type="continuous", random_state=0)
    search = FairnessCV(base, strengths=[0.0, 0.5], max_violation=0.5, cv=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no small-group warning
        search.fit(X, y, sensitive_features=age)
    assert search.metric_ == "pdp_violation"
    refit = search.best_estimator_.predict_proba(X)[:, 1]
    assert search.refit_history_[-1]["train_violation"] == pytest.approx(
        pdp_violation(y, refit, sensitive_features=age)
    )
    with pytest.raises(ValueError, match=r"`metric`='dp_gap' compares groups.*pdp_violation"):
        clone(search).set_params(metric="dp_gap").fit(X, y, sensitive_features=age)


def _with_small_group(n: int, small: int):
    """``n`` rows whose label follows feature 0, of which the last ``small`` are group b."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3))
    return X, (X[:, 0] > 0).astype(int), np.array(["a"] * (n - small) + ["b"] * small)


def test_a_group_absent_from_a_held_out_fold_is_named_before_any_fit():
    # 3 rows of group "b" cannot fill 5 held-out folds: the metric used to fail deep
    # inside ("found only 1 group") after the folds' fits
    X, y, s = _with_small_group(200, 3)
    search = FairnessCV(FairClassifier("gapreg", random_state=0), max_violation=0.1, cv=5)
    with pytest.raises(
        ValueError, match=r"fold \d has no row of the sensitive group 'b' \(3 rows"
    ):
        search.fit(X, y, sensitive_features=s)
    # three folds hold it (one row each): the search runs
    search.set_params(cv=3, strengths=[0.0, 1.0], max_violation=1.0)
    search.fit(X, y, sensitive_features=s)
    assert search.n_splits_ == 3
    # three groups: a fold without the small one still compares the other two
    s3 = np.array(["c"] * 100 + ["a"] * 96 + ["b"] * 4)  # a fold holds no b
    base = FairClassifier("norm", random_state=0)
    multi = FairnessCV(base, strengths=[0.0, 0.5], max_violation=1.0, cv=5)
    multi.fit(X, y, sensitive_features=s3)
    assert multi.n_splits_ == 5


def test_the_folds_warnings_are_said_once_each_with_their_count():
    # a 12-row group: every fold fit and every fold measure warned (about 40 warnings
    # of 2 texts); each distinct text is now said once, with how often it came (the
    # refit's own warnings come as they are)
    X, y, s = _with_small_group(300, 12)
    search = FairnessCV(FairClassifier("gapreg", random_state=0), max_violation=1.0, cv=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        search.fit(X, y, sensitive_features=s)
    small = [str(w.message) for w in caught if "min_group_size" in str(w.message)]
    counted = [m for m in small if "times in the folds' fits and measures" in m]
    assert len(counted) == len(set(counted)) == 2 and all(m.endswith(").") for m in counted)
    assert sum(int(m.split(" (")[-1].split(" ")[0]) for m in counted) > len(small)


def test_a_module_filter_still_silences_the_folds_warnings():
    # re-emitted from their own module: a user's `module=` filter applies to them
    X, y, s = _with_small_group(300, 12)
    search = FairnessCV(FairClassifier("gapreg", random_state=0), max_violation=1.0, cv=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", module="otfair")
        search.fit(X, y, sensitive_features=s)
    assert not [str(w.message) for w in caught if "min_group_size" in str(w.message)]
