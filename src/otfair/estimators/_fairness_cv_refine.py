r"""Refining :class:`~otfair.estimators.FairnessCV`'s choice between two grid strengths.

A default grid steps by about 3x in the strength (in the odds :math:`s/(1-s)` of a convex
weight), and a budget falls anywhere between two of its strengths: the grid's choice is
the first strength past the budget, whose violation may sit far below it (Adult's
logistic model at DP <= 0.02: 0.0055 at strength 0.03, against 0.032 at 0.01) and whose
accuracy is then lower than the budget asks. After the grid's choice, each refinement
round fits the midpoint between the chosen strength and the largest smaller strength
measured, when that one's violation bound is over the budget, on every fold, and
chooses again on the extended table: a bisection of the interval where the budget is
crossed (two rounds narrow a 3x step to ~1.32x).

The candidate midpoints are fixed in advance (:func:`refinement_grid`): between two
consecutive positive grid strengths, the :math:`2^r - 1` points that split the interval
evenly in :math:`\log\frac{s}{1-s}` (strengths below 1: a convex weight's log odds) or in
:math:`\log s` (an interval reaching 1 or above: an additive weight), so that the
bisection's midpoints are the same whatever was measured before (the folds' fits at a
strength can be told apart from any other's by its index alone).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np

from otfair.estimators._budget_rule import select_strength

__all__ = ["next_midpoint", "refinement_grid"]


def _midpoints(a: float, b: float, rounds: int) -> np.ndarray:
    """Return the ``2**rounds - 1`` points splitting ``(a, b)`` evenly (``0 < a < b``)."""
    t = np.arange(1, 2**rounds) / 2**rounds
    if b < 1.0:
        la, lb = np.log(a / (1.0 - a)), np.log(b / (1.0 - b))
        odds = np.exp(la + t * (lb - la))
        return odds / (1.0 + odds)
    return np.exp(np.log(a) + t * (np.log(b) - np.log(a)))


def refinement_grid(strengths: np.ndarray, rounds: int) -> tuple[np.ndarray, np.ndarray]:
    """Return the grid with every candidate midpoint, and the grid strengths' indices in it.

    Parameters
    ----------
    strengths : ndarray of shape (n,)
        The searched strengths, ascending and distinct.
    rounds : int
        The refinement rounds :math:`r` (0: no midpoints).

    Returns
    -------
    (ndarray of shape (m,), ndarray of shape (n,) of int)
        The strengths with the :math:`2^r - 1` midpoints of each interval between two
        consecutive positive strengths, ascending; the positions of ``strengths`` in it.
    """
    strengths = np.asarray(strengths, dtype=float)
    if rounds <= 0:
        return strengths, np.arange(len(strengths))
    parts, index, position = [], [], 0
    for k, value in enumerate(strengths):
        parts.append(np.array([value]))
        index.append(position)
        position += 1
        if k + 1 < len(strengths) and value > 0:
            inner = _midpoints(float(value), float(strengths[k + 1]), rounds)
            inner = inner[(inner > value) & (inner < strengths[k + 1])]  # rounding-safe
            parts.append(inner)
            position += len(inner)
    return np.concatenate(parts), np.asarray(index, dtype=int)


def next_midpoint(
    measured: np.ndarray,
    table: dict,
    max_violation: float,
    below_constant: str,
    larger_is_fairer: bool = True,
) -> int | None:
    """Return the index (in the full grid) of the next strength to fit, or None.

    ``measured``: the full-grid indices of the table's strength rows, ascending (the
    table's last row is the constant). The next strength is the midpoint index between
    the chosen strength and its less fair measured neighbour (the largest smaller
    strength; the smallest larger one where ``larger_is_fairer`` is False) when that
    one's violation bound is over the budget; None when no strength is chosen (or the
    constant is), when that neighbour is within the budget (nothing to gain past the
    choice) or when no candidate lies between them (the interval is refined to the last
    round, or runs down to 0).
    """
    try:
        with warnings.catch_warnings():  # the final choice says it, once
            warnings.simplefilter("ignore", UserWarning)
            best = select_strength(table, max_violation, below_constant=below_constant)
    except ValueError:
        return None  # no choice to refine: fit raises (or warns) on the final table
    if bool(table["reference"][best]):
        return None  # the constant chosen (below_constant="constant"): nothing to refine
    other = best - 1 if larger_is_fairer else best + 1  # the less fair neighbour
    if not 0 <= other < len(measured) or bool(table["feasible"][other]):
        return None
    low, high = sorted((int(measured[other]), int(measured[best])))
    middle = (low + high) // 2
    return middle if low < middle < high else None


def refine(
    rounds: int,
    measured: Callable[[], tuple[np.ndarray, dict]],
    fit_strength: Callable[[int], None],
    max_violation: float,
    below_constant: str,
    larger_is_fairer: bool = True,
) -> int:
    """Run up to ``rounds`` bisection rounds; return how many strengths were fitted.

    ``measured()`` returns the measured full-grid indices and their table;
    ``fit_strength(k)`` fits and records full-grid strength ``k`` on every fold.
    """
    fitted = 0
    for _ in range(rounds):
        done, table = measured()
        k = next_midpoint(done, table, max_violation, below_constant, larger_is_fairer)
        if k is None:
            break
        fit_strength(k)
        fitted += 1
    return fitted
