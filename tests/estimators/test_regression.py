"""Tests of CENet and WassersteinNet (accuracy parity in regression)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.base import clone

from otfair.estimators.regression.baselines import UnfairRegressor
from otfair.estimators.regression.nets import CENet, WassersteinNet
from otfair.metrics._accuracy_disparity import accuracy_disparity_audit

SMALL = {"encoder_hidden": (16,), "epochs": 30, "batch_size": 128, "random_state": 0}


def _shifted_data(n: int = 800, seed: int = 0):
    """Group 1 has a shifted feature and a different slope: the unfair net fits it worse."""
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 4))
    X[:, 1] += 1.5 * s
    logit = X[:, 0] + np.where(s == 1, -0.8, 0.8) * X[:, 2]
    y = 1 / (1 + np.exp(-logit)) + rng.normal(0, np.where(s == 1, 0.12, 0.03))
    return X, np.clip(y, 0, 1), s


@pytest.mark.parametrize("cls", [CENet, WassersteinNet, UnfairRegressor])
def test_fit_predict_score_shapes_and_r2(cls):
    X, y, s = _shifted_data()
    est = cls(**SMALL, **({} if cls is UnfairRegressor else {"adversary_hidden": (8,)}))
    est.fit(X, y, sensitive_features=s)
    pred = est.predict(X)
    assert pred.shape == (len(y),) and pred.dtype == np.float64
    assert np.all((pred >= 0) & (pred <= 1))  # sigmoid head on [0, 1] targets
    r2 = 1 - np.sum((y - pred) ** 2) / np.sum((y - y.mean()) ** 2)  # reference R^2
    assert est.score(X, y) == pytest.approx(r2)
    assert r2 > 0.3
    assert est.transform(X).shape == (len(y), 16)
    assert len(est.history_) == SMALL["epochs"]


@pytest.mark.parametrize("cls", [CENet, WassersteinNet])
def test_reproducible_with_random_state_and_clone(cls):
    X, y, s = _shifted_data(300)
    a = cls(0.5, **SMALL).fit(X, y, sensitive_features=s).predict(X)
    b = clone(cls(0.5, **SMALL)).fit(X, y, sensitive_features=s).predict(X)
    c = cls(0.5, **{**SMALL, "random_state": 1}).fit(X, y, sensitive_features=s).predict(X)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


def test_wassersteinnet_critic_stays_within_clip():
    X, y, s = _shifted_data(400)
    est = WassersteinNet(5.0, clip=0.01, **{**SMALL, "epochs": 5}).fit(X, y, sensitive_features=s)
    weights = torch.cat([p.detach().flatten() for p in est.adversary_.parameters()])
    assert weights.abs().max().item() <= 0.01
    assert weights.abs().max().item() == pytest.approx(0.01)  # clipping was active


def test_gradient_penalty_critic_is_not_clipped_and_extra_critic_steps_change_the_fit():
    X, y, s = _shifted_data(300)
    opts = {**SMALL, "epochs": 3, "adversary_hidden": (8,)}
    gp = WassersteinNet(1.0, clip=None, gradient_penalty=10.0, **opts)
    gp.fit(X, y, sensitive_features=s)
    weights = torch.cat([p.detach().flatten() for p in gp.adversary_.parameters()])
    assert weights.abs().max().item() > 0.05  # unconstrained by the default clip
    one = WassersteinNet(1.0, **opts).fit(X, y, sensitive_features=s).predict(X)
    default = WassersteinNet(1.0, n_critic=1, **opts).fit(X, y, sensitive_features=s).predict(X)
    three = WassersteinNet(1.0, n_critic=3, **opts).fit(X, y, sensitive_features=s).predict(X)
    np.testing.assert_array_equal(one, default)
    assert not np.allclose(one, three)


def test_lambda_zero_equals_unfair_net():
    X, y, s = _shifted_data(300)
    opts = {**SMALL, "epochs": 5}
    unfair = UnfairRegressor(**opts).fit(X, y, sensitive_features=s).predict(X)
    w0 = WassersteinNet(0.0, n_critic=3, **opts)  # no adversary: extra critic steps are moot
    w0 = w0.fit(X, y, sensitive_features=s).predict(X)
    np.testing.assert_allclose(w0, unfair)


def test_targets_outside_unit_interval_are_scaled_back():
    X, y, s = _shifted_data(400)
    gpa = 1.8 + 2.2 * y  # a GPA-like target in [1.8, 4.0]
    est = WassersteinNet(1.0, **SMALL).fit(X, gpa, sensitive_features=s)
    assert est.y_offset_ == pytest.approx(gpa.min()) and est.y_scale_ == pytest.approx(np.ptp(gpa))
    pred = est.predict(X)
    assert gpa.min() - 1e-6 <= pred.min() and pred.max() <= gpa.max() + 1e-6
    assert est.score(X, gpa) > 0.3
    with pytest.raises(ValueError, match="scale_y=False"):
        WassersteinNet(scale_y=False, **SMALL).fit(X, gpa, sensitive_features=s)


def test_wassersteinnet_reduces_gap_on_synthetic_with_known_disparity():
    # Unfair fits group 0's slope better (known disparity); the critic on (Z, Y) makes
    # the representation group-invariant given Y and shrinks the audited gap.
    X, y, s = _shifted_data(800, seed=3)
    opts = {"encoder_hidden": (16,), "adversary_hidden": (16,), "epochs": 30, "batch_size": 64}
    gaps = {"unfair": [], "fair": []}
    for seed in range(2):
        unfair = UnfairRegressor(encoder_hidden=(16,), epochs=30, batch_size=64, random_state=seed)
        fair = WassersteinNet(20.0, clip=0.05, random_state=seed, **opts)
        for key, est in (("unfair", unfair), ("fair", fair)):
            pred = est.fit(X, y, sensitive_features=s).predict(X)
            audit = accuracy_disparity_audit(y, pred, sensitive_features=s)
            assert audit["lower_bound_joint_error"] <= audit["joint_error"]
            assert audit["upper_bound_gap"] >= audit["error_gap"]
            gaps[key].append(audit["error_gap"])
    assert np.mean(gaps["fair"]) < np.mean(gaps["unfair"])


def test_cenet_discriminator_learns_group_from_y():
    # With lambda tiny the discriminator trains almost unopposed: its loss drops below
    # the entropy of A, as Y alone tells the groups apart here.
    X, y, s = _shifted_data(600)
    y = np.clip(y + 0.3 * s, 0, 1)
    est = CENet(1e-3, **{**SMALL, "epochs": 40}).fit(X, y, sensitive_features=s)
    p = s.mean()
    entropy = -(p * np.log(p) + (1 - p) * np.log(1 - p))
    assert est.history_[-1]["adversary_loss"] < 0.9 * entropy


@pytest.mark.parametrize(
    ("y", "s", "exc", "match"),
    [
        (np.array(["a"] * 20), np.arange(20) % 2, TypeError, "`y`"),
        (np.r_[np.nan, np.zeros(19)], np.arange(20) % 2, ValueError, "`y`"),
        (np.linspace(0, 1, 20), np.zeros(20), ValueError, "`sensitive_features`"),
        (np.linspace(0, 1, 20), np.arange(20) % 3, ValueError, "binary"),
        (np.linspace(0, 1, 20), np.arange(19) % 2, ValueError, "Inconsistent"),
    ],
)
def test_input_errors(y, s, exc, match):
    X = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(exc, match=match):
        WassersteinNet(**SMALL).fit(X, y, sensitive_features=s)


def test_nan_in_X_and_bad_hyperparameters():
    X, y, s = _shifted_data(50)
    X_bad = X.copy()
    X_bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        CENet(**SMALL).fit(X_bad, y, sensitive_features=s)
    # one message format (scikit-learn's constraints): the parameter and its range
    with pytest.raises(ValueError, match=r"'strength' parameter of CENet must be a float in the"):
        CENet(-1.0, **SMALL).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match=r"'clip' parameter .* range \(0.0, inf\) or None"):
        WassersteinNet(1.0, clip=0.0, **SMALL).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="`gradient_penalty`"):  # a rule between two
        WassersteinNet(1.0, clip=None, **SMALL).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match=r"'gradient_penalty' .* range \[0.0, inf\)"):
        WassersteinNet(1.0, gradient_penalty=-1.0, **SMALL).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match=r"'n_critic' .* an int in the range \[1, inf\)"):
        WassersteinNet(1.0, n_critic=0, **SMALL).fit(X, y, sensitive_features=s)
    with pytest.raises(TypeError, match=r"'epochs' .* Got 2.5 instead"):
        CENet(**{**SMALL, "epochs": 2.5}).fit(X, y, sensitive_features=s)
    est = CENet(**{**SMALL, "epochs": 1}).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :2])
