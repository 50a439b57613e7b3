import cvxpy as cp
import numpy as np
import pytest
import torch
from _benchmarks import load
from scipy.optimize import brentq

import otfair.ot._otf_problem as problem_module
from otfair.ot import ConvergenceWarning, euclidean_cost, otf0, otf_dual, otfr_dual

alternating = load("otf_alternating")

TIGHT = {"tol": 1e-11, "max_iter": 20000}


def _batch(n=8, seed=0, dtype=torch.float64):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    s = np.zeros(n)
    s[rng.choice(n, size=n // 3, replace=False)] = 1.0
    y = (rng.uniform(size=n) < 0.5).astype(float)
    h = 1 / (1 + np.exp(-(X[:, 0] + 1.5 * s)))
    return X, s, y, h


def _dp_rows(s):
    p = s.mean()
    return np.stack([s / p - 1, (1 - s) / (1 - p) - 1])


def _primal(C, G, h, eps, relaxed):
    """Independent solve of the entropic primal (cvxpy, exponential cone)."""
    n = len(h)
    P = cp.Variable((n, n), nonneg=True)
    entropy = cp.sum(cp.entr(P)) + cp.sum(P)  # H(P) = -sum P (log P - 1)
    f = cp.sum(P, axis=0)
    fair = [cp.abs(G @ f) <= np.abs(G @ h)] if relaxed else [G @ f == 0]
    prob = cp.Problem(
        cp.Minimize(cp.sum(cp.multiply(C, P)) - eps * entropy), [cp.sum(P, axis=1) == h, *fair]
    )
    prob.solve(solver=cp.CLARABEL)
    return prob.value


METHODS = ["semidual", "alternating"]
#: the package's solver, and the paper's reference algorithm kept in benchmarks/
SOLVERS = {"semidual": None, "alternating": alternating.AlternatingSolver}


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("eps", [0.5, 0.1])
@pytest.mark.parametrize("relaxed", [False, True])
def test_dp_dual_value_equals_the_primal_optimum(eps, relaxed, method):
    X, s, _, h = _batch()
    C = euclidean_cost(torch.tensor(X), torch.tensor(X))
    G = _dp_rows(s)
    solver = otfr_dual if relaxed else otf_dual
    res = solver(torch.tensor(h), C, torch.tensor(G), eps, solver=SOLVERS[method], **TIGHT)
    assert res.converged
    ref = _primal(C.numpy(), G, h, eps, relaxed)
    assert float(res.value) == pytest.approx(ref, abs=1e-6, rel=1e-6)


@pytest.mark.parametrize("method", METHODS)
def test_continuous_and_eo_rows_use_newton_and_match_the_primal(method):
    X, s, y, h = _batch(n=9, seed=1)
    rng = np.random.default_rng(5)
    age = rng.normal(size=9)
    G = np.stack(
        [
            (age - age.mean()) / age.std(),  # continuous: many values -> Newton
            y * (s / (s * y).mean() - 1),  # EO row (label 1): two values and zeros
        ]
    )
    assert alternating._two_values(torch.tensor(G[0])) is None  # continuous: Newton
    assert alternating._two_values(torch.tensor(G[1])) is not None
    C = euclidean_cost(torch.tensor(X), torch.tensor(X))
    for relaxed, solver in ((False, otf_dual), (True, otfr_dual)):
        res = solver(torch.tensor(h), C, torch.tensor(G), 0.2, solver=SOLVERS[method], **TIGHT)
        assert res.converged
        ref = _primal(C.numpy(), G, h, 0.2, relaxed)
        assert float(res.value) == pytest.approx(ref, abs=1e-6, rel=1e-6)


def test_reference_closed_form_update_agrees_with_brentq():
    rng = np.random.default_rng(2)
    g = torch.tensor(np.where(rng.uniform(size=50) < 0.3, 7.0 / 3.0, -1.0))
    w = torch.tensor(rng.normal(size=50))
    D = lambda y, target=0.0: float((g * torch.exp(w + y * g)).sum()) - target  # noqa: E731
    y_cf = alternating.closed_form(g, w, 7.0 / 3.0, -1.0)
    assert y_cf == pytest.approx(brentq(D, -50, 50, xtol=1e-14), abs=1e-9)
    assert alternating.solve_row(g, w) == y_cf
    # a nonzero target (OTFR bound) on both sides: the bracketed search
    for target in (0.7, -0.4):
        y_t = alternating.solve_row(g, w, target, y0=3.0)
        assert y_t == pytest.approx(brentq(D, -50, 50, args=(target,), xtol=1e-14), abs=1e-9)


def test_otf0_is_zero_for_fair_scores_and_positive_otherwise():
    X, s, _, h = _batch(n=30, seed=3)
    C = euclidean_cost(torch.tensor(X), torch.tensor(X))
    G = torch.tensor(_dp_rows(s))
    fair = h.copy()
    fair[s == 1] += fair[s == 0].mean() - fair[s == 1].mean()
    fair = np.clip(fair, 0.01, 1.0)
    fair[s == 1] += fair[s == 0].mean() - fair[s == 1].mean()
    assert np.abs(G.numpy() @ fair).max() < 1e-12
    zero = otf0(torch.tensor(fair), C, G, 0.1, **TIGHT)
    assert abs(float(zero)) < 1e-8
    unfair = otf0(torch.tensor(h), C, G, 0.1, **TIGHT)
    assert float(unfair) > 1e-3


@pytest.mark.parametrize("method", METHODS)
def test_otf0_gradient_matches_finite_differences(method):
    X, s, _, h = _batch(n=7, seed=4)
    C = euclidean_cost(torch.tensor(X), torch.tensor(X))
    G = torch.tensor(_dp_rows(s))
    ht = torch.tensor(h, requires_grad=True)
    fn = lambda x: otf0(x, C, G, 0.3, solver=SOLVERS[method], **TIGHT)  # noqa: E731
    assert torch.autograd.gradcheck(fn, (ht,), eps=1e-6, atol=1e-6, rtol=1e-4)


def test_otf0_gradient_reduces_unfairness():
    X, s, _, h = _batch(n=40, seed=6)
    C = euclidean_cost(torch.tensor(X), torch.tensor(X))
    G = torch.tensor(_dp_rows(s))
    ht = torch.tensor(h, requires_grad=True)
    value = otf0(ht, C, G, 0.1, **TIGHT)
    value.backward()
    stepped = (ht - 0.05 * ht.grad / ht.grad.abs().max()).detach()
    assert float(otf0(stepped, C, G, 0.1, **TIGHT)) < float(value.detach())
    assert (G @ stepped).abs().sum() < (G @ ht.detach()).abs().sum()


@pytest.mark.parametrize("method", METHODS)
def test_no_nan_at_tiny_eps_in_float32_and_chunking_is_exact(method):
    rng = np.random.default_rng(7)
    n = 300
    X = torch.tensor(rng.normal(size=(n, 6)), dtype=torch.float32)
    s = torch.tensor((rng.uniform(size=n) < 0.4).astype(np.float32))
    h = torch.sigmoid(X[:, 0] + s).requires_grad_(True)
    C = euclidean_cost(X, X)
    G = torch.tensor(_dp_rows(s.numpy()), dtype=torch.float32)
    kw = {"max_iter": 5, "solver": SOLVERS[method]}
    value, details = otf0(h, C, G, 1e-4, return_details=True, **kw)
    value.backward()
    assert torch.isfinite(value) and torch.isfinite(h.grad).all()
    if method == "alternating":  # O(eps) steps: far from converged, and says so
        assert not details.otf.converged
    else:  # one Newton solve per row reaches the constraint even at eps = 1e-4
        assert details.otf.converged and details.otf.constraint_error <= 1e-4
    chunked = otf0(h.detach(), C, G, 1e-4, chunk_rows=7, **kw)
    assert float(chunked) == pytest.approx(float(value.detach()), rel=1e-5)


@pytest.mark.parametrize("method", METHODS)
def test_eps_scaling_and_warm_start_reach_the_same_optimum(method):
    X, s, _, h = _batch(n=40, seed=8)
    C = euclidean_cost(torch.tensor(X), torch.tensor(X))
    G = torch.tensor(_dp_rows(s))
    kw = {"tol": 1e-9, "max_iter": 20000, "solver": SOLVERS[method]}
    plain = otf_dual(torch.tensor(h), C, G, 0.05, **kw)
    scaled = otf_dual(torch.tensor(h), C, G, 0.05, eps_start=2.0, **kw)
    warm = otf_dual(torch.tensor(h), C, G, 0.05, mu0=plain.mu, **kw)
    assert scaled.converged and warm.converged
    assert float(scaled.value) == pytest.approx(float(plain.value), rel=1e-7)
    assert float(warm.value) == pytest.approx(float(plain.value), rel=1e-7)
    assert warm.n_iter <= plain.n_iter


def test_semidual_and_alternating_agree_at_small_eps():
    """Two different algorithms, one optimum (the alternating one needs eps scaling)."""
    X, s, y, h = _batch(n=60, seed=11)
    C = euclidean_cost(torch.tensor(X), torch.tensor(X))
    G = torch.tensor(
        np.stack([y * (s / (s * y).mean() - 1), (1 - y) * (s / (s * (1 - y)).mean() - 1)])
    )
    for solver in (otf_dual, otfr_dual):
        a = solver(torch.tensor(h), C, G, 0.01, tol=1e-10, max_iter=50)
        b = solver(torch.tensor(h), C, G, 0.01, tol=1e-10, max_iter=100000,
                   eps_start=2.0, solver=SOLVERS["alternating"])  # fmt: skip
        assert a.converged and b.converged
        assert float(a.value) == pytest.approx(float(b.value), rel=1e-6)
        torch.testing.assert_close(a.mu, b.mu, atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(a.lam, b.lam, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("method", METHODS)
def test_class_reduction_is_exact(method, monkeypatch):
    """Discrete groups run on the n x K class problem; it must equal the dense solve."""
    X, s, y, h = _batch(n=48, seed=12)
    C = euclidean_cost(torch.tensor(X), torch.tensor(X))
    G = torch.tensor(
        np.stack([y * (s / (s * y).mean() - 1), (1 - y) * (s / (s * (1 - y)).mean() - 1)])
    )
    assert problem_module.column_classes(G, max_classes=12)[0].shape == (2, 4)  # (s, y) pairs
    kw = {"tol": 1e-10, "max_iter": 100000, "solver": SOLVERS[method], "eps_start": 1.0}
    reduced = [f(torch.tensor(h), C, G, 0.05, **kw) for f in (otf_dual, otfr_dual)]
    monkeypatch.setattr(problem_module, "MAX_CLASS_FRACTION", 0.0)
    dense = [f(torch.tensor(h), C, G, 0.05, **kw) for f in (otf_dual, otfr_dual)]
    for r, d in zip(reduced, dense, strict=True):
        assert float(r.value) == pytest.approx(float(d.value), rel=1e-8)
        torch.testing.assert_close(r.lam, d.lam, atol=1e-7, rtol=1e-6)
        torch.testing.assert_close(r.mu, d.mu, atol=1e-7, rtol=1e-6)


def test_column_classes_and_grouped_logsumexp():
    from otfair.ot._lse import lse_rows_by_class
    from otfair.ot._otf_problem import column_classes

    rng = np.random.default_rng(13)
    G = torch.tensor(_dp_rows((rng.uniform(size=40) < 0.3).astype(float)))
    cols, cls = column_classes(G, max_classes=10)
    torch.testing.assert_close(cols[:, cls], G)  # every column is its class's column
    assert column_classes(torch.tensor(rng.normal(size=(1, 40))), max_classes=10) is None
    C = torch.tensor(rng.uniform(size=(7, 40)))
    for classes in (torch.tensor(rng.integers(0, 4, size=40)), torch.arange(40) // 10):
        got = lse_rows_by_class(C, -3.0, classes, 5, chunk_rows=3)
        for k in range(5):
            mask = classes == k
            ref = torch.logsumexp(-3.0 * C[:, mask], dim=1) if mask.any() else None
            if ref is None:  # empty class
                assert torch.isneginf(got[:, k]).all()
            else:
                torch.testing.assert_close(got[:, k], ref)


@pytest.mark.parametrize("method", METHODS)
def test_non_convergence_warns_when_asked(method, monkeypatch):
    monkeypatch.setattr(problem_module, "MAX_CLASS_FRACTION", 0.0)  # dense: no joint Newton
    rng = np.random.default_rng(9)
    n = 80
    X = rng.normal(size=(n, 3))
    s1, s2 = (rng.uniform(size=n) < 0.3) * 1.0, (rng.uniform(size=n) < 0.6) * 1.0
    # two attributes' DP rows: coupled, so Gauss-Seidel needs several sweeps
    G = torch.tensor(np.stack([s1 / s1.mean() - 1, s2 / s2.mean() - 1]))
    h = torch.tensor(1 / (1 + np.exp(-(X[:, 0] + 2 * s1 - 2 * s2))))
    C = euclidean_cost(torch.tensor(X), torch.tensor(X))
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        res = otf_dual(h, C, G, 0.01, max_iter=1, tol=1e-12, solver=SOLVERS[method])
    assert not res.converged and res.n_iter == 1


def test_bad_input():
    X, s, _, h = _batch(n=6)
    C = euclidean_cost(torch.tensor(X), torch.tensor(X))
    G = torch.tensor(_dp_rows(s))
    ht = torch.tensor(h)
    with pytest.raises(ValueError, match="`h` must be non-negative masses"):
        otf0(-ht, C, G, 0.1)
    for bad in (ht * 0, -ht):
        with pytest.raises(ValueError, match="`h` must be positive masses"):
            otf_dual(bad, C, G, 0.1)
    with pytest.raises(ValueError, match="`eps`"):
        otf0(ht, C, G, 0.0)
    with pytest.raises(ValueError, match="`C` must be square"):
        otf0(ht, C[:5], G, 0.1)
    with pytest.raises(ValueError, match="`G` must have shape"):
        otf0(ht, C, G.T, 0.1)
    one_sided = G.clone()
    one_sided[0] = one_sided[0].abs() + 0.1
    with pytest.raises(ValueError, match="`G` row 0"):
        otf_dual(ht, C, one_sided, 0.1)
    with pytest.raises(ValueError, match="`mu0`"):
        otf_dual(ht, C, G, 0.1, mu0=torch.zeros(5))
    with pytest.raises(ValueError, match="`method`"):
        otf_dual(ht, C, G, 0.1, method="sinkhorn")
    with pytest.raises(ValueError, match="benchmarks/otf_alternating.py"):
        otf_dual(ht, C, G, 0.1, method="alternating")
    with pytest.raises(ValueError, match="`h` has 5 entries"):
        otf0(ht[:5], C, G, 0.1)


@pytest.mark.parametrize("seed", range(5))
def test_coupled_rows_converge_fast_at_small_eps(seed, monkeypatch):
    """Two crossed attributes (4 coupled DP rows) at eps = 1e-3: the joint Newton steps of
    the class-reduced problem converge in a sweep or two, to the optimum that plain
    Gauss-Seidel on the dense problem reaches in many more."""
    rng = np.random.default_rng(seed)
    n = 200
    X = torch.tensor(rng.normal(size=(n, 10)))
    s1 = torch.tensor((rng.uniform(size=n) < 0.3) * 1.0)
    s2 = torch.tensor((rng.uniform(size=n) < 0.6) * 1.0)
    G = torch.stack([s1 / s1.mean() - 1, (1 - s1) / (1 - s1).mean() - 1,
                     s2 / s2.mean() - 1, (1 - s2) / (1 - s2).mean() - 1])  # fmt: skip
    h = torch.sigmoid(X[:, 0] + s1 - s2)
    C = euclidean_cost(X, X)
    fast = otf_dual(h, C, G, 1e-3, tol=1e-6)
    assert fast.converged and fast.n_iter <= 3
    monkeypatch.setattr(problem_module, "MAX_CLASS_FRACTION", 0.0)
    slow = otf_dual(h, C, G, 1e-3, tol=1e-6, max_iter=5000)
    assert slow.converged
    assert float(fast.value) == pytest.approx(float(slow.value), rel=1e-6)


@pytest.mark.parametrize("kind", ["dp", "eo", "two_attributes", "continuous"])
@pytest.mark.parametrize("eps", [0.5, 0.05, 1e-3])
def test_batched_torch_solver_equals_the_numpy_reference(kind, eps, monkeypatch):
    """The batched torch solve (issue 26) gives the host numpy solver's answers.

    The host solver (the CPU default, the solver of before issue 26) is passed explicitly;
    the batched one is forced for the other side, as it runs on an accelerator.
    """
    from otfair.ot._otf_backends import HostSemiDualSolver

    monkeypatch.setenv("OTFAIR_OTF_SOLVER", "batched")

    X, s, y, h = _batch(n=60, seed=21)
    rng = np.random.default_rng(21)
    if kind == "dp":
        G = _dp_rows(s)
    elif kind == "eo":
        G = np.stack([y * (s / (s * y).mean() - 1), (1 - y) * (s / (s * (1 - y)).mean() - 1)])
    elif kind == "two_attributes":
        s2 = (rng.uniform(size=60) < 0.6) * 1.0
        G = np.concatenate([_dp_rows(s), _dp_rows(s2)])
    else:  # continuous: the dense n x n solve
        G = rng.normal(size=(1, 60))
    C = euclidean_cost(torch.tensor(X), torch.tensor(X))
    kw = {"tol": 1e-11, "max_iter": 500, "warn": False}
    for solve in (otf_dual, otfr_dual):
        ours = solve(torch.tensor(h), C, torch.tensor(G), eps, **kw)
        ref = solve(torch.tensor(h), C, torch.tensor(G), eps, solver=HostSemiDualSolver, **kw)
        assert bool(ours.converged) and ref.converged
        assert float(ours.value) == pytest.approx(float(ref.value), rel=1e-8, abs=1e-10)
        torch.testing.assert_close(ours.lam, ref.lam, rtol=1e-8, atol=1e-8)
        # mu is unique up to the null space of G^T (dependent rows): compare G^T mu
        Gt = torch.tensor(G)
        torch.testing.assert_close(ours.mu @ Gt, ref.mu @ Gt, rtol=1e-6, atol=1e-6)


def test_fixed_schedule_without_host_reads_reaches_the_same_values(monkeypatch):
    """``check=False`` (no convergence read, as on an accelerator) runs every sweep."""
    monkeypatch.setenv("OTFAIR_OTF_SOLVER", "batched")  # check= applies to the batched solver
    X, s, _, h = _batch(n=50, seed=22)
    C = euclidean_cost(torch.tensor(X), torch.tensor(X))
    G = torch.tensor(_dp_rows(s))
    H = torch.tensor(np.stack([h, h**2, 1 - h]))
    checked = otf0(H, C, G, 0.05, tol=1e-10, max_iter=10)
    fixed = otf0(H, C, G, 0.05, tol=1e-10, max_iter=10, check=False)
    torch.testing.assert_close(fixed, checked, rtol=1e-9, atol=1e-12)
