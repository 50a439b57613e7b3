"""The batched two-group OTF0 (NumPy, analytic gradient) against the general solver."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from otfair.notions import as_notion
from otfair.ot._otf_two_groups import TwoGroupOTF0, rank_one_direction
from otfair.penalties import OTF


def _problem(seed: int = 0, n: int = 600, sizes=(200, 150, 250), shift: float = 1.0):
    rng = np.random.default_rng(seed)
    s = (rng.random(n) < 0.35).astype(float)
    X = rng.normal(size=(n, 4)).astype(np.float32)
    X[:, 0] += shift * s  # the groups differ: the transport is not free
    y = (rng.random(n) < 0.5).astype(int)
    penalty = OTF().make(as_notion("dp")).fit(s[:, None], y)
    G = penalty.constraints.matrix(s[:, None], y)
    scores = 1 / (1 + np.exp(-(rng.normal(size=n) + 1.5 * X[:, 0])))
    bounds = np.cumsum((0, *sizes))
    parts = [np.arange(a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    return penalty, G, torch.from_numpy(X), scores, parts


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_value_and_gradient_match_the_general_solver(seed):
    penalty, G, X, scores, parts = _problem(seed)
    solver = TwoGroupOTF0.from_batches(X, G, parts, penalty.eps)
    assert solver is not None  # two groups under DP: one constraint direction
    values, _ = solver.batch_values(scores)
    mean, grad = solver.value_and_grad(scores)
    refs = []
    for b, idx in enumerate(parts):
        h = torch.tensor(scores[idx], dtype=torch.float32, requires_grad=True)
        ref = penalty.from_matrix(h, G[:, torch.as_tensor(idx)], X[torch.as_tensor(idx)])
        ref.backward()
        refs.append(float(ref.detach()))
        assert values[b] == pytest.approx(float(ref.detach()), rel=1e-3, abs=1e-6)
        # the general solver runs in float32 to a relative constraint tolerance of 1e-4
        np.testing.assert_allclose(grad[idx] * len(parts), h.grad.numpy(), rtol=2e-3, atol=2e-5)
    assert mean == pytest.approx(np.mean(refs), rel=1e-3)
    assert (values > 0).all()  # the groups' score means differ: a positive penalty


def test_gradient_matches_finite_differences():
    _, G, X, scores, parts = _problem(3, shift=0.5)
    solver = TwoGroupOTF0.from_batches(X, G, parts, 1e-2)
    assert solver is not None
    _, grad = solver.value_and_grad(scores)
    rng = np.random.default_rng(0)
    for i in rng.choice(len(scores), 8, replace=False):
        step = np.zeros_like(scores)
        step[i] = 1e-6
        up = TwoGroupOTF0.from_batches(X, G, parts, 1e-2).value_and_grad(scores + step)[0]
        down = TwoGroupOTF0.from_batches(X, G, parts, 1e-2).value_and_grad(scores - step)[0]
        assert (up - down) / 2e-6 == pytest.approx(grad[i], rel=1e-4, abs=1e-7)


def test_fair_scores_cost_nothing_and_warm_roots_agree():
    _, G, X, scores, parts = _problem(4)
    solver = TwoGroupOTF0.from_batches(X, G, parts, 1e-3)
    assert solver is not None
    g = G[0].numpy().astype(np.float64)
    fair = np.empty_like(scores)
    for idx in parts:  # 0.4 on one group, the other's value solving G h = 0 in the batch
        one = g[idx] > 0
        fair[idx[one]] = 0.4
        fair[idx[~one]] = -0.4 * g[idx[one]].sum() / g[idx[~one]].sum()
    assert (fair > 0).all() and (fair < 1).all()
    value, grad = solver.value_and_grad(fair)
    assert value == pytest.approx(0.0, abs=1e-9)
    assert np.abs(grad).max() < 1e-6
    first = solver.value_and_grad(scores)  # cold roots after the warm ones of `fair`
    cold = TwoGroupOTF0.from_batches(X, G, parts, 1e-3).value_and_grad(scores)
    assert first[0] == pytest.approx(cold[0], rel=1e-9)
    np.testing.assert_allclose(first[1], cold[1], rtol=1e-7, atol=1e-12)


def test_a_batch_missing_a_group_carries_no_penalty_but_counts():
    penalty, G, X, scores, parts = _problem(5)
    s = (G[0] > 0).numpy()  # one group's rows
    lonely = np.flatnonzero(s)[:20]
    solver = TwoGroupOTF0.from_batches(X, G, [*parts, lonely], penalty.eps)
    base = TwoGroupOTF0.from_batches(X, G, parts, penalty.eps)
    assert solver is not None and base is not None
    assert solver.value_and_grad(scores)[0] == pytest.approx(
        base.value_and_grad(scores)[0] * len(parts) / (len(parts) + 1), rel=1e-9
    )


def test_rank_one_direction_refuses_other_constraints():
    g = rank_one_direction(np.array([[-1.0, 0.5], [2.0, -1.0]]))
    assert g is not None and np.linalg.norm(g) == pytest.approx(1.0)
    assert rank_one_direction(np.array([[-1.0, 0.5], [2.0, -0.5]])) is None  # two directions
    assert rank_one_direction(np.array([[-1.0, 0.5, 0.2, 0.0]])) is None  # four classes
    assert rank_one_direction(np.array([[1.0, 0.5]])) is None  # no sign change
