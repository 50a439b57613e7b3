"""Tests of the accuracy-disparity audit (Thm 3.1, Cor. 3.1, Thm 3.3 of the paper)."""

from __future__ import annotations

import json

import numpy as np
import ot
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from otfair.metrics._accuracy_disparity import accuracy_disparity_audit


def test_hand_computed_lower_bounds():
    # group 0: y = 0, yhat = 0.2 ; group 1: y = 1, yhat = 0.6 (two samples each).
    y = [0.0, 0.0, 1.0, 1.0]
    yhat = [0.2, 0.2, 0.6, 0.6]
    out = accuracy_disparity_audit(y, yhat, sensitive_features=[0, 0, 1, 1])
    assert out["mse_0"] == pytest.approx(0.04)
    assert out["mse_1"] == pytest.approx(0.16)
    assert out["error_gap"] == pytest.approx(0.12)
    assert out["w1_labels"] == pytest.approx(1.0)
    assert out["w1_predictions"] == pytest.approx(0.4)
    # 1/2 (1 - 0.4)^2 = 0.18 <= 0.20 ; alpha = 1/2 -> 0.09 <= mse = 0.10
    assert out["lower_bound_joint_error"] == pytest.approx(0.18)
    assert out["lower_bound_mse"] == pytest.approx(0.09)
    assert out["tv_labels"] == pytest.approx(1.0)  # labels in the first and the last bin
    assert out["M"] == pytest.approx(1.0)


def test_group_labels_and_json():
    out = accuracy_disparity_audit(
        [0.0, 1.0, 0.0, 1.0], [0.0, 1.0, 0.5, 0.5], sensitive_features=["b", "b", "a", "a"]
    )
    assert out["groups"] == ["a", "b"]  # sorted: "a" is group 0
    assert out["mse_0"] == pytest.approx(0.25) and out["mse_1"] == pytest.approx(0.0)
    json.dumps(out)  # JSON-able as returned


def test_thm33_counterexample_and_valid_bound():
    # Same labels (TV = 0) and equal conditional prediction means, different errors:
    # the paper's Thm 3.3 expression is 0 but the gap is 0.25; the valid bound covers it.
    y = np.full(8, 0.5)
    yhat = np.array([0.5, 0.5, 0.5, 0.5, 0.0, 1.0, 0.0, 1.0])
    out = accuracy_disparity_audit(y, yhat, sensitive_features=[0] * 4 + [1] * 4)
    assert out["error_gap"] == pytest.approx(0.25)
    assert out["upper_bound_gap_thm33"] == pytest.approx(0.0)
    assert out["upper_bound_gap"] >= out["error_gap"]
    assert out["label_term"] == pytest.approx(0.0)
    assert out["representation_term"] == pytest.approx(-0.25)


def test_w1_matches_pot():
    rng = np.random.default_rng(1)
    y, yhat = rng.uniform(size=60), rng.uniform(size=60)
    s = np.repeat([0, 1], [25, 35])
    out = accuracy_disparity_audit(y, yhat, sensitive_features=s)
    for key, v in (("w1_labels", y), ("w1_predictions", yhat)):
        a, b = v[s == 0], v[s == 1]
        cost = np.abs(a[:, None] - b[None, :])
        ref = ot.emd2(np.full(len(a), 1 / len(a)), np.full(len(b), 1 / len(b)), cost)
        assert out[key] == pytest.approx(ref, abs=1e-9)


def test_known_disparity_is_a_representation_effect():
    # Same label distribution in both groups, prediction noise 0.05 vs 0.15:
    # the gap is sigma_1^2 - sigma_0^2 = 0.02 and comes from the representation term.
    rng = np.random.default_rng(0)
    n = 20_000
    s = rng.integers(0, 2, n)
    y = rng.uniform(0.2, 0.8, n)
    yhat = y + rng.normal(0, np.where(s == 1, 0.15, 0.05))
    out = accuracy_disparity_audit(y, yhat, sensitive_features=s, n_bins=10)
    assert out["error_gap"] == pytest.approx(0.15**2 - 0.05**2, rel=0.05)
    assert abs(out["label_term"]) < 0.05 * out["error_gap"]
    assert out["representation_term"] == pytest.approx(out["error_gap_signed"], rel=0.05)
    assert out["upper_bound_gap"] >= out["error_gap"]
    assert out["upper_bound_gap_thm33"] >= out["error_gap"]


def test_label_shift_gives_lower_bound_on_constant_predictor():
    # A constant predictor cannot fit two label populations 0.4 apart.
    rng = np.random.default_rng(2)
    s = rng.integers(0, 2, 400)
    y = np.where(s == 1, 0.7, 0.3) + rng.normal(0, 0.02, 400)
    out = accuracy_disparity_audit(y, np.full(400, 0.5), sensitive_features=s)
    assert out["lower_bound_joint_error"] > 0.07  # about 1/2 * 0.4^2 = 0.08
    assert out["lower_bound_joint_error"] <= out["joint_error"]
    assert out["tv_labels"] > 0.9


@settings(max_examples=60, deadline=None)
@given(
    data=arrays(np.float64, st.integers(4, 40), elements=st.floats(-3, 3, width=32)),
    shift=st.floats(-1, 1),
    n_bins=st.integers(1, 12),
    seed=st.integers(0, 2**16),
)
def test_bounds_and_decomposition_hold(data, shift, n_bins, seed):
    rng = np.random.default_rng(seed)
    n = len(data)
    s = np.zeros(n, dtype=int)
    s[rng.permutation(n)[: max(1, n // 3)]] = 1
    y = data
    yhat = np.clip(data + shift * s + rng.normal(0, 0.3, n), -3, 3)
    out = accuracy_disparity_audit(y, yhat, sensitive_features=s, n_bins=n_bins)
    tol = 1e-9
    assert out["lower_bound_joint_error"] <= out["joint_error"] + tol
    assert out["lower_bound_mse"] <= out["mse"] + tol
    assert out["upper_bound_gap"] >= out["error_gap"] - tol
    assert out["label_term"] + out["representation_term"] == pytest.approx(
        out["error_gap_signed"], abs=1e-9
    )
    assert abs(out["label_term"]) <= out["label_term_bound"] + tol
    assert abs(out["representation_term"]) <= out["representation_term_bound"] + tol


def test_given_bound_is_used_and_checked():
    y, yhat, s = [0.0, 0.5, 1.0, 0.2], [0.1, 0.4, 0.9, 0.3], [0, 0, 1, 1]
    a = accuracy_disparity_audit(y, yhat, sensitive_features=s)
    b = accuracy_disparity_audit(y, yhat, sensitive_features=s, bound=2.0)
    assert b["M"] == 2.0 and b["label_term_bound"] == pytest.approx(4 * a["label_term_bound"])
    with pytest.raises(ValueError, match="`bound`"):
        accuracy_disparity_audit(y, yhat, sensitive_features=s, bound=0.5)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"y_true": [0.0, np.nan, 1.0, 0.5]}, "`y_true`"),
        ({"y_pred": [0.0, 1.0, 1.0]}, "Inconsistent"),
        ({"sensitive_features": [0, 0, 0, 0]}, "`sensitive_features`"),
        ({"sensitive_features": [0, 1, 2, 2]}, "binary"),
        ({"n_bins": 0}, "`n_bins`"),
        ({"y_pred": ["a", "b", "c", "d"]}, "`y_pred`"),
    ],
)
def test_errors(kwargs, match):
    args = {
        "y_true": [0.0, 0.5, 1.0, 0.5],
        "y_pred": [0.1, 0.4, 0.9, 0.6],
        "sensitive_features": [0, 0, 1, 1],
    }
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        accuracy_disparity_audit(
            args.pop("y_true"),
            args.pop("y_pred"),
            sensitive_features=args.pop("sensitive_features"),
            **args,
        )
