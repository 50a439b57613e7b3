"""Full-memory BFGS with a weak Wolfe line search (``otfair.estimators._bfgs``)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize

from otfair.estimators._bfgs import C1, C2, STALL_ITERATIONS, _line_search, minimize_bfgs
from otfair.estimators._lbfgs import FLOAT64_FTOL, minimize_lbfgs


def _gradient_below(tol, grad):
    return lambda x, value: float(np.abs(grad(x)).max()) <= tol


def test_a_quadratic_ends_at_its_solve():
    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.normal(size=(30, 30)))
    H = (Q * np.logspace(0, 3, 30)) @ Q.T
    b = rng.normal(size=30)

    def grad(x):
        return H @ x - b

    out = minimize_bfgs(
        lambda x: (0.5 * x @ H @ x - b @ x, grad(x)),
        np.zeros(30),
        max_iter=500,
        ftol=FLOAT64_FTOL,
        done=_gradient_below(1e-6, grad),
    )
    assert out.stopped and out.message == "gradient below tol"
    np.testing.assert_allclose(out.x, np.linalg.solve(H, b), atol=1e-5)


def _rosenbrock(max_iter, done=None):
    """Minimize Rosenbrock's function from the classic start (-1.2, 1)."""
    return minimize_bfgs(
        lambda x: (scipy.optimize.rosen(x), scipy.optimize.rosen_der(x)),
        np.array([-1.2, 1.0]),
        max_iter=max_iter,
        ftol=0.0,
        done=done,
    )


def test_rosenbrock_reaches_its_minimum():
    """Through the curved valley, to the gradient tolerance."""
    out = _rosenbrock(1000, _gradient_below(1e-9, scipy.optimize.rosen_der))
    assert out.stopped and out.message == "gradient below tol"
    np.testing.assert_allclose(out.x, np.ones(2), atol=1e-6)


def _kinked(seed: int = 0, n: int = 12, m: int = 5):
    r""":math:`\frac12\lVert x - c\rVert^2 + \sum_j w_j |a_j^\top x|` and its minimizer.

    The minimizer is :math:`c - A^\top\lambda^\star`, :math:`\lambda^\star` the box-bounded
    least squares solution of :math:`A^\top \lambda \approx c`, :math:`|\lambda_j| \le
    w_j` (the dual; ``scipy.optimize.lsq_linear``). The weights are large enough that
    several kinks hold at the minimum (:math:`a_j^\top x^\star = 0`), as the OTF
    objective's batches sit at :math:`G h = 0`.
    """
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(m, n))
    c = rng.normal(size=n)
    w = np.full(m, 2.0)

    def fun(x):
        u = A @ x
        return 0.5 * (x - c) @ (x - c) + w @ np.abs(u), (x - c) + A.T @ (w * np.sign(u))

    dual = scipy.optimize.lsq_linear(A.T, c, bounds=(-w, w), tol=1e-12)
    minimizer = c - A.T @ dual.x
    return fun, minimizer, A


def test_a_kinked_objective_ends_at_its_minimum():
    """At a minimum on kinks the gradient never vanishes: the line search ends the run."""
    fun, minimizer, A = _kinked()
    assert (np.abs(A @ minimizer) < 1e-9).sum() >= 2  # the minimum sits on kinks
    start = np.random.default_rng(10).normal(size=len(minimizer))  # off the kinks
    out = minimize_bfgs(fun, start, max_iter=500, ftol=0.0)
    assert out.stopped and out.n_iter < 500
    assert fun(out.x)[0] == pytest.approx(fun(minimizer)[0], rel=1e-9)
    np.testing.assert_allclose(out.x, minimizer, atol=1e-4)


def test_minimize_lbfgs_with_full_memory_reaches_the_kinked_minimum():
    """Through ``minimize_lbfgs(full_memory=True)``, preconditioned by an identity factor."""
    fun, minimizer, _ = _kinked(seed=1)
    start = np.random.default_rng(11).normal(size=len(minimizer))
    # tol 1e-12: the stall rule (relative decrease tol / 10 over 10 iterations) far below
    # the comparison's 1e-9
    x, result = minimize_lbfgs(fun, start, max_iter=500, tol=1e-12, ftol=0.0, full_memory=True)
    assert result.converged and result.n_iter == len(result.history) - 1
    assert result.history[-1] == pytest.approx(fun(x)[0])
    assert fun(x)[0] == pytest.approx(fun(minimizer)[0], rel=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_stall_rule_ends_the_crawl_along_the_kinks(seed):
    """The run ends at the first iteration whose last 10 decreased the objective by at most
    ``stall_rtol`` (relative), sooner than without the rule, near the minimum."""
    fun, minimizer, _ = _kinked(seed=seed)
    start = np.random.default_rng(10 + seed).normal(size=len(minimizer))
    seen: list[float] = [fun(start)[0]]

    def record(x, value):
        seen.append(value)
        return False

    rtol = 1e-6
    out = minimize_bfgs(fun, start, max_iter=500, ftol=0.0, done=record, stall_rtol=rtol)
    full = minimize_bfgs(fun, start, max_iter=500, ftol=0.0)
    assert out.stopped and "over 10 iterations" in out.message
    assert len(seen) == out.n_iter + 1
    W = STALL_ITERATIONS
    stalled = [seen[k - W] - seen[k] <= rtol * max(abs(seen[k]), 1.0) for k in range(W, len(seen))]
    assert stalled[-1] and not any(stalled[:-1])  # the first stall ends it
    assert out.n_iter < full.n_iter
    best = fun(minimizer)[0]
    assert seen[-1] - best <= 1e-4 * abs(best)  # the crawl's last digits only


def test_the_line_search_meets_the_weak_wolfe_conditions():
    rng = np.random.default_rng(3)
    fun, _, _ = _kinked(seed=3)
    for _ in range(20):
        x = rng.normal(size=12)
        f, g = fun(x)
        d = -g * rng.uniform(0.01, 10.0)  # too short and too long first steps
        t, f_t, g_t = _line_search(fun, x, f, g, d)
        assert f_t <= f + C1 * t * (g @ d)
        assert g_t @ d >= C2 * (g @ d)


def test_an_overflow_on_the_way_is_stepped_back_from():
    """A non-finite value (an overflow) fails the decrease test: the step shrinks."""

    def fun(x):
        if abs(x[0]) > 5.0:
            return np.inf, np.zeros(1)
        return 5.0 * (x[0] - 3.0) ** 2, np.array([10.0 * (x[0] - 3.0)])

    out = minimize_bfgs(
        fun,
        np.zeros(1),
        max_iter=100,
        ftol=0.0,
        done=lambda x, value: abs(10.0 * (x[0] - 3.0)) <= 1e-10,
    )
    assert out.message == "gradient below tol"
    assert out.x[0] == pytest.approx(3.0, abs=1e-10)


def test_the_cap_is_reported():
    out = _rosenbrock(3)
    assert not out.stopped and out.n_iter == 3
