"""The regression nets and the representation classifiers are held against the best constant.

* :func:`check_regression_against_constant` on hand-made predictions: the training
  mean itself and anything with a smaller squared error pass, a squared error above
  the variance warns with both numbers, a non-finite prediction is an error;
* end to end: a net on raw feature scales ends below the constant and says so beside
  the scale warning; a fit that learns does not warn; ``n_iter_`` is the epochs trained,
  for a single fit and for each net of a stacked curve;
* the representation classifiers (LAFTR, CFair, SIPM) warn as ``FairClassifier`` does
  (:func:`~otfair.estimators._torch_base.check_against_constant`).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from tests.estimators._classif_data import two_group_data

from otfair.estimators import (
    CENet,
    FitQualityWarning,
    UnfairRegressor,
    WassersteinNet,
    fairness_path,
)
from otfair.estimators._torch_base import (
    CONSTANT_LOSS_RTOL,
    check_regression_against_constant,
)


def _check(predictions, y, **kw):
    check_regression_against_constant(
        np.asarray(predictions, dtype=float),
        np.asarray(y, dtype=float),
        owner="Net",
        strength=kw.pop("strength", 0.0),
        penalized=kw.pop("penalized", False),
    )


def test_the_mean_and_better_fits_pass_and_a_worse_one_warns_with_its_numbers():
    y = np.array([0.0, 1.0, 2.0, 3.0])  # mean 1.5, variance 1.25
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _check(np.full(4, 1.5), y)  # the constant itself: R^2 = 0
        _check(y + 0.1, y)  # MSE 0.01
        _check(np.full(4, 1.5) * (1 + 1e-9), y)  # within rounding of the constant's
    # predicting 0 everywhere: MSE (0 + 1 + 4 + 9) / 4 = 3.5 against 1.25, R^2 = -1.8
    with pytest.warns(
        FitQualityWarning, match=r"squared error 3\.5 vs 1\.25 in the units of `y`, R\^2 -1\.8000"
    ):
        _check(np.zeros(4), y)
    with pytest.warns(FitQualityWarning, match="strength=50 the penalty may outweigh"):
        _check(np.zeros(4), y, strength=50.0, penalized=True)
    # just above the constant's error, beyond the rounding allowance
    slightly = np.full(4, 1.5 + np.sqrt(1.25 * 10 * CONSTANT_LOSS_RTOL))
    with pytest.warns(FitQualityWarning, match="below the best constant"):
        _check(slightly, y)


def test_non_finite_predictions_are_an_error():
    with pytest.raises(ValueError, match="diverged.*not finite"):
        _check([0.0, np.nan, 1.0], [0.0, 1.0, 2.0])


@pytest.mark.parametrize("cls", [UnfairRegressor, CENet, WassersteinNet])
def test_a_net_on_raw_scales_says_it_ends_below_the_constant(cls):
    """At 1e20 every hidden unit saturates from the first step: the net predicts one
    value for every row, far from the mean (training R^2 about -10 on these data)."""
    X, _, s = two_group_data(300)
    y = X[:, 0] + 0.5 * s
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        net = cls(epochs=3, random_state=0).fit(X * 1e20, y, sensitive_features=s)
    messages = [str(w.message) for w in caught if issubclass(w.category, FitQualityWarning)]
    assert any("StandardScaler" in m for m in messages)
    below = [m for m in messages if "ends below the best constant" in m]
    assert len(below) == 1 and cls.__name__ in below[0]
    fitted = net.predict(X * 1e20)
    assert np.mean((fitted - y) ** 2) > np.var(y)  # what the warning said


def test_a_fit_that_learns_does_not_warn_and_counts_its_epochs():
    X, _, s = two_group_data(300)
    y = X[:, 0] + 0.5 * s
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        net = UnfairRegressor(epochs=20, random_state=0).fit(X, y, sensitive_features=s)
    assert net.n_iter_ == 20 == len(net.history_)
    assert net.score(X, y) > 0.5  # well above the constant's R^2 of 0


def test_each_net_of_a_stacked_curve_is_checked_and_counts_its_epochs():
    X, _, s = two_group_data(300)
    y = X[:, 0] + 0.5 * s
    path = fairness_path(
        WassersteinNet(epochs=4, random_state=0), X, y, sensitive_features=s, strengths=[0.0, 1.0]
    )
    assert [est.n_iter_ for est in path.estimators_] == [4, 4]
    with pytest.warns(FitQualityWarning, match="WassersteinNet ends below the best constant"):
        fairness_path(
            WassersteinNet(epochs=2, random_state=0),
            X * 1e20,
            y,
            sensitive_features=s,
            strengths=[0.0, 1.0],
        )


def test_the_representation_classifiers_say_when_they_end_at_or_below_the_constant():
    """The representation classifiers are held against the best constant as
    FairClassifier is. On features without signal and 90% positive labels the fits
    end near the constant: each warns exactly when its own training numbers are below
    the constant's or its predictions are one class, and at least one of them does.
    CFair, trained on the class-balanced error, is held to the balanced constant (balanced
    accuracy 0.5, balanced cross-entropy log 2)."""
    import math

    import otfair.estimators as estimators
    from otfair.estimators._torch_base import constant_baseline

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4))
    s = rng.integers(0, 2, 400)
    y = (rng.random(400) < 0.9).astype(int)
    const_ce, const_acc = constant_baseline(y)
    warned = 0
    for name in ("LAFTRClassifier", "CFairClassifier", "SIPMClassifier"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est = getattr(estimators, name)(epochs=30, random_state=0)
            est.fit(X, y, sensitive_features=s)
        p = est.predict_proba(X)[:, 1]
        hit = (p >= 0.5) == y
        loss = -y * np.log(p) - (1 - y) * np.log1p(-p)
        acc, ce, floor_ce, floor_acc = hit.mean(), loss.mean(), const_ce, const_acc
        if name == "CFairClassifier":  # each class's mean, then their mean
            acc = 0.5 * (hit[y == 0].mean() + hit[y == 1].mean())
            ce = 0.5 * (loss[y == 0].mean() + loss[y == 1].mean())
            floor_ce, floor_acc = math.log(2.0), 0.5
        below = acc < floor_acc - 1e-12 or ce > floor_ce * (1 + 1e-4)
        just_above = floor_ce * (1 + CONSTANT_LOSS_RTOL) < ce <= floor_ce * (1 + 1e-4)
        if just_above:  # within float32 rounding of the rule's edge: either way is right
            continue
        one_class = len(np.unique(p >= 0.5)) == 1
        said = [str(w.message) for w in caught if issubclass(w.category, FitQualityWarning)]
        if below:
            assert len(said) == 1 and f"{name} ends below the best constant" in said[0]
        elif one_class:
            assert len(said) == 1 and f"{name} predicts class 1 for every training row" in said[0]
        else:
            assert not said, name
        warned += bool(said)
    assert warned >= 1
    assert est.n_iter_ == 30 == len(est.history_)


def test_adapfair_says_when_its_frozen_classifier_predicts_one_class():
    """AdapFair's flows cannot make a frozen classifier that predicts one class learn
    the labels: the fitted pipeline is held against the constant and says so."""
    from otfair.estimators import AdapFairClassifier, FairClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4))
    s = rng.integers(0, 2, 400)
    y = (rng.random(400) < 0.9).astype(int)
    base = FairClassifier(random_state=0).fit(X, y)  # no signal: the base rate everywhere
    assert np.unique(base.predict(X)).tolist() == [1]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = AdapFairClassifier(base_classifier=base, epochs=2, random_state=0)
        est.fit(X, y, sensitive_features=s)
    assert np.unique(est.predict(X, sensitive_features=s)).tolist() == [1]
    assert est.n_iter_ == 2 == est.preprocessor_.n_iter_ == len(est.preprocessor_.history_)
    said = [str(w.message) for w in caught if issubclass(w.category, FitQualityWarning)]
    assert (
        len(said) == 1 and "AdapFairClassifier predicts class 1 for every training row" in said[0]
    )
    # a curve (one base, flows per strength) checks each of its models
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        path = fairness_path(
            AdapFairClassifier(base_classifier=base, epochs=2, random_state=0),
            X,
            y,
            sensitive_features=s,
            strengths=[0.1, 0.9],
        )
    said = [str(w.message) for w in caught if issubclass(w.category, FitQualityWarning)]
    assert len(path.estimators_) == 2
    assert sum("AdapFairClassifier predicts class 1" in m for m in said) == 2


def test_the_preprocessor_alone_is_held_against_the_constant_and_names_its_classifier():
    """AdapFairPreprocessor (the flows in front of the user's frozen classifier) used to
    return a one-class pipeline with a ConvergenceWarning only; it now says so, and blames
    the classifier when the classifier alone is no better than the constant."""
    from otfair.estimators import AdapFairPreprocessor, FairClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4))
    s = rng.integers(0, 2, 400)
    y = (rng.random(400) < 0.9).astype(int)
    base = FairClassifier(random_state=0).fit(X, y)  # no signal: the base rate everywhere
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        AdapFairPreprocessor(base, epochs=2, random_state=0).fit(X, y, sensitive_features=s)
    said = [str(w.message) for w in caught if issubclass(w.category, FitQualityWarning)]
    assert len(said) == 1, said
    assert "AdapFairPreprocessor predicts class 1 for every training row" in said[0]
    assert "frozen `classifier` alone is no better" in said[0]
    # a classifier that learned the labels: the fitted pipeline keeps them, no warning
    X, y, s = two_group_data(400)
    good = FairClassifier(random_state=0).fit(X, y)
    assert good.score(X, y) > max(y.mean(), 1 - y.mean())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        AdapFairPreprocessor(good, epochs=5, random_state=0).fit(X, y, sensitive_features=s)
    assert not [w for w in caught if issubclass(w.category, FitQualityWarning)]


def test_adapfair_warns_of_raw_feature_scales_in_its_own_name():
    """AdapFair trains its flows (and its base classifier) by gradient: raw scales get
    the warning that names the scaler, once, in the name of the estimator the user fit."""
    from otfair.estimators import AdapFairClassifier, AdapFairPreprocessor, FairClassifier

    X, y, s = two_group_data(200)
    for est in (
        AdapFairClassifier(epochs=1, base_epochs=2, random_state=0),
        AdapFairPreprocessor(FairClassifier(random_state=0).fit(X, y), epochs=1, random_state=0),
    ):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est.fit(X * 1e6, y, sensitive_features=s)
        scale = [str(w.message) for w in caught if "feature column" in str(w.message)]
        name = type(est).__name__
        assert len(scale) == 1 and scale[0].startswith(f"{name}: feature column"), scale
        assert "StandardScaler" in scale[0]


def _plateau_epoch(values, tol, n_iter_no_change):
    """The epoch (1-based) at which scikit-learn's rule stops, from the recorded values."""
    best, count = np.inf, 0
    for epoch, value in enumerate(values, start=1):
        count = count + 1 if value > best - tol else 0
        best = min(best, value)
        if count >= n_iter_no_change:
            return epoch
    return None


def test_a_net_with_tol_stops_where_the_rule_says_and_warns_at_the_cap():
    from sklearn.exceptions import ConvergenceWarning

    X, _, s = two_group_data(300)
    y = X[:, 0] + 0.5 * s
    full = UnfairRegressor(epochs=80, random_state=0).fit(X, y, sensitive_features=s)
    expected = _plateau_epoch([h["mse"] for h in full.history_], 1e-3, 3)
    assert expected is not None and expected < 80  # the rule ends this fit early
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        net = UnfairRegressor(epochs=80, tol=1e-3, n_iter_no_change=3, random_state=0)
        net.fit(X, y, sensitive_features=s)
    assert net.n_iter_ == expected == len(net.history_)
    # the epochs it trained are the full run's first ones, to the last bit
    assert [h["mse"] for h in net.history_] == [h["mse"] for h in full.history_[:expected]]
    with pytest.warns(ConvergenceWarning, match="reached epochs=2 epochs before"):
        UnfairRegressor(epochs=2, tol=1e-3, random_state=0).fit(X, y, sensitive_features=s)


def test_a_stacked_curve_with_tol_ends_each_net_where_its_separate_fit_ends():
    X, _, s = two_group_data(300)
    y = X[:, 0] + 0.5 * s
    settings = {"epochs": 60, "tol": 1e-3, "n_iter_no_change": 3, "random_state": 0}
    strengths = [0.0, 1.0, 10.0]
    path = fairness_path(CENet(**settings), X, y, sensitive_features=s, strengths=strengths)
    for value, curved in zip(strengths, path.estimators_, strict=True):
        alone = CENet(value, **settings).fit(X, y, sensitive_features=s)
        assert curved.n_iter_ == alone.n_iter_ == len(curved.history_)
        np.testing.assert_allclose(curved.predict(X), alone.predict(X), rtol=0, atol=1e-6)
    assert len({est.n_iter_ for est in path.estimators_}) > 1  # they did end apart


def test_a_clone_of_adapfair_keeps_its_pretrained_classifier_and_fairnesscv_says_no():
    """The pretrained classifier is frozen, never refit: a clone (fairness_path,
    cross-validation) keeps that fitted object, where scikit-learn's default clone gave
    an unfitted copy that AdapFair then refused. FairnessCV cannot score an aware model
    whose predictions need the groups, and says so; a blind one it searches."""
    from sklearn.base import clone

    from otfair.estimators import (
        AdapFairClassifier,
        AdapFairPreprocessor,
        FairClassifier,
        FairnessCV,
    )

    X, y, s = two_group_data(300)
    base = FairClassifier(random_state=0).fit(X, y)
    est = AdapFairClassifier(base_classifier=base, epochs=1, random_state=0)
    assert clone(est).base_classifier is base
    assert clone(AdapFairPreprocessor(base, epochs=1)).classifier is base
    assert clone(AdapFairClassifier(epochs=1)).base_classifier is None  # trains its own
    path = fairness_path(est, X, y, sensitive_features=s, strengths=[0.2, 0.8])
    assert all(m.base_classifier_ is base for m in path.estimators_)
    fitted = clone(AdapFairPreprocessor(base, epochs=1, random_state=0))
    assert (
        fitted.fit(X, y, sensitive_features=s).transform(X, sensitive_features=s).shape == X.shape
    )
    with pytest.raises(ValueError, match=r"cannot score an aware AdapFairClassifier"):
        FairnessCV(est, max_violation=0.1).fit(X, y, sensitive_features=s)
    # blind, it is searched, every fold and the refit on the one frozen classifier
    blind = clone(est).set_params(mode="blind")
    search = FairnessCV(blind, strengths=[0.5, 1.0], max_violation=1.0, cv=2)
    search.fit(X, y, sensitive_features=s)
    assert search.best_estimator_.base_classifier_ is base


def test_a_balanced_objective_is_held_to_the_balanced_constant():
    """CFair trains on the class-balanced error: on 90/10 labels its plain accuracy may
    fall below the majority constant's (0.90) while its balanced accuracy is far above
    the balanced constant's 0.5. Hand-made logits: 30 of 90 negatives called positive,
    9 of 10 positives found (accuracy 0.69, balanced accuracy 0.783)."""
    import math

    from otfair.estimators._torch_base import check_against_constant

    y = np.r_[np.zeros(90), np.ones(10)]
    logits = np.r_[np.full(60, -1.0), np.full(30, 0.5), np.full(9, 1.0), -1.0]
    kwargs = {"owner": "CFairClassifier", "strength": 1.0, "penalized": True}
    with pytest.warns(FitQualityWarning, match="accuracy 0.6900 vs 0.9000"):
        check_against_constant(logits, y, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_against_constant(logits, y, balanced=True, **kwargs)
    # the balanced measures by hand: below them it warns, in the balanced words
    loss = np.logaddexp(0.0, logits) - y * logits
    balanced_ce = 0.5 * (loss[:90].mean() + loss[90:].mean())
    assert balanced_ce < math.log(2)
    flipped = -logits  # balanced accuracy 0.217
    with pytest.warns(FitQualityWarning, match=r"balanced accuracy 0\.2167 vs 0\.5000"):
        check_against_constant(flipped, y, balanced=True, **kwargs)
    with pytest.warns(
        FitQualityWarning,
        match="predicts class 1 for every training row "
        r"\(balanced accuracy 0\.5000",
    ):
        check_against_constant(np.full(100, 1e-3), y, balanced=True, **kwargs)


def test_the_representation_classifiers_stop_on_a_plateau_only_when_asked():
    """``tol=None`` (the default) trains exactly ``epochs``; a float stops where the task
    loss's plateau rule says (the epoch recomputed from the full run's history, the same
    seed: the runs agree until the stop) and warns when the cap comes first."""
    from sklearn.exceptions import ConvergenceWarning

    from otfair.estimators import FairNormalizingFlowClassifier, LAFTRClassifier
    from otfair.estimators._training import StopOnPlateau

    X, y, s = two_group_data(300)
    cases = [
        (LAFTRClassifier, "task", {}),
        (FairNormalizingFlowClassifier, "ce", {"n_blocks": 1}),
    ]
    for cls, key, extra in cases:
        full = cls(epochs=40, random_state=0, **extra).fit(X, y, sensitive_features=s)
        assert full.n_iter_ == 40
        rule = StopOnPlateau(tol=0.01, n_iter_no_change=3)
        expected = next(
            (e for e, h in enumerate(full.history_, 1) if rule({"loss": h[key]})), None
        )
        assert expected is not None and expected < 40, cls.__name__
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            early = cls(epochs=40, tol=0.01, n_iter_no_change=3, random_state=0, **extra)
            early.fit(X, y, sensitive_features=s)
        assert early.n_iter_ == expected, cls.__name__
        assert early.history_ == full.history_[:expected]
        with pytest.warns(ConvergenceWarning, match="reached epochs=2"):
            cls(epochs=2, tol=0.0, n_iter_no_change=5, random_state=0, **extra).fit(
                X, y, sensitive_features=s
            )
