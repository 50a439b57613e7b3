"""Safeguarded Newton root-finding for the monotone 1-D dual equations of OTF / OTFR.

The semi-dual OTF solver (:mod:`otfair.ot._otf_semidual`) reduces each coordinate update
to a root of a non-decreasing residual :math:`r(y)`. Newton converges quadratically near
the root, but :math:`r` is a sum of exponentials, so a raw Newton step from far away can
overshoot by orders of magnitude; keeping a bracket and bisecting when a step leaves it
makes the iteration globally convergent.
"""

from __future__ import annotations

import math
from collections.abc import Callable


def bracketed_newton(
    fn: Callable[[float], tuple[float, float, float]],
    y0: float,
    *,
    lo: float = -math.inf,
    hi: float = math.inf,
    step: float = 1.0,
    max_steps: int = 200,
    xtol: float = 1e-13,
) -> float:
    r"""Root of a non-decreasing residual by Newton steps kept inside a bracket.

    Parameters
    ----------
    fn : callable
        ``y -> (r, slope, tol)``: the residual :math:`r(y)`, its derivative and the
        tolerance at which ``|r| <= tol`` counts as the root. ``r = +inf`` or NaN (an
        overflow far on the positive side) narrows the bracket from above, ``-inf`` from
        below.
    y0 : float
        Starting point.
    lo, hi : float
        An initial bracket (:math:`r(lo) < 0 < r(hi)`), infinite when unknown.
    step : float
        While one side of the bracket is still open, a step that leaves it is replaced
        by a move of ``step`` towards that side, ``step`` doubling each time.
    max_steps : int
        Iteration cap; the last iterate is returned when it is reached.
    xtol : float
        Relative bracket width at which the midpoint is returned.

    Returns
    -------
    float
        ``y`` with ``|r(y)| <= tol``, or the midpoint of a bracket narrower than
        ``xtol * max(1, |y|)``.
    """
    y = y0
    for _ in range(max_steps):
        r, slope, tol = fn(y)
        if math.isnan(r) or r == math.inf:
            hi = y
        elif r == -math.inf:
            lo = y
        elif abs(r) <= tol:
            return y
        elif r > 0:
            hi = y
        else:
            lo = y
        y_new = y - r / slope if math.isfinite(r) and slope > 0 else math.nan
        if not (lo < y_new < hi):
            if math.isfinite(lo) and math.isfinite(hi):
                y_new = 0.5 * (lo + hi)
            else:  # expand towards the side that is still open
                y_new = y + step if math.isfinite(lo) else y - step
                step *= 2.0
        if math.isfinite(lo) and math.isfinite(hi) and hi - lo <= xtol * max(1.0, abs(y)):
            return 0.5 * (lo + hi)
        y = y_new
    return y
