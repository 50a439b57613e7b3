"""The names a command line is checked against, known without importing torch.

The CLI answers a mistyped dataset, method, notion or ``-o`` option before importing
torch or scikit-learn (a user error then answers in well under 2 s): the method registry
(:mod:`otfair_lab.experiments.methods`) and the dataset registry (:mod:`otfair.datasets`)
import their estimators and loaders, so this module keeps a static copy of the names
and the few facts the checks need. A test keeps :data:`METHODS` and :data:`DATASETS`
equal to the full registries; after changing a registered method or dataset, rewrite
the table with ``python -m otfair_lab.experiments._names``.

Methods registered at run time (a sweep spec's ``plugins``) are not in the table;
:func:`method_names` looks them up in the registry's entries already registered
(without loading the built-in families).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from otfair_lab.experiments._messages import notion_problem, unknown_options_message

__all__ = [
    "DATASETS",
    "DATASET_OPTIONS",
    "METHODS",
    "VALUES",
    "dataset_options_problem",
    "epochs_problem",
    "MethodNames",
    "method_names",
    "method_problem",
    "notion_problem",
    "unknown_method_message",
    "unknown_options_message",
    "values_problem",
]


class MethodNames(NamedTuple):
    """What the name checks need to know about one registered method."""

    task: str
    notions: tuple[str, ...]
    has_strength: bool
    takes_domains: bool
    default_strengths: tuple[float, ...]
    options: tuple[str, ...]


#: The generated table (``python -m otfair_lab.experiments._names`` rewrites it).
_TABLE = Path(__file__).with_name("_names.json")
_DATA = json.loads(_TABLE.read_text(encoding="utf-8"))

#: Registered dataset names, real datasets first (as :func:`otfair.datasets.list_datasets`).
DATASETS: tuple[str, ...] = tuple(_DATA["datasets"])

#: The built-in methods, by name.
METHODS: dict[str, MethodNames] = {
    name: MethodNames(
        row["task"],
        tuple(row["notions"]),
        bool(row["has_strength"]),
        bool(row["takes_domains"]),
        tuple(float(x) for x in row["default_strengths"]),
        tuple(row["options"]),
    )
    for name, row in _DATA["methods"].items()
}

#: Per built-in method, whether :class:`~otfair.estimators.FairnessCV` can set its
#: strength (``otfair fit --max-violation``): the default estimator has a strength
#: parameter and a fairness term (``unfair``, ``laftr``... have none it can tune).
TUNABLE: dict[str, bool] = {
    name: bool(row.get("tunable", False)) for name, row in _DATA["methods"].items()
}

#: Per built-in method, the default ``batch_size`` of its estimator (``None``: none, or
#: full batch), for the arithmetic bound of an epoch count (:func:`epochs_floor_seconds`).
BATCH_SIZES: dict[str, int | None] = {
    name: row.get("batch_size") for name, row in _DATA["methods"].items()
}

#: Per built-in method, the datasets on which its estimator's ``batch_size`` differs from
#: :data:`BATCH_SIZES` (the papers' settings: FTM's 200 rows on German).
DATASET_BATCH_SIZES: dict[str, dict[str, int | None]] = {
    name: row.get("batch_sizes", {}) for name, row in _DATA["methods"].items()
}

#: Per registered dataset: ``options`` (the loader's option names), ``choices`` (the
#: fixed values of some of them), ``real`` (read from files) and ``rows`` (with the
#: default options; ``None`` when not known in advance).
DATASET_OPTIONS: dict[str, dict[str, object]] = dict(_DATA.get("dataset_options", {}))

#: The violation measures of ``--max-violation``'s ``--metric``, per task
#: (:func:`otfair.estimators.get_violation_metric_names`).
METRICS: dict[str, tuple[str, ...]] = {
    task: tuple(names) for task, names in _DATA.get("metrics", {}).items()
}

#: Per built-in method, the described constraints of its strength (``"strength"``),
#: ``"epochs"`` and ``-o`` options (:mod:`otfair_lab.experiments._value_checks`).
VALUES: dict[str, dict[str, dict[str, object]]] = {
    name: row.get("values", {}) for name, row in _DATA["methods"].items()
}


def _registered() -> dict[str, MethodNames]:
    """Methods registered so far outside the table (plugins), without loading families."""
    from otfair_lab.experiments.methods import _spec

    return {name: from_spec(spec) for name, spec in _spec._REGISTRY.items() if name not in METHODS}


def from_spec(spec: object) -> MethodNames:
    """Return the :class:`MethodNames` of a registry entry (a ``MethodSpec``)."""
    return MethodNames(
        str(spec.task),  # type: ignore[attr-defined]
        tuple(spec.notions),  # type: ignore[attr-defined]
        bool(spec.has_strength),  # type: ignore[attr-defined]
        bool(spec.takes_domains),  # type: ignore[attr-defined]
        tuple(float(s) for s in spec.default_strengths),  # type: ignore[attr-defined]
        tuple(sorted(spec.option_names())),  # type: ignore[attr-defined]
    )


def unknown_method_message(name: str) -> str:
    """Return the registry's message for an unknown method (``get_method``'s words)."""
    known = sorted({*METHODS, *_registered()})
    return f"Unknown method {name!r}. Known methods: {', '.join(known)}."


def method_names(name: str) -> MethodNames:
    """Return the :class:`MethodNames` of method ``name``.

    Raises
    ------
    ValueError
        If no method of that name is known; the message lists the known ones.
    """
    if name in METHODS:
        return METHODS[name]
    registered = _registered()
    if name in registered:
        return registered[name]
    raise ValueError(unknown_method_message(name))


def method_problem(
    method: str,
    info: MethodNames,
    *,
    strength: object = None,
    notion: str | None = None,
    domains: bool = False,
    options: Iterable[str] = (),
) -> str | None:
    """Return what ``method`` refuses among the run's argument *names* (one line), or None.

    The one wording of these checks, torch-free: the CLI answers with it before importing
    torch, a sweep spec's parser and the registry
    (:func:`otfair_lab.experiments._request.check_against_spec`) raise it. A strength given to
    a method without one, a notion it does not take, domains it does not take, unknown
    ``-o`` names. The option *values* are the estimator's constraints
    (:func:`otfair_lab.experiments.methods.check_options`).
    """
    if strength is not None and not info.has_strength:
        return (
            f"method {method!r} has no trade-off strength (no fairness term to weigh); "
            "drop `strength`."
        )
    if notion is not None:
        problem = notion_problem(method, info.notions, notion)
        if problem:
            return problem
    if domains and not info.takes_domains:
        known = {**METHODS, **_registered()}
        takers = [n for n, m in sorted(known.items()) if m.takes_domains]
        return (
            f"method {method!r} does not take a source and a target domain; drop them "
            f"(methods that do: {', '.join(takers) or 'none'})."
        )
    unknown = [k for k in options if info.options and k not in info.options]
    if unknown:
        return unknown_options_message(method, unknown, info.options)
    return None


def values_problem(
    method: str, *, strength: object = None, epochs: object = None, options: dict | None = None
) -> str | None:
    """Return the refusal of a run's strength, ``epochs`` or ``-o`` value, or ``None``.

    Torch- and scikit-learn-free, in the order and words of the registry's own checks
    (:func:`otfair_lab.experiments._request.check_against_spec`), for the values whose
    constraints the table describes; the others are checked later by the registry.
    """
    from otfair_lab.experiments._value_checks import value_problem

    described = VALUES.get(method, {})
    given = {"strength": strength, "epochs": epochs, **(options or {})}
    for key, value in given.items():
        if key in ("strength", "epochs") and value is None:
            continue
        entry = described.get(key)
        problem = None if entry is None else value_problem(entry, value)
        if problem:
            return problem
    return None


def epochs_problem(method: str) -> str | None:
    """Return the refusal of an explicit ``--epochs`` for a method that has none, or ``None``.

    A method whose estimator declares no ``epochs`` (fair PCA, OT repair, the reductions,
    COD, the barycenter post-processors) is checked by the table against the fallback
    rule of :func:`otfair_lab.experiments.methods.check_run_values` (its owner is the
    method, not the estimator). One run (``otfair fit``) refuses the flag there, which
    would otherwise be ignored; a sweep's epochs apply to its methods that train in
    epochs.
    """
    entry = VALUES.get(method, {}).get("epochs")
    if entry is not None and str(entry.get("owner", "")).startswith("method "):
        return (
            f"method {method!r} does not train in epochs (its estimator has no `epochs`); "
            "drop --epochs."
        )
    return None


def dataset_options_problem(
    dataset: str, options: Mapping[str, Any], *, extra: tuple[str, ...] = ()
) -> str | None:
    """Return the refusal of a dataset's loader options, or ``None`` (torch-free).

    The option names are checked against the dataset's declared options
    (:data:`DATASET_OPTIONS`, plus ``scaling``, ``verify`` and
    ``extra``), and the options with a fixed set of values against it, in the words of
    :func:`otfair.datasets.load_dataset` and the loaders' choice check.
    A dataset outside the table (a ``module:function`` factory) is left to its loader.
    """
    facts = DATASET_OPTIONS.get(dataset)
    if facts is None:
        return None
    valid = {*facts["options"], "scaling", "verify", *extra}  # type: ignore[misc]
    unknown = sorted(set(options) - valid)
    if unknown:
        return (
            f"Unknown option(s) {unknown} for dataset {dataset!r}; valid options are "
            f"{sorted(valid)}."
        )
    if "scaling" in options and options["scaling"] not in (None, "standard", "minmax"):
        return f"`scaling` must be one of ['standard', 'minmax']; got {options['scaling']!r}."
    for name, choices in dict(facts["choices"]).items():  # type: ignore[call-overload]
        if name in options and options[name] not in choices:
            return f"`{name}` must be one of {list(choices)}; got {options[name]!r}."
    return None


def _described_values(spec: object) -> dict[str, dict[str, object]]:
    """Return the described constraints of an entry's strength, epochs and options."""
    from otfair.utils import positive_int
    from otfair_lab.experiments._value_checks import describe, message
    from otfair_lab.experiments.methods._options import _declared, _owner, accepted_options

    targets: dict[str, tuple[object, str]] = {}
    estimator = spec.estimator  # type: ignore[attr-defined]
    param = spec.strength_parameter  # type: ignore[attr-defined]
    if param is not None:
        targets["strength"] = (estimator, param)
    targets["epochs"] = (estimator, "epochs")
    for key in accepted_options(spec):  # type: ignore[arg-type]
        targets[key] = _owner(spec, key)  # type: ignore[arg-type]
    out: dict[str, dict[str, object]] = {}
    for key, (owner, name) in targets.items():
        constraints = _declared(owner).get(name)
        caller = getattr(owner, "__name__", None)
        if key == "epochs" and constraints is None:  # check_run_values' rule
            constraints, caller = [positive_int()], f"method {spec.name!r}"  # type: ignore[attr-defined]
        if not constraints or caller is None:
            continue
        described = [describe(c) for c in constraints]
        if all(d is not None for d in described):
            out[key] = {
                "param": name,
                "owner": caller,
                "constraints": described,
                "message": message(name, caller, constraints),
            }
    return out


def _default_fit_facts(spec: object) -> dict[str, object]:
    """``tunable`` and ``batch_size`` of the entry's default estimator (built, not fitted)."""
    from otfair.estimators import default_strengths

    estimator = spec.build(  # type: ignore[attr-defined]
        None, notion=None, random_state=0, epochs=None, device="cpu", dataset=None
    )
    try:
        default_strengths(estimator)
    except ValueError:
        tunable = False
    else:  # FairnessCV may still refuse it, and says why (AdapFair's, a flow's)
        tunable = not getattr(estimator, "_fairness_cv_refusal", "")
    batch = estimator.get_params(deep=False).get("batch_size")
    default = batch if isinstance(batch, int) else None
    batches = _dataset_batches(spec, default)
    return {"tunable": tunable, "batch_size": default, "batch_sizes": batches}


def _dataset_batches(spec: object, default: int | None) -> dict[str, int | None]:
    """Return the datasets on which the entry's estimator has another ``batch_size``."""
    from otfair.datasets import dataset_entries

    out: dict[str, int | None] = {}
    for dataset in sorted(dataset_entries()):
        estimator = spec.build(  # type: ignore[attr-defined]
            None, notion=None, random_state=0, epochs=None, device="cpu", dataset=dataset
        )
        batch = estimator.get_params(deep=False).get("batch_size")
        batch = batch if isinstance(batch, int) else None
        if batch != default:
            out[dataset] = batch
    return out


def _dataset_facts() -> dict[str, dict[str, object]]:
    """Option names, fixed choices, ``real`` and ``rows`` of every registered dataset."""
    from otfair.datasets import dataset_entries

    return {
        name: {
            "options": sorted(entry.options()),
            "choices": {k: list(v) for k, v in entry.choices.items()},
            "real": entry.real,
            "rows": entry.rows if entry.real else entry.options().get("n_samples"),
        }
        for name, entry in dataset_entries().items()
    }


def render() -> dict[str, object]:
    """Return the table from the full registries (imports torch and the estimators)."""
    from otfair.datasets import list_datasets
    from otfair.estimators import get_violation_metric_names
    from otfair_lab.experiments.methods import get_method, list_methods

    methods: dict[str, object] = {}
    for name in list_methods():
        spec = get_method(name)
        row = {
            k: list(v) if isinstance(v, tuple) else v for k, v in from_spec(spec)._asdict().items()
        }
        row["values"] = _described_values(spec)
        row.update(_default_fit_facts(spec))
        methods[name] = row
    return {
        "datasets": list(list_datasets()),
        "methods": methods,
        "dataset_options": _dataset_facts(),
        "metrics": {
            "classification": get_violation_metric_names("classification"),
            "regression": get_violation_metric_names("regression"),
        },
    }


def main() -> None:
    """Rewrite ``_names.json`` from the full registries."""
    _TABLE.write_text(json.dumps(render(), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {_TABLE}")


if __name__ == "__main__":
    main()
