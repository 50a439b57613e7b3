import numpy as np
import ot as pot
import pytest
import torch
from scipy.spatial.distance import cdist
from scipy.special import xlogy

from otfair.ot import ConvergenceWarning, sinkhorn
from otfair.ot._lse import lse_cols, lse_rows


def _problem(n0=30, n1=20, seed=0, dtype=torch.float64):
    rng = np.random.default_rng(seed)
    X, Y = rng.normal(size=(n0, 2)), rng.normal(0.5, 1.0, size=(n1, 2))
    a = rng.uniform(0.5, 1.0, n0)
    b = rng.uniform(0.5, 1.0, n1)
    a, b = a / a.sum(), b / b.sum()
    M = cdist(X, Y, "sqeuclidean")
    t = lambda x: torch.tensor(x, dtype=dtype)  # noqa: E731
    return a, b, M, t(a), t(b), t(M)


@pytest.mark.parametrize("chunk_rows", [None, 7])
def test_lse_helpers_match_torch_logsumexp(chunk_rows):
    C = torch.randn(23, 17, dtype=torch.float64).abs()
    w_col, w_row = torch.randn(17, dtype=torch.float64), torch.randn(23, dtype=torch.float64)
    torch.testing.assert_close(
        lse_rows(C, -3.0, w_col, chunk_rows=chunk_rows),
        torch.logsumexp(-3.0 * C + w_col[None, :], dim=1),
    )
    torch.testing.assert_close(
        lse_cols(C, -3.0, w_row, chunk_rows=chunk_rows),
        torch.logsumexp(-3.0 * C + w_row[:, None], dim=0),
    )


@pytest.mark.parametrize("eps", [1.0, 0.1, 0.05])
def test_plan_and_values_match_pot_sinkhorn_log(eps):
    a, b, M, at, bt, Mt = _problem()
    res = sinkhorn(at, bt, Mt, eps, tol=1e-10, max_iter=20000)
    assert res.converged
    P_ref = pot.sinkhorn(a, b, M, eps, method="sinkhorn_log", stopThr=1e-12, numItermax=20000)
    np.testing.assert_allclose(res.plan.numpy(), P_ref, atol=1e-8)
    sharp_ref = pot.sinkhorn2(a, b, M, eps, method="sinkhorn_log", stopThr=1e-12, numItermax=20000)
    assert float(res.sharp_value) == pytest.approx(float(sharp_ref), rel=1e-7)
    # the regularized value equals the primal objective <P,M> + eps KL(P | a x b)
    P = P_ref
    primal = (P * M).sum() + eps * xlogy(P, P / np.outer(a, b)).sum()
    assert float(res.value) == pytest.approx(primal, rel=1e-7)
    np.testing.assert_allclose(res.plan.sum(1).numpy(), a, atol=1e-10)
    np.testing.assert_allclose(res.plan.sum(0).numpy(), b, atol=1e-12)


def test_small_eps_approaches_exact_ot_without_nan():
    a, b, M, at, bt, Mt = _problem(dtype=torch.float32)
    Mt = Mt / Mt.max()
    res = sinkhorn(at, bt, Mt, 1e-4, tol=1e-4, max_iter=5000, warn=False)
    assert torch.isfinite(res.f).all() and torch.isfinite(res.g).all()
    assert torch.isfinite(res.plan).all()
    exact = pot.emd2(a, b, M / M.max())
    assert float(res.sharp_value) == pytest.approx(exact, abs=2e-3)


def test_non_convergence_is_reported():
    _, _, _, at, bt, Mt = _problem()
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        res = sinkhorn(at, bt, Mt, 0.001, tol=1e-12, max_iter=3)
    assert not res.converged
    assert res.n_iter == 3
    assert res.marginal_error > 1e-12
    quiet = sinkhorn(at, bt, Mt, 0.001, tol=1e-12, max_iter=3, warn=False)
    assert not quiet.converged


def test_warm_start_converges_faster_to_the_same_plan():
    _, _, _, at, bt, Mt = _problem()
    cold = sinkhorn(at, bt, Mt, 0.05, tol=1e-9, max_iter=10000)
    warm = sinkhorn(at, bt, Mt, 0.05, tol=1e-9, max_iter=10000, f0=cold.f, g0=cold.g)
    assert warm.n_iter < cold.n_iter
    torch.testing.assert_close(warm.plan, cold.plan, atol=1e-9, rtol=0)


def test_zero_weights_give_empty_rows():
    _, _, _, at, bt, Mt = _problem()
    at = at.clone()
    at[:3] = 0
    at = at / at.sum()
    res = sinkhorn(at, bt, Mt, 0.1, tol=1e-9, max_iter=5000)
    assert torch.all(res.plan[:3] == 0)
    torch.testing.assert_close(res.plan.sum(1), at, atol=1e-9, rtol=0)


def test_bad_input():
    _, _, _, at, bt, Mt = _problem()
    with pytest.raises(ValueError, match="`eps`"):
        sinkhorn(at, bt, Mt, 0.0)
    with pytest.raises(ValueError, match="`eps`"):
        sinkhorn(at, bt, Mt, float("nan"))
    with pytest.raises(ValueError, match="same total mass"):
        sinkhorn(at, 2 * bt, Mt, 0.1)
    with pytest.raises(ValueError, match="`a` must be non-negative"):
        sinkhorn(-at, bt, Mt, 0.1)
    with pytest.raises(ValueError, match="`b` has 5 entries"):
        sinkhorn(at, bt[:5], Mt, 0.1)
    with pytest.raises(ValueError, match="`max_iter`"):
        sinkhorn(at, bt, Mt, 0.1, max_iter=0)
    with pytest.raises(ValueError, match="`M`"):
        sinkhorn(at, bt, Mt * float("nan"), 0.1)
