"""The fair-representation classifiers: conventions, errors, reproducibility, fairness."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.base import clone

from otfair.estimators.representation import (
    CFairClassifier,
    FairNormalizingFlowClassifier,
    LAFTRClassifier,
    SIPMClassifier,
)
from otfair.penalties._representation import (
    ConditionalAlignment,
    LAFTRAdversary,
    SigmoidIPMCritic,
)
from otfair.penalties._representation_losses import (
    conditional_adversary_loss,
    laftr_adversary_objective,
    sigmoid_ipm,
)

FAST = {"epochs": 2, "batch_size": 64, "random_state": 0}
ESTIMATORS = [
    LAFTRClassifier(1.0, **FAST),
    LAFTRClassifier(1.0, notion="eo", **FAST),
    SIPMClassifier(1.0, **FAST),
    CFairClassifier(1.0, **FAST),
    FairNormalizingFlowClassifier(0.5, n_blocks=1, **FAST),
]
IDS = ["laftr-dp", "laftr-eo", "sipm-lfr", "cfair", "fair-nf"]


def _data(n: int = 240, seed: int = 0):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 4)) + 1.5 * s[:, None] * np.array([1.0, 0.0, 0.0, 0.0])
    y = (X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=n) > 0.75).astype(int)
    return X.astype(np.float32), y, s


@pytest.mark.parametrize("est", ESTIMATORS, ids=IDS)
def test_fit_predict_shapes_clone_and_reproducible(est):
    X, y, s = _data()
    a = clone(est).fit(X, y, sensitive_features=s)
    b = clone(est).fit(X, y, sensitive_features=s)
    pa = a.predict_proba(X, sensitive_features=s)
    assert pa.shape == (len(X), 2)
    np.testing.assert_allclose(pa.sum(axis=1), 1.0, rtol=1e-6)
    np.testing.assert_array_equal(pa, b.predict_proba(X, sensitive_features=s))
    pred = a.predict(X, sensitive_features=s)
    np.testing.assert_array_equal(pred, (pa[:, 1] >= 0.5).astype(int))
    assert a.transform(X, sensitive_features=s).shape[0] == len(X)
    assert set(clone(est).get_params()) == set(est.get_params())


@pytest.mark.parametrize("est", ESTIMATORS, ids=IDS)
def test_bad_inputs_raise_value_errors_naming_the_argument(est):
    X, y, s = _data()
    with pytest.raises(ValueError, match="sensitive_features"):
        clone(est).fit(X, y, sensitive_features=np.zeros(len(X)))  # one group
    with pytest.raises(ValueError, match="sensitive_features"):
        clone(est).fit(X, y, sensitive_features=s[:-1])  # length mismatch
    with pytest.raises(ValueError, match="`y`"):
        clone(est).fit(X, y[:-1], sensitive_features=s)
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="`X`"):
        clone(est).fit(Xn, y, sensitive_features=s)
    with pytest.raises(ValueError, match="two groups"):
        clone(est).fit(X, y, sensitive_features=s + (np.arange(len(s)) % 3 == 0))
    fitted = clone(est).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="not seen during fit"):
        fitted.predict(X, sensitive_features=np.where(s == 1, 7, 0))
    with pytest.raises(ValueError, match="`X`"):
        fitted.predict(X[:, :3], sensitive_features=s)


def test_fair_nf_needs_sensitive_features_at_predict():
    X, y, s = _data()
    est = FairNormalizingFlowClassifier(0.5, n_blocks=1, **FAST).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="sensitive_features"):
        est.predict(X, sensitive_features=None)
    with pytest.raises(ValueError, match="strength"):
        FairNormalizingFlowClassifier(1.0).fit(X, y, sensitive_features=s)


def test_penalties_are_the_negated_or_plain_losses():
    torch.manual_seed(0)
    z = torch.randn(30, 3)
    s = torch.tensor([0, 1] * 15)
    y = torch.tensor([0] * 10 + [1] * 20)
    laftr = LAFTRAdversary(3, "dp", (5,))
    h = torch.sigmoid(laftr.adversary(z)[:, 0])
    torch.testing.assert_close(laftr(None, s, y, z), -laftr_adversary_objective(h, s))
    sipm = SigmoidIPMCritic(3)
    torch.testing.assert_close(
        sipm(None, s, y, z), -sigmoid_ipm(z, s, sipm.critic.theta, sipm.critic.mu)
    )
    cfair = ConditionalAlignment(3, (4,))
    torch.testing.assert_close(
        cfair(None, s, y, z), conditional_adversary_loss(cfair.adversaries(z), s, y)
    )
    with pytest.raises(ValueError, match="features"):
        sipm(None, s, y, None)
    with pytest.raises(ValueError, match="notion"):
        LAFTRAdversary(3, "eopp")


def _dp(est, X, s):
    p = est.predict(X, sensitive_features=s)
    return abs(p[s == 1].mean() - p[s == 0].mean())


@pytest.mark.parametrize(
    ("cls", "strength", "factor"),
    [
        (LAFTRClassifier, 2.0, 0.85),  # the L1 adversary is slow on 240 steps
        (SIPMClassifier, 2.0, 0.7),
        (FairNormalizingFlowClassifier, 0.9, 0.7),
    ],
    ids=["laftr", "sipm-lfr", "fair-nf"],
)
def test_strength_lowers_the_dp_gap_on_a_biased_toy(cls, strength, factor):
    X, y, s = _data(800, seed=3)
    kw = {"epochs": 30, "batch_size": 100, "random_state": 0}
    if cls is FairNormalizingFlowClassifier:
        kw["n_blocks"] = 2
    unfair = cls(0.0, **kw).fit(X, y, sensitive_features=s)
    fair = cls(strength, **kw).fit(X, y, sensitive_features=s)
    assert _dp(fair, X, s) < factor * _dp(unfair, X, s)
