"""FairnessCV's ascending, warm-started search against the grid it shortens."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.base import clone
from tests.estimators._classif_data import two_group_data

from otfair.estimators import FairClassifier, FairnessCV
from otfair.estimators._fairness_cv_refine import next_midpoint, refinement_grid
from otfair.estimators._fairness_cv_search import WarmFolds, is_settled


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
def all_searches(adult):
    """The same OTF search (two groups, DP: L-BFGS) by the grid and by the ascent.

    Keyed by ``(search, refine)``: without refinement (the default, the grid's strengths
    only) and with two rounds.
    """
    X, y, s = adult
    base = FairClassifier("otf", random_state=0)
    out = {}
    for search in ("grid", "ascending"):
        for refine in (0, 2):
            cv = FairnessCV(base, max_violation=0.03, cv=3, search=search, refine=refine)
            out[search, refine] = cv.fit(X, y, sensitive_features=s)
    return out, adult


@pytest.fixture(scope="module")
def searches(all_searches):
    """The grid and the ascent without refinement (the grid's strengths only)."""
    out, adult = all_searches
    return {search: out[search, 0] for search in ("grid", "ascending")}, adult


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


# ------------------------------------------------------------------- refinement
def test_refinement_grid_splits_each_step_evenly():
    grid = np.array([0.0, 0.001, 0.01, 0.5, 1.0, 10.0])
    full, index = refinement_grid(grid, 2)
    np.testing.assert_array_equal(full[index], grid)  # the grid's strengths, in place
    assert len(full) == len(grid) + 3 * 4  # 3 midpoints in each of the 4 positive steps
    assert (np.diff(full) > 0).all()
    steps_of = ((0.001, 0.01, False), (0.01, 0.5, False), (0.5, 1.0, True), (1.0, 10.0, True))
    for a, b, log in steps_of:
        points = full[(full >= a) & (full <= b)]
        assert len(points) == 5
        steps = np.diff(np.log(points) if log else np.log(points / (1 - points)))
        np.testing.assert_allclose(steps, steps[0], rtol=1e-9)  # even in log(odds) / log
    assert full[1] == 0.001  # nothing between 0 and the first positive strength
    plain, same = refinement_grid(grid, 0)
    np.testing.assert_array_equal(plain, grid)
    np.testing.assert_array_equal(same, np.arange(len(grid)))


def _refine_table(violation, score, budget=0.02):
    n = len(violation)
    table = _table(range(n), score, violation)
    table["feasible"] = np.asarray([*(np.asarray(violation) <= budget), True])
    table["reference"] = np.asarray([False] * n + [True])
    table["test_violation"] = table["upper_test_violation"]
    return table


@pytest.mark.parametrize(
    ("measured", "violation", "score", "expected"),
    [
        ([0, 4, 8], [0.2, 0.05, 0.01], [0.9, 0.85, 0.8], 6),  # bisect (4, 8)
        ([0, 4, 6, 8], [0.2, 0.05, 0.015, 0.01], [0.9, 0.85, 0.83, 0.8], 5),  # then (4, 6)
        ([0, 4, 5, 6], [0.2, 0.05, 0.03, 0.015], [0.9, 0.85, 0.84, 0.83], None),  # adjacent
        ([0, 4, 8], [0.01, 0.005, 0.004], [0.85, 0.9, 0.8], None),  # the one below: in budget
        ([0, 4, 8], [0.2, 0.1, 0.05], [0.9, 0.85, 0.8], None),  # no choice to refine
        ([0, 4], [0.01, 0.005], [0.9, 0.85], None),  # the choice is the first strength
        ([0, 4, 8], [0.2, 0.01, 0.005], [0.9, 0.85, 0.8], 2),  # bisect (0, 4): 0 in the grid
    ],
)
def test_next_midpoint_bisects_where_the_budget_is_crossed(measured, violation, score, expected):
    table = _refine_table(violation, score)
    assert next_midpoint(np.asarray(measured), table, 0.02, "raise") == expected


def test_refinement_chooses_between_the_grids_choice_and_the_strength_below(all_searches):
    out, (X, y, s) = all_searches
    for search in ("grid", "ascending"):
        plain, refined = out[search, 0], out[search, 2]
        res0, res = plain.cv_results_, refined.cv_results_
        grid_rows = res0["strength"][:-1]
        rows = res["strength"][:-1]
        assert set(grid_rows) <= set(rows) and 0 < len(rows) - len(grid_rows) <= 2
        # the grid's choice, and the largest smaller strength, over the budget
        k = plain.best_index_
        assert k > 0 and not res0["feasible"][k - 1]
        assert res0["strength"][k - 1] < refined.strength_ <= plain.strength_
        assert refined.best_score_ >= plain.best_score_  # a choice among more strengths
        assert res["upper_test_violation"][refined.best_index_] <= 0.03
        # the rows the grid measured are measured alike
        same = np.isin(rows, grid_rows)
        for key in ("mean_test_score", "test_violation"):
            np.testing.assert_array_equal(res[key][:-1][same], res0[key][:-1])
    # the ascent's warm-started midpoints end where the grid's cold fits do (to tol)
    grid, ascent = out["grid", 2], out["ascending", 2]
    assert ascent.strength_ == grid.strength_
    for key, atol in (("mean_test_score", 5e-3), ("test_violation", 1e-2)):
        np.testing.assert_allclose(
            ascent.cv_results_[key][ascent.best_index_],
            grid.cv_results_[key][grid.best_index_],
            rtol=0,
            atol=atol,
        )


def test_a_warm_midpoint_starts_from_the_nearest_measured_strength_above():
    X, y, s = _data(300)
    folds = WarmFolds([FairClassifier("otf", random_state=0, warm_start=True) for _ in range(2)])
    params = {}
    for k, strength in ((2, 0.01), (6, 0.3)):
        for est in folds.estimators:
            est.set_params(strength=strength).fit(X, y, sensitive_features=s)
        folds.keep(k)
        params[k] = folds.estimators[0].model_.state_dict()["net.0.weight"].clone()
    assert not torch.equal(params[2], params[6])

    def weight():
        return folds.estimators[0].model_.state_dict()["net.0.weight"]

    folds.start_at(4)  # between the two: from the one above (strength 0.3)
    assert torch.equal(weight(), params[6])
    folds.start_at(1)  # below both: from strength 0.01
    assert torch.equal(weight(), params[2])
    folds.start_at(7)  # above every kept strength: as it is
    assert torch.equal(weight(), params[2])


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_equalized_odds_ascends_to_the_grids_choice(adult):
    """Under EO OTF's logistic fits take L-BFGS too (one dual per label cell): the
    search ascends, fits a prefix of the grid and chooses the grid's strength."""
    X, y, s = adult
    base = FairClassifier("otf", notion="eo", random_state=0)
    strengths = [0.0, 0.003, 0.01, 0.03, 0.1, 0.3, 0.7]
    kw = {"strengths": strengths, "max_violation": 0.05, "metric": "max_eo_gap", "cv": 3}
    ascent = FairnessCV(base, **kw).fit(X, y, sensitive_features=s)
    grid = FairnessCV(base, search="grid", **kw).fit(X, y, sensitive_features=s)
    assert ascent.strength_ == grid.strength_ > 0
    done = ascent.cv_results_["strength"][:-1]
    assert len(done) < len(grid.cv_results_["strength"][:-1])  # it stopped early
    k = ascent.best_index_ + 1
    np.testing.assert_allclose(
        ascent.cv_results_["mean_test_score"][:k],
        grid.cv_results_["mean_test_score"][:k],
        rtol=0,
        atol=5e-3,
    )


@pytest.mark.parametrize(
    ("measured", "violation", "score", "expected"),
    [
        # the fairer strengths are the smaller ones (AdapFair): the mirrored cases
        ([0, 4, 8], [0.01, 0.05, 0.2], [0.8, 0.85, 0.9], 2),  # bisect (0, 4)
        ([0, 2, 4, 8], [0.01, 0.015, 0.05, 0.2], [0.8, 0.83, 0.85, 0.9], 3),  # then (2, 4)
        ([0, 4, 8], [0.004, 0.005, 0.01], [0.8, 0.9, 0.85], None),  # the one above: in budget
        ([0, 4], [0.005, 0.01], [0.85, 0.9], None),  # the choice is the last strength
    ],
)
def test_next_midpoint_mirrors_when_the_smaller_strengths_are_fairer(
    measured, violation, score, expected
):
    table = _refine_table(violation, score)
    assert next_midpoint(np.asarray(measured), table, 0.02, "raise", False) == expected


def test_the_constant_chosen_is_not_refined():
    table = _refine_table([0.2, 0.1, 0.05], [0.9, 0.85, 0.8])  # nothing within 0.02
    # (the choice's warning is the final choice's to give: next_midpoint keeps it quiet)
    assert next_midpoint(np.array([0, 4, 8]), table, 0.02, "constant") is None
    assert next_midpoint(np.array([0, 4, 8]), table, 0.02, "constant", False) is None
