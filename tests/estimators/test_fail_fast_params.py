"""Parameters out of range fail before any training, naming the parameter."""

from __future__ import annotations

import numpy as np
import pytest

from otfair.estimators.preprocessing.adapfair_classifier import AdapFairClassifier
from otfair.models.mlp import MLP


@pytest.mark.parametrize("hidden", [(-1,), (0,), (8, 0), (2.5,), (True,)])
def test_mlp_rejects_a_layer_width_below_one(hidden):
    with pytest.raises(ValueError, match="`hidden`"):
        MLP(4, hidden=hidden)


def test_mlp_accepts_positive_widths_and_no_hidden_layer():
    assert MLP(4, hidden=(3, 2)).net[0].out_features == 3
    assert len(MLP(4, hidden=()).net) == 1  # logistic regression


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"base_epochs": 0}, "base_epochs"),
        ({"base_epochs": -1}, "base_epochs"),
        ({"base_batch_size": 0}, "base_batch_size"),
        ({"base_strength": -1.0}, "base_strength"),
        ({"base_penalty": "nope"}, "base_penalty"),
        ({"base_notion": "nope"}, "base_notion"),
        ({"n_blocks": 0}, "n_blocks"),
        ({"sinkhorn_eps": -1.0}, "sinkhorn_eps"),
        ({"strength": 1.5}, "strength"),
        ({"strength": [0.5, 1.5]}, "strength"),
        ({"distance": "nope"}, "distance"),
    ],
)
def test_adapfair_checks_its_parameters_before_training_the_base(params, name):
    rng = np.random.default_rng(0)
    X, s = rng.normal(size=(40, 3)), rng.integers(0, 2, 40)
    y = (X[:, 0] > 0).astype(int)
    est = AdapFairClassifier(**params)
    with pytest.raises(ValueError, match=name):
        est.check_params()
    with pytest.raises(ValueError, match=name):
        est.fit(X, y, sensitive_features=s)
    assert not hasattr(est, "base_classifier_")  # nothing was trained


def test_adapfair_check_params_passes_on_the_defaults():
    AdapFairClassifier().check_params()
    with pytest.raises(ValueError, match="fairness_path"):
        AdapFairClassifier(strength=[0.1, 0.5]).check_params()
