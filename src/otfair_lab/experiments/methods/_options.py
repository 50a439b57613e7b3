"""The ``-o KEY=VALUE`` options of a method: which names it accepts and what values.

The accepted names are the constructor parameters of the method's estimator class
(:attr:`MethodSpec.estimator`) that the run does not set itself, plus the settings of its
penalty object (:attr:`MethodSpec.penalty`); for a method registered without an
estimator class, the keyword parameters of its builder. Values are checked before the
estimator is built, against the class's scikit-learn ``_parameter_constraints``
(:func:`otfair.utils.validate_option`): the words of the estimator's own ``fit``, so a
bad value gets the same message from Python, ``otfair fit`` and a sweep spec. So are the
run's ``strength`` and ``epochs`` (:func:`check_run_values`). A parameter no constraint
declares (a penalty object's setting, a plug-in's parameter) is checked against its type
hint.
"""

from __future__ import annotations

import collections.abc
import inspect
import re
import types
import typing
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from otfair_lab.experiments.methods._spec import MethodSpec

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


def _penalty_setting(estimator: Any, penalty: type[Any] | None, name: str) -> str | None:
    """Return the penalty object's setting that option ``name`` sets (None: the estimator's).

    ``penalty__NAME``, and a ``NAME`` that only the penalty object has.
    """
    if penalty is None:
        return None
    if name.startswith("penalty__"):
        return name.removeprefix("penalty__")
    theirs = _signature_params(penalty.__init__)[0]
    mine = {} if estimator is None else _signature_params(estimator.__init__)[0]
    return name if name in theirs and name not in mine else None


def split_penalty_settings(
    estimator: type[Any], penalty: type[Any] | None, options: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split ``options`` into the ``estimator``'s parameters and the ``penalty`` object's.

    ``penalty__NAME`` and a ``NAME`` that only the penalty object has go to the object.
    """
    mine: dict[str, Any] = {}
    theirs: dict[str, Any] = {}
    for key, value in options.items():
        setting = _penalty_setting(estimator, penalty, key)
        if setting is None:
            mine[key] = value
        else:
            theirs[setting] = value
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


def _declared(cls: Any) -> dict[str, Any]:
    """Return the ``_parameter_constraints`` of ``cls`` (``{}`` when it declares none)."""
    constraints = getattr(cls, "_parameter_constraints", None)
    return dict(constraints) if isinstance(constraints, collections.abc.Mapping) else {}


def _owner(spec: MethodSpec, name: str) -> tuple[Any, str]:
    """Return the class whose parameter option ``name`` sets, and the parameter's name."""
    setting = _penalty_setting(spec.estimator, spec.penalty, name)
    if setting is not None:
        return spec.penalty, setting
    return (spec.estimator if spec.estimator is not None else spec.build), name


#: scikit-learn's words for a type, shortened for help tables ("a bool", "a list").
_SHORT = (
    ("an instance of 'bool' or an instance of 'numpy.bool'", "a bool"),
    ("an instance of 'numpy.bool'", "a bool"),
    ("an instance of 'bool'", "a bool"),
)


def _words(constraints: list[Any]) -> str:
    """Say what ``constraints`` accept, in scikit-learn's words (shortened for tables).

    "an int in the range [1, inf)", as its messages say; ``an instance of 'list'`` is
    shortened to ``a list``.
    """
    from otfair.utils import make_constraint

    shown = [str(c) for c in map(make_constraint, constraints) if not c.hidden]
    text = shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"
    for long, short in _SHORT:
        text = text.replace(long, short)
    return re.sub(r"an instance of '(?:[\w.]+\.)?(\w+)'", r"a \1", text)


def describe_option(spec: MethodSpec, name: str) -> str:
    """Say what option ``name`` accepts (for help): its constraint, else its type hint."""
    param = accepted_options(spec)[name]
    owner, base = _owner(spec, name)
    declared = _declared(owner)
    if base in declared:
        return _words(declared[base])
    hint = _type_hints(spec).get(name, _default_hint(param))
    return "any value" if hint is Any else _describe(hint)


def check_options(spec: MethodSpec, options: dict[str, Any]) -> dict[str, Any]:
    """Check that ``options`` are accepted by ``spec`` and that their values are valid.

    A value is checked against the ``_parameter_constraints`` of the class it reaches
    (the estimator, or the penalty object for its settings): the message is the one
    that class's ``fit`` gives. A parameter without a declared constraint is checked
    against its type hint.

    Raises
    ------
    ValueError
        For an unknown option (the message lists the valid ones) or an invalid value
        (:class:`~sklearn.utils._param_validation.InvalidParameterError`, also a
        ``TypeError``, naming the parameter, the class and what it accepts).
    """
    from otfair.utils import validate_option
    from otfair_lab.experiments._messages import unknown_options_message

    accepted = accepted_options(spec)
    if not accepted:
        return dict(options)
    unknown = [k for k in options if k not in accepted]
    if unknown:
        raise ValueError(unknown_options_message(spec.name, unknown, accepted))
    hints = _type_hints(spec)
    for key, value in options.items():
        owner, base = _owner(spec, key)
        if base in _declared(owner):
            validate_option(owner, base, value)
            continue
        hint = hints.get(key, _default_hint(accepted[key]))
        if not _matches(value, hint):
            raise ValueError(
                f"option {key!r} of method {spec.name!r} expects {describe_option(spec, key)}; "
                f"got {value!r}."
            )
    return dict(options)


def check_run_values(spec: MethodSpec, *, strength: Any = None, epochs: Any = None) -> None:
    """Check the run's ``strength`` and ``epochs`` against the estimator's constraints.

    ``strength`` is checked as the estimator parameter that receives it
    (:attr:`MethodSpec.strength_parameter`: ``strength``, ``eps``...),
    ``epochs`` as its ``epochs``; for an estimator without that parameter or its
    constraint, ``epochs`` must be an int >= 1 (the words name the method) and the
    strength is left to the estimator's ``fit``.

    Raises
    ------
    InvalidParameterError
        (a ``ValueError`` and a ``TypeError``) with the estimator's own message: "The
        'epochs' parameter of FairClassifier must be an int in the range [1, inf). Got 0
        instead."
    """
    from otfair.utils import check_values, positive_int, validate_option

    declared = _declared(spec.estimator)
    param = spec.strength_parameter
    if strength is not None and param is not None and param in declared:
        validate_option(spec.estimator, param, strength)
    if epochs is None:
        return
    if "epochs" in declared:
        validate_option(spec.estimator, "epochs", epochs)
    else:
        check_values(
            {"epochs": [positive_int()]}, {"epochs": epochs}, caller=f"method {spec.name!r}"
        )
