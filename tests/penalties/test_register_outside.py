"""Adding a fairness penalty from outside the package: one class + one registry line.

The toy penalty is the absolute difference of the groups' mean scores (the square root
of GapReg), defined here, registered with ``register_penalty`` and trained through
``FairClassifier`` by name. Independent checks: its value against numpy, and training
with it (strength 5) shrinks the test mean-score gap of the unpenalized model.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from otfair.estimators import FairClassifier
from otfair.notions import Notion
from otfair.penalties import (
    FairnessPenalty,
    PenaltyBatch,
    list_penalties,
    make_penalty,
    register_penalty,
)


class AbsMeanGap(FairnessPenalty):
    """|mean score of group 0 - mean score of group 1| (DP only)."""

    def forward(self, scores, sensitive, labels=None, features=None):
        s = sensitive.to(scores.dtype)
        return (scores @ ((1 - s) / (1 - s).sum() - s / s.sum())).abs()


def _factory(notion: Notion, **options) -> AbsMeanGap:
    if notion.name != "dp":
        raise ValueError("AbsMeanGap supports notion='dp' only.")
    return AbsMeanGap(**options)


register_penalty("toy-absgap", _factory)  # the one registry line


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    s = (rng.random(n) < 0.4).astype(int)
    X = np.column_stack([rng.normal(size=n) + 1.5 * s, rng.normal(size=n)]).astype(np.float32)
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0.7).astype(int)
    return X, y, s


def test_registered_penalty_is_built_by_name():
    assert "toy-absgap" in list_penalties()
    pen = make_penalty("toy-absgap", "dp")
    h = torch.tensor([0.2, 0.4, 0.9, 0.7], dtype=torch.float64)
    s = torch.tensor([0, 0, 1, 1])
    assert float(pen(h, s)) == pytest.approx(abs(np.mean([0.2, 0.4]) - np.mean([0.9, 0.7])))
    with pytest.raises(ValueError, match="supports notion=.dp. only"):
        make_penalty("toy-absgap", "eo")
    with pytest.raises(ValueError, match="already registered"):
        register_penalty("toy-absgap", lambda notion: AbsMeanGap())


def test_fair_classifier_trains_with_outside_penalty():
    X, y, s = _data()
    kw = {"model": "logistic", "epochs": 60, "batch_size": 100, "lr": 0.05, "random_state": 0}
    gaps = {}
    for strength in (0.0, 5.0):
        clf = FairClassifier("toy-absgap", strength, **kw).fit(X, y, sensitive_features=s)
        p = clf.predict_proba(X)[:, 1]
        gaps[strength] = abs(p[s == 0].mean() - p[s == 1].mean())
    assert isinstance(clf.penalty_, AbsMeanGap)
    assert gaps[5.0] < 0.5 * gaps[0.0]


class AbsMeanGapTemplate(FairnessPenalty):
    """The same penalty through the template method: ``evaluate`` on a checked batch."""

    def evaluate(self, batch):
        s = batch.sensitive.to(batch.scores.dtype)
        return (batch.scores @ ((1 - s) / (1 - s).sum() - s / s.sum())).abs()


def test_template_penalty_gets_checked_batches_and_equals_forward_override():
    h = torch.tensor([0.2, 0.4, 0.9, 0.7], dtype=torch.float64, requires_grad=True)
    s = torch.tensor([0, 0, 1, 1])
    by_template, by_forward = AbsMeanGapTemplate(), AbsMeanGap()
    assert by_template(h, s).item() == pytest.approx(by_forward(h, s).item())
    # the unchecked path (the engine's) gives the same value and gradient
    (g1,) = torch.autograd.grad(by_template.evaluate(PenaltyBatch(h, s)), h)
    (g2,) = torch.autograd.grad(by_forward(h, s), h)
    assert torch.allclose(g1, g2)
    with pytest.raises(ValueError, match="NaN"):
        by_template(torch.tensor([0.2, float("nan"), 0.9, 0.7]), s)
    with pytest.raises(ValueError, match="probabilities"):
        by_template(torch.tensor([0.2, 1.5, 0.9, 0.7]), s)


def test_penalty_without_evaluate_or_forward_says_what_to_implement():
    class Empty(FairnessPenalty):
        pass

    with pytest.raises(NotImplementedError, match="evaluate"):
        Empty()(torch.tensor([0.2, 0.9]), torch.tensor([0, 1]))
