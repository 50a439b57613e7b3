"""One home for the scikit-learn ``__init__`` convention: store every argument as is.

A scikit-learn estimator keeps each constructor argument, unchanged, in the attribute of
the same name: :meth:`~sklearn.base.BaseEstimator.get_params` reads them back through
the signature of ``__init__``, and ``set_params`` / :func:`~sklearn.base.clone` rebuild
the estimator from them. Validation belongs in ``fit``. :func:`set_params_from_init`
writes that ``self.a = a; self.b = b; ...`` block once, for an ``__init__`` that keeps
its explicit signature (names, type hints, defaults)::

    def __init__(self, eps: float = 0.1, *, random_state: Any = None) -> None:
        set_params_from_init(self, locals())
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

__all__ = ["set_params_from_init"]

_NOT_PARAMETERS = ("self", "__class__")


def set_params_from_init(estimator: Any, init_locals: Mapping[str, Any]) -> None:
    """Set each ``__init__`` argument of ``estimator`` as the attribute of the same name.

    Parameters
    ----------
    estimator : object
        The estimator being initialized (``self``).
    init_locals : mapping of str to object
        ``locals()`` taken as the first statement of ``__init__``: its arguments (and
        ``self``, skipped). The values are stored as they are (no copy, no validation),
        so ``clone`` finds the very objects it passed.

    Raises
    ------
    TypeError
        If a name of ``init_locals`` is not a parameter of ``type(estimator).__init__``
        (``locals()`` taken after other local variables were defined): ``get_params``
        would not report it.
    """
    names = inspect.signature(type(estimator).__init__).parameters
    for name, value in init_locals.items():
        if name in _NOT_PARAMETERS:
            continue
        if name not in names:
            raise TypeError(
                f"{type(estimator).__name__}: `{name}` is not a parameter of __init__; "
                "call set_params_from_init(self, locals()) before defining other locals."
            )
        setattr(estimator, name, value)
