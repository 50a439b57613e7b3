"""Renamed parameters and values, kept for one release the scikit-learn way.

A renamed constructor parameter stays in ``__init__`` with the sentinel default
``"deprecated"`` (so ``get_params``, ``set_params`` and ``clone`` keep working), its
constraint accepts the sentinel without showing it (:data:`DEPRECATED`), and ``fit`` reads
the value through :func:`renamed_param`: a FutureWarning and the old value when it was
set. A renamed option value (a string of ``StrOptions``) goes through :func:`renamed_value`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from otfair.utils._sklearn_compat import Hidden, StrOptions

__all__ = [
    "DEPRECATED",
    "LAM_DOC",
    "RENAMED_IN",
    "renamed_argument",
    "renamed_param",
    "renamed_value",
]

#: The release that renamed the parameters below, and the one that removes the old names.
RENAMED_IN, REMOVED_IN = "0.2", "0.3"

#: The numpydoc entry of a ``lam`` renamed ``strength`` (``fill_doc(lam=LAM_DOC)``).
LAM_DOC = """
lam : float
    Deprecated name of ``strength``.

    .. deprecated:: 0.2
       ``lam`` was renamed ``strength`` in 0.2 and will be removed in 0.3.
"""

#: The constraint of the sentinel default of a renamed parameter (hidden from messages).
DEPRECATED = Hidden(StrOptions({"deprecated"}))


def _is_unset(value: Any) -> bool:
    return isinstance(value, str) and value == "deprecated"


def renamed_param(estimator: Any, old: str, new: str, *, default: Any) -> Any:
    """Return the value of parameter ``new``, or of its old name ``old`` when that was set.

    Parameters
    ----------
    estimator : object
        The estimator whose parameters are read.
    old, new : str
        The old (deprecated) and the new name of the parameter.
    default : object
        ``new``'s default: a ``new`` left at it yields to a set ``old``.

    Returns
    -------
    object
        ``getattr(estimator, new)``, or ``getattr(estimator, old)`` (with a FutureWarning)
        when ``old`` is not the sentinel ``"deprecated"``.

    Raises
    ------
    ValueError
        If both are set, to different values.
    """
    value, old_value = getattr(estimator, new), getattr(estimator, old, "deprecated")
    if _is_unset(old_value):
        return value
    return renamed_argument(
        value, old_value, old, new, default=default, owner=type(estimator).__name__
    )


def renamed_argument(
    value: Any, old_value: Any, old: str, new: str, *, default: Any, owner: str
) -> Any:
    """Return ``old_value`` (a FutureWarning) if it was given, else ``value``.

    The keyword argument ``old`` of function ``owner`` was renamed ``new``; ``None`` or
    ``"deprecated"`` means ``old`` was not given. Raises ``ValueError`` if both were given,
    to different values (a ``value`` equal to ``default`` counts as not given).
    """
    if old_value is None or _is_unset(old_value):
        return value
    if not _same(value, default) and not _same(value, old_value):
        raise ValueError(
            f"{owner}: `{old}` is the deprecated name of `{new}`; got {old}={old_value!r} "
            f"and {new}={value!r}. Pass `{new}` alone."
        )
    warnings.warn(
        f"{owner}: `{old}` was renamed `{new}` in {RENAMED_IN} and will be removed in "
        f"{REMOVED_IN}; pass {new}={old_value!r}.",
        FutureWarning,
        stacklevel=4,
    )
    return old_value


def renamed_value(value: Any, renamed: Mapping[str, str], name: str) -> Any:
    """Return ``value``, or its new spelling (with a FutureWarning) if it is an old one."""
    if isinstance(value, str) and value in renamed:
        warnings.warn(
            f"{name}={value!r} was renamed {renamed[value]!r} in {RENAMED_IN} and will be "
            f"removed in {REMOVED_IN}.",
            FutureWarning,
            stacklevel=3,
        )
        return renamed[value]
    return value


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # arrays: ambiguous truth value
        return a is b
