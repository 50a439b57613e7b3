import math

import numpy as np
import pytest
from scipy.optimize import brentq

from otfair.ot._newton import bracketed_newton


def _exp_sum(a, g, target):
    """Residual of sum_j a_j exp(y g_j) = target (non-decreasing for target-shifted mixes)."""

    def fn(y):
        with np.errstate(over="ignore"):
            e = a * np.exp(y * g)
        return float((g * e).sum() - target), float((g * g * e).sum()), 1e-12

    return fn


@pytest.mark.parametrize("seed", range(5))
def test_matches_brentq_from_far_starts(seed):
    rng = np.random.default_rng(seed)
    g = rng.normal(size=20)
    a = rng.uniform(0.1, 1.0, size=20)
    target = float(rng.normal())
    fn = _exp_sum(a, g, target)
    ref = brentq(lambda y: fn(y)[0], -50, 50, xtol=1e-14)
    for y0 in (-30.0, 0.0, 30.0):
        assert bracketed_newton(fn, y0) == pytest.approx(ref, abs=1e-8)


@pytest.mark.parametrize("overflow", [math.inf, math.nan])
def test_overflow_narrows_the_bracket(overflow):
    # a residual y - 1 whose evaluation overflows (inf or NaN) beyond y = 5
    def fn(y):
        return (y - 1.0 if y <= 5.0 else overflow), 1.0, 1e-12

    assert bracketed_newton(fn, 100.0) == pytest.approx(1.0, abs=1e-12)
    # -inf narrows from below the same way
    assert bracketed_newton(lambda y: (-math.inf if y < -5 else y - 1.0, 1.0, 1e-12), -100.0) == (
        pytest.approx(1.0, abs=1e-12)
    )


def test_respects_the_initial_bracket():
    calls = []

    def fn(y):
        calls.append(y)
        return math.atan(y - 3.0), 1.0 / (1.0 + (y - 3.0) ** 2), 1e-12

    # raw Newton on atan diverges from y0 = 10; the bracket keeps it inside (0, 20)
    assert bracketed_newton(fn, 10.0, lo=0.0, hi=20.0) == pytest.approx(3.0, abs=1e-9)
    assert all(0.0 <= y <= 20.0 for y in calls)
