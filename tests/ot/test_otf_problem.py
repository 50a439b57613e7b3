"""OTFProblem (one checked cost for many mass vectors), neutral masses, dtypes, zeros."""

import numpy as np
import ot as pot
import pytest
import torch

from otfair.ot import (
    OTFProblem,
    euclidean_cost,
    otf0,
    otf_dual,
    otfr_dual,
    sinkhorn,
    wasserstein_1d,
)

TIGHT = {"tol": 1e-11, "max_iter": 200}


def _value_and_grad(fn, h):
    """``fn(h)`` on a fresh leaf copy of ``h``: (detached value, gradient)."""
    leaf = h.detach().clone().requires_grad_(True)
    value = fn(leaf)
    value.backward()
    return value.detach(), leaf.grad


def _batch(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = torch.tensor(rng.normal(size=(n, 3)))
    s = torch.tensor((rng.uniform(size=n) < 0.35) * 1.0)
    G = torch.stack([s / s.mean() - 1, (1 - s) / (1 - s).mean() - 1])
    return X, s, G, euclidean_cost(X, X)


def test_one_problem_serves_many_mass_vectors_and_equals_the_functions():
    X, s, G, C = _batch()
    problem = OTFProblem(C, G)
    assert problem.classes is not None and problem.classes[0].shape == (2, 2)
    for k in range(3):
        h = torch.sigmoid(X[:, k] + s)
        value, grad = _value_and_grad(lambda x: problem.otf0(x, 0.05, **TIGHT), h)
        ref, ref_grad = _value_and_grad(lambda x: otf0(x, C, G, 0.05, **TIGHT), h)
        assert float(value) == pytest.approx(float(ref), rel=1e-12)
        torch.testing.assert_close(grad, ref_grad)
        _, details = problem.otf0(h, 0.05, return_details=True, **TIGHT)
        assert details.otf.converged and details.otfr.converged
        dual = problem.otf_dual(h.detach(), 0.05, **TIGHT)
        assert float(dual.value) == pytest.approx(
            float(otf_dual(h.detach(), C, G, 0.05, **TIGHT).value)
        )
    assert set(problem._cache) == {0.05}  # the class-reduced cost is computed once per eps


def test_class_order_does_not_change_the_value():
    X, s, G, C = _batch(seed=1)
    h = torch.sigmoid(X[:, 0] + s)
    order = OTFProblem.class_order(G)
    assert torch.equal(torch.sort(order).values, torch.arange(len(h)))
    assert bool((torch.diff(s[order]) <= 0).all() or (torch.diff(s[order]) >= 0).all())
    sorted_problem = OTFProblem(C[order][:, order], G[:, order])
    a = otf0(h, C, G, 0.05, **TIGHT)
    b = sorted_problem.otf0(h[order], 0.05, **TIGHT)
    assert float(a) == pytest.approx(float(b), rel=1e-10)
    assert OTFProblem.class_order(torch.randn(1, 40)) is None  # continuous: no classes


@pytest.mark.parametrize("solve", [otf_dual, otfr_dual])
def test_masses_need_not_be_probabilities_scaling_identity(solve):
    """H(tP) = t H(P) - t log t sum(P), so OT_eps(t h) = t OT_eps(h) + eps t log t sum(h)."""
    X, s, G, C = _batch(seed=2)
    h = torch.sigmoid(X[:, 0] + s)
    eps, t = 0.1, 5.0
    base = solve(h, C, G, eps, **TIGHT)
    scaled = solve(t * h, C, G, eps, **TIGHT)  # masses above 1
    expected = t * float(base.value) + eps * t * np.log(t) * float(h.sum())
    assert float(scaled.value) == pytest.approx(expected, rel=1e-9)


def test_exact_zero_scores_from_float32_sigmoid_are_clipped_not_rejected():
    X, s, G, C = _batch(seed=3)
    logits = (3 * X[:, 0] + s).float()
    logits[:5] = -100.0  # float32 sigmoid underflows to exactly 0 below about -88
    h = torch.sigmoid(logits).requires_grad_(True)
    assert int((h == 0).sum()) == 5
    Cf, Gf = C.float(), G.float()
    value = otf0(h, Cf, Gf, 0.05)
    value.backward()
    assert torch.isfinite(value) and torch.isfinite(h.grad).all()
    assert bool((h.grad[:5] == 0).all())  # clipped entries: zero gradient
    clipped = otf0(h.detach().clamp(min=1e-6), Cf, Gf, 0.05)
    assert float(value.detach()) == pytest.approx(float(clipped), rel=1e-6)
    with pytest.raises(ValueError, match="`h` must be positive masses"):
        otf_dual(h.detach(), Cf, Gf, 0.05)  # the dual itself needs h > 0


def test_numpy_float64_stays_float64_like_pot():
    rng = np.random.default_rng(4)
    u, v = rng.normal(size=200), rng.normal(0.3, 1.1, size=300)
    w = wasserstein_1d(u, v)
    assert w.dtype == torch.float64
    assert float(w) == pytest.approx(float(pot.wasserstein_1d(u, v)), rel=1e-12)
    X0, X1 = rng.normal(size=(30, 2)), rng.normal(size=(40, 2))
    M = pot.dist(X0, X1)
    M /= M.max()
    a, b = np.full(30, 1 / 30), np.full(40, 1 / 40)
    res = sinkhorn(a, b, M, 0.05, tol=1e-12, max_iter=10_000)
    assert res.plan.dtype == torch.float64
    ref = pot.sinkhorn(a, b, M, 0.05, method="sinkhorn_log", stopThr=1e-12, numItermax=10_000)
    np.testing.assert_allclose(res.plan.numpy(), ref, atol=1e-12)
    assert pot.sinkhorn(a, b, M, 0.05).dtype == np.float64  # POT keeps the dtype too
    h = 1 / (1 + np.exp(-X0[:, 0]))
    G = np.stack([np.r_[np.ones(10) * 2, -np.ones(20)]])
    assert otf_dual(h, pot.dist(X0, X0), G, 0.1).value.dtype == torch.float64
    assert wasserstein_1d(u.astype(np.float32), v.astype(np.float32)).dtype == torch.float32


def test_problem_bad_input():
    X, s, G, C = _batch(n=12)
    with pytest.raises(ValueError, match="`C` must be square"):
        OTFProblem(C[:5], G)
    with pytest.raises(ValueError, match="`G` must have shape"):
        OTFProblem(C, G.T)
    with pytest.raises(ValueError, match="`G` row 1"):
        OTFProblem(C, torch.stack([G[0], G[1].abs() + 1]))
    problem = OTFProblem(C, G)
    with pytest.raises(ValueError, match="`h` has 5 entries"):
        problem.otf_dual(torch.rand(5) + 0.1, 0.1)
    with pytest.raises(ValueError, match="`h` must be non-negative"):
        problem.otf0(-torch.rand(12), 0.1)


def test_batched_masses_equal_the_single_vector_solves():
    X, s, G, C = _batch(n=80, seed=5)
    H = torch.sigmoid(torch.stack([X[:, 0] + s, X[:, 1] - s, 2 * X[:, 2], X[:, 0] * 0]))
    H = H.clone().requires_grad_(True)
    values, details = otf0(H, C, G, 0.05, return_details=True, **TIGHT)
    assert values.shape == (4,) and len(details) == 4
    values.sum().backward()
    for k in range(4):
        ref, ref_grad = _value_and_grad(lambda x: otf0(x, C, G, 0.05, **TIGHT), H[k])
        assert float(values[k].detach()) == pytest.approx(float(ref), rel=1e-12, abs=1e-15)
        torch.testing.assert_close(H.grad[k], ref_grad)
    assert abs(float(values[3].detach())) < 1e-12  # a constant vector satisfies G h = 0
    # warm starts per row give the same values
    problem = OTFProblem(C, G)
    again = problem.otf0(H.detach(), 0.05, warm_start=details, **TIGHT)
    torch.testing.assert_close(again, values.detach(), rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="`warm_start` must hold 4"):
        problem.otf0(H.detach(), 0.05, warm_start=details[:2])
    with pytest.raises(ValueError, match=r"`h` must have shape \(80,\) or \(K, 80\)"):
        problem.otf0(H.detach()[:, :10], 0.05)


def test_compact_problem_keeps_only_the_reduced_cost_and_solves_the_same():
    X, s, G, C = _batch(n=64, seed=6)
    problem = OTFProblem(C, G)
    compact = problem.compact(0.05)
    assert compact.C is None and compact.matrices(0.05)[0].shape == (64, 2)
    h = torch.sigmoid(X[:, 0] + s)
    a, grad_a = _value_and_grad(lambda x: compact.otf0(x, 0.05, **TIGHT), h)
    b, grad_b = _value_and_grad(lambda x: otf0(x, C, G, 0.05, **TIGHT), h)
    assert float(a) == pytest.approx(float(b), rel=1e-12)
    torch.testing.assert_close(grad_a, grad_b)
    with pytest.raises(ValueError, match="compact problem"):
        compact.otf0(h, 0.1)
    with pytest.raises(ValueError, match="class reduction"):
        OTFProblem(C, torch.randn(1, 64, dtype=C.dtype)).compact(0.05)
