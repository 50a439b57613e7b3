"""Check a whole sweep request before its first run: one error, nothing stored or trained.

:func:`check_request` applies to every distinct setting of a sweep's runs the checks that
a single run (``otfair fit``, :func:`otfair_lab.experiments.run_single`) applies, in the order
of their cost, and raises :class:`RequestError` with one line at the first problem:

1. the device (:func:`otfair.utils.resolve_device`: ``tpu``, CUDA without CUDA);
2. the method registry (:func:`otfair_lab.experiments._request.check_against_spec`: a
   strength for a method without one, an unsupported notion, domains, the ``options``'
   names; the values of the strength, ``epochs`` and the ``options`` against the
   estimator's ``_parameter_constraints``, in its ``fit``'s words);
3. the dataset options (the loader's option names and fixed choices, e.g.
   ``sensitive="height"``; a synthetic dataset is generated, which is cheap);
4. the data files of every dataset of the plan (located, not read or downloaded:
   :func:`otfair.datasets.file_status`), naming the missing ones and the fix;
5. the estimator's checks that no constraint declares, which live in ``fit`` (a strength
   outside the method's range such as OTF's alpha 3 under convex mixing...). Each
   distinct (method, strength, notion, options) is built by the registry and fitted for
   one epoch on :data:`PROBE_ROWS` rows of the embedded synthetic data (a throwaway fit, as the
   runner's warm-up; nothing of the sweep's data is touched). A probe that fails while
   the same method with its default strength and no options succeeds on the same data
   is the request's error; when the default fails too, the probe says nothing (the
   synthetic data does not suit the method) and the run reports its own errors. A probe
   with an integer option fails only if it fails again on data wide enough for that
   integer (:data:`MAX_PROBE_FEATURES`): dimensions are the run's data's to judge.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from otfair_lab.experiments._spec import RunConfig

#: Rows of the synthetic data the estimator probes are fitted on (half for training).
PROBE_ROWS = 128
#: Features of the probe data (enough for options such as ``n_components=10``).
PROBE_FEATURES = 24
#: The widest probe data: a probe that failed is fitted again on data with one more
#: feature than its largest integer option (up to this many features, twice as many
#: rows), so that a dimension such as ``n_components=40`` is not refused because the
#: probe data has 24 features (the run's own data decides; ``fit`` names the problem).
#: An option past this width is not judged by a probe at all: the run's ``fit`` does.
MAX_PROBE_FEATURES = 256
#: The environment variables of :mod:`otfair.datasets` the data-file errors name
ENV_VAR, VERIFY_ENV_VAR = "OTFAIR_DATA_DIR", "OTFAIR_VERIFY"


class RequestError(ValueError):
    """A sweep request that a run would reject; the message is one line with the fix."""


def _options_key(options: Mapping[str, Any]) -> str:
    return repr(sorted(dict(options).items()))


def _setting(config: RunConfig) -> str:
    """How an error names a method setting: ``method 'otf' (strength 3, notion dp)``."""
    parts = []
    if config.strength is not None:
        parts.append(f"strength {config.strength:g}")
    if config.notion:
        parts.append(f"notion {config.notion}")
    if config.method_options:
        parts.append(
            "options " + ", ".join(f"{k}={v!r}" for k, v in config.method_options.items())
        )
    label = config.method_label if config.method_label not in ("", config.method) else ""
    name = f"method {config.method!r}" + (f" ({label})" if label else "")
    return name + (f" [{'; '.join(parts)}]" if parts else "")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def check_devices(configs: Iterable[RunConfig]) -> None:
    """Raise :class:`RequestError` for a device torch cannot use here."""
    from otfair.utils import resolve_device

    for device in sorted({c.device for c in configs}):
        try:
            resolve_device(device)
        except ValueError as exc:
            raise RequestError(
                f"{_first_line(exc)} (set by --device or the spec's `device`)"
            ) from None


def check_methods(configs: Iterable[RunConfig]) -> None:
    """Raise :class:`RequestError` for what the method registry rejects."""
    from otfair_lab.experiments._request import check_against_spec
    from otfair_lab.experiments.methods import get_method

    seen: set[tuple[Any, ...]] = set()
    for c in configs:
        key = (
            c.method,
            c.strength,
            c.notion,
            c.source_domain,
            c.epochs,
            _options_key(c.method_options),
        )
        if key in seen:
            continue
        seen.add(key)
        try:
            spec = get_method(c.method)
            check_against_spec(
                spec,
                strength=c.strength,
                notion=c.notion,
                domains=c.source_domain is not None,
                method_options=c.method_options,
                epochs=c.epochs,
            )
        except (ValueError, TypeError) as exc:
            raise RequestError(f"{_setting(c)}: {_first_line(exc)}") from None


def check_dataset_options(configs: Iterable[RunConfig]) -> None:
    """Raise :class:`RequestError` for dataset options the loader rejects.

    Real datasets: the option names and the options with a fixed set of values
    (:attr:`otfair.datasets.DatasetEntry.choices`) are checked without reading a file;
    synthetic datasets are generated. Domain-shift pairs and user factories
    (``module:function``) are left to the run.
    """
    from otfair.datasets import dataset_entries, load_dataset

    entries = dataset_entries()
    seen: set[tuple[str, str]] = set()
    for c in configs:
        key = (c.dataset, _options_key(c.dataset_options))
        if key in seen or c.dataset not in entries or c.source_domain is not None:
            continue
        seen.add(key)
        entry = entries[c.dataset]
        options = dict(c.dataset_options)
        where = f"dataset {c.dataset!r}" + (
            f" ({c.dataset_label})" if c.dataset_label not in ("", c.dataset) else ""
        )
        try:
            if not entry.real:
                load_dataset(c.dataset, **options)
                continue
            valid = set(entry.options()) | {"scaling", "verify"}
            unknown = sorted(set(options) - valid)
            if unknown:
                raise ValueError(
                    f"Unknown option(s) {unknown} for dataset {c.dataset!r}; valid options "
                    f"are {sorted(valid)}."
                )
            for name, choices in entry.choices.items():
                if name in options:
                    _check_choice(options[name], name, choices)
        except (ValueError, TypeError) as exc:
            raise RequestError(f"{where}: {_first_line(exc)}") from None


def _check_choice(value: Any, name: str, choices: Sequence[Any]) -> None:
    """Raise the loaders' ValueError when ``value`` is not one of ``choices``."""
    if value not in choices:
        raise ValueError(f"`{name}` must be one of {list(choices)}; got {value!r}.")


def _files_of(name: str) -> tuple[tuple[str, ...], ...]:
    """Return the data files of dataset ``name`` (none for a synthetic or unknown one)."""
    from otfair.datasets import dataset_files, real_dataset_names

    return dataset_files(name) if name in real_dataset_names() else ()


def missing_data_files(datasets: Iterable[str]) -> dict[str, list[str]]:
    """Files of ``datasets`` found in no data directory (dataset -> relative paths).

    Only locates the files (no download, no checksum): the run verifies what it reads.
    """
    from otfair.datasets import file_status

    missing: dict[str, list[str]] = {}
    for name in sorted(set(datasets)):
        for group in _files_of(name):
            status = file_status(name, group, None, verify=False)
            if status.state == "missing":
                missing.setdefault(name, []).append(status.relpath)
    return missing


def damaged_data_files(configs: Iterable[RunConfig]) -> dict[str, list[str]]:
    """Files of the plan's datasets whose sha256 differs from the registry's.

    Checked as a run would (``OTFAIR_VERIFY`` and a dataset's ``verify = false`` option
    switch it off); the hash of a file is remembered by path, size and mtime, so a file
    is hashed once.
    """
    from otfair.datasets import file_status

    verified = {
        c.dataset for c in configs if dict(c.dataset_options).get("verify", True) is not False
    }
    damaged: dict[str, list[str]] = {}
    for name in sorted(verified):
        for group in _files_of(name):
            status = file_status(name, group, None, verify=None)
            if status.state == "differs" and status.directory is not None:
                damaged.setdefault(name, []).append(str(status.directory.path / status.relpath))
    return damaged


def check_data_files(configs: Iterable[RunConfig]) -> None:
    """Raise :class:`RequestError` naming the missing or damaged data files and the fix."""
    from otfair.datasets import search_dirs

    configs = list(configs)
    try:
        dirs = search_dirs(None)
    except ValueError as exc:  # $OTFAIR_DATA_DIR names no directory
        raise RequestError(_first_line(exc)) from None
    missing = missing_data_files(c.dataset for c in configs)
    if not missing:
        damaged = damaged_data_files(configs)
        if damaged:
            files = "; ".join(f"{name}: {', '.join(paths)}" for name, paths in damaged.items())
            raise RequestError(
                f"damaged data files ({files}): their sha256 differs from the registry's "
                "(truncated, edited or another version). Replace them with `otfair datasets "
                f"fetch {' '.join(damaged)} --force`, or use them as they are with "
                f"{VERIFY_ENV_VAR}=0; nothing was run."
            )
        return
    files = "; ".join(f"{name}: {', '.join(paths)}" for name, paths in missing.items())
    searched = ", ".join(str(d.path) for d in dirs)
    raise RequestError(
        f"missing data files ({files}); searched {searched}. Set {ENV_VAR} to a directory "
        f"that holds them, or run `otfair datasets fetch {' '.join(missing)}`; nothing was run."
    )


class _Prober:
    """Fit built estimators for one epoch on tiny synthetic data (see the module doc)."""

    def __init__(self) -> None:
        self._splits: dict[tuple[str, bool, int], Any] = {}
        self._outcomes: dict[tuple[Any, ...], str | None] = {}

    def _split(self, task: str, sensitive_as_input: bool, n_features: int) -> Any:
        key = (task, sensitive_as_input, n_features)
        if key not in self._splits:
            from otfair.datasets import load_dataset

            name = "synthetic_regression" if task == "regression" else "synthetic"
            rows = max(PROBE_ROWS, 2 * n_features)
            data = load_dataset(name, n_samples=rows, n_features=n_features)
            self._splits[key] = data.split(
                test_size=0.5, random_state=0, sensitive_as_input=sensitive_as_input
            )
        return self._splits[key]

    def outcome(
        self, config: RunConfig, strength: float | None, options: Mapping[str, Any]
    ) -> str | None:
        """Return the first line of the probe's error (``None`` when it fits)."""
        key = (config.method, strength, config.notion, _options_key(options))
        if key in self._outcomes:
            return self._outcomes[key]
        error = self._fit(config, strength, options, PROBE_FEATURES)
        wide = wide_enough(options)
        if error is not None and wide > PROBE_FEATURES:
            error = self._fit(config, strength, options, wide)
            if error is not None and _names_a_wide_integer(error, options):
                error = None  # wider than any probe: the run's data decides
        self._outcomes[key] = error
        return error

    def _fit(
        self, config: RunConfig, strength: float | None, options: Mapping[str, Any], width: int
    ) -> str | None:
        """Fit the probe on synthetic data with ``width`` features; its error's first line."""
        from otfair_lab.experiments.methods import get_method

        spec = get_method(config.method)
        split = self._split(spec.task, spec.sensitive_as_input, width)
        try:
            estimator = spec.build(
                strength,
                notion=config.notion,
                random_state=0,
                epochs=1,
                device="cpu",
                dataset=config.dataset,
                **dict(options),
            )
            with warnings.catch_warnings():  # a one-epoch probe is under-trained by design
                warnings.simplefilter("ignore")
                estimator.fit(split.X_train, split.y_train, sensitive_features=split.s_train)
        except Exception as exc:  # noqa: BLE001 - any probe failure is compared below
            return _first_line(exc)
        return None


def _names_a_wide_integer(error: str, options: Mapping[str, Any]) -> bool:
    """Whether ``error`` names an integer option at least :data:`MAX_PROBE_FEATURES`."""
    return any(
        isinstance(v, int) and not isinstance(v, bool) and v >= MAX_PROBE_FEATURES
        and str(v) in error
        for v in options.values()
    )  # fmt: skip


def wide_enough(options: Mapping[str, Any]) -> int:
    """Features a probe needs for ``options``' integers (one more than the largest, capped).

    >>> wide_enough({"n_components": 40, "gamma": 0.5})
    41
    >>> wide_enough({"reg": True})
    24
    """
    ints = [v for v in options.values() if isinstance(v, int) and not isinstance(v, bool)]
    return min(max([PROBE_FEATURES - 1, *ints]) + 1, MAX_PROBE_FEATURES)


def check_estimators(configs: Iterable[RunConfig]) -> int:
    """Raise :class:`RequestError` for a setting the estimator's ``fit`` rejects.

    Per method, notion and options, the smallest and the largest strength are probed:
    every method's range is an interval (``>= 0``, ``[0, 1]``...), so the strengths
    between two valid ends are valid. Returns the number of probe fits made.
    """
    from otfair_lab.experiments._execute import single_thread

    single_thread()
    prober = _Prober()
    grids: dict[tuple[Any, ...], list[RunConfig]] = {}
    for c in configs:
        grids.setdefault((c.method, c.notion, _options_key(c.method_options)), []).append(c)
    for runs in grids.values():
        with_strength = [c for c in runs if c.strength is not None]
        ends = (
            [
                min(with_strength, key=lambda c: cast(float, c.strength)),
                max(with_strength, key=lambda c: cast(float, c.strength)),
            ]
            if with_strength
            else runs[:1]
        )
        for c in ends[:1] if ends[0] is ends[-1] else ends:
            error = prober.outcome(c, c.strength, c.method_options)
            if error is None or prober.outcome(c, None, {}) is not None:
                continue
            raise RequestError(f"{_setting(c)}: {error}")
    return len(prober._outcomes)


def check_request(configs: Sequence[RunConfig], *, probe: bool = True) -> float:
    """Check every run of ``configs`` as a run would, before any of them; return seconds.

    Raises
    ------
    RequestError
        At the first setting a run would reject (the message names it and the fix).
    """
    start = time.perf_counter()
    check_devices(configs)
    check_methods(configs)
    check_dataset_options(configs)
    check_data_files(configs)
    if probe:
        check_estimators(configs)
    return time.perf_counter() - start
