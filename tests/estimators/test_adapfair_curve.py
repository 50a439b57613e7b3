"""fairness_path(AdapFairClassifier): one base classifier, flows per strength, as separate fits."""

from __future__ import annotations

import numpy as np
import pytest
from _classif_data import drift_data

from otfair.estimators import fairness_path
from otfair.estimators.preprocessing.adapfair_classifier import AdapFairClassifier


def _data(seed=0, shift=0.0):
    return drift_data(n=500, seed=seed, shift=shift)


LAMS = [0.9, 0.5, 0.1]


def _est(strength=0.5, **kw):
    return AdapFairClassifier(strength=strength, epochs=3, base_epochs=4, random_state=0, **kw)


@pytest.mark.parametrize("mode", ["aware", "blind"])
def test_path_models_equal_separate_fits(mode):
    X, y, s = _data()
    path = fairness_path(_est(mode=mode), X, y, sensitive_features=s, strengths=LAMS)
    assert list(path.strengths_) == LAMS and len(path.estimators_) == 3
    for lam, model in zip(LAMS, path.estimators_, strict=True):
        alone = _est(lam, mode=mode).fit(X, y, sensitive_features=s)
        assert model.get_params()["strength"] == lam
        np.testing.assert_array_equal(
            model.predict_proba(X, sensitive_features=s),
            alone.predict_proba(X, sensitive_features=s),
        )
        # one frozen base classifier for the whole path
        assert model.base_classifier_ is path.estimators_[0].base_classifier_
    np.testing.assert_array_equal(path.estimators_[-1].baseline_proba(X), alone.baseline_proba(X))


def test_path_with_source_data_trains_the_base_on_the_source():
    Xs, ys, ss = _data(seed=1)
    X, y, s = _data(seed=2, shift=1.0)
    path = fairness_path(
        _est(), X, y, sensitive_features=s, strengths=LAMS[:2], source_data=(Xs, ys, ss)
    )
    alone = _est(LAMS[1]).fit(X, y, sensitive_features=s, source_data=(Xs, ys, ss))
    np.testing.assert_array_equal(
        path.estimators_[1].predict(X, sensitive_features=s),
        alone.predict(X, sensitive_features=s),
    )


def test_a_list_strength_is_refused_naming_fairness_path():
    X, y, s = _data()
    with pytest.raises(ValueError, match=r"`strength` must be a number.*fairness_path"):
        _est([0.5, 0.9]).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="distinct"):
        fairness_path(_est(), X, y, sensitive_features=s, strengths=[0.5, 0.5])
