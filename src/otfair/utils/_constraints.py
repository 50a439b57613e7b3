"""Parameters declared once: scikit-learn's constraint format, read by every caller.

Every estimator of otfair declares ``_parameter_constraints`` (a dict: parameter name ->
list of constraints, scikit-learn's format of :mod:`sklearn.utils._param_validation`:
:class:`~sklearn.utils._param_validation.Interval`, ``StrOptions``, ``Options``,
``HasMethods``, ``"random_state"``, ``"boolean"``, ``None``, a type, ...) and validates
them once, on entry of ``fit`` (:func:`fit_context`, the one trigger of an estimator:
no estimator calls ``_validate_params()`` or re-checks a declared constraint itself). A
public function declares its constraints in :func:`validate_params`, a decorator. The
method registry, the CLI and the sweep specs validate an option with
:func:`validate_option` / :func:`check_params`, against the same declarations (the CLI's
torch-free copy, ``otfair_lab.experiments._names``, is generated from them), so a bad value
gets the same message everywhere, naming the parameter and what it accepts::

    The 'epochs' parameter of CENet must be an int in the range [1, inf). Got 0 instead.

A list given for a strength parameter (``strength``, ``lam``) that takes one number gets
:func:`otfair.utils.check_strength`'s message, which names
:func:`otfair.estimators.fairness_path`. Every path leads to :func:`check_values`.

This module imports neither torch nor the estimators: the CLI can use it before it
imports them (it needs the estimator class, whose module does). scikit-learn's private
names come through :mod:`otfair.utils._sklearn_compat`.
"""

from __future__ import annotations

import functools
import inspect
import numbers
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import numpy as np
from sklearn import get_config

from otfair.utils._sklearn_compat import (
    HasMethods,
    Interval,
    InvalidParameterError,
    Options,
    StrOptions,
    fit_context_of_sklearn,
    make_constraint,
    validate_parameter_constraints,
)
from otfair.utils._strength import refuse_strength_list

__all__ = [
    "DEVICE",
    "RANDOM_STATE",
    "SENSITIVE_COLUMN",
    "HasMethods",
    "Interval",
    "InvalidParameterError",
    "Options",
    "StrOptions",
    "STRENGTH_PARAMS",
    "Widths",
    "check_params",
    "check_values",
    "fit_context",
    "positive_int",
    "positive_real",
    "non_negative_real",
    "validate_option",
    "validate_params",
]

#: The names of a strength parameter: a list given there is a trade-off curve, refused
#: with :func:`otfair.utils.check_strength`'s message (unless a constraint accepts it).
STRENGTH_PARAMS = ("strength", "lam")

_F = TypeVar("_F", bound=Callable[..., Any])


def _refuse_strength_lists(constraints: Mapping[str, Any], values: Mapping[str, Any]) -> None:
    """Refuse a sequence for a strength parameter whose constraints take none."""
    for name in STRENGTH_PARAMS:
        if name not in constraints or name not in values:
            continue
        value = values[name]
        if not any(make_constraint(c).is_satisfied_by(value) for c in constraints[name]):
            refuse_strength_list(value, name)


def check_values(
    constraints: Mapping[str, list[Any]],
    values: Mapping[str, Any],
    *,
    caller: str,
    refuse_paths: bool = True,
) -> None:
    """Validate ``values`` against ``constraints``: the one check behind every trigger.

    :func:`fit_context` (an estimator's ``fit``), :func:`validate_params` (a public
    function), :func:`check_params` (the registry, the CLI) and the penalty objects all
    end here. A value without a constraint is not checked.

    Parameters
    ----------
    constraints : mapping of str to list
        Parameter name -> constraints (scikit-learn's format).
    values : mapping of str to object
        Parameter name -> value.
    caller : str
        The estimator's or function's name, for the message.
    refuse_paths : bool, default=True
        Refuse a list given to a strength parameter (:data:`STRENGTH_PARAMS`) with
        :func:`otfair.utils.check_strength`'s message, which names
        :func:`~otfair.estimators.fairness_path` (``False``: the constraint's message, as
        the CLI's torch-free copy words it).

    Raises
    ------
    InvalidParameterError
        (a ``ValueError`` and a ``TypeError``) naming the first bad parameter, the caller
        and what the parameter accepts: "The 'epochs' parameter of CENet must be an int in
        the range [1, inf). Got 0 instead."
    ValueError
        For a list of strengths given to a strength parameter (the message names
        :func:`otfair.estimators.fairness_path`).
    """
    if refuse_paths:
        _refuse_strength_lists(constraints, values)
    validate_parameter_constraints(dict(constraints), dict(values), caller_name=caller)


def validate_params(
    constraints: Mapping[str, list[Any]], *, caller: str | None = None
) -> Callable[[_F], _F]:
    """Decorate a public function: validate its arguments against ``constraints`` first.

    The function's counterpart of :func:`fit_context`: on every call (unless
    ``sklearn.set_config(skip_parameter_validation=True)``), the arguments, defaults
    included, are checked by :func:`check_values`, so a bad value is refused naming the
    argument and the function in the house words::

        The 'tol' parameter of sinkhorn must be a float in the range [0.0, inf). Got -1.0
        instead.

    Unlike scikit-learn's ``validate_params``, the function runs with the configuration
    unchanged: the estimators it fits validate their own parameters.

    Parameters
    ----------
    constraints : mapping of str to list
        Argument name -> constraints (scikit-learn's format, as ``_parameter_constraints``);
        an argument without an entry is not checked.
    caller : str, optional
        The name the messages give (default: the function's ``__name__``).

    Returns
    -------
    callable
        The decorator; the decorated function keeps its signature and docstring, and
        its constraints in ``__otfair_parameter_constraints__``.

    Raises
    ------
    TypeError
        At decoration, if ``constraints`` names an argument the function does not have.
    """
    declared = dict(constraints)

    def decorate(func: _F) -> _F:
        signature = inspect.signature(func)
        unknown = sorted(set(declared) - set(signature.parameters))
        if unknown:
            raise TypeError(f"{func.__qualname__} has no argument(s) {unknown} to validate.")
        name = caller or func.__name__

        @functools.wraps(func)
        def validated(*args: Any, **kwargs: Any) -> Any:
            if not get_config()["skip_parameter_validation"]:
                bound = signature.bind(*args, **kwargs)  # a bad call: Python's TypeError
                bound.apply_defaults()
                check_values(declared, bound.arguments, caller=name)
            return func(*args, **kwargs)

        validated.__otfair_parameter_constraints__ = declared  # type: ignore[attr-defined]
        return validated  # type: ignore[return-value]

    return decorate


def fit_context(fit_method: Any = None, *, validate_nested: bool = False) -> Any:
    """Decorate ``fit``: validate ``_parameter_constraints`` once, then fit.

    The one trigger of an estimator's validation. scikit-learn's ``_fit_context``: the
    estimator's :meth:`~sklearn.base.BaseEstimator._validate_params` runs on entry
    (unless ``sklearn.set_config(skip_parameter_validation=True)``), after a list given
    for a strength parameter is refused naming :func:`otfair.estimators.fairness_path`
    (:data:`STRENGTH_PARAMS`). The estimators fitted inside skip theirs (their parameters
    come from this one, already validated), except with ``validate_nested=True``: a
    meta-estimator given estimator objects by the user
    (``@fit_context(validate_nested=True)``).
    """
    sklearn_context = fit_context_of_sklearn(prefer_skip_nested_validation=not validate_nested)

    def decorate(fit: Any) -> Any:
        inner = sklearn_context(fit)

        @functools.wraps(fit)
        def checked(estimator: Any, *args: Any, **kwargs: Any) -> Any:
            if not get_config()["skip_parameter_validation"]:
                constraints = getattr(estimator, "_parameter_constraints", {})
                names = [n for n in STRENGTH_PARAMS if hasattr(estimator, n)]
                values = {n: getattr(estimator, n) for n in names}
                _refuse_strength_lists(constraints, values)
            return inner(estimator, *args, **kwargs)

        checked.__otfair_fit_context__ = True  # type: ignore[attr-defined]
        return checked

    return decorate if fit_method is None else decorate(fit_method)


class _Custom(Options):
    """A constraint with its own test and wording (an ``Options`` for ``make_constraint``)."""

    def __init__(self) -> None:  # noqa: D107 - no options; the predicate decides
        self.hidden = False
        self.type = object
        self.options: set[Any] = set()
        self.deprecated: set[Any] = set()


class Widths(_Custom):
    """A sequence (tuple or list) of positive ints: hidden-layer widths.

    Parameters
    ----------
    allow_empty : bool, default=True
        Whether ``()`` (no hidden layer: a linear model) is accepted.
    """

    def __init__(self, allow_empty: bool = True) -> None:
        super().__init__()
        self.allow_empty = allow_empty

    def is_satisfied_by(self, val: Any) -> bool:  # noqa: D102
        if not isinstance(val, tuple | list):
            return False
        if not val and not self.allow_empty:
            return False
        return all(
            isinstance(w, numbers.Integral) and not isinstance(w, bool) and int(w) >= 1
            for w in val
        )

    def __str__(self) -> str:
        empty = " (possibly empty)" if self.allow_empty else " (at least one)"
        return f"a tuple or list of positive ints{empty}"


class _TorchDevices(_Custom):
    """A :class:`torch.device` instance (checked by type name: torch is not imported)."""

    def is_satisfied_by(self, val: Any) -> bool:  # noqa: D102
        cls = type(val)
        return cls.__name__ == "device" and cls.__module__.startswith("torch")

    def __str__(self) -> str:
        return "a torch.device"


class _RandomStates(_Custom):
    """An int in [0, 2**32 - 1], a numpy ``RandomState``, a numpy ``Generator`` or None."""

    def is_satisfied_by(self, val: Any) -> bool:  # noqa: D102
        if val is None or isinstance(val, np.random.RandomState | np.random.Generator):
            return True
        return (
            isinstance(val, numbers.Integral)
            and not isinstance(val, bool)
            and 0 <= int(val) <= 2**32 - 1
        )

    def __str__(self) -> str:
        return (
            "an int in the range [0, 4294967295], a numpy.random.RandomState, "
            "a numpy.random.Generator or None"
        )


#: ``random_state``: an int in [0, 2**32 - 1], a ``RandomState``, a ``Generator`` or None.
RANDOM_STATE: list[Any] = [_RandomStates()]
#: ``sensitive_column``: a column index of ``X`` (negative from the end) or None.
SENSITIVE_COLUMN: list[Any] = [Interval(numbers.Integral, None, None, closed="neither"), None]
#: ``device``: a device string ("cpu", "cuda", "cuda:1", "auto"), a torch.device or None.
DEVICE: list[Any] = [str, _TorchDevices(), None]


def positive_int() -> Interval:
    """``Interval(Integral, 1, None, closed="left")``: an int >= 1 (epochs, batch sizes)."""
    return Interval(numbers.Integral, 1, None, closed="left")


def positive_real() -> Interval:
    """``Interval(Real, 0, None, closed="neither")``: a number > 0 (learning rates)."""
    return Interval(numbers.Real, 0, None, closed="neither")


def non_negative_real() -> Interval:
    """``Interval(Real, 0, None, closed="left")``: a number >= 0 (penalty strengths)."""
    return Interval(numbers.Real, 0, None, closed="left")


def _constraints_of(estimator: Any) -> dict[str, Any]:
    constraints = getattr(estimator, "_parameter_constraints", None)
    if not isinstance(constraints, Mapping):
        name = getattr(estimator, "__name__", type(estimator).__name__)
        raise TypeError(f"{name} declares no `_parameter_constraints` dict.")
    return dict(constraints)


def check_params(estimator: Any, params: Mapping[str, Any]) -> dict[str, Any]:
    """Validate ``params`` against ``estimator``'s ``_parameter_constraints``; return them.

    The one check of an estimator's options outside ``fit`` (the method registry, the
    CLI's ``-o NAME=VALUE``, a sweep spec): the same constraints and the same message as
    the estimator's own ``fit``.

    Parameters
    ----------
    estimator : estimator class or instance
        Declares ``_parameter_constraints``.
    params : mapping of str to object
        Parameter values (a subset of the constructor's parameters).

    Returns
    -------
    dict
        ``params``, unchanged.

    Raises
    ------
    InvalidParameterError
        (a ``ValueError`` and a ``TypeError``) naming the first bad parameter, the
        estimator and what the parameter accepts: "The 'epochs' parameter of CENet must
        be an int in the range [1, inf). Got 0 instead.", or naming a parameter that
        the estimator does not have.
    """
    constraints = _constraints_of(estimator)
    caller = getattr(estimator, "__name__", type(estimator).__name__)
    names = getattr(estimator, "_get_param_names", None)
    if callable(names):  # a scikit-learn estimator: its constructor's parameters
        constraints = {k: v for k, v in constraints.items() if k in names()}
    unknown = [name for name in params if name not in constraints]
    if unknown:
        raise InvalidParameterError(
            f"{caller} has no parameter {unknown[0]!r}; its parameters are "
            f"{', '.join(sorted(constraints))}."
        )
    check_values(constraints, params, caller=caller, refuse_paths=False)  # the CLI's words
    return dict(params)


def validate_option(estimator: Any, name: str, value: Any) -> Any:
    """Validate one parameter ``name=value`` of ``estimator``; return ``value``.

    ``check_params(estimator, {name: value})``: see :func:`check_params`.
    """
    check_params(estimator, {name: value})
    return value
