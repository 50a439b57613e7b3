"""What a practitioner's battery of the classifiers found, kept fixed.

A length mismatch names the arguments; ``predict_proba`` at huge logits is quiet and
exact; Discrete Fair NF's refusal names the cause when one-hot columns were scaled;
Fair NF's mixture on raw scales fails with the scaler's name, not EM's words;
``ReductionClassifier.predict_proba`` is the randomized labels' probability (a mixture
of the base models' labels), which its docstring says.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.special import expit
from sklearn.preprocessing import StandardScaler
from tests.estimators._classif_data import two_group_data

from otfair.estimators import (
    DiscreteFairNFClassifier,
    FairClassifier,
    FairNormalizingFlowClassifier,
    ReductionClassifier,
)


@pytest.mark.parametrize("make", [FairClassifier, ReductionClassifier])
def test_a_length_mismatch_names_the_arguments(make):
    X, y, s = two_group_data(300)
    with pytest.raises(ValueError, match=r"`X` has 300, `y` has 295"):
        make().fit(X, y[:-5], sensitive_features=s)


def test_predict_proba_at_huge_logits_is_quiet_and_exact():
    X, y, s = two_group_data(300)
    model = FairClassifier(random_state=0).fit(X, y)
    big = X * 1e4  # logits of order 1e4: exp(-logit) overflows
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        proba = model.predict_proba(big)
    np.testing.assert_array_equal(proba[:, 1], expit(model.decision_function(big)))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_discrete_fair_nf_names_scaled_one_hot_columns_as_the_cause():
    rng = np.random.default_rng(0)
    n = 400
    one_hot = np.eye(2)[rng.integers(0, 2, (n, 30))].reshape(n, 60)  # 30 blocks of 2
    y, s = rng.integers(0, 2, n), rng.integers(0, 2, n)
    scaled = StandardScaler().fit_transform(one_hot)  # no column is 0/1 any more
    with pytest.raises(ValueError, match="no column of `X` is part of a 0/1 one-hot") as info:
        DiscreteFairNFClassifier(max_cells=10_000).fit(scaled, y, sensitive_features=s)
    assert "0 cells" not in str(info.value) and "ColumnTransformer" in str(info.value)
    # the unscaled blocks are found (30 blocks of 2 levels: over the cap, blocks named)
    with pytest.raises(ValueError, match="one-hot blocks alone have 1,073,741,824 cells"):
        DiscreteFairNFClassifier(max_cells=10_000).fit(one_hot, y, sensitive_features=s)


def test_fair_nf_mixture_failure_on_raw_scales_names_the_scaler():
    X, y, s = two_group_data(200)
    X = np.column_stack([X, (X[:, 0] > 0).astype(float)]) * 1e7  # a collapsed column
    with (
        pytest.raises(ValueError, match=r"density estimate of the features .*StandardScaler"),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")  # the scale warning comes first
        FairNormalizingFlowClassifier(epochs=1, random_state=0).fit(X, y, sensitive_features=s)


def test_reduction_predict_proba_is_a_mixture_of_the_base_models_labels():
    X, y, s = two_group_data(300)
    model = ReductionClassifier(0.01, random_state=0).fit(X, y, sensitive_features=s)
    p = model.predict_proba(X)[:, 1]
    weights = np.asarray(model.mitigator_.weights_, dtype=float)
    labels = np.column_stack([h.predict(X) for h in model.mitigator_.predictors_])
    np.testing.assert_allclose(p, np.clip(labels @ weights, 0, 1), atol=1e-12)
    assert "not a calibrated" in type(model).predict_proba.__doc__


@pytest.mark.parametrize("scale", [1.0, 1e6])
def test_representation_fit_quality_warning_names_the_scale_when_it_is_the_cause(scale):
    from otfair.estimators import LAFTRClassifier

    X, y, s = two_group_data(300)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        LAFTRClassifier(epochs=1, random_state=0).fit(X * scale, y, sensitive_features=s)
    below = [str(w.message) for w in caught if "ends below the best constant" in str(w.message)]
    if scale > 1:  # one epoch on raw scales: below the constant, the scale named first
        assert below and "far from a unit scale" in below[0]
    else:  # on a unit scale no warning blames it
        assert not any("far from a unit scale" in text for text in below)


def test_each_fit_keeps_the_message_of_its_check_against_the_constant():
    # the warning was printed once and lost; sweeps and reports read the attribute
    from otfair.estimators import FitQualityWarning, fairness_path

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4))
    s = rng.integers(0, 2, 400)
    y = (rng.random(400) < 0.9).astype(int)  # no signal: the base rate everywhere
    with pytest.warns(FitQualityWarning, match="predicts class 1 for every training row"):
        weak = FairClassifier(random_state=0).fit(X, y, sensitive_features=s)
    assert "predicts class 1 for every training row" in weak.fit_quality_warning_
    y = (X[:, 0] + 0.3 * rng.normal(size=400) > 0).astype(int)
    good = FairClassifier(random_state=0).fit(X, y, sensitive_features=s)
    assert good.fit_quality_warning_ is None
    # a curve's models each keep their own check: the label is the group, so parity
    # at a huge strength leaves one class
    X[:, 1] += 2 * s
    y = ((s + 0.2 * rng.normal(size=400)) > 0.5).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FitQualityWarning)
        path = fairness_path(
            FairClassifier("gapreg", random_state=0), X, y, sensitive_features=s,
            strengths=[0.0, 1e9],
        )  # fmt: skip
    assert path[0].fit_quality_warning_ is None
    assert path[1].fit_quality_warning_ is not None
