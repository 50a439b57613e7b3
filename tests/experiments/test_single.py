import numpy as np
import pytest
from fairlearn.metrics import demographic_parity_difference
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, roc_auc_score

from otfair.datasets import load_dataset
from otfair_lab.experiments import run_single


def test_matches_independent_sklearn_run(plugin_path):
    res = run_single("synthetic", "dummy-lr", strength=0.1, seed=3, test_size=0.25)
    split = load_dataset("synthetic").split(test_size=0.25, random_state=3)
    ref = LogisticRegression(C=0.1, max_iter=500).fit(split.X_train, split.y_train)
    p = ref.predict_proba(split.X_test)[:, 1]
    assert res["n_test"] == len(split.y_test) and res["n_train"] == len(split.y_train)
    assert res["accuracy"] == pytest.approx(accuracy_score(split.y_test, p >= 0.5))
    assert res["auc"] == pytest.approx(roc_auc_score(split.y_test, p))
    dp = demographic_parity_difference(
        split.y_test, (p >= 0.5).astype(int), sensitive_features=split.s_test
    )
    assert res["dp_gap"] == pytest.approx(dp)
    assert res["fit_time_s"] > 0 and res["predict_time_s"] >= 0
    assert res["reference"] == {"n_features": split.X_train.shape[1]}  # extra_report merged
    assert (res["method"], res["strength"], res["seed"]) == ("dummy-lr", 0.1, 3)


def test_max_train_rows_subsamples_train_only(plugin_path):
    full = run_single("synthetic", "dummy-lr", seed=1)
    small = run_single("synthetic", "dummy-lr", seed=1, max_train_rows=200)
    assert small["n_train"] == 200 and small["n_test"] == full["n_test"]


def test_seed_reproducible_and_different(plugin_path):
    a = run_single("synthetic", "dummy-lr", seed=0, max_train_rows=300)
    b = run_single("synthetic", "dummy-lr", seed=0, max_train_rows=300)
    c = run_single("synthetic", "dummy-lr", seed=1, max_train_rows=300)
    assert a["accuracy"] == b["accuracy"] and a["auc"] != c["auc"]


def test_user_dataset_factory(plugin_path):
    res = run_single("otfair.datasets:make_synthetic", "dummy-lr", seed=0)
    assert res["dataset"] == "otfair.datasets:make_synthetic" and 0 <= res["accuracy"] <= 1


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"method": "nope"}, "Unknown method 'nope'"),
        ({"seed": -1}, "`seed`"),
        ({"seed": 1.5}, "`seed`"),
        ({"test_size": 1.0}, "`test_size`"),
        ({"epochs": 0}, "'epochs' parameter of"),
        ({"max_train_rows": 1}, "`max_train_rows`"),
        ({"strength": "big"}, "`strength`"),
        ({"source_domain": "a"}, "given together"),
        ({"dataset": "synthetic_regression"}, "solves classification"),
        ({"dataset": "no.such.module:f"}, "cannot be imported"),
    ],
)
def test_bad_input_names_the_argument(plugin_path, kwargs, match):
    args = {"dataset": "synthetic", "method": "dummy-lr", **kwargs}
    with pytest.raises((ValueError, TypeError), match=match):
        run_single(args.pop("dataset"), args.pop("method"), **args)


def test_scores_are_probabilities_of_class_one(plugin_path):
    # the mean score gap must be computed on P(y=1), checked against a direct computation
    res = run_single("synthetic", "dummy-lr", seed=2)
    split = load_dataset("synthetic").split(test_size=0.2, random_state=2)
    p = (
        LogisticRegression(max_iter=500)
        .fit(split.X_train, split.y_train)
        .predict_proba(split.X_test)[:, 1]
    )
    gap = abs(p[split.s_test == 0].mean() - p[split.s_test == 1].mean())
    assert res["mean_score_gap"] == pytest.approx(gap)
    assert np.isfinite(res["wdp"])


def test_ftm_audits_use_the_test_scores(plugin_path):
    from otfair.metrics import fair_matching_cost, subset_fairness

    res = run_single("synthetic", "dummy-lr", seed=0, audits=["ftm"])
    split = load_dataset("synthetic").split(test_size=0.2, random_state=0)
    p = (
        LogisticRegression(max_iter=500)
        .fit(split.X_train, split.y_train)
        .predict_proba(split.X_test)[:, 1]
    )
    X = split.X_test.astype(np.float64)
    sub = subset_fairness(X, p, sensitive_features=split.s_test, n_subsets=200, random_state=0)
    assert res["subset_dp_mean"] == pytest.approx(sub.mean)
    assert res["subset_dp_q95"] == pytest.approx(sub.q95)
    cost = fair_matching_cost(
        X, p, sensitive_features=split.s_test, batch_size=256, n_batches=20, random_state=0
    )
    assert res["matching_cost"] == pytest.approx(cost.cost)
    assert "consistency" not in res  # dummy-lr does not see the sensitive attribute
    with pytest.raises(ValueError, match="`audits` has unknown audit 'x'"):
        run_single("synthetic", "dummy-lr", audits=["x"])


def test_sfp_audit_against_an_independently_fitted_reference(plugin_path):
    from scipy.stats import spearmanr

    from otfair_lab.experiments.methods import get_method

    res = run_single("synthetic", "dummy-lr", seed=0, epochs=2, audits=["sfp"])
    split = load_dataset("synthetic").split(test_size=0.2, random_state=0)
    p = (
        LogisticRegression(max_iter=500)
        .fit(split.X_train, split.y_train)
        .predict_proba(split.X_test)[:, 1]
    )
    ref = get_method("unfair").build(
        None, notion=None, random_state=0, epochs=2, device="cpu", dataset="synthetic"
    )
    r = ref.fit(split.X_train, split.y_train, sensitive_features=split.s_train)
    r = r.predict_proba(split.X_test)[:, 1]
    s = split.s_test
    for g in (0, 1):
        rho = spearmanr(r[s == g], p[s == g]).statistic
        assert res[f"sfp_spearman_s{g}"] == pytest.approx(rho)
    flips = np.sum((s == 1) & (r < 0.5) & (p >= 0.5)) + np.sum((s == 0) & (r >= 0.5) & (p < 0.5))
    assert res["sfp_flip_rate"] == pytest.approx(flips / len(s))


def test_sfp_audit_of_the_reference_itself_is_perfect():
    res = run_single("synthetic", "unfair-mlp", seed=1, epochs=1, audits=["sfp"])
    assert res["sfp_spearman_s0"] == pytest.approx(1.0)
    assert res["sfp_spearman_s1"] == pytest.approx(1.0)
    assert res["sfp_flip_rate"] == 0.0
    with pytest.raises(ValueError, match="'sfp' audit needs a classification run"):
        run_single("law_school", "unfair-reg", epochs=1, audits=["sfp"])


def test_a_randomized_classifier_reports_its_draws_beside_the_panel(plugin_path):
    # ReductionClassifier predicts by drawing each label with the mixture's probability;
    # the panel cuts that probability at 0.5 (the archived FTM runs' numbers), and the
    # draws' accuracy and DP come beside it (fairlearn's DP is the reference)
    from otfair.estimators import ReductionClassifier

    res = run_single("synthetic", "reduction", strength=0.02, seed=0, test_size=0.25)
    split = load_dataset("synthetic").split(
        test_size=0.25, random_state=0, sensitive_as_input=True
    )
    model = ReductionClassifier(0.02, notion="dp", random_state=0)
    model.fit(split.X_train, split.y_train, sensitive_features=split.s_train)
    drawn = model.predict(split.X_test)
    p = model.predict_proba(split.X_test)[:, 1]
    assert res["drawn_accuracy"] == pytest.approx(accuracy_score(split.y_test, drawn))
    dp = demographic_parity_difference(split.y_test, drawn, sensitive_features=split.s_test)
    assert res["drawn_dp_gap"] == pytest.approx(dp)
    assert res["accuracy"] == pytest.approx(accuracy_score(split.y_test, p >= 0.5))
    assert res["auc"] == pytest.approx(roc_auc_score(split.y_test, p))
    # the 0.5 cut is another model on these rows; a deterministic run has no drawn_*
    assert np.mean(drawn != (p >= 0.5)) > 0.01
    assert "drawn_accuracy" not in run_single("synthetic", "dummy-lr", strength=0.1, seed=0)


def test_a_run_records_whether_its_fit_ended_at_or_below_the_constant():
    # GapReg at 1e9 on the synthetic data (its label follows the group) leaves one class
    import warnings

    from otfair.estimators import FitQualityWarning

    options = {"model": "logistic", "solver": "lbfgs"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FitQualityWarning)
        strong = run_single("synthetic", "gapreg", strength=1e9, method_options=options)
    plain = run_single("synthetic", "gapreg", strength=0.0, method_options=options)
    assert strong["fit_quality_warning"] is True
    assert plain["fit_quality_warning"] is False
