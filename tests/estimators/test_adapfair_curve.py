"""AdapFairClassifier(lam=[...]): one base classifier, flows per lam, equal to separate fits."""

from __future__ import annotations

import numpy as np
import pytest
from _classif_data import drift_data

from otfair.estimators._curve import copy_fitted, stack_estimators
from otfair.estimators.preprocessing.adapfair_classifier import AdapFairClassifier


def _data(seed=0, shift=0.0):
    return drift_data(n=500, seed=seed, shift=shift)


LAMS = [0.9, 0.5, 0.1]


def _est(lam, **kw):
    return AdapFairClassifier(lam=lam, epochs=3, base_epochs=4, random_state=0, **kw)


@pytest.mark.parametrize("mode", ["aware", "blind"])
def test_curve_models_equal_separate_fits(mode):
    X, y, s = _data()
    curve = _est(LAMS, mode=mode).fit(X, y, sensitive_features=s)
    assert curve.lams_ == LAMS and len(curve.estimators_) == 3
    for lam, model in zip(LAMS, curve.estimators_, strict=True):
        alone = _est(lam, mode=mode).fit(X, y, sensitive_features=s)
        np.testing.assert_array_equal(
            curve.predict_proba(X, sensitive_features=s, lam=lam),
            alone.predict_proba(X, sensitive_features=s),
        )
        # one frozen base classifier for the whole curve
        assert model.base_classifier_ is curve.base_classifier_
    np.testing.assert_array_equal(curve.baseline_proba(X), alone.baseline_proba(X))


def test_curve_with_source_data_trains_the_base_on_the_source():
    Xs, ys, ss = _data(seed=1)
    X, y, s = _data(seed=2, shift=1.0)
    curve = _est(LAMS[:2]).fit(X, y, sensitive_features=s, source_data=(Xs, ys, ss))
    alone = _est(LAMS[1]).fit(X, y, sensitive_features=s, source_data=(Xs, ys, ss))
    np.testing.assert_array_equal(
        curve.predict(X, sensitive_features=s, lam=LAMS[1]),
        alone.predict(X, sensitive_features=s),
    )


def test_choosing_a_model_of_the_curve_is_checked():
    X, y, s = _data()
    curve = _est(LAMS[:2]).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="lam="):
        curve.predict_proba(X, sensitive_features=s)
    with pytest.raises(ValueError, match="not on the fitted curve"):
        curve.predict_proba(X, sensitive_features=s, lam=0.3)
    single = _est(0.5).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="fitted at"):
        single.predict_proba(X, sensitive_features=s, lam=0.9)
    with pytest.raises(ValueError, match="distinct"):
        _est([0.5, 0.5]).fit(X, y, sensitive_features=s)


def test_stacked_single_fits_share_one_base_classifier():
    """What ``otfair sweep`` does with a group: K single-lam estimators, one curve fit."""
    X, y, s = _data()
    Xs, ys, ss = _data(seed=4)
    singles = [_est(lam) for lam in LAMS[:2]]
    curve = stack_estimators(singles, "lam")
    assert curve.lam == LAMS[:2]
    curve.fit(X, y, sensitive_features=s, source_data=(Xs, ys, ss))
    for single, model in zip(singles, curve.estimators_, strict=True):
        copy_fitted(model, single)
    a, b = singles
    assert a.base_classifier_ is b.base_classifier_
    alone = _est(0.5).fit(X, y, sensitive_features=s, source_data=(Xs, ys, ss))
    np.testing.assert_array_equal(
        b.predict_proba(X, sensitive_features=s), alone.predict_proba(X, sensitive_features=s)
    )
