"""Paper value vs otfair's value: reproduced / close / differs (issue 18)."""

from __future__ import annotations

import math
from typing import Literal

Verdict = Literal["reproduced", "close", "differs"]


def _spread(value: float | None, name: str) -> float:
    if value is None:
        return 0.0
    value = float(value)
    if math.isnan(value):
        return 0.0
    if value < 0 or math.isinf(value):
        raise ValueError(f"`{name}` must be a finite number >= 0 or None; got {value!r}.")
    return value


def verdict(
    paper_value: float,
    ours_mean: float,
    ours_std: float | None = None,
    *,
    paper_std: float | None = None,
    abs_tol: float = 0.01,
    close_tol: float = 0.03,
    rel_tol: float = 0.0,
) -> Verdict:
    r"""Compare a published number with otfair's mean over seeds.

    With :math:`d = |\text{ours\_mean} - \text{paper\_value}|` and the tolerance

    .. math::
        t = \max(\text{abs\_tol},\; \text{rel\_tol}\,|\text{paper\_value}|,\;
                 \text{paper\_std},\; \text{ours\_std}),

    the verdict is ``"reproduced"`` if :math:`d \le t` (within the paper's or our
    seed-to-seed spread, or 0.01 absolute by default), ``"close"`` if
    :math:`d \le \max(\text{close\_tol}, 2t)` (within 0.03 absolute by default, or
    twice the spread), else ``"differs"``. A missing std (None or NaN) counts as 0.
    Pass the spread of the same kind on both sides (the paper's std or standard
    error, as its table states: ``std_kind`` in the data files). For counts and
    dataset sizes use ``rel_tol`` (e.g. 0.05) with ``abs_tol=0``.

    Parameters
    ----------
    paper_value : float
        The published number (otfair's scale: fractions, not percent).
    ours_mean : float
        otfair's mean over its seeds.
    ours_std : float or None, default=None
        otfair's spread over seeds.
    paper_std : float or None, default=None
        The paper's spread, when printed.
    abs_tol : float, default=0.01
        Absolute difference that counts as reproduced.
    close_tol : float, default=0.03
        Absolute difference that counts as close.
    rel_tol : float, default=0.0
        Difference relative to ``|paper_value|`` that counts as reproduced.

    Returns
    -------
    {"reproduced", "close", "differs"}

    Raises
    ------
    ValueError
        If a value is not finite, a std is negative, or the tolerances are negative
        or ``close_tol < abs_tol``.

    Examples
    --------
    >>> verdict(0.743, 0.736)
    'reproduced'
    >>> verdict(0.743, 0.72)
    'close'
    >>> verdict(0.743, 0.70, 0.02)
    'differs'
    """
    for name, value in (("paper_value", paper_value), ("ours_mean", ours_mean)):
        if not math.isfinite(float(value)):
            raise ValueError(f"`{name}` must be a finite number; got {value!r}.")
    for name, value in (("abs_tol", abs_tol), ("close_tol", close_tol), ("rel_tol", rel_tol)):
        if not float(value) >= 0:
            raise ValueError(f"`{name}` must be >= 0; got {value!r}.")
    if close_tol < abs_tol:
        raise ValueError(f"`close_tol` ({close_tol}) must be >= `abs_tol` ({abs_tol}).")
    tol = max(
        float(abs_tol),
        float(rel_tol) * abs(float(paper_value)),
        _spread(paper_std, "paper_std"),
        _spread(ours_std, "ours_std"),
    )
    # 1e-12: decimal edges (0.743 - 0.733) must not fail on float rounding
    diff = abs(float(ours_mean) - float(paper_value)) - 1e-12
    if diff <= tol:
        return "reproduced"
    if diff <= max(float(close_tol), 2.0 * tol):
        return "close"
    return "differs"
