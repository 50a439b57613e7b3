"""The strength checks: one strength (a number) and one path's strengths (distinct numbers).

The one home of both. A fit's strength is also declared in the estimator's
``_parameter_constraints`` (an ``Interval``), checked on entry of ``fit`` by
:func:`otfair.utils.fit_context`, which refuses a *list* of strengths with
:func:`check_strength`'s message (a list is a trade-off curve:
:func:`otfair.estimators.fairness_path`). :func:`check_strength` is for the values no
constraint sees: a value read again after ``fit`` (``transform`` reads ``strength``),
one strength per sensitive attribute, a run's strength before the estimator is built.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

__all__ = ["check_strength", "check_strengths", "refuse_strength_list"]


def _bounds(minimum: float | None, maximum: float | None) -> str:
    if minimum is not None and maximum is not None:
        return f" in [{minimum:g}, {maximum:g}]"
    if minimum is not None:
        return f" >= {minimum:g}"
    return f" <= {maximum:g}" if maximum is not None else ""


def refuse_strength_list(value: Any, name: str = "strength") -> None:
    """Raise the one message for a sequence of strengths given where one is expected.

    Raises
    ------
    ValueError
        If ``value`` is a sequence (not a string): "`strength` must be a number; got
        [0.0, 1.0]. A list of strengths is a trade-off curve: fit it with
        otfair.estimators.fairness_path(...)".
    """
    if not isinstance(value, (numbers.Real, str)) and hasattr(value, "__len__"):
        shown = [float(v) if isinstance(v, numbers.Real) else v for v in value]
        raise ValueError(
            f"`{name}` must be a number; got {shown}. A list of strengths is a trade-off "
            f"curve: fit it with otfair.estimators.fairness_path(estimator, X, y, "
            f"sensitive_features=s, strengths={shown})."
        )


def check_strength(
    value: Any,
    name: str = "strength",
    *,
    minimum: float | None = 0.0,
    maximum: float | None = None,
) -> float:
    """Return one strength as a finite float in ``[minimum, maximum]``.

    Parameters
    ----------
    value : Any
        The strength.
    name : str, default="strength"
        Its name, for the messages (``"lam"``, ``"alpha"``...).
    minimum, maximum : float or None, default=0.0 and None
        Inclusive bounds (``None``: none).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        For a sequence (the message names :func:`otfair.estimators.fairness_path`), a
        non-finite value or one outside the bounds.
    TypeError
        For anything else that is not a real number (booleans included).

    Examples
    --------
    >>> check_strength(0.5, maximum=1.0)
    0.5
    >>> check_strength(2, "alpha", maximum=1.0)
    Traceback (most recent call last):
    ...
    ValueError: `alpha` must be a finite number in [0, 1]; got 2.
    """
    refuse_strength_list(value, name)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"`{name}` must be a finite number{_bounds(minimum, maximum)}; got {value!r}."
        )
    real = float(value)
    ok = bool(np.isfinite(real))
    ok = ok and (minimum is None or real >= minimum) and (maximum is None or real <= maximum)
    if not ok:
        raise ValueError(
            f"`{name}` must be a finite number{_bounds(minimum, maximum)}; got {value!r}."
        )
    return real


def check_strengths(
    strengths: Any, name: str = "strengths", *, minimum: float | None = None
) -> list[float]:
    """Return a path's strengths as a list of distinct finite floats, in the given order.

    A single number is a path of one. The one check of a list of strengths
    (:func:`otfair.estimators.fairness_path`, ``FairnessCV``'s ``strengths``, a sweep's).

    Parameters
    ----------
    strengths : float or sequence of float
        The strengths.
    name : str, default="strengths"
        Their name, for the messages.
    minimum : float or None, default=None
        Inclusive lower bound of every strength (``None``: the estimator checks each).

    Raises
    ------
    ValueError
        Naming ``name`` for an empty, repeated, non-numeric, non-finite or nested list,
        or a value below ``minimum``.
    """
    if isinstance(strengths, (numbers.Real, str)):
        strengths = [strengths]
    try:
        values = np.asarray(strengths, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"`{name}` must be a list of numbers; got {strengths!r}.") from None
    if values.ndim > 1:
        raise ValueError(f"`{name}` must be a 1-D list of numbers; got shape {values.shape}.")
    values = values.reshape(-1)
    if values.size == 0:
        raise ValueError(f"`{name}` must hold at least one value.")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"`{name}` must be finite; got {values.tolist()}.")
    if minimum is not None and bool(np.any(values < minimum)):
        raise ValueError(f"`{name}` must be >= {minimum:g}; got {values.tolist()}.")
    if len(np.unique(values)) != values.size:
        raise ValueError(f"`{name}` values must be distinct; got {values.tolist()}.")
    return [float(v) for v in values]
