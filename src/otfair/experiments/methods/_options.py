"""The ``-o KEY=VALUE`` options of a method: which names it accepts and of what type.

The accepted names are the constructor parameters of the method's estimator class
(:attr:`MethodSpec.estimator`) that the run does not set itself; for a method registered
without an estimator class, the keyword parameters of its builder. Values are checked
before the estimator is built, so that ``-o lr=abc`` says which option expects what
instead of failing deep inside training: with the estimator's scikit-learn
``_parameter_constraints`` when it declares them, else with its type hints.
"""

from __future__ import annotations

import collections.abc
import inspect
import types
import typing
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from otfair.experiments.methods._spec import MethodSpec

#: Builder arguments that ``run_single`` sets itself (never a ``-o`` option).
RUN_ARGUMENTS = ("strength", "notion", "random_state", "epochs", "device", "dataset")


def _signature_params(func: Any) -> tuple[dict[str, inspect.Parameter], bool]:
    """Keyword-capable parameters of ``func`` and whether it takes ``**kwargs``."""
    params = inspect.signature(func).parameters
    named = {
        n: p
        for n, p in params.items()
        if n != "self" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }
    return named, any(p.kind is p.VAR_KEYWORD for p in params.values())


def accepted_options(spec: MethodSpec) -> dict[str, inspect.Parameter]:
    """Options accepted by ``spec`` (name -> constructor parameter); ``{}`` when unknown.

    A method with a penalty object (``spec.penalty``) accepts its settings too, as
    ``penalty__NAME`` (scikit-learn's nested parameter) and, where the estimator has no
    parameter of that name, as ``NAME`` (``-o matching=joint``; the adversary's
    ``lr`` only as ``penalty__lr``). The estimator's ``penalty`` itself is the method's.
    """
    skip = set(RUN_ARGUMENTS) | set(spec.fixed) | {f"penalty__{n}" for n in spec.fixed}
    if spec.estimator is not None:
        named, _ = _signature_params(spec.estimator.__init__)
    else:
        named, var_kw = _signature_params(spec.build)
        if var_kw:
            return {}
    if spec.penalty is not None:
        named.pop("penalty", None)
        for name, param in _signature_params(spec.penalty.__init__)[0].items():
            named[f"penalty__{name}"] = param
            named.setdefault(name, param)
    return {n: p for n, p in named.items() if n not in skip}


def split_penalty_settings(
    estimator: type[Any], penalty: type[Any] | None, options: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split ``options`` into the ``estimator``'s parameters and the ``penalty`` object's.

    ``penalty__NAME`` and a ``NAME`` that only the penalty object has go to the object.
    """
    if penalty is None:
        return dict(options), {}
    own = set(_signature_params(penalty.__init__)[0])
    estimator_params = set(_signature_params(estimator.__init__)[0])
    mine: dict[str, Any] = {}
    theirs: dict[str, Any] = {}
    for key, value in options.items():
        if key.startswith("penalty__"):
            theirs[key.removeprefix("penalty__")] = value
        elif key in own and key not in estimator_params:
            theirs[key] = value
        else:
            mine[key] = value
    return mine, theirs


def _type_hints(spec: MethodSpec) -> dict[str, Any]:
    func = spec.estimator.__init__ if spec.estimator is not None else spec.build
    hints = _hints_of(func)
    if spec.penalty is not None:
        for name, hint in _hints_of(spec.penalty.__init__).items():
            hints[f"penalty__{name}"] = hint
            hints.setdefault(name, hint)
    return hints


def _hints_of(func: Any) -> dict[str, Any]:
    try:
        return typing.get_type_hints(func)
    except Exception:  # unresolvable annotations: fall back to the default values
        return {}


def _is_union(hint: Any) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType)


def _matches(value: Any, hint: Any) -> bool:
    """Whether a JSON-decoded ``value`` fits the type ``hint`` (unknown types match)."""
    if hint is Any:
        return True
    if _is_union(hint):
        return any(_matches(value, arg) for arg in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is str or (isinstance(hint, type) and issubclass(hint, PurePath)):
        return isinstance(value, str)
    origin = typing.get_origin(hint)
    if origin in (tuple, list, collections.abc.Sequence):
        if not isinstance(value, (list, tuple)):
            return False
        args = [a for a in typing.get_args(hint) if a is not Ellipsis]
        return len(args) != 1 or all(_matches(v, args[0]) for v in value)
    if typing.get_origin(hint) is typing.Literal:
        return value in typing.get_args(hint)
    return True


def _describe(hint: Any) -> str:
    """Words for a type hint: ``float | None`` -> "a number or null"."""
    if _is_union(hint):
        return " or ".join(dict.fromkeys(_describe(a) for a in typing.get_args(hint)))
    words = {type(None): "null", bool: "true/false", int: "an integer", float: "a number"}
    if hint in words:
        return words[hint]
    if hint is str or (isinstance(hint, type) and issubclass(hint, PurePath)):
        return "a string"
    origin = typing.get_origin(hint)
    if origin in (tuple, list, collections.abc.Sequence):
        args = [a for a in typing.get_args(hint) if a is not Ellipsis]
        inner = _describe(args[0]) if len(args) == 1 else ""
        plural = {"an integer": "integers", "a number": "numbers", "a string": "strings"}
        return f"a list of {plural.get(inner, 'values')}" if inner else "a list"
    if origin is typing.Literal:
        return "one of " + ", ".join(map(repr, typing.get_args(hint)))
    return getattr(hint, "__name__", str(hint))


def _default_hint(param: inspect.Parameter) -> Any:
    default = param.default
    if default is inspect.Parameter.empty or default is None:
        return Any
    if isinstance(default, (list, tuple)):
        return collections.abc.Sequence
    return type(default)


def describe_option(spec: MethodSpec, name: str) -> str:
    """Describe the expected type of option ``name`` in words (for help and error messages)."""
    param = accepted_options(spec)[name]
    hint = _type_hints(spec).get(name, _default_hint(param))
    return "any value" if hint is Any else _describe(hint)


def _check_constraints(spec: MethodSpec, options: dict[str, Any]) -> None:
    """Validate against the estimator's scikit-learn ``_parameter_constraints``."""
    assert spec.estimator is not None  # called for a spec with an estimator class
    from sklearn.utils._param_validation import (
        InvalidParameterError,
        validate_parameter_constraints,
    )

    constraints = getattr(spec.estimator, "_parameter_constraints", None) or {}
    subset = {k: v for k, v in constraints.items() if k in options}
    try:
        validate_parameter_constraints(subset, options, caller_name=spec.estimator.__name__)
    except InvalidParameterError as exc:
        raise ValueError(f"method {spec.name!r}: {str(exc).splitlines()[0]}") from None


def check_options(spec: MethodSpec, options: dict[str, Any]) -> dict[str, Any]:
    """Check that ``options`` are accepted by ``spec`` and have the expected types.

    Raises
    ------
    ValueError
        For an unknown option (the message lists the valid ones) or a value of the wrong
        type (the message names the option and the expected type).
    """
    accepted = accepted_options(spec)
    if not accepted:
        return dict(options)
    unknown = [k for k in options if k not in accepted]
    if unknown:
        raise ValueError(
            f"unknown option(s) {', '.join(map(repr, unknown))} for method {spec.name!r}; "
            f"valid options: {', '.join(sorted(accepted))}."
        )
    hints = _type_hints(spec)
    for key, value in options.items():
        hint = hints.get(key, _default_hint(accepted[key]))
        if not _matches(value, hint):
            raise ValueError(
                f"option {key!r} of method {spec.name!r} expects {describe_option(spec, key)}; "
                f"got {value!r}."
            )
    if spec.estimator is not None and hasattr(spec.estimator, "_parameter_constraints"):
        _check_constraints(spec, options)
    return dict(options)
