"""One home for scalar-parameter and feature-matrix checks of the estimators.

Replaces the per-module positive-int / positive-float checkers (``_positive``,
``_non_negative``, the loops in ``_check_params``) and the styles of ``X`` validation
(sklearn ``validate_data``, ``check_array`` + a manual feature count, AdapFair's
``check_features``): every estimator calls these and gets the same ``ValueError``
naming the argument.
"""

from __future__ import annotations

import numbers
from typing import Any, cast

import numpy as np


def check_positive_int(value: Any, name: str, *, minimum: int = 1) -> int:
    """Return ``value`` as an ``int >= minimum``; ``ValueError`` naming ``name`` otherwise.

    Booleans and floats are rejected (``epochs=True`` or ``2.5`` is a mistake) with a
    ``TypeError``, values below ``minimum`` with a ``ValueError`` (sklearn's convention).
    """
    what = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be {what}; got {value!r}.")
    if value < minimum:
        raise ValueError(f"`{name}` must be {what}; got {value!r}.")
    return int(value)


def check_scalar(
    value: Any,
    name: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    strict: bool = False,
) -> float:
    """Return ``value`` as a finite float in ``[minimum, maximum]``.

    Parameters
    ----------
    value : Any
        The parameter.
    name : str
        Its name, for the error message.
    minimum, maximum : float, optional
        Bounds (inclusive unless ``strict``, which makes ``minimum`` exclusive).
    strict : bool, default=False
        ``value > minimum`` instead of ``>=``.

    Raises
    ------
    TypeError
        If ``value`` is not a real number (booleans included).
    ValueError
        If ``value`` is not finite or not within the bounds.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a number; got {value!r}.")
    real = cast(float, value)  # a numbers.Real: compares and tests like a float
    ok = bool(np.isfinite(real))
    if ok and minimum is not None:
        ok = real > minimum if strict else real >= minimum
    if ok and maximum is not None:
        ok = real <= maximum
    if not ok:
        bounds = []
        if minimum is not None:
            bounds.append(f"{'>' if strict else '>='} {minimum:g}")
        if maximum is not None:
            bounds.append(f"<= {maximum:g}")
        rule = " and ".join(bounds)
        raise ValueError(
            f"`{name}` must be a finite number{' ' + rule if rule else ''}; got {value!r}."
        )
    return float(value)


def check_features(X: Any, name: str = "X", n_features: int | None = None) -> np.ndarray:
    """Return ``X`` as a finite float32 array of shape (n, d), checking ``d``.

    Accepts arrays, data frames and torch tensors (detached, moved to the CPU).
    """
    if hasattr(X, "detach"):
        X = X.detach().cpu().numpy()
    try:
        # C order and writable: the array becomes a tensor (``TORCH_READY``)
        arr = np.require(np.asarray(X, dtype=np.float32), requirements=["C", "W"])
    except (TypeError, ValueError) as exc:
        raise ValueError(f"`{name}` must be a numeric array of shape (n, d).") from exc
    if arr.ndim != 2:
        raise ValueError(f"`{name}` must be 2-D (n, d); got shape {arr.shape}.")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"`{name}` is empty (shape {arr.shape}).")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"`{name}` contains NaN or infinite values.")
    if n_features is not None and arr.shape[1] != n_features:
        raise ValueError(
            f"`{name}` has {arr.shape[1]} features but {n_features} were expected "
            "(the classifier's / the fitted preprocessor's input dimension)."
        )
    return arr
