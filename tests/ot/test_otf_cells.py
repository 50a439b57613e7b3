"""The batched OTF0 per label cell (EO, equal opportunity; NumPy) against the general solver."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from otfair.notions import as_notion
from otfair.ot._otf_cells import CellsOTF0, constraint_cells
from otfair.ot._otf_two_groups import TwoGroupOTF0
from otfair.penalties import OTF


def _problem(seed=0, notion="eo", n=600, sizes=(200, 150, 250), shift=1.0, eps=1e-3):
    rng = np.random.default_rng(seed)
    s = (rng.random(n) < 0.35).astype(float)
    X = rng.normal(size=(n, 4)).astype(np.float32)
    X[:, 0] += shift * s  # the groups differ: the transport is not free
    y = (rng.random(n) < 0.4 + 0.2 * s).astype(int)
    penalty = OTF(eps=eps, tol=1e-8, max_iter=200).make(as_notion(notion)).fit(s[:, None], y)
    G = penalty.constraints.matrix(s[:, None], y)
    scores = 1 / (1 + np.exp(-(rng.normal(size=n) + 1.5 * X[:, 0] + y)))
    bounds = np.cumsum((0, *sizes))
    parts = [np.arange(a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    return penalty, G, torch.from_numpy(X), scores, parts


def _reference(penalty, G, X, scores, idx):
    """The general solver's OTF0 of one batch and its autograd gradient (float64)."""
    h = torch.tensor(scores[idx], dtype=torch.float64, requires_grad=True)
    t = torch.as_tensor(idx)
    value = penalty.from_matrix(h, G[:, t].double(), X[t].double())
    value.backward()
    return float(value.detach()), h.grad.numpy()


@pytest.mark.parametrize("notion", ["eo", "eopp", "dp"])
@pytest.mark.parametrize("seed", [0, 1])
def test_value_and_gradient_match_the_general_solver(notion, seed):
    penalty, G, X, scores, parts = _problem(seed, notion)
    solver = CellsOTF0.from_batches(X, G, parts, penalty.eps)
    assert solver is not None
    assert solver.V.shape[0] == (2 if notion == "eo" else 1)  # one dual per label cell
    values, _ = solver.batch_values(scores)
    mean, grad = solver.value_and_grad(scores)
    refs = []
    for b, idx in enumerate(parts):
        ref, ref_grad = _reference(penalty, G, X, scores, idx)
        refs.append(ref)
        assert values[b] == pytest.approx(ref, rel=1e-5)
        np.testing.assert_allclose(grad[idx] * len(parts), ref_grad, rtol=1e-4, atol=1e-6)
    assert mean == pytest.approx(np.mean(refs), rel=1e-5)
    assert (values > 0).all()


def test_the_relaxed_bound_that_binds_matches_the_general_solver():
    """At eps = 0.1 the plan at s = 0 spreads mass past OTFR's bound: the active-set solve."""
    penalty, G, X, scores, parts = _problem(0, "eo", shift=2.0, eps=0.1)
    solver = CellsOTF0.from_batches(X, G, parts, 0.1)
    assert solver is not None
    values, _ = solver.batch_values(scores)
    assert np.abs(solver._s_r).max() > 0  # some batch's relaxed dual left 0
    _, grad = solver.value_and_grad(scores)
    for b, idx in enumerate(parts):
        ref, ref_grad = _reference(penalty, G, X, scores, idx)
        assert values[b] == pytest.approx(ref, rel=1e-5)
        np.testing.assert_allclose(grad[idx] * len(parts), ref_grad, rtol=1e-4, atol=1e-6)


def test_two_group_dp_equals_the_scalar_solver():
    penalty, G, X, scores, parts = _problem(2, "dp")
    cells = CellsOTF0.from_batches(X, G, parts, penalty.eps)
    scalar = TwoGroupOTF0.from_batches(X, G, parts, penalty.eps)
    assert cells is not None and scalar is not None
    a, b = cells.value_and_grad(scores), scalar.value_and_grad(scores)
    assert a[0] == pytest.approx(b[0], rel=1e-7)
    np.testing.assert_allclose(a[1], b[1], rtol=1e-5, atol=1e-9)


def test_fair_scores_cost_nothing_and_warm_duals_agree_with_cold_ones():
    _, G, X, scores, parts = _problem(4, "eo")
    solver = CellsOTF0.from_batches(X, G, parts, 1e-3)
    assert solver is not None
    Gn = G.numpy().astype(np.float64)
    fair = np.empty_like(scores)
    for idx in parts:  # per label cell: 0.3 / 0.6 on one group, G h = 0 for the other
        for row, level in ((0, 0.3), (2, 0.6)):  # rows 0, 2: group 1 of labels 0, 1
            g = Gn[row, idx]
            one, other = idx[g > 0], idx[g < 0]
            fair[one] = level
            fair[other] = -level * Gn[row, one].sum() / Gn[row, other].sum()
    assert np.abs(Gn @ fair).max() > 0  # fair within each batch, not over all rows
    assert (fair > 0).all() and (fair < 1).all()
    value, grad = solver.value_and_grad(fair)
    assert value == pytest.approx(0.0, abs=1e-9)
    assert np.abs(grad).max() < 1e-6
    for _ in range(3):  # warm duals from other scores
        solver.value_and_grad(scores * 0.9)
    warm = solver.value_and_grad(scores)
    cold = CellsOTF0.from_batches(X, G, parts, 1e-3).value_and_grad(scores)
    assert warm[0] == pytest.approx(cold[0], rel=1e-8)
    np.testing.assert_allclose(warm[1], cold[1], rtol=1e-6, atol=1e-10)


def test_equal_opportunitys_label_0_rows_are_a_free_class():
    """Equal opportunity constrains label 1 only; label 0 rows still take and give mass."""
    penalty, G, X, scores, parts = _problem(6, "eopp")
    solver = CellsOTF0.from_batches(X, G, parts, penalty.eps)
    assert solver is not None and solver.V.shape == (1, 3)
    assert (solver.V[0] == 0).sum() == 1  # the label-0 class has no constraint


def test_a_stacked_block_solves_each_copy_alone():
    penalty, G, X, scores, parts = _problem(7, "eo", n=200, sizes=(200,))
    one = CellsOTF0.from_batches(X, G, parts, penalty.eps)
    assert one is not None
    rng = np.random.default_rng(0)
    block_scores = np.concatenate(
        [np.clip(scores + rng.normal(0, 0.05, 200), 0.01, 0.99) for _ in range(3)]
    )
    values, grad = one.repeated(3).block_values(block_scores)
    for j in range(3):
        part = block_scores[j * 200 : (j + 1) * 200]
        fresh = CellsOTF0.from_batches(X, G, parts, penalty.eps)
        v, g = fresh.block_values(part)
        assert values[j] == pytest.approx(v[0], rel=1e-8)
        np.testing.assert_allclose(grad[j * 200 : (j + 1) * 200], g, rtol=1e-6, atol=1e-10)
    with pytest.raises(ValueError, match="one batch"):
        CellsOTF0.from_batches(X, G, [np.arange(100), np.arange(100, 200)], 1e-3).repeated(2)


def test_constraint_cells_refuses_other_constraints():
    eo = np.array([[-1.0, 2.0, 0.0, 0.0], [3.0, -6.0, 0.0, 0.0], [0.0, 0.0, 1.0, -1.0]])
    V = constraint_cells(eo)
    assert V is not None and V.shape == (2, 4)
    np.testing.assert_allclose(np.linalg.norm(V, axis=1), 1.0)
    assert constraint_cells(np.array([[-1.0, 2.0, 0.0], [0.0, 1.0, -1.0]])) is None  # shared
    assert constraint_cells(np.array([[-1.0, 2.0, 0.0], [1.0, -3.0, 0.0]])) is None  # 2 dirs
    assert constraint_cells(np.array([[-1.0, 2.0, 1.0]])) is None  # three classes: 3 groups
    assert constraint_cells(np.array([[1.0, 2.0, 0.0]])) is None  # no sign change


def test_several_attributes_or_more_groups_take_the_general_solver():
    rng = np.random.default_rng(0)
    n = 300
    X = torch.from_numpy(rng.normal(size=(n, 3)).astype(np.float32))
    y = (rng.random(n) < 0.5).astype(int)
    two = np.column_stack([rng.random(n) < 0.4, rng.random(n) < 0.5]).astype(float)
    G = OTF().make(as_notion("eo")).fit(two, y).constraints.matrix(two, y)
    assert CellsOTF0.from_batches(X, G, [np.arange(n)], 1e-3) is None


def test_a_cold_start_among_saturated_rows_reaches_the_minimum():
    """Far-apart groups at a small eps: every row keeps to its class at s = 0, the Hessian
    is rounding noise and Newton has no useful step; the trust region's gradient steps must
    still reach the kinks where the minimum is (they crawled at the gradient's length)."""
    from otfair.ot._otf_cells import RTOL

    _, G, X, scores, parts = _problem(8, "eo", shift=6.0)
    solver = CellsOTF0.from_batches(X, G, parts, 1e-4)
    assert solver is not None
    raw = scores[solver.index]
    h = np.where(solver.mask, raw, 0.0)
    B, P = solver._s_star.shape
    _, _, grad0, hess0 = solver._evaluate(np.zeros((B, P)), h, np.arange(B))
    assert np.abs(hess0).max() < 1e-9 * np.abs(grad0).max()  # curvature: rounding only
    s, _ = solver._minimize(
        np.zeros((B, P)), h, np.arange(B), np.zeros((B, P)), np.ones((B, P), dtype=bool)
    )
    _, _, grad, _ = solver._evaluate(s, h, np.arange(B))
    tol = RTOL * h.sum(axis=1)[:, None] * np.abs(solver.V).max(axis=1)
    assert (np.abs(grad) <= tol).all()
