"""FairnessCV: the selection rule, its folds, Pipeline routing, clone, a regression net."""

from __future__ import annotations

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.metrics import accuracy_score
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks
from tests.estimators._classif_data import two_group_data

from otfair.estimators import CENet, FairClassifier, FairnessCV, default_violation_metric
from otfair.estimators._budget_rule import (
    cv_results,
    fold_key,
    rank_strengths,
    select_strength,
)
from otfair.estimators._strength_grids import GRIDS, default_strengths
from otfair.metrics import demographic_parity_gap, error_gap
from otfair.notions import EqualizedOdds, EqualOpportunity

STRENGTHS = [0.0, 1.0, 20.0]


def _base(**kw) -> FairClassifier:
    params = {"epochs": 4, "batch_size": 100, "lr": 0.05, "random_state": 0}
    params.update(kw)
    return FairClassifier("gapreg", **params)


def _table(strength, score, violation) -> dict:
    return {
        "strength": np.asarray(strength, dtype=float),
        "mean_test_score": np.asarray(score, dtype=float),
        "mean_test_violation": np.asarray(violation, dtype=float),
    }


# ------------------------------------------------------------------ the rule (pure)
def test_rule_picks_the_most_accurate_feasible_strength():
    table = _table([0.0, 0.1, 1.0, 10.0], [0.90, 0.88, 0.85, 0.70], [0.10, 0.05, 0.02, 0.01])
    assert select_strength(table, 0.05) == 1  # 0.88 beats 0.85 and 0.70; 0.90 is over
    assert select_strength(table, 0.02) == 2
    assert select_strength(table, 0.5) == 0
    assert rank_strengths(table, 0.05).tolist() == [4, 1, 2, 3]  # infeasible last


def test_rule_ties_go_to_the_smaller_strength_whatever_the_order():
    table = _table([10.0, 1.0, 0.1, 5.0], [0.8, 0.8, 0.7, 0.8], [0.01, 0.02, 0.0, 0.03])
    assert select_strength(table, 0.05) == 1  # strengths 10, 1, 5 tie at 0.8: 1 wins
    assert rank_strengths(table, 0.05).tolist() == [3, 1, 4, 2]


def test_rule_nan_violation_is_never_feasible_and_nan_score_never_wins():
    table = _table([0.0, 1.0, 2.0], [0.9, np.nan, 0.6], [np.nan, 0.0, 0.01])
    assert select_strength(table, 0.05) == 2


def test_rule_infeasible_budget_names_the_lowest_violation_and_its_strength():
    table = _table([0.0, 1.0, 10.0], [0.9, 0.8, 0.7], [0.2, 0.05, 0.031])
    with pytest.raises(ValueError, match=r"max_violation=0\.01.*0\.031 \(strength=10\)"):
        select_strength(table, 0.01)


def _with_reference(table: dict, score: float, loss=None, ref_loss: float = 0.5) -> dict:
    """``table`` plus the best constant's row (last) and the not-below-it mask."""
    n = len(table["strength"])
    losses = np.zeros(n) if loss is None else np.asarray(loss, dtype=float)
    out = {k: np.append(v, {"strength": np.nan}.get(k, 0.0)) for k, v in table.items()}
    out["mean_test_score"][-1] = score
    out["reference"] = np.array([False] * n + [True])
    above = (table["mean_test_score"] >= score) & (losses <= ref_loss)
    out["above_reference"] = np.append(above, False)
    return out


def test_rule_never_chooses_the_constant_or_a_strength_below_it():
    table = _table([0.0, 1.0, 10.0], [0.9, 0.8, 0.7], [0.2, 0.04, 0.0])
    ref = _with_reference(table, 0.75)  # the constant: 0.75, violation 0 (feasible)
    assert select_strength(ref, 0.05) == 1  # 0.8 beats the constant
    assert rank_strengths(ref, 0.05).tolist() == [2, 1, 4, 3]  # eligible first, by score
    with pytest.raises(ValueError, match=r"below the best constant.*0\.75.*strength=10.*0\.7"):
        select_strength(ref, 0.01)  # only strength 10 (0.7 < 0.75) is within it
    with pytest.warns(UserWarning, match="below the best constant"):
        assert select_strength(ref, 0.01, below_constant="warn") == 2
    # as accurate as the constant, but a larger training loss: excluded too
    worse = _with_reference(table, 0.7, loss=[0.3, 0.3, 0.6])
    with pytest.raises(ValueError, match="below the best constant"):
        select_strength(worse, 0.01)
    assert select_strength(_with_reference(table, 0.7, loss=[0.3, 0.3, 0.5]), 0.01) == 2


def test_rule_checks_the_upper_bound_when_the_table_has_one():
    table = _table([0.0, 1.0, 10.0], [0.9, 0.8, 0.7], [0.2, 0.04, 0.01])
    assert select_strength(table, 0.05) == 1
    table["upper_test_violation"] = np.array([0.25, 0.06, 0.02])
    assert select_strength(table, 0.05) == 2
    with pytest.raises(ValueError, match=r"lowest upper bound .* 0\.02 \(strength=10\)"):
        select_strength(table, 0.015)


# ------------------------------------------------------------------------- folds
def test_folds_are_stratified_by_label_and_group():
    X, y, s = two_group_data(n=600, seed=1)
    key = fold_key(y, s, "classification", 5)
    assert key is not None and len(np.unique(key)) == 4  # (label, group) cells
    cells = {(a, b): np.sum((y == a) & (s == b)) for a in (0, 1) for b in (0, 1)}
    search = FairnessCV(_base(), max_violation=1.0, cv=5)
    from otfair.estimators._budget_rule import make_splits

    for _, test in make_splits(search.cv, X, y, s, "classification"):
        for (a, b), total in cells.items():
            inside = np.sum((y[test] == a) & (s[test] == b))
            assert abs(inside - total / 5) <= 1  # every cell split evenly


def test_fold_key_falls_back_when_cells_are_too_small():
    rng = np.random.default_rng(0)
    y, s = rng.normal(size=40), rng.normal(size=40)  # continuous target and attribute
    key = fold_key(y, s, "regression", 5)
    assert key is not None and len(np.unique(key)) == 4  # quartiles of y only
    assert fold_key(np.arange(6) % 2, np.arange(6), "classification", 5) is None


# ----------------------------------------------------------------- default grids
def test_default_grids_follow_the_penalty_and_the_estimator():
    assert default_strengths(FairClassifier("otf")).tolist() == list(GRIDS["otf"])
    assert default_strengths(FairClassifier("norm")).tolist() == list(GRIDS["convex"])
    assert default_strengths(FairClassifier("gapreg")).tolist() == list(GRIDS["additive"])
    assert default_strengths(CENet()).tolist() == list(GRIDS["regression"])
    with pytest.raises(ValueError, match="penalty='none'"):
        default_strengths(FairClassifier("none"))


def test_default_grids_span_the_trade_off_and_never_drop_the_labels():
    for name, grid in GRIDS.items():
        values = np.asarray(grid)
        assert values[0] == 0.0 and (np.diff(values) > 0).all(), name
    for name in ("otf", "convex"):  # (1 - alpha) CE + alpha R: alpha = 1 ignores y
        assert 0.99 <= max(GRIDS[name]) < 1.0, name
        assert {0.9, 0.97, 0.99} <= set(GRIDS[name]), name  # log-spaced in 1 - alpha
    assert min(v for v in GRIDS["otf"] if v > 0) <= 1e-3  # Adult's OTF moves from 1e-3
    assert max(GRIDS["additive"]) >= 1000.0  # GapReg reaches DP 0.03 on COMPAS at 300


# ------------------------------------------------------------------- classifier
@pytest.fixture(scope="module")
def fitted():
    X, y, s = two_group_data(n=500, seed=0)
    search = FairnessCV(
        _base(), strengths=STRENGTHS, max_violation=0.15, cv=3, margin=1.0, refine=0
    )
    return search.fit(X, y, sensitive_features=s), (X, y, s)


def test_cv_results_layout_and_choice(fitted):
    search, _ = fitted
    res = search.cv_results_
    K = len(STRENGTHS)
    assert res["strength"][:K].tolist() == STRENGTHS and np.isnan(res["strength"][K])
    assert res["reference"].tolist() == [False] * K + [True]
    assert res["params"][K] == {"constant": "prior"}
    for key in ("mean_test_score", "std_test_score", "mean_test_violation", "feasible"):
        assert len(res[key]) == K + 1
    splits = np.array([res[f"split{f}_test_violation"] for f in range(3)])
    np.testing.assert_allclose(res["mean_test_violation"], splits.mean(axis=0))
    # margin 1.0: the pooled violation plus one standard error of the fold mean
    se = splits.std(axis=0, ddof=1) / np.sqrt(3)
    np.testing.assert_array_equal(res["test_violation"], res["pooled_test_violation"])
    np.testing.assert_allclose(res["upper_test_violation"], res["pooled_test_violation"] + se)
    assert res["pooled_test_violation"][K] == 0.0  # the constant's
    assert search.best_index_ == select_strength(res, 0.15)
    assert search.strength_ == STRENGTHS[search.best_index_]
    assert res["rank_test_score"][search.best_index_] == 1
    assert res["upper_test_violation"][search.best_index_] <= 0.15
    assert search.best_violation_ == res["pooled_test_violation"][search.best_index_]
    chosen = res["feasible"] & res["above_reference"] & ~res["reference"]
    assert search.best_score_ == res["mean_test_score"][chosen].max()


def test_fold_scores_equal_an_independent_fit(fitted):
    """split0's accuracy and DP gap of one strength, recomputed with sklearn's own folds."""
    search, (X, y, s) = fitted
    key = fold_key(y, s, "classification", 3)
    train, test = next(StratifiedKFold(3, shuffle=True, random_state=0).split(X, key))
    est = clone(_base()).set_params(strength=STRENGTHS[1])
    est.fit(X[train], y[train], sensitive_features=s[train])
    acc = accuracy_score(y[test], est.predict(X[test]))
    dp = demographic_parity_gap(
        y[test], est.predict_proba(X[test])[:, 1], sensitive_features=s[test]
    )
    # the fold's path is one stacked fit, equal to separate fits up to ~1e-7 in
    # probability: one decision at the threshold may flip (one row of the fold)
    row = 1.0 / len(test) + 1e-12
    assert search.cv_results_["split0_test_score"][1] == pytest.approx(acc, abs=row)
    flip = 1.0 / np.bincount(s[test]).min() + 1e-12  # one flip moves a group's rate
    assert search.cv_results_["split0_test_violation"][1] == pytest.approx(dp, abs=flip)


def test_pooled_violation_equals_the_gap_of_independent_fold_fits(fitted):
    """The DP gap of the 3 folds' held-out predictions pooled, from separate fits."""
    search, (X, y, s) = fitted
    key = fold_key(y, s, "classification", 3)
    rows, scores = [], []
    for train, test in StratifiedKFold(3, shuffle=True, random_state=0).split(X, key):
        est = clone(_base()).set_params(strength=STRENGTHS[1])
        est.fit(X[train], y[train], sensitive_features=s[train])
        rows.append(test)
        scores.append(est.predict_proba(X[test])[:, 1])
    rows = np.concatenate(rows)
    dp = demographic_parity_gap(y[rows], np.concatenate(scores), sensitive_features=s[rows])
    flip = 1.0 / np.bincount(s).min() + 1e-12  # one decision at the threshold may flip
    assert search.cv_results_["pooled_test_violation"][1] == pytest.approx(dp, abs=flip)
    # and it differs from the fold mean (the mean of absolute gaps is not their pool)
    assert search.cv_results_["mean_test_violation"][1] != pytest.approx(dp, abs=1e-9)


def test_best_estimator_equals_a_refit_at_the_chosen_strength(fitted):
    search, (X, y, s) = fitted
    refit = clone(_base()).set_params(strength=search.strength_)
    refit.fit(X, y, sensitive_features=s)
    np.testing.assert_allclose(search.predict_proba(X), refit.predict_proba(X), rtol=0, atol=1e-7)
    np.testing.assert_array_equal(search.predict(X), refit.predict(X))
    assert search.score(X, y) == pytest.approx(accuracy_score(y, refit.predict(X)))
    assert search.classes_.tolist() == [0, 1]


def test_infeasible_budget_is_a_clear_error():
    X, y, s = two_group_data(n=300, seed=2)
    search = FairnessCV(_base(), strengths=[0.0], max_violation=0.0, cv=3, margin=1.0)
    with pytest.raises(ValueError, match=r"max_violation=0: the lowest upper bound.*`margin`"):
        search.fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match=r"max_violation=0: the lowest held-out .*\(pooled"):
        search.set_params(margin=0.0).fit(X, y, sensitive_features=s)  # the default
    with pytest.raises(ValueError, match=r"No strength meets max_violation=0: the lowest mean"):
        search.set_params(pooled_violation=False).fit(X, y, sensitive_features=s)


def test_reference_row_is_the_majority_class_measured_by_hand(fitted):
    """The constant's held-out accuracy: each fold's share of its training majority."""
    search, (X, y, s) = fitted
    res = search.cv_results_
    key = fold_key(y, s, "classification", 3)
    shares = []
    for train, test in StratifiedKFold(3, shuffle=True, random_state=0).split(X, key):
        majority = int(np.mean(y[train]) > 0.5)
        shares.append(np.mean(y[test] == majority))
    assert res["reference"][-1] and res["rank_test_score"][-1] != 1
    assert res["mean_test_score"][-1] == pytest.approx(np.mean(shares), abs=1e-12)
    assert res["split0_test_score"][-1] == pytest.approx(shares[0], abs=1e-12)
    assert res["mean_test_violation"][-1] == 0.0  # a constant has no DP gap
    prior = np.mean(y)  # its training log-loss: about the entropy of the base rate
    entropy = -(prior * np.log(prior) + (1 - prior) * np.log(1 - prior))
    assert res["mean_train_loss"][-1] == pytest.approx(entropy, abs=0.01)


@pytest.fixture(scope="module")
def collapsed():
    """GapReg at strength 1e4 collapses to a constant, fair but worse than the prior.

    Trained as the papers train (Adam from torch's initialization, no base-rate start):
    FairClassifier's default start is the best constant itself, where the collapse ends.
    """
    X, y, s = two_group_data(n=500, seed=0)
    base = _base(solver="adam", tol=None, init_intercept=False)
    search = FairnessCV(
        base, strengths=[0.0, 1.0, 1e4], max_violation=1.0, cv=3, refit=False, refine=0
    )
    return search.fit(X, y, sensitive_features=s), (X, y, s)


def test_a_collapsed_strength_is_below_the_constant_and_never_chosen(collapsed):
    search, (X, y, s) = collapsed
    res = search.cv_results_
    # strength 1e4: no DP gap at all, but a training loss above the constant's
    assert res["mean_test_violation"][2] < 0.01
    assert res["mean_train_loss"][2] > res["mean_train_loss"][-1]
    assert res["above_reference"].tolist() == [True, True, False, False]
    assert search.strength_ in (0.0, 1.0)
    # a budget only the collapsed model meets: FairnessCV says so instead of returning it
    tight = clone(search).set_params(max_violation=0.05)
    with pytest.raises(ValueError, match="below the best constant predictor"):
        tight.fit(X, y, sensitive_features=s)
    with pytest.warns(UserWarning, match="below the best constant predictor"):
        tight.set_params(below_constant="warn").fit(X, y, sensitive_features=s)
    assert tight.strength_ == 1e4


def test_a_larger_margin_never_chooses_a_larger_upper_bound(collapsed):
    """Rebuilt from the same folds: the feasible sets shrink as the margin grows."""
    search, _ = collapsed
    res = search.cv_results_
    K = 3
    scores = np.array([res[f"split{f}_test_score"][:K] for f in range(3)])
    violations = np.array([res[f"split{f}_test_violation"][:K] for f in range(3)])
    se = violations.std(axis=0, ddof=1) / np.sqrt(3)
    budget = float(np.sort(violations.mean(axis=0))[1] + 0.5 * se.max())
    chosen, previous = [], None
    for margin in (0.0, 0.5, 1.0, 2.0, 5.0):
        table = cv_results(
            np.array([0.0, 1.0, 1e4]), scores, violations, "strength", budget, margin=margin
        )
        np.testing.assert_allclose(
            table["upper_test_violation"], violations.mean(axis=0) + margin * se
        )
        feasible = table["feasible"]
        if previous is not None:
            assert not (feasible & ~previous).any()  # nested: nothing new becomes feasible
        previous = feasible
        try:
            k = select_strength(table, budget)
        except ValueError:
            continue
        assert table["upper_test_violation"][k] <= budget
        chosen.append(table["mean_test_score"][k])
    assert chosen and all(a >= b for a, b in zip(chosen, chosen[1:], strict=False))


def test_clone_and_get_params():
    search = FairnessCV(_base(), strengths=STRENGTHS, max_violation=0.05, metric="eo_gap")
    copy = clone(search)
    assert copy.get_params()["max_violation"] == 0.05
    assert copy.get_params()["metric"] == "eo_gap"
    assert copy.get_params()["estimator__penalty"] == "gapreg"
    assert not hasattr(copy, "strength_")
    copy.set_params(estimator__epochs=2, cv=4)
    assert copy.estimator.epochs == 2 and copy.cv == 4 and search.estimator.epochs == 4
    assert sklearn.base.is_classifier(search)
    assert sklearn.base.is_regressor(FairnessCV(CENet(), max_violation=0.1))


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"max_violation": -0.1}, "max_violation"),
        ({"max_violation": float("nan")}, "max_violation"),
        ({"max_violation": 0.1, "metric": "bogus"}, "metric"),
        ({"max_violation": 0.1, "metric": "error_gap"}, "metric"),  # not a classifier's
        ({"max_violation": 0.1, "strengths": [1.0, -1.0]}, "strengths"),
        ({"max_violation": 0.1, "strengths": [1.0, 1.0]}, "strengths"),
        ({"max_violation": 0.1, "cv": 1}, "cv"),
    ],
)
def test_bad_parameters_name_the_argument(params, match):
    X, y, s = two_group_data(n=60, seed=0)
    with pytest.raises(ValueError, match=match):
        FairnessCV(_base(), **params).fit(X, y, sensitive_features=s)


def test_a_list_valued_strength_is_refused():
    X, y, s = two_group_data(n=60, seed=0)
    with pytest.raises(ValueError, match="fairness_path"):  # the estimator alone
        FairClassifier("gapreg", [0.1, 1.0], epochs=1).fit(X, y, sensitive_features=s)
    search = FairnessCV(FairClassifier("gapreg", [0.1, 1.0]), max_violation=0.1)
    with pytest.raises(ValueError, match=r"FairnessCV\(strengths=\.\.\.\)"):
        search.fit(X, y, sensitive_features=s)


def test_sensitive_features_are_required():
    X, y, _ = two_group_data(n=60, seed=0)
    with pytest.raises(ValueError, match="sensitive_features"):
        FairnessCV(_base(), max_violation=0.1).fit(X, y)


def test_pipeline_with_metadata_routing_matches_a_direct_fit():
    X, y, s = two_group_data(n=400, seed=3)
    X = X * 10 + 3
    search = FairnessCV(_base(), strengths=STRENGTHS, max_violation=0.4, cv=3)
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = make_pipeline(StandardScaler(), clone(search))
        pipe.fit(X, y, sensitive_features=s)
        routed = pipe[-1]
        assert pipe.predict(X).shape == (400,)
    direct = clone(search).fit(StandardScaler().fit_transform(X), y, sensitive_features=s)
    assert routed.strength_ == direct.strength_
    np.testing.assert_array_equal(
        routed.cv_results_["mean_test_score"], direct.cv_results_["mean_test_score"]
    )
    # without routing, the step-prefixed parameter reaches it as well
    plain = make_pipeline(StandardScaler(), clone(search))
    plain.fit(X, y, fairnesscv__sensitive_features=s)
    assert plain[-1].strength_ == direct.strength_
    assert search.get_metadata_routing().fit.requests["sensitive_features"] is True


def test_default_violation_metric_follows_the_notion_and_the_task():
    assert default_violation_metric("classification") == "dp_gap"
    assert default_violation_metric("classification", "dp") == "dp_gap"
    assert default_violation_metric("classification", "eo") == "max_eo_gap"
    assert default_violation_metric("classification", EqualizedOdds()) == "max_eo_gap"
    assert default_violation_metric("classification", EqualOpportunity()) == "tpr_gap"
    assert default_violation_metric("regression") == "error_gap"
    assert default_violation_metric("regression", "dp") == "error_gap"


def test_metric_auto_budgets_the_estimators_notion():
    X, y, s = two_group_data(n=300, seed=5)
    kw = {"strengths": [0.0, 5.0], "max_violation": 1.0, "cv": 3, "refit": False}
    dp = FairnessCV(_base(), **kw).fit(X, y, sensitive_features=s)
    assert dp.get_params()["metric"] == "auto" and dp.metric_ == "dp_gap"
    auto = FairnessCV(_base(notion="eo"), **kw).fit(X, y, sensitive_features=s)
    named = FairnessCV(_base(notion="eo"), metric="max_eo_gap", **kw)
    named.fit(X, y, sensitive_features=s)
    assert auto.metric_ == named.metric_ == "max_eo_gap"
    np.testing.assert_array_equal(
        auto.cv_results_["test_violation"], named.cv_results_["test_violation"]
    )
    # the worst cell's gap is not the DP gap of the same folds
    assert not np.array_equal(auto.cv_results_["test_violation"], dp.cv_results_["test_violation"])


def test_refit_false_keeps_the_choice_without_a_model():
    X, y, s = two_group_data(n=300, seed=4)
    search = FairnessCV(_base(), strengths=[0.0, 5.0], max_violation=1.0, cv=3, refit=False)
    search.fit(X, y, sensitive_features=s)
    assert not hasattr(search, "best_estimator_")
    with pytest.raises(AttributeError, match="refit=False"):
        search.predict(X)


# ------------------------------------------------------------------- regression
def test_regression_net_on_law_school_with_error_gap(data_dir):
    from otfair.datasets import load_dataset

    split = load_dataset("law_school", data_home=data_dir).split(test_size=0.2, random_state=0)
    rows = np.random.default_rng(0).choice(len(split.y_train), 600, replace=False)
    X, y, s = split.X_train[rows], split.y_train[rows], split.s_train[rows]
    net = CENet(encoder_hidden=(8,), adversary_hidden=(8,), epochs=2, random_state=0)
    search = FairnessCV(net, strengths=[0.0, 1.0, 10.0], max_violation=1.0)  # metric "auto"
    search.fit(X, y, sensitive_features=s)
    res = search.cv_results_
    assert search.strength_param_ == "strength" and search.metric_ == "error_gap"
    assert search.best_index_ == select_strength(res, 1.0)
    assert search.best_estimator_.strength == search.strength_
    assert search.best_params_ == {"strength": search.strength_}
    pred = search.predict(split.X_test)
    assert pred.shape == split.y_test.shape
    gap = error_gap(split.y_test, pred, sensitive_features=split.s_test)
    assert np.isfinite(gap) and gap >= 0


# ------------------------------------------------------------- scikit-learn checks
def _checked() -> FairnessCV:
    """FairnessCV around the registry's tiny gapreg MLP, supplied groups when omitted."""
    from tests.estimators._registry_estimators import tiny, with_default_sensitive

    inner = tiny("gapreg", sensitive_column=False)
    return with_default_sensitive(
        FairnessCV(
            inner,
            strengths=[0.0, 1.0],
            max_violation=1.0,
            metric="mean_score_gap",
            cv=2,
            below_constant="warn",  # the checks' data are noise: the constant wins
        )
    )


@pytest.mark.filterwarnings("ignore:Every strength within max_violation")  # noise data
@parametrize_with_checks([_checked()])
def test_sklearn_checks(estimator, check):
    check(estimator)


def test_fold_key_codes_match_a_row_wise_join():
    """The vectorized codes of the fold key equal factorizing each row's joined text."""
    import pandas as pd

    from otfair.estimators._budget_rule import _codes

    rng = np.random.default_rng(0)
    table = np.column_stack(
        [rng.integers(0, 3, 500), rng.choice(["a", "b"], 500), rng.integers(0, 2, 500)]
    ).astype(object)
    table[::7, 0] = "1"  # the text "1" and the number 1 are one value
    joined = pd.DataFrame(table).astype(str).agg("\x1f".join, axis=1)
    np.testing.assert_array_equal(_codes(table), pd.factorize(joined)[0])
    np.testing.assert_array_equal(
        _codes(table[:, 0]), pd.factorize(pd.Series(table[:, 0]).astype(str))[0]
    )


@pytest.mark.parametrize("search", ["grid", "ascending"])
def test_verbose_reports_each_fold_fit_and_the_refit_on_stderr(search, capsys):
    X, y, s = two_group_data(300)
    strengths = [0.0, 0.1, 0.5]
    quiet = FairnessCV(
        FairClassifier("otf", random_state=0), strengths=strengths, max_violation=1.0, cv=3
    )
    quiet.set_params(search=search).fit(X, y, sensitive_features=s)
    assert capsys.readouterr() == ("", "")  # verbose=0: silent
    loud = clone(quiet).set_params(verbose=1).fit(X, y, sensitive_features=s)
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert all(line.startswith("[FairnessCV] ") for line in lines)
    res = loud.cv_results_
    measured = int((~res["reference"]).sum())
    assert len(lines) == 3 * measured + 1  # every fold of every strength, then the refit
    fold = [line for line in lines if "fold 2/3, strength=0.1:" in line]
    assert len(fold) == (0.1 in res["strength"])
    if fold:  # the line's numbers are the table's
        k = int(np.flatnonzero(res["strength"] == 0.1)[0])
        assert f"held-out score {res['split1_test_score'][k]:.4f}" in fold[0]
        assert f"dp_gap {res['split1_test_violation'][k]:.4f}" in fold[0]
    assert lines[-1].startswith(f"[FairnessCV] refit at strength={loud.strength_:.4g}")
    np.testing.assert_array_equal(loud.predict_proba(X), quiet.predict_proba(X))


def test_the_measures_of_an_unknown_task_are_refused_naming_it():
    # "clf" used to return the regression measures; "foo" to say "not a foo violation measure"
    from otfair.estimators import get_violation_metric, get_violation_metric_names

    assert "dp_gap" in get_violation_metric_names("classification")
    assert "error_gap" in get_violation_metric_names("regression")
    with pytest.raises(
        ValueError, match="`task` must be 'classification' or 'regression'; got 'clf'"
    ):
        get_violation_metric_names("clf")
    with pytest.raises(ValueError, match="got 'foo'"):
        get_violation_metric("dp_gap", "foo")
