r"""Full-memory BFGS with a weak Wolfe line search, for small nonsmooth objectives.

The logistic model's fixed-batch OTF objective is nonsmooth where it matters: a batch's
OTF0 behaves like :math:`c\,|G h|` near fairness (its dual jumps between the kinks on
either side of 0; the entropic smoothing rounds the kink over a width of order
:math:`e^{-\Delta/\varepsilon}`, nothing in float64), so its minimum sits on the kinks of
the batches a strong penalty or a nearly fair model makes fair. L-BFGS with ten
correction pairs forgets the curvature across them: it crawls (Adult at strength 0.9
reached its 300-iteration cap under DP and EO) or its line search gives up above the
minimum and reports convergence (German at 0.9: 0.019 above). Full-memory BFGS keeps it,
as Lewis & Overton (2013, "Nonsmooth optimization via quasi-Newton methods", Math.
Program. 141) found: its inverse Hessian grows ill-conditioned along the kinks' normals,
which is what a kink needs, and with a weak Wolfe line search (a strong Wolfe search may
not end on a kink) it converges on such objectives (Adult at 0.9: 84 and 91
iterations under DP and EO). Its convergence there is linear, so the gradient rule
(``done``) never ends a run whose minimum is on kinks: the stall rule does
(``stall_rtol``: the relative decrease over the last :data:`STALL_ITERATIONS`
iterations). ``docs/measurements/lbfgs_vs_bfgs.md`` compares both on six datasets (BFGS
spends more iterations where L-BFGS had stopped early, fewer where it crawled);
FairnessCV's searches, which fit many such models:
``docs/measurements/fairness_cv_vs_fairlearn.md``.

Each iteration costs :math:`O(d^2)` beyond the evaluation (the inverse Hessian update),
so it is for up to a few thousand variables (:data:`FULL_MEMORY_MAX_PARAMS`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["FULL_MEMORY_MAX_PARAMS", "STALL_ITERATIONS", "BfgsOutcome", "minimize_bfgs"]

#: the most variables a full-memory BFGS run takes (its inverse Hessian: 32 MB at 2,000)
FULL_MEMORY_MAX_PARAMS = 2000
#: sufficient decrease (Armijo) and weak curvature constants of the line search
C1, C2 = 1e-4, 0.9
#: line search trials at most (bisections and doublings): a search that finds no step
#: within them (a step of about 1e-6 of its first) is at a kink or at rounding level
MAX_LINE_SEARCH = 20
#: the stall rule's window (``minimize_bfgs(stall_rtol=...)``): iterations over which the
#: objective's relative decrease is measured
STALL_ITERATIONS = 10


@dataclass(frozen=True)
class BfgsOutcome:
    """How a :func:`minimize_bfgs` run ended.

    Attributes
    ----------
    x : ndarray
        The last accepted point.
    n_iter : int
        Iterations made (accepted steps).
    stopped : bool
        Whether a rule other than ``max_iter`` ended the run: ``done``, a relative
        decrease below ``ftol``, or a line search that found no acceptable step (at a
        kink or at the rounding level of the objective: no decrease is measurable).
    message : str
    """

    x: np.ndarray
    n_iter: int
    stopped: bool
    message: str


def _line_search(
    fun: Callable[[np.ndarray], tuple[float, np.ndarray]],
    x: np.ndarray,
    f: float,
    g: np.ndarray,
    d: np.ndarray,
    first: float = 1.0,
) -> tuple[float, float, np.ndarray] | None:
    r"""Return a step ``(t, f(x + t d), grad)`` meeting the weak Wolfe conditions, or None.

    :math:`f(x + td) \le f(x) + c_1 t\, g^\top d` and :math:`\nabla f(x + td)^\top d \ge
    c_2\, g^\top d`: the step is halved while the first fails and doubled while the
    second fails, within the bracket found (Lewis & Overton 2013, §4.2). A non-finite
    value fails the first (the step backs off an overflow).
    """
    slope = float(g @ d)
    lo, hi, t = 0.0, np.inf, float(first)
    for _ in range(MAX_LINE_SEARCH):
        f_t, g_t = fun(x + t * d)
        if not np.isfinite(f_t) or f_t > f + C1 * t * slope:
            hi = t
            # the minimizer of the quadratic through f, the slope and f_t, kept within
            # [lo + 0.1 (hi - lo), lo + 0.5 (hi - lo)]: a smooth stretch's step in one
            # trial, a kink's bisection in a few
            curvature = float(f_t) - f - slope * t if np.isfinite(f_t) else np.inf
            guess = -slope * t * t / (2.0 * curvature) if curvature > 0 else lo
            t = float(np.clip(guess, lo + 0.1 * (hi - lo), lo + 0.5 * (hi - lo)))
        elif float(g_t @ d) < C2 * slope:
            lo = t
            t = 0.5 * (lo + hi) if np.isfinite(hi) else 2.0 * lo
        else:
            return t, float(f_t), g_t
    return None


def minimize_bfgs(
    fun: Callable[[np.ndarray], tuple[float, np.ndarray]],
    x0: np.ndarray,
    *,
    max_iter: int,
    ftol: float,
    done: Callable[[np.ndarray, float], bool] | None = None,
    stall_rtol: float = 0.0,
) -> BfgsOutcome:
    r"""Minimize ``fun`` (``x -> (value, gradient)``) from ``x0`` by BFGS (module docstring).

    The inverse Hessian starts at the identity (precondition the variables so that it
    is a fair guess) and takes the update :math:`H \leftarrow (I - \rho s y^\top) H (I -
    \rho y s^\top) + \rho s s^\top`, :math:`\rho = 1 / y^\top s` (the weak Wolfe step
    keeps :math:`y^\top s > 0`). After each iteration ``done(x, value)`` may end the run
    (a convergence test of the caller's); a relative decrease :math:`(f_k - f_{k+1}) /
    \max(|f_k|, |f_{k+1}|, 1) \le` ``ftol`` ends it too (SciPy's L-BFGS-B rule).

    ``stall_rtol`` > 0: the run also ends when the objective has decreased by at most
    ``stall_rtol`` (relative, :math:`(f_{k-W} - f_k) / \max(|f_k|, 1)`) over the last
    :math:`W` = :data:`STALL_ITERATIONS` iterations (scikit-learn's ``n_iter_no_change``
    rule for its stochastic solvers, over a window: a kinked objective's gradient
    need not vanish at its minimum, and BFGS approaches a minimum on many kinks
    linearly, so the gradient rule never ends the run and the last iterations buy
    digits no measure sees).
    """
    x = np.asarray(x0, dtype=np.float64).copy()
    f, g = fun(x)
    f = float(f)
    if not np.isfinite(f):
        return BfgsOutcome(x, 0, True, "the objective is not finite at the start")
    n = len(x)
    H = np.eye(n)
    # each search starts at twice the last step accepted, at most 1: near a kink the unit
    # step overshoots (on the fits of benchmarks/lbfgs_vs_bfgs.py this took a fifth fewer
    # evaluations than a unit first step; a first step expecting the last decrease,
    # SciPy's choice, took fewer still but ended several fits above these minima)
    last = 1.0
    values = [f]  # the objective at each accepted point (the stall rule's window)
    for k in range(int(max_iter)):
        d = -(H @ g)
        if not float(g @ d) < 0:  # rounding made H indefinite along g: restart from I
            H = np.eye(n)
            d = -g
            if not float(g @ d) < 0:
                return BfgsOutcome(x, k, True, "zero gradient")
        step = _line_search(fun, x, f, g, d, first=min(1.0, 2.0 * last))
        if step is None and not np.array_equal(H, np.eye(n)):  # once more along -g
            H, d = np.eye(n), -g
            step = _line_search(fun, x, f, g, d)
        if step is None:
            return BfgsOutcome(x, k, True, "no step decreases the objective (line search)")
        t, f_new, g_new = step
        last = t
        s, y = t * d, g_new - g
        decrease = f - f_new
        x, f, g = x + s, f_new, g_new
        ys = float(y @ s)
        if ys > 0:
            rho = 1.0 / ys
            Hy = H @ y
            H -= rho * (np.outer(s, Hy) + np.outer(Hy, s))
            H += (rho * rho * float(y @ Hy) + rho) * np.outer(s, s)
        if done is not None and done(x, f):
            return BfgsOutcome(x, k + 1, True, "gradient below tol")
        if decrease <= ftol * max(abs(f), abs(f + decrease), 1.0):
            return BfgsOutcome(x, k + 1, True, "relative decrease below ftol")
        values.append(f)
        stalled = len(values) > STALL_ITERATIONS and (
            values[-STALL_ITERATIONS - 1] - f <= stall_rtol * max(abs(f), 1.0)
        )
        if stall_rtol > 0 and stalled:
            return BfgsOutcome(
                x,
                k + 1,
                True,
                f"relative decrease below {stall_rtol:g} over {STALL_ITERATIONS} iterations",
            )
    return BfgsOutcome(x, int(max_iter), False, "iteration limit reached")
