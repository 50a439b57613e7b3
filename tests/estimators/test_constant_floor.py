"""A full-batch fit never ends with a training objective above the best constant's.

``keep_constant_if_lower`` (``otfair.estimators.classification._train``): the constant
(output bias at the base rate's log-odds, output weights zero) is evaluated on the fit's
own objective and kept when it is lower.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression
from torch import nn

from otfair.datasets import load_dataset
from otfair.estimators import FairClassifier, FitQualityWarning
from otfair.estimators._torch_base import constant_baseline
from otfair.estimators.classification import fair_classifier
from otfair.estimators.classification._train import keep_constant_if_lower
from otfair.models import MLP


def _data(n: int = 300) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0.4).astype(float)
    return X, y


def _cross_entropy(model: nn.Module, X: np.ndarray, y: np.ndarray) -> float:
    with torch.no_grad():
        logits = model(torch.as_tensor(X, dtype=torch.float32))[:, 0].double().numpy()
    return float(np.mean(np.logaddexp(0.0, logits) - y * logits))


def _binary_entropy(rate: float) -> float:
    return -(rate * math.log(rate) + (1 - rate) * math.log(1 - rate))


@pytest.mark.parametrize("hidden", [(), (5, 4)])
def test_a_fit_above_the_constant_is_replaced_by_it(hidden):
    X, y = _data()
    model = MLP(3, hidden=hidden)
    last = [m for m in model.modules() if isinstance(m, nn.Linear)][-1]
    with torch.no_grad():
        last.weight.fill_(-3.0)
        last.bias.fill_(5.0)  # confident and against the labels: worse than any constant
    before = _cross_entropy(model, X, y)
    assert before > _binary_entropy(y.mean())
    replaced = keep_constant_if_lower(model, y, lambda: _cross_entropy(model, X, y))
    assert replaced
    with torch.no_grad():
        logits = model(torch.as_tensor(X, dtype=torch.float32))[:, 0].numpy()
    rate = y.mean()
    np.testing.assert_allclose(logits, math.log(rate / (1 - rate)), rtol=1e-6)
    # the constant's cross-entropy is the base rate's binary entropy (by hand)
    assert _cross_entropy(model, X, y) == pytest.approx(_binary_entropy(rate), rel=1e-6)


def test_a_fit_below_the_constant_is_left_bit_for_bit():
    X, y = _data()
    reference = LogisticRegression(C=1e6).fit(X, y)
    model = MLP(3, hidden=())
    with torch.no_grad():
        model.net[0].weight.copy_(torch.as_tensor(reference.coef_, dtype=torch.float32))
        model.net[0].bias.copy_(torch.as_tensor(reference.intercept_, dtype=torch.float32))
    state = {k: v.clone() for k, v in model.state_dict().items()}
    replaced = keep_constant_if_lower(model, y, lambda: _cross_entropy(model, X, y))
    assert not replaced
    for name, value in model.state_dict().items():
        assert torch.equal(value, state[name]), name


def _cross_entropy_of(clf: FairClassifier, X: np.ndarray, y: np.ndarray) -> float:
    p = clf.predict_proba(X)[:, 1]
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def test_norm_near_one_ends_at_the_constant_not_above_it(data_dir, monkeypatch):
    """Norm at alpha 0.9999 on Adult: L-BFGS stops on the kinks at a training
    cross-entropy more than 0.05 above the constant's (its objective above the
    constant's); the fit is the constant, and it says so."""
    sp = load_dataset("adult").split(random_state=0)
    X, y, s = sp.X_train[:5000], np.asarray(sp.y_train)[:5000], np.asarray(sp.s_train)[:5000]
    ce_const, acc_const = constant_baseline(y)
    with monkeypatch.context() as patch, warnings.catch_warnings():
        warnings.simplefilter("ignore", FitQualityWarning)
        patch.setattr(fair_classifier, "keep_constant_if_lower", lambda *args: False)
        unfloored = FairClassifier("norm", 0.9999).fit(X, y, sensitive_features=s)
    assert _cross_entropy_of(unfloored, X, y) > ce_const + 0.05  # what the floor mends
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf = FairClassifier("norm", 0.9999).fit(X, y, sensitive_features=s)
    assert _cross_entropy_of(clf, X, y) <= ce_const * (1 + 1e-6)
    assert clf.score(X, y) >= acc_const
    messages = [str(w.message) for w in caught if issubclass(w.category, FitQualityWarning)]
    assert any("for every training row" in m for m in messages), messages
