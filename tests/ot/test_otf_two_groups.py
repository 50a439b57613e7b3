"""The batched two-group OTF0 (NumPy, analytic gradient) against the general solver."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from otfair.notions import as_notion
from otfair.ot._otf_cells import CellsOTF0
from otfair.ot._otf_two_groups import TwoGroupOTF0, _two_classes, rank_one_direction
from otfair.penalties import OTF


def _problem(seed: int = 0, n: int = 600, sizes=(200, 150, 250), shift: float = 1.0, notion="dp"):
    rng = np.random.default_rng(seed)
    s = (rng.random(n) < 0.35).astype(float)
    X = rng.normal(size=(n, 4)).astype(np.float32)
    X[:, 0] += shift * s  # the groups differ: the transport is not free
    y = (rng.random(n) < 0.5).astype(int)
    penalty = OTF().make(as_notion(notion)).fit(s[:, None], y)
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


@pytest.mark.parametrize(("notion", "solver_class"), [("dp", TwoGroupOTF0), ("eo", CellsOTF0)])
def test_gradient_matches_finite_differences(notion, solver_class):
    _, G, X, scores, parts = _problem(3, shift=0.5, notion=notion)
    solver = solver_class.from_batches(X, G, parts, 1e-2)
    assert solver is not None
    _, grad = solver.value_and_grad(scores)
    rng = np.random.default_rng(0)
    for i in rng.choice(len(scores), 8, replace=False):
        step = np.zeros_like(scores)
        step[i] = 1e-6
        up = solver_class.from_batches(X, G, parts, 1e-2).value_and_grad(scores + step)[0]
        down = solver_class.from_batches(X, G, parts, 1e-2).value_and_grad(scores - step)[0]
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


@pytest.mark.parametrize(("notion", "solver_class"), [("dp", TwoGroupOTF0), ("eo", CellsOTF0)])
def test_a_batch_missing_a_group_carries_no_penalty_but_counts(notion, solver_class):
    penalty, G, X, scores, parts = _problem(5, notion=notion)
    s = ((G[0] > 0) | (G[-2] > 0)).numpy()  # one group's rows (EO: of both label cells)
    lonely = np.flatnonzero(s)[:20]
    solver = solver_class.from_batches(X, G, [*parts, lonely], penalty.eps)
    base = solver_class.from_batches(X, G, parts, penalty.eps)
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


@pytest.mark.parametrize("eps", [1e-3, 3e-2])
def test_the_windowed_root_is_the_root_on_all_rows(eps):
    """Newton on the rows around the step (the others' steps saturated) is exact."""
    _, G, X, scores, parts = _problem(6, n=3000, sizes=(1000, 1000, 1000))
    solver = TwoGroupOTF0.from_batches(X, G, parts, eps)
    assert solver is not None
    h = np.where(solver.mask, scores[solver.index], 0.0)
    sorted_h = np.take_along_axis(h, solver.order, axis=1)
    cum = np.cumsum(sorted_h, axis=1)
    for share in (0.2, 0.5, 0.8):
        target = share * h.sum(axis=1)
        windowed = solver._root(sorted_h, cum, target)
        full = solver._root_all_rows(sorted_h, target, solver.sorted_diff)
        # the equation on ALL rows holds at the windowed root, to the solver's tolerance
        from scipy.special import expit

        residual = (h * expit((windowed[:, None] - solver.diff) / eps)).sum(axis=1) - target
        assert np.abs(residual).max() <= 1e-7 * h.sum(axis=1).max()
        np.testing.assert_allclose(windowed, full, rtol=0, atol=1e-5 * eps)


def test_two_classes_is_numpys_unique_of_the_columns():
    """The two-pass class finder agrees with np.unique(axis=0): classes, order and codes."""
    rng = np.random.default_rng(0)
    for _ in range(300):
        d, n, k = rng.integers(1, 4), rng.integers(2, 40), rng.integers(1, 4)
        values = rng.integers(-2, 3, (d, k)).astype(np.float32)
        G = values[:, rng.integers(0, k, n)]
        cols, codes = _two_classes(torch.from_numpy(G))
        expected, inverse = np.unique(G.T, axis=0, return_inverse=True)
        if len(expected) != 2:
            assert cols is None
            continue
        np.testing.assert_array_equal(cols, expected.T)
        np.testing.assert_array_equal(codes, inverse.reshape(-1))


@pytest.mark.parametrize(
    ("seed", "notion"), [(0, "dp"), (1, "dp"), (2, "dp"), (0, "eo"), (1, "eo")]
)
def test_the_value_is_continuous_where_the_relaxed_bound_binds_at_zero(seed, notion):
    # Rows of both groups with the same features and, from a model blind to the group,
    # the same score (categorical data: Adult) are each other's free transport: at the
    # penalty's eps (1e-3) the plan at s = 0 moves no net mass, and OTFR's bound holds
    # with equality at s = 0 up to rounding. The relaxed root was solved there on a flat
    # residual, on either side of 0, and the value jumped by ~1e-2 under 1e-8 changes
    # of the scores (fails on that code).
    # EO (CellsOTF0): the bounds of both label cells (G's rows 0 and 2: group 1's)
    solver_class = TwoGroupOTF0 if notion == "dp" else CellsOTF0
    penalty, G, X, _, parts = _problem(seed, notion=notion)
    s = (G[0].numpy() > 0) | (notion == "eo") & (G[-2].numpy() > 0)
    X = X.clone()
    first, second = np.flatnonzero(s)[:60], np.flatnonzero(~s)[:60]
    X[torch.as_tensor(second)] = X[torch.as_tensor(first)]  # twins across the groups
    X = torch.round(X * 2) / 2  # coarse values: more twins
    scores = 1 / (1 + np.exp(-(X.numpy().astype(np.float64) @ [1.0, -0.5, 0.3, 0.2])))
    solver = solver_class.from_batches(X, G, parts, penalty.eps)
    assert solver is not None
    value, grad = solver.value_and_grad(scores)
    values, _ = solver.batch_values(scores)
    for b, idx in enumerate(parts):  # the general solver treats the bound as binding
        h = torch.tensor(scores[idx], dtype=torch.float32)
        ref = penalty.from_matrix(h, G[:, torch.as_tensor(idx)], X[torch.as_tensor(idx)])
        assert values[b] == pytest.approx(float(ref), rel=1e-3, abs=1e-6)
    rng = np.random.default_rng(seed)
    for _ in range(6):
        direction = rng.normal(size=scores.shape)
        direction /= np.linalg.norm(direction)
        for step in (1e-8, 1e-6):
            up = solver.value_and_grad(scores + step * direction)[0]
            down = solver.value_and_grad(scores - step * direction)[0]
            assert abs(up - value) < 1e-6 * max(value, 1e-3)  # no jump
            slope = (up - down) / (2 * step)
            assert slope == pytest.approx(grad @ direction, rel=1e-3, abs=1e-6)
