"""FairClassifier's fits are held against a converged reference and the best constant.

* the default logistic fit (L-BFGS, l2=1) is scikit-learn's ``LogisticRegression()``
  (C=1) on real data: the same coefficients, the same test AUC and accuracy;
* convergence: ``n_iter_``, a ``ConvergenceWarning`` at the cap, none with ``tol=None``;
* a strength that drops the labels (convex alpha = 1) is refused, and a fit that ends
  below the best constant, or at one predicted class, says so;
* the user's torch state (no_grad, inference_mode, a float64 default dtype) does not
  break a fit, raw feature scales warn, and a diverged fit is an error.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from tests.estimators._classif_data import two_group_data

from otfair.datasets import load_dataset
from otfair.estimators import (
    FairClassifier,
    FitQualityWarning,
    default_strengths,
    fairness_path,
)
from otfair.estimators._torch_base import constant_baseline
from otfair.estimators._training import StopOnPlateau


@pytest.fixture(scope="module")
def compas():
    return load_dataset("compas").split(random_state=0)


@pytest.mark.parametrize("name", ["german", "compas"])
def test_default_logistic_fit_is_sklearn_logistic_regression(name, data_dir):
    split = load_dataset(name).split(random_state=0)
    ours = FairClassifier(random_state=0).fit(split.X_train, split.y_train)
    ref = LogisticRegression(max_iter=5000, tol=1e-8).fit(split.X_train, split.y_train)
    assert ours.solver_ == "lbfgs" and ours.n_iter_ <= ours.epochs
    auc = roc_auc_score(split.y_test, ours.predict_proba(split.X_test)[:, 1])
    ref_auc = roc_auc_score(split.y_test, ref.decision_function(split.X_test))
    assert abs(auc - ref_auc) <= 0.01
    assert (
        abs(ours.score(split.X_test, split.y_test) - ref.score(split.X_test, split.y_test))
        <= 0.005
    )
    # the same optimum: l2=1 is C=1 (both minimize mean CE + ||w||^2 / (2n)); compared on
    # the logits, which flat directions of collinear one-hot columns leave determined
    gap = np.abs(ours.decision_function(split.X_test) - ref.decision_function(split.X_test))
    assert gap.mean() <= 0.01 and gap.max() <= 0.1


def test_convex_strength_one_is_refused():
    X, y, s = two_group_data(200)
    with pytest.raises(ValueError, match=r"strength.*\[0, 1\).*labels drop out"):
        FairClassifier("otf", 1.0).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match=r"strength"):
        FairClassifier("norm", 1.0).fit(X, y, sensitive_features=s)
    # additive mixing keeps the labels at any lambda
    FairClassifier("otf", 1.0, mixing="additive", epochs=5, tol=None).fit(
        X, y, sensitive_features=s
    )


@pytest.mark.parametrize("strength", [0.5, 0.9, 0.99])
def test_accepted_strength_is_not_below_the_constant_or_warns(strength, compas):
    X, y, s = compas.X_train, compas.y_train, compas.s_train
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf = FairClassifier("otf", strength, random_state=0).fit(X, y, sensitive_features=s)
    ce_const, acc_const = constant_baseline(np.asarray(y))
    acc = clf.score(X, y)
    p = clf.predict_proba(X)[:, 1]
    ce = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
    warned = any(issubclass(w.category, FitQualityWarning) for w in caught)
    assert warned or (acc >= acc_const and ce <= ce_const * (1 + 1e-3))


def test_huge_strength_warns_that_the_fit_stopped_learning():
    X, y, s = two_group_data(400)
    with pytest.warns(FitQualityWarning, match="strength=1e\\+12"):
        FairClassifier("gapreg", 1e12, random_state=0).fit(X, y, sensitive_features=s)


def test_a_fit_below_the_constant_warns_in_words():
    X, _, _ = two_group_data(400)
    settings = {"solver": "adam", "epochs": 1, "lr": 1e-12, "tol": None, "init_intercept": False}
    probe = FairClassifier(random_state=3, **settings)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FitQualityWarning)
        start = probe.fit(X, X[:, 0] > 0).predict(X)  # the untrained model's classes
    flipped = ~start.astype(bool)  # labels it gets all wrong: accuracy 0 after one tiny step
    with pytest.warns(FitQualityWarning, match="below the best constant"):
        FairClassifier(random_state=3, **settings).fit(X, flipped)


def test_a_penalized_fit_at_its_cap_names_both_causes():
    """Below the constant at the epochs cap: the strength, or too few steps (Adam, tol=None)."""
    X, _, s = two_group_data(400)
    settings = {"solver": "adam", "epochs": 1, "lr": 1e-12, "tol": None, "init_intercept": False}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FitQualityWarning)
        start = FairClassifier(random_state=3, **settings).fit(X, X[:, 0] > 0).predict(X)
    flipped = ~start.astype(bool)  # all wrong after one tiny step, penalized or not
    with pytest.warns(FitQualityWarning) as record:
        FairClassifier("gapreg", 0.1, random_state=3, **settings).fit(
            X, flipped, sensitive_features=s
        )
    text = " ".join(str(w.message) for w in record)
    assert "strength=0.1 the penalty may outweigh the labels" in text
    assert "ran to its `epochs` cap" in text
    # a penalized fit that converged before its cap names the strength alone
    with pytest.warns(FitQualityWarning) as record:
        FairClassifier("gapreg", 1e12, random_state=0).fit(X, X[:, 0] > 0, sensitive_features=s)
    text = " ".join(str(w.message) for w in record)
    assert "may outweigh the labels" in text and "epochs` cap" not in text


def test_constant_baseline_by_hand():
    y = np.array([1, 1, 1, 0])
    ce, acc = constant_baseline(y)
    assert acc == 0.75
    assert math.isclose(ce, -(0.75 * math.log(0.75) + 0.25 * math.log(0.25)))


def test_convergence_warning_at_the_cap_and_none_without_tol():
    X, y, s = two_group_data(400)
    with pytest.warns(ConvergenceWarning, match="epochs=2"):
        FairClassifier(epochs=2).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FitQualityWarning)  # 2 epochs: under-trained
        with pytest.warns(ConvergenceWarning, match="adam"):
            FairClassifier(solver="adam", epochs=2).fit(X, y)
        warnings.simplefilter("error", ConvergenceWarning)
        clf = FairClassifier(solver="adam", epochs=2, tol=None).fit(X, y)
    assert clf.n_iter_ == 2 and len(clf.history_) == 2


def test_adam_stops_on_a_plateau_before_the_cap():
    X, y, _ = two_group_data(400)
    clf = FairClassifier(solver="adam", lr=0.05, epochs=500, random_state=0).fit(X, y)
    assert clf.n_iter_ < 500 and len(clf.history_) == clf.n_iter_
    # the last n_iter_no_change epochs did not improve on the best by tol
    best_before = min(clf.history_[: -clf.n_iter_no_change])
    assert min(clf.history_[-clf.n_iter_no_change :]) > best_before - clf.tol


def test_stop_on_plateau_counts_each_model():
    stop = StopOnPlateau(tol=0.1, n_iter_no_change=1)
    assert not stop({"loss": 2.0, "losses": [1.0, 1.0]})
    assert not stop({"loss": 1.5, "losses": [0.95, 0.5]})  # model 1 still improves
    assert stop({"loss": 1.4, "losses": [0.94, 0.45]})


def test_intercept_starts_at_the_base_rate_log_odds():
    X, y, _ = two_group_data(400)
    clf = FairClassifier(solver="adam", epochs=1, lr=1e-12, tol=None, random_state=0)
    with pytest.warns(FitQualityWarning):
        clf.fit(X, y)
    rate = y.mean()
    assert clf.model_.net[-1].bias.detach().item() == pytest.approx(
        math.log(rate / (1 - rate)), abs=1e-5
    )


def test_lbfgs_is_refused_for_penalties_that_need_batches():
    X, y, s = two_group_data(200)
    for penalty in ("ftm", "adv"):
        with pytest.raises(ValueError, match="solver='lbfgs'"):
            FairClassifier(penalty, 1.0, solver="lbfgs").fit(X, y, sensitive_features=s)
        clf = FairClassifier(penalty)
        assert clf._solver(clf._plan(clf._make_penalty())) == "adam"  # "auto": Adam


@pytest.mark.parametrize(
    "state",
    ["no_grad", "inference_mode", "float64"],
)
def test_fit_works_in_the_users_torch_state(state):
    X, y, s = two_group_data(200)
    before = torch.get_default_dtype()
    contexts = {
        "no_grad": torch.no_grad,
        "inference_mode": torch.inference_mode,
    }
    estimators = [
        FairClassifier("otf", 0.1, epochs=3),
        FairClassifier("gapreg", 1.0, model="mlp", epochs=3),
    ]
    if state == "float64":
        torch.set_default_dtype(torch.float64)
    try:
        with contexts.get(state, torch.enable_grad)():
            for est in estimators:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    p = est.fit(X, y, sensitive_features=s).predict_proba(X)
                assert np.all(np.isfinite(p))
        assert torch.get_default_dtype() is (torch.float64 if state == "float64" else before)
    finally:
        torch.set_default_dtype(before)


def test_raw_feature_scales_warn_and_name_the_scaler():
    X, y, s = two_group_data(300)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        FairClassifier("otf", 0.1, epochs=3).fit(X * 1e6, y, sensitive_features=s)
    scale = [w for w in caught if "StandardScaler" in str(w.message)]
    assert scale and issubclass(scale[0].category, FitQualityWarning)
    assert "reaches" in str(scale[0].message)  # names the magnitude it saw


def test_a_diverged_fit_is_an_error_not_nan_predictions():
    X, y, s = two_group_data(300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            clf = FairClassifier("otf", 0.1, solver="adam", lr=10.0, epochs=5).fit(
                X * 1e20, y, sensitive_features=s
            )
        except ValueError as exc:
            assert "diverged" in str(exc)
        else:
            assert np.all(np.isfinite(clf.predict_proba(X * 1e20)))


@pytest.mark.parametrize("notion", ["dp", "eo"])
def test_otf_trains_on_features_past_float32s_range(notion):
    """At 1e20 the OTF cost's squared norms and the preconditioner's float32 products
    overflowed (a NaN step: scipy's "array must not contain infs or NaNs"); both now stay
    finite, and with the preconditioner rescaled by its diagonal the fit reaches the
    unit-scale fit's minimum (without ``l2``, which is not scale-free), with the warning
    that names the scaler."""
    X, y, s = two_group_data(300)
    fits = []
    for factor in (1.0, 1e20):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            clf = FairClassifier("otf", 0.1, notion=notion, l2=0.0, random_state=0)
            clf.fit(X * factor, y, sensitive_features=s)
        assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]
        scale = [w for w in caught if "StandardScaler" in str(w.message)]
        assert bool(scale) == (factor > 1)
        assert np.all(np.isfinite(clf.predict_proba(X * factor)))
        fits.append(clf.history_[-1])  # the training objective where the fit ended
    # the same objective (scale-free without l2); the nonsmooth fits stop within 1e-4
    assert fits[1] == pytest.approx(fits[0], rel=1e-4)


def test_fairness_cv_silences_its_fold_fits_warnings_and_records_them():
    """Every fold at a strength past the useful range warns alone; FairnessCV does not
    pass those on: its table says the strength is below the constant."""
    from otfair.estimators import FairnessCV

    X, y, s = two_group_data(400)
    with pytest.warns(FitQualityWarning, match="strength=1e\\+12"):  # alone, it warns
        FairClassifier("gapreg", 1e12, random_state=0).fit(X, y, sensitive_features=s)
    search = FairnessCV(
        FairClassifier("gapreg", random_state=0), strengths=[0.0, 1e12], max_violation=1.0, cv=3
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        search.fit(X, y, sensitive_features=s)
    assert not [w for w in caught if issubclass(w.category, FitQualityWarning)]
    res = search.cv_results_
    rows = ~np.asarray(res["reference"], dtype=bool)
    loss = np.asarray(res["mean_train_loss"])
    constant_loss = loss[~rows][0]
    assert loss[rows][1] > constant_loss  # the collapsed strength, recorded as such
    assert search.strength_ == 0.0  # and not chosen; the refit at 0 does not warn


@pytest.mark.parametrize("penalty", ["norm", "barycenter"])
def test_a_kinked_penalty_under_lbfgs_leaves_the_constant_start(penalty, data_dir):
    """At the constant start every group's mean score is equal: the kink of Norm's |G h|
    and Barycenter's |q - bary|, where L-BFGS used to stop after one iteration (Adult,
    alpha 0.9: the constant, accuracy 0.752). From the unpenalized minimum (and, for
    Norm, with |v| smoothed) it reaches a fair minimum: more accurate than the
    constant, with a lower cross-entropy, and fair."""
    sp = load_dataset("adult").split(test_size=0.3, random_state=0)
    X, y, s = sp.X_train[:6000], np.asarray(sp.y_train)[:6000], np.asarray(sp.s_train)[:6000]
    clf = FairClassifier(penalty, 0.9, random_state=0).fit(X, y, sensitive_features=s)
    assert clf.solver_ == "lbfgs" and clf.n_iter_ > 5
    ce_const, acc_const = constant_baseline(y)
    assert clf.score(X, y) > acc_const + 0.03  # the constant: 0.75
    p = clf.predict_proba(X)[:, 1]
    ce = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
    assert ce < ce_const - 0.05  # a minimum, not a point beside the kink
    pred = clf.predict(X)
    assert abs(pred[s == 1].mean() - pred[s == 0].mean()) < 0.05  # unpenalized: ~0.18


def test_representation_and_regression_nets_warn_of_raw_scales():
    """The representation learners and the regression nets train by gradient too: raw
    scales get the warning that names the scaler, and a density prior that overflows
    float32 (Fair Normalizing Flows' mixture at 1e20) is an error that says so, not
    torch's "invalid multinomial distribution"."""
    from otfair.estimators import CENet, FairNormalizingFlowClassifier, LAFTRClassifier

    X, y, s = two_group_data(200)
    with pytest.warns(FitQualityWarning, match="StandardScaler"):
        LAFTRClassifier(epochs=2, random_state=0).fit(X * 1e6, y, sensitive_features=s)
    with pytest.warns(FitQualityWarning, match="StandardScaler"):
        CENet(epochs=2, random_state=0).fit(X * 1e6, X[:, 0], sensitive_features=s)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ValueError, match="not finite in float32.*StandardScaler"):
            FairNormalizingFlowClassifier(epochs=2, random_state=0).fit(
                X * 1e20, y, sensitive_features=s
            )
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]


def test_a_loss_just_above_the_constants_warns_and_the_constant_itself_does_not():
    """The training cross-entropy is held against the constant's to its rounding only
    (FairnessCV's ``above_reference`` compares it exactly): a fit 1e-4 above it warns."""
    from otfair.estimators._torch_base import CONSTANT_LOSS_RTOL, check_against_constant

    y = np.array([1] * 7 + [0] * 3)
    base = math.log(0.7 / 0.3)  # the constant's logit: cross-entropy H(0.7)
    kwargs = {"owner": "M", "strength": 0.5, "penalized": True}
    shifted = np.full(10, base + 0.05)  # same decisions, a little further from 0.7
    p = 1 / (1 + math.exp(-(base + 0.05)))
    ce = -(0.7 * math.log(p) + 0.3 * math.log(1 - p))
    const = -(0.7 * math.log(0.7) + 0.3 * math.log(0.3))
    assert CONSTANT_LOSS_RTOL < ce / const - 1 < 1e-3  # inside the old 1e-3 slack
    with pytest.warns(FitQualityWarning, match="below the best constant"):
        check_against_constant(shifted, y, **kwargs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_against_constant(np.full(10, np.float32(base)).astype(float), y, **kwargs)
    assert not [w for w in caught if "below the best constant" in str(w.message)]
    assert [w for w in caught if "for every training row" in str(w.message)]


def test_ftm_default_grid_spans_its_trade_off_not_the_constant(compas):
    # CE + lambda FTM reaches the constant at a finite lambda (2-3 on COMPAS): most of
    # the default grid lies below it, and its top reaches it (the fair end)
    X, y, s = compas.X_train, compas.y_train, compas.s_train
    grid = default_strengths(FairClassifier("ftm"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FitQualityWarning)
        path = fairness_path(
            FairClassifier("ftm", random_state=0), X, y, sensitive_features=s, strengths=grid
        )
    _, acc_const = constant_baseline(np.asarray(y))
    over = np.array([model.score(X, y) - acc_const for model in path.estimators_])
    assert (over > 0.005).mean() >= 0.6, dict(zip(grid, over.round(4), strict=True))
    assert over[-1] <= 0.005 and over[0] > 0.1


def test_the_plateau_rule_exempts_a_game_from_stopping():
    stop = StopOnPlateau(tol=0.1, n_iter_no_change=1, every_epoch=(False, True))
    assert [stop({"losses": v}) for v in ([1.0, 1.0], [1.0, 1.0], [1.0, 1.0])] == [False] * 3
    assert stop.converged_at == [2, None]  # the first stopped; the game never "converges"


def test_an_adversary_trains_every_epoch_and_its_plain_sibling_still_stops():
    # CE - lambda * adversary's loss rises while the adversary catches up: the plateau
    # rule stopped such fits mid-game, after a few epochs and sometimes below the best
    # constant; they now train every epoch, without a ConvergenceWarning
    X, y, s = two_group_data(600)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FitQualityWarning)
        warnings.simplefilter("error", ConvergenceWarning)
        game = FairClassifier("adv", 10.0, epochs=60, random_state=0)
        assert game.fit(X, y, sensitive_features=s).n_iter_ == 60 and game.tol is not None
        path = fairness_path(
            FairClassifier("adv", epochs=300, random_state=0),
            X,
            y,
            sensitive_features=s,
            strengths=[0.0, 10.0],
        )
        plain = FairClassifier("adv", 0.0, epochs=300, random_state=0).fit(
            X, y, sensitive_features=s
        )
    assert [m.n_iter_ for m in path.estimators_] == [plain.n_iter_, 300]
    assert plain.n_iter_ < 300  # the unpenalized member stopped on the plateau, as alone
    # float32 fits: the stacked run sums in another order than the single fit (1e-7 apart)
    np.testing.assert_allclose(
        path.estimators_[0].predict_proba(X), plain.predict_proba(X), rtol=1e-5, atol=1e-6
    )
