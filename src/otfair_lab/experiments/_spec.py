"""Sweep specifications: a TOML file -> validated :class:`SweepSpec` -> list of runs.

The grid classes live in :mod:`otfair_lab.experiments._grid` and are re-exported here.

A spec names datasets (with loader options), methods (with strength grids and notions),
seeds, the split and the training budget, plus named profiles that shrink the grid
(``quick``). Every key is validated up front, so a typo fails before any training with a
:class:`ConfigError` that names the offending key (``methods[2].strenghts``). The values
that an estimator's ``_parameter_constraints`` declare (the strengths, ``epochs``, the
methods' ``options``) are checked against them, in the estimator's words: as the spec
is read for the constraints the static name table describes (torch-free,
:func:`otfair_lab.experiments._names.values_problem`), and all of them by the request check
that starts every sweep (:func:`otfair_lab.experiments._preflight.check_request`).

Trust: a spec runs code like a script (see :mod:`otfair_lab.experiments._plugins`).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from otfair_lab.experiments._audits import AUDITS
from otfair_lab.experiments._grid import (
    FULL_PROFILE,
    ConfigError,
    DatasetEntry,
    MethodEntry,
    Profile,
    RunConfig,
    SweepSpec,
    _thin,
)
from otfair_lab.experiments._plugins import _resolve_factory, import_plugins

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = [
    "FULL_PROFILE",
    "ConfigError",
    "DatasetEntry",
    "MethodEntry",
    "Profile",
    "RunConfig",
    "SweepSpec",
    "_thin",
    "import_plugins",
    "load_spec",
    "parse_spec",
]

# --------------------------------------------------------------------------- parsing


_TOP_KEYS = {
    "name",
    "description",
    "seeds",
    "test_size",
    "epochs",
    "max_train_rows",
    "device",
    "plugins",
    "audits",
    "datasets",
    "methods",
    "profiles",
    "report",
}
_DATASET_KEYS = {
    "name",
    "label",
    "options",
    "source_domain",
    "target_domain",
    "test_size",
    "train_group_share",
}
_METHOD_KEYS = {"name", "label", "strengths", "notions", "options", "epochs", "datasets"}
_PROFILE_KEYS = {
    "seeds",
    "epochs",
    "max_train_rows",
    "test_size",
    "max_strengths",
    "datasets",
    "methods",
    "description",
    "smoke",
}
_REPORT_KEYS = {"performance", "fairness", "matched_levels"}


def _check_keys(table: Mapping[str, Any], allowed: set[str], where: str) -> None:
    for key in table:
        if key not in allowed:
            path = f"{where}.{key}" if where else key
            raise ConfigError(path, f"unknown key; allowed keys: {', '.join(sorted(allowed))}.")


def _path(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _table(value: Any, key: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(key, f"must be a table, got {type(value).__name__}.")
    return value


def _string(value: Any, key: str) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError(key, f"must be a non-empty string, got {value!r}.")
    return value


def _integer(value: Any, key: str, minimum: int | None) -> int:
    """Return ``value``, an int >= ``minimum`` (``None``: the estimator's range, ``epochs``)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(key, f"must be an integer, got {value!r}.")
    if minimum is not None and value < minimum:
        raise ConfigError(key, f"must be >= {minimum}, got {value}.")
    return value


def _number(value: Any, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(key, f"must be a finite number, got {value!r}.")
    return float(value)


def _list(value: Any, key: str) -> list[Any]:
    if not isinstance(value, list):
        raise ConfigError(key, f"must be a list, got {type(value).__name__}.")
    return value


def _seeds(value: Any, key: str) -> tuple[int, ...]:
    """``seeds = 5`` means seeds 0..4; a list gives them explicitly."""
    if isinstance(value, int) and not isinstance(value, bool):
        return tuple(range(_integer(value, key, 1)))
    seeds = tuple(_integer(v, f"{key}[{i}]", 0) for i, v in enumerate(_list(value, key)))
    if not seeds:
        raise ConfigError(key, "must not be empty.")
    if len(set(seeds)) != len(seeds):
        raise ConfigError(key, f"has duplicate seeds: {list(seeds)}.")
    return seeds


def _test_size(value: Any, key: str) -> float:
    size = _number(value, key)
    if not 0.0 < size < 1.0:
        raise ConfigError(key, f"must lie in (0, 1), got {size}.")
    return size


def _parse_dataset(
    raw: Any, where: str, known: set[str] | None, plugins: Sequence[str] = ()
) -> DatasetEntry:
    table = _table(raw, where)
    _check_keys(table, _DATASET_KEYS, where)
    if "name" not in table:
        raise ConfigError(_path(where, "name"), "is required.")
    name = _string(table["name"], _path(where, "name"))
    if known is not None and ":" not in name and name not in known:
        raise ConfigError(
            _path(where, "name"), f"unknown dataset {name!r}; known: {', '.join(sorted(known))}."
        )
    if ":" in name:
        _resolve_factory(name, _path(where, "name"), plugins)
    src = table.get("source_domain")
    tgt = table.get("target_domain")
    if (src is None) != (tgt is None):
        missing = "target_domain" if tgt is None else "source_domain"
        raise ConfigError(_path(where, missing), "both domains must be given together.")
    options = _table(table.get("options", {}), _path(where, "options"))
    if src is None:  # the loader's option names and fixed choices, torch-free
        from otfair_lab.experiments._names import dataset_options_problem

        problem = dataset_options_problem(name, options)
        if problem:
            raise ConfigError(_path(where, "options"), problem)
    return DatasetEntry(
        name=name,
        label=_string(table.get("label", name), _path(where, "label")),
        options=options,
        source_domain=None if src is None else _string(src, _path(where, "source_domain")),
        target_domain=None if tgt is None else _string(tgt, _path(where, "target_domain")),
        test_size=(
            None
            if "test_size" not in table
            else _test_size(table["test_size"], _path(where, "test_size"))
        ),
        train_group_share=(
            None
            if "train_group_share" not in table
            else _test_size(table["train_group_share"], _path(where, "train_group_share"))
        ),
    )


def _parse_method(raw: Any, where: str, labels: set[str]) -> MethodEntry:
    # no torch: names checked at once, in the registry's words
    from otfair_lab.experiments._messages import notion_problem
    from otfair_lab.experiments._names import method_names

    table = _table(raw, where)
    _check_keys(table, _METHOD_KEYS, where)
    if "name" not in table:
        raise ConfigError(_path(where, "name"), "is required.")
    name = _string(table["name"], _path(where, "name"))
    try:
        spec = method_names(name)
    except ValueError as exc:
        raise ConfigError(_path(where, "name"), str(exc)) from None
    if "strengths" in table:
        key = _path(where, "strengths")
        strengths: tuple[float | None, ...] = tuple(
            _number(v, f"{key}[{i}]") for i, v in enumerate(_list(table["strengths"], key))
        )
    else:
        strengths = tuple(float(s) for s in spec.default_strengths)
    notions: tuple[str | None, ...] = (None,)
    if "notions" in table:
        key = _path(where, "notions")
        raw_notions = _list(table["notions"], key)
        given = tuple(_string(v, f"{key}[{i}]") for i, v in enumerate(raw_notions))
        for i, notion in enumerate(given):
            problem = notion_problem(name, spec.notions, notion) if spec.notions else None
            if problem:
                raise ConfigError(f"{key}[{i}]", problem)
        notions = given
    only: tuple[str, ...] | None = None
    if "datasets" in table:
        key = _path(where, "datasets")
        only = tuple(
            _string(v, f"{key}[{i}]") for i, v in enumerate(_list(table["datasets"], key))
        )
        for i, label in enumerate(only):
            if label not in labels:
                raise ConfigError(
                    f"{key}[{i}]",
                    f"{label!r} is not a dataset label: {', '.join(sorted(labels))}.",
                )
    epochs = table.get("epochs")
    entry = MethodEntry(
        datasets=only,
        name=name,
        label=_string(table.get("label", name), _path(where, "label")),
        strengths=strengths or (None,),
        notions=notions or (None,),
        options=_table(table.get("options", {}), _path(where, "options")),
        epochs=None if epochs is None else _integer(epochs, _path(where, "epochs"), None),
    )
    _check_values(entry, where)
    return entry


def _check_values(entry: MethodEntry, where: str) -> None:
    """Refuse a strength, ``epochs`` or option value the table's constraints refuse.

    Torch-free, in the estimator's words (:func:`otfair_lab.experiments._names.values_problem`);
    the constraints it does not describe are checked before the first run
    (:func:`otfair_lab.experiments._preflight.check_request`).
    """
    from otfair_lab.experiments._names import values_problem

    for i, strength in enumerate(entry.strengths):
        problem = values_problem(entry.name, strength=strength)
        if problem:
            raise ConfigError(f"{_path(where, 'strengths')}[{i}]", problem)
    problem = values_problem(entry.name, epochs=entry.epochs)
    if problem:
        raise ConfigError(_path(where, "epochs"), problem)
    for key, value in entry.options.items():
        problem = values_problem(entry.name, options={key: value})
        if problem:
            raise ConfigError(_path(_path(where, "options"), key), problem)


def _check_run_epochs(epochs: Any, key: str, methods: Sequence[MethodEntry]) -> None:
    """Refuse a spec-wide or profile ``epochs`` any method's constraints refuse (torch-free)."""
    from otfair_lab.experiments._names import values_problem

    if epochs is None:
        return
    value = _integer(epochs, key, None)
    for entry in methods:
        problem = values_problem(entry.name, epochs=value)
        if problem:
            raise ConfigError(key, problem)


def _device(value: Any, key: str) -> str:
    """Return a device name (cpu, cuda, cuda:N, mps, auto); CUDA's presence is checked later."""
    from otfair_lab.experiments._value_checks import device_problem

    device = _string(value, key)
    problem = device_problem(device)
    if problem:
        raise ConfigError(key, problem)
    return device


def _parse_profile(raw: Any, where: str, labels: set[str], methods: set[str]) -> Profile:
    table = _table(raw, where)
    _check_keys(table, _PROFILE_KEYS, where)
    kwargs: dict[str, Any] = {}
    if "seeds" in table:
        kwargs["seeds"] = _seeds(table["seeds"], _path(where, "seeds"))
    for key in ("epochs", "max_train_rows", "max_strengths"):
        if key in table:
            minimum = None if key == "epochs" else 1
            kwargs[key] = _integer(table[key], _path(where, key), minimum)
    if "test_size" in table:
        kwargs["test_size"] = _test_size(table["test_size"], _path(where, "test_size"))
    if "description" in table:
        kwargs["description"] = _string(table["description"], _path(where, "description"))
    if "smoke" in table:
        if not isinstance(table["smoke"], bool):
            raise ConfigError(_path(where, "smoke"), f"must be a boolean, got {table['smoke']!r}.")
        kwargs["smoke"] = table["smoke"]
    for key, known in (("datasets", labels), ("methods", methods)):
        if key in table:
            path = _path(where, key)
            names = tuple(
                _string(v, f"{path}[{i}]") for i, v in enumerate(_list(table[key], path))
            )
            for i, item in enumerate(names):
                if item not in known:
                    raise ConfigError(
                        f"{path}[{i}]",
                        f"{item!r} is not in the spec's {key}: {', '.join(sorted(known))}.",
                    )
            kwargs[key] = names
    return Profile(**kwargs)


def _parse_report(raw: Any) -> dict[str, Any]:
    table = _table(raw, "report")
    _check_keys(table, _REPORT_KEYS, "report")
    out: dict[str, Any] = {}
    for key in ("performance", "fairness"):
        if key in table:
            path = f"report.{key}"
            out[key] = [_string(v, f"{path}[{i}]") for i, v in enumerate(_list(table[key], path))]
    if "matched_levels" in table:
        levels = _table(table["matched_levels"], "report.matched_levels")
        out["matched_levels"] = {
            measure: [
                _number(v, f"report.matched_levels.{measure}[{i}]")
                for i, v in enumerate(_list(vals, f"report.matched_levels.{measure}"))
            ]
            for measure, vals in levels.items()
        }
    return out


def _known_datasets() -> set[str] | None:
    from otfair_lab.experiments._names import DATASETS  # the registry's names, without torch

    return set(DATASETS)


def parse_spec(raw: Mapping[str, Any], *, default_name: str = "sweep") -> SweepSpec:
    """Validate a parsed TOML document and return the :class:`SweepSpec`.

    Raises
    ------
    ConfigError
        For unknown keys, wrong types, unknown method or dataset names, or profile entries
        that refer to datasets/methods not in the spec; the message names the key.
    """
    table = _table(dict(raw), "<root>")
    _check_keys(table, _TOP_KEYS, "")
    plugins = tuple(
        _string(v, f"plugins[{i}]")
        for i, v in enumerate(_list(table.get("plugins", []), "plugins"))
    )
    for i, module in enumerate(plugins):
        try:
            import_plugins([module])
        except ImportError as exc:
            raise ConfigError(f"plugins[{i}]", f"cannot import {module!r}: {exc}.") from None
    for key in ("datasets", "methods"):
        if key not in table:
            raise ConfigError(key, "is required (an array of tables, [[" + key + "]]).")
    known = _known_datasets()
    datasets = tuple(
        _parse_dataset(d, f"datasets[{i}]", known, plugins)
        for i, d in enumerate(_list(table["datasets"], "datasets"))
    )
    labels = [d.label for d in datasets]
    if len(set(labels)) != len(labels):
        raise ConfigError("datasets", f"labels must be unique (set `label`); got {labels}.")
    methods = tuple(
        _parse_method(m, f"methods[{i}]", set(labels))
        for i, m in enumerate(_list(table["methods"], "methods"))
    )
    if not datasets:
        raise ConfigError("datasets", "must list at least one dataset.")
    if not methods:
        raise ConfigError("methods", "must list at least one method.")
    method_labels = [m.label for m in methods]
    if len(set(method_labels)) != len(method_labels):
        raise ConfigError("methods", f"labels must be unique (set `label`); got {method_labels}.")
    method_names = set(method_labels)
    profiles_raw = _table(table.get("profiles", {}), "profiles")
    profiles = {
        name: _parse_profile(p, f"profiles.{name}", set(labels), method_names)
        for name, p in profiles_raw.items()
    }
    epochs = table.get("epochs")
    _check_run_epochs(epochs, "epochs", methods)
    for name, profile in profiles.items():
        _check_run_epochs(profile.epochs, f"profiles.{name}.epochs", methods)
    rows = table.get("max_train_rows")
    raw_audits = _list(table.get("audits", []), "audits")
    audits = tuple(_string(v, f"audits[{i}]") for i, v in enumerate(raw_audits))
    for i, audit in enumerate(audits):
        if audit not in AUDITS:
            raise ConfigError(f"audits[{i}]", f"unknown audit {audit!r}; known: {list(AUDITS)}.")
    return SweepSpec(
        name=_string(table.get("name", default_name), "name"),
        description=str(table.get("description", "")),
        datasets=datasets,
        methods=methods,
        seeds=_seeds(table.get("seeds", [0]), "seeds"),
        test_size=_test_size(table.get("test_size", 0.2), "test_size"),
        epochs=None if epochs is None else _integer(epochs, "epochs", None),
        max_train_rows=None if rows is None else _integer(rows, "max_train_rows", 2),
        device=_device(table.get("device", "cpu"), "device"),
        plugins=plugins,
        audits=audits,
        profiles=profiles,
        report=_parse_report(table.get("report", {})),
    )


def load_spec(path: str | Path) -> SweepSpec:
    """Read and validate a TOML sweep spec.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ConfigError
        If the TOML is invalid or the spec is malformed (the message names the key).
    """
    path = Path(path)
    if path.is_dir():
        raise FileNotFoundError(f"Sweep config {str(path)!r} is a directory, not a TOML file.")
    if not path.is_file():
        raise FileNotFoundError(f"Sweep config {str(path)!r} does not exist.")
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError("<toml>", f"{path} is not valid TOML: {exc}.") from None
    except UnicodeDecodeError:
        raise ConfigError(
            "<toml>",
            f"{path} is not a TOML sweep spec (not UTF-8 text; a binary file?); "
            "see configs/*.toml for examples.",
        ) from None
    return replace(parse_spec(raw, default_name=path.stem), source=str(path))
