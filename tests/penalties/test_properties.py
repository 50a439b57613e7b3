"""Behavioural properties shared by every penalty (fairret-style)."""

import numpy as np
import pytest
import torch

from otfair.penalties import (
    AdversaryPenalty,
    BarycenterPenalty,
    FairTorchDemographicParity,
    GapPenalty,
    LinearConstraints,
    MatchedDemographicParity,
    NormPenalty,
    OTFPenalty,
)


def _data(n, seed=0):
    g = torch.Generator().manual_seed(seed)
    s = (torch.rand(n, generator=g) < 0.4).long()
    s[0], s[1] = 0, 1
    y = (torch.rand(n, generator=g) < 0.5).long()
    y[:4] = torch.tensor([0, 1, 1, 0])  # every (group, label) cell present
    scores = torch.sigmoid(torch.randn(n, generator=g) + 1.5 * s)
    return scores, s, y


def _constraints(notion):
    _, s, y = _data(500, seed=99)
    return LinearConstraints(notion).fit(s.numpy(), y.numpy())


def _mdp_call(pen, scores, s, y):
    k = int(min((s == 0).sum(), (s == 1).sum()))
    paired = torch.cat([scores[s == 0][:k], scores[s == 1][:k]])
    return pen(paired, torch.cat([torch.zeros(k), torch.ones(k)]).long())


PENALTIES = {
    "gap": (GapPenalty, lambda pen, h, s, y: pen(h, s)),
    "fairtorch": (FairTorchDemographicParity, lambda pen, h, s, y: pen(h, s)),
    "barycenter": (BarycenterPenalty, lambda pen, h, s, y: pen(h, s)),
    "norm-dp": (lambda: NormPenalty(_constraints("dp")), lambda pen, h, s, y: pen(h, s, y)),
    "norm-eo": (lambda: NormPenalty(_constraints("eo")), lambda pen, h, s, y: pen(h, s, y)),
    "adv": (lambda: AdversaryPenalty(notion="dp"), lambda pen, h, s, y: pen(h, s)),
    "adv-eo": (lambda: AdversaryPenalty(notion="eo"), lambda pen, h, s, y: pen(h, s, y)),
    "mdp": (MatchedDemographicParity, _mdp_call),
    "otf-dp": (
        lambda: OTFPenalty(_constraints("dp")),
        lambda pen, h, s, y: pen(
            h, s, y, features=torch.linspace(0, 1, len(h))[:, None] + s[:, None].float()
        ),
    ),
    "otf-eo": (
        lambda: OTFPenalty(_constraints("eo")),
        lambda pen, h, s, y: pen(
            h, s, y, features=torch.linspace(0, 1, len(h))[:, None] + s[:, None].float()
        ),
    ),
}


def _make(name):
    torch.manual_seed(0)
    factory, call = PENALTIES[name]
    return factory(), call


@pytest.fixture(params=sorted(PENALTIES))
def penalty(request):
    return _make(request.param)


@pytest.mark.parametrize("n", [7, 64, 301])
def test_nonnegative_finite_gradient_varying_batches(penalty, n):
    pen, call = penalty
    scores, s, y = _data(n, seed=n)
    h = scores.clone().requires_grad_(True)
    value = call(pen, h, s, y)
    assert value.ndim == 0 and torch.isfinite(value) and value >= 0
    value.backward()
    assert h.grad is not None and torch.isfinite(h.grad).all()


def test_inputs_not_mutated(penalty):
    pen, call = penalty
    scores, s, y = _data(50)
    copies = [t.clone() for t in (scores, s, y)]
    call(pen, scores, s, y)
    for before, after in zip(copies, (scores, s, y), strict=True):
        torch.testing.assert_close(before, after)


def test_zero_when_fair(penalty):
    """Scores that depend on nothing group-related (constant) give (near) zero penalty."""
    pen, call = penalty
    _, s, y = _data(200)
    if isinstance(pen, (NormPenalty, OTFPenalty)):  # expectations of the batch's own population
        pen.constraints.fit(s.numpy(), y.numpy())
    value = call(pen, torch.full((200,), 0.3), s, y)
    assert float(value.detach()) < 1e-6


@pytest.mark.parametrize("name", ["gap", "barycenter", "adv", "fairtorch"])
def test_empty_group_raises(name):
    pen, call = _make(name)
    scores, _, y = _data(20)
    with pytest.raises(ValueError, match="sensitive|group"):
        call(pen, scores, torch.zeros(20, dtype=torch.long), y)


@pytest.mark.parametrize("name", sorted(PENALTIES))
def test_bad_scores_raise(name):
    pen, call = _make(name)
    scores, s, y = _data(20)
    with pytest.raises(ValueError, match="scores"):
        call(pen, scores * 3, s, y)  # logits, not probabilities
    bad = scores.clone()
    bad[2] = float("nan")
    with pytest.raises(ValueError, match="scores"):
        call(pen, bad, s, y)


def test_eo_needs_labels():
    pen = NormPenalty(_constraints("eo"))
    scores, s, _ = _data(20)
    with pytest.raises(ValueError, match="labels"):
        pen(scores, s)
    with pytest.raises(ValueError, match="labels"):
        AdversaryPenalty(notion="eo")(scores, s)


def test_penalty_decreases_toward_fair_scores():
    """Interpolating unfair scores toward a constant lowers every group penalty."""
    scores, s, y = _data(400)
    for name in ("gap", "fairtorch", "barycenter", "norm-dp", "otf-dp"):
        pen, call = _make(name)
        values = [
            float(call(pen, (1 - t) * scores + t * 0.5, s, y).detach()) for t in (0, 0.5, 0.9)
        ]
        assert values[0] > values[1] > values[2], (name, values)
    assert np.isfinite(values).all()


def test_norm_empty_group_is_documented_finite():
    pen, call = _make("norm-dp")
    scores, _, y = _data(20)
    value = call(pen, scores, torch.zeros(20, dtype=torch.long), y)
    assert torch.isfinite(value) and value > 0  # group 0 alone is unbalanced vs training
