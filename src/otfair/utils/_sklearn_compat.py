"""The one door to scikit-learn's private names: a scikit-learn change touches this file.

otfair validates parameters with scikit-learn's constraint engine
(:mod:`sklearn.utils._param_validation`) and fits under its ``_fit_context``; both are
private to scikit-learn, as is ``_safe_indexing``. Every other module of otfair (and of
its lab) imports them from here or, better, the public names of :mod:`otfair.utils`
(``Interval``, ``StrOptions``, ``fit_context``, ``validate_params``, ...);
``tests/utils/test_sklearn_compat.py`` fails on any other module importing a private
scikit-learn name.

The names are re-exported unchanged (scikit-learn 1.8 and 1.9 spell them alike).
"""

from __future__ import annotations

from sklearn.base import _fit_context
from sklearn.utils._indexing import _safe_indexing
from sklearn.utils._param_validation import (
    HasMethods,
    Hidden,
    Interval,
    InvalidParameterError,
    Options,
    StrOptions,
    make_constraint,
    validate_parameter_constraints,
)

__all__ = [
    "HasMethods",
    "Hidden",
    "Interval",
    "InvalidParameterError",
    "Options",
    "StrOptions",
    "fit_context_of_sklearn",
    "make_constraint",
    "safe_indexing",
    "validate_parameter_constraints",
]

#: scikit-learn's ``sklearn.base._fit_context`` (validates ``_parameter_constraints`` on
#: entry of ``fit``); otfair's estimators use :func:`otfair.utils.fit_context`.
fit_context_of_sklearn = _fit_context

#: scikit-learn's ``_safe_indexing``: rows (``axis=0``) of an array, a data frame or a
#: list, by integer indices or a mask.
safe_indexing = _safe_indexing
