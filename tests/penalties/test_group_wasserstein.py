"""AdapFair's fairness term against POT on hand-picked cells."""

import numpy as np
import ot
import pytest
import torch

from otfair.penalties._group_wasserstein import fairness_loss, score_distance


def _pot_w2sq(u, v):
    u, v = np.asarray(u, dtype=np.float64), np.asarray(v, dtype=np.float64)
    M = (u[:, None] - v[None, :]) ** 2
    return ot.emd2(np.full(len(u), 1 / len(u)), np.full(len(v), 1 / len(v)), M)


@pytest.fixture
def scores():
    rng = np.random.default_rng(0)
    n = 90
    s = rng.integers(0, 2, n)
    y = rng.integers(0, 2, n)
    p = np.clip(rng.beta(2, 3, n) + 0.2 * s, 0, 1)
    return torch.tensor(p), torch.tensor(s), torch.tensor(y, dtype=torch.float64)


@pytest.mark.parametrize(("notion", "cells"), [("dp", [None]), ("eopp", [1]), ("eo", [0, 1])])
def test_fairness_loss_matches_pot_per_cell(scores, notion, cells):
    p, s, y = scores
    expected = 0.0
    for c in cells:
        keep = np.ones(len(p), bool) if c is None else y.numpy() == c
        expected += _pot_w2sq(
            p.numpy()[keep & (s.numpy() == 0)], p.numpy()[keep & (s.numpy() == 1)]
        )
    got = fairness_loss(p, s, y, notion=notion)
    assert got.item() == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_sharp_sinkhorn_option_approaches_exact_value(scores):
    p, s, _ = scores
    u, v = p[s == 0], p[s == 1]
    exact = _pot_w2sq(u.numpy(), v.numpy())
    errors = []
    for eps in (0.003, 0.001):
        sharp = score_distance(u, v, distance="sharp_sinkhorn", eps=eps).item()
        assert sharp >= exact - 1e-9  # the plan is feasible, so its cost is >= the optimum
        errors.append(sharp - exact)
    assert errors[1] < 0.5 * errors[0]  # converges to the exact cost as eps -> 0
    assert errors[1] < 0.03 * exact


@pytest.mark.parametrize("distance", ["w2", "sharp_sinkhorn"])
def test_gradient_matches_finite_differences(distance):
    torch.manual_seed(0)
    u = torch.rand(12, dtype=torch.float64, requires_grad=True)
    v = torch.rand(9, dtype=torch.float64) * 0.5
    f = lambda z: score_distance(z, v, distance=distance, eps=0.05)  # noqa: E731
    (grad,) = torch.autograd.grad(f(u), u)
    h = 1e-6
    fd = torch.stack(
        [
            (f(u.detach() + h * e) - f(u.detach() - h * e)) / (2 * h)
            for e in torch.eye(12, dtype=u.dtype)
        ]
    )
    torch.testing.assert_close(grad, fd, atol=1e-5, rtol=1e-4)


def test_missing_group_in_a_cell_is_a_clear_error():
    p = torch.tensor([0.1, 0.2, 0.9])
    with pytest.raises(ValueError, match="y=1"):
        fairness_loss(p, torch.tensor([0, 1, 1]), torch.tensor([1.0, 0.0, 0.0]), notion="eopp")
    with pytest.raises(ValueError, match="`notion`"):
        fairness_loss(p, torch.tensor([0, 1, 1]), torch.tensor([1.0, 0.0, 0.0]), notion="x")
    with pytest.raises(ValueError, match="`distance`"):
        score_distance(p, p, distance="x")
