"""Checks of a command line made before torch or scikit-learn is imported.

A mistyped name (dataset, method, notion, ``-o`` key, paper), a missing or malformed
sweep spec and an unreachable scheduler are user errors that should answer at once:
importing torch and scikit-learn alone takes seconds (much longer on a loaded machine).
These checks read the static name table :mod:`otfair_lab.experiments._names` and the TOML
spec parser (:mod:`otfair_lab.experiments._spec`, torch-free); each failure is one
``error:`` line and exit code 2 (:func:`otfair_lab.cli._common.fail`), with the same words as
the library's own check that would run later.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from otfair_lab.cli._common import fail

__all__ = [
    "check_budget_method",
    "check_dataset",
    "check_dataset_options",
    "check_device",
    "check_epochs_floor",
    "check_fetchable",
    "check_method",
    "check_run_sizes",
    "check_scheduler",
    "check_spec",
    "check_sweep_epochs_floor",
]

#: Seconds to wait for a TCP connection to a scheduler before calling it unreachable.
CONNECT_TIMEOUT_S = 5.0


def check_dataset(name: str) -> None:
    """Fail unless ``name`` is a registered dataset (a ``module:function`` factory passes)."""
    from otfair_lab.experiments._names import DATASETS

    if ":" not in name and name not in DATASETS:
        fail(f"Unknown dataset {name!r}; valid names are {list(DATASETS)}.")


def check_fetchable(name: str) -> None:
    """Fail unless ``name`` is a dataset read from files (``otfair datasets fetch NAME``)."""
    import json
    from pathlib import Path

    import otfair

    registry = Path(otfair.__file__).with_name("datasets") / "_registry.json"
    real = list(json.loads(registry.read_text(encoding="utf-8"))["datasets"])
    if name not in real:
        fail(
            f"{name!r} is not a dataset read from files; valid names are {real} "
            "(synthetic datasets need no files)."
        )


def check_method(
    method: str,
    *,
    strength: float | None = None,
    notion: str | None = None,
    domains: bool = False,
    options: Iterable[str] = (),
    epochs: int | None = None,
) -> None:
    """Fail unless ``method`` exists and takes the strength, notion, domains and options.

    The words are :func:`otfair_lab.experiments._names.method_problem`'s, which the registry
    raises too. The strength, ``epochs`` and option *values* (``options`` a mapping) are
    checked against the constraints the name table describes
    (:func:`~otfair_lab.experiments._names.values_problem`, the estimator's words); the
    others later, against the estimator's ``_parameter_constraints``.
    """
    from otfair_lab.experiments._names import method_names, method_problem, values_problem

    try:
        info = method_names(method)
    except ValueError as exc:
        fail(str(exc))
        raise  # unreachable: fail exits
    problem = method_problem(
        method, info, strength=strength, notion=notion, domains=domains, options=options
    )
    if problem:
        fail(problem)
    values = dict(options) if isinstance(options, Mapping) else {}
    problem = values_problem(method, strength=strength, epochs=epochs, options=values)
    if problem:
        fail(problem)


def check_scheduler(address: str) -> None:
    """Fail unless a TCP connection to the Dask scheduler ``address`` opens.

    ``tcp://host:port`` (or ``host:port``; a missing port is an error); other protocols
    (``inproc://``, ``tls://``) are left to Dask. A connection refused or not opened
    within :data:`CONNECT_TIMEOUT_S` seconds fails with the cluster backend's advice.
    """
    text = address if "://" in address else f"tcp://{address}"
    parts = urlsplit(text)
    if parts.scheme != "tcp":
        return
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        host, port = None, None
    if not host or port is None:
        fail(f"`scheduler` must be an address like tcp://host:8786; got {address!r}.")
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        fail(
            f"cannot reach the Dask scheduler {address} within {CONNECT_TIMEOUT_S:g} s "
            f"({reason}); is it running? (start one with `dask scheduler`, or use "
            "--backend local)"
        )


def check_spec(config: Any) -> Any:
    """Read and validate the TOML sweep spec ``config``; fail with one line on an error.

    Returns the :class:`~otfair_lab.experiments.SweepSpec` (parsed without importing torch
    unless the spec's ``plugins`` do).
    """
    from otfair_lab.experiments._spec import ConfigError, load_spec

    try:
        return load_spec(config)
    except (ConfigError, FileNotFoundError, ValueError) as exc:
        text = str(exc).strip()
        fail(text.splitlines()[0] if text else type(exc).__name__)


def _naming(problem: str, option: str) -> str:
    """``problem`` with the option that set the value named before its final period."""
    return f"{problem.rstrip('.')} ({option})."


def check_device(device: str, option: str = "--device") -> None:
    """Fail unless ``device`` names a device (cpu, cuda, cuda:N, mps, auto), torch-free."""
    from otfair_lab.experiments._value_checks import device_problem

    problem = device_problem(device)
    if problem:
        fail(_naming(problem, option))


def check_run_sizes(
    test_size: float | None, max_train_rows: int | None, seed: int | None = None
) -> None:
    """Fail on a ``--test-size`` outside (0, 1), a ``--max-train-rows`` below 2 or a seed < 0.

    The words of :class:`otfair_lab.experiments._request.RunRequest`'s own checks.
    """
    if seed is not None and seed < 0:
        fail(f"`seed` must be >= 0; got {seed} (--seed).")
    if test_size is not None and not 0.0 < test_size < 1.0:
        fail(f"`test_size` must lie in (0, 1); got {test_size} (--test-size).")
    if max_train_rows is not None and max_train_rows < 2:
        fail(f"`max_train_rows` must be >= 2; got {max_train_rows} (--max-train-rows).")


def check_dataset_options(dataset: str, options: Mapping[str, Any]) -> None:
    """Fail on a ``-d`` option the dataset does not declare, or a value outside its choices."""
    from otfair_lab.experiments._names import dataset_options_problem

    problem = dataset_options_problem(dataset, options, extra=("data_home",))
    if problem:
        fail(_naming(problem, "--dataset-option"))


def check_budget_method(method: str, metric: str | None) -> None:
    """Fail unless ``--max-violation`` can tune ``method`` and ``--metric`` suits its task.

    A method without a strength FairnessCV can set (``unfair``, ``laftr``: no fairness
    term, or no strength parameter) cannot be tuned to a budget; a metric name is checked
    against the violation measures of the method's task (``resolve_metric``'s words).
    Methods outside the name table (plugins) are left to the run.
    """
    from otfair_lab.experiments._names import METHODS, METRICS, TUNABLE

    info = METHODS.get(method)
    if info is None:
        return
    if not TUNABLE.get(method, False):
        tunable = ", ".join(n for n, ok in TUNABLE.items() if ok)
        fail(
            f"--max-violation needs a method whose trade-off strength FairnessCV can set; "
            f"{method!r} has none to tune (methods that do: {tunable})."
        )
    if metric is not None:
        names = METRICS.get(info.task, ())
        if names and metric not in names:
            fail(
                f"`metric`={metric!r} is not a {info.task} violation measure; choose one of "
                f"{sorted(names)} (--metric)."
            )


def _run_floor(run: Mapping[str, Any]) -> tuple[float | None, Any]:
    """Return the arithmetic floor of ``run``'s explicit epochs (or None) and its batch."""
    from otfair_lab.experiments._names import BATCH_SIZES, DATASET_BATCH_SIZES, DATASET_OPTIONS
    from otfair_lab.experiments._value_checks import epochs_floor_seconds

    epochs = run.get("epochs")
    if not isinstance(epochs, int) or run.get("method") not in BATCH_SIZES:
        return None, None
    facts = DATASET_OPTIONS.get(str(run.get("dataset")))
    options = dict(run.get("dataset_options") or {})
    rows = None if facts is None else facts.get("rows")
    if facts is not None and not facts.get("real"):
        rows = options.get("n_samples", rows)
    elif set(options) - {"scaling", "verify", "data_home"}:
        rows = None  # a variant (task, sensitive, split...) may hold other rows
    default = DATASET_BATCH_SIZES.get(run["method"], {}).get(
        str(run.get("dataset")), BATCH_SIZES[run["method"]]
    )
    batch = dict(run.get("method_options") or {}).get("batch_size", default)
    floor = epochs_floor_seconds(
        epochs=epochs,
        batch_size=batch if isinstance(batch, int) else None,
        rows=rows if isinstance(rows, int) else None,
        test_size=float(run.get("test_size") or 0.2),
        max_train_rows=run.get("max_train_rows"),
        device=str(run.get("device") or "cpu"),
    )
    return floor, batch


def _took(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.1f} s"
    return f"{seconds / 3600:.1f} h" if seconds >= 5400 else f"{seconds / 60:.1f} min"


def check_epochs_floor(run: Mapping[str, Any], *, confirm_above: float, yes: bool) -> None:
    """Refuse, before any pilot fit, an epoch count that arithmetic puts above the bound.

    The least time ``run``'s explicit ``epochs`` can take
    (:func:`otfair_lab.experiments._value_checks.epochs_floor_seconds`: the dataset's rows, the
    method's mini-batches and a per-step floor well below any measured step) is compared
    with ``confirm_above`` hours; above it, without ``yes``, one line says the arithmetic.
    """
    if yes:
        return
    floor, batch = _run_floor(run)
    if floor is None or floor <= confirm_above * 3600:
        return
    epochs = run["epochs"]
    fail(
        f"--epochs {epochs} would take at least {_took(floor)} by arithmetic alone "
        f"({epochs} epochs of {run['dataset']}'s training rows in mini-batches of "
        f"{batch or 'all rows'}, at a floor far below any measured step), above "
        f"{confirm_above:g} h; pass fewer --epochs, --yes, or --confirm-above HOURS."
    )


def check_sweep_epochs_floor(
    spec: Any, profile: str, *, workers: int, confirm_above: float, yes: bool
) -> None:
    """Refuse, before any pilot, a sweep whose explicit epochs arithmetic puts above the bound.

    Each run with an explicit ``epochs`` (the spec's, a method's or the profile's) costs
    at least its floor (:func:`check_epochs_floor`); the runs of a stacked group (the
    same run but the strength) are counted once, and the total is divided by the
    workers (a perfect pool): a lower bound of the sweep, whatever is already stored.
    """
    if yes:
        return
    try:
        configs = spec.runs(profile)
    except (ValueError, KeyError):  # an unknown profile: the runner's words, later
        return
    floors: dict[str, float] = {}
    for config in configs:
        floor, _ = _run_floor(
            {
                "dataset": config.dataset,
                "method": config.method,
                "epochs": config.epochs,
                "dataset_options": config.dataset_options,
                "method_options": config.method_options,
                "test_size": config.test_size,
                "max_train_rows": config.max_train_rows,
                "device": config.device,
            }
        )
        if floor is not None:
            group = repr((config.dataset, config.method, config.seed, config.notion,
                          sorted(dict(config.dataset_options).items()),
                          sorted(dict(config.method_options).items())))  # fmt: skip
            floors[group] = max(floors.get(group, 0.0), floor)
    total = sum(floors.values()) / max(1, workers)
    if total <= confirm_above * 3600:
        return
    fail(
        f"this sweep's epochs would take at least {_took(total)} by arithmetic alone "
        f"({len(floors)} fits with explicit epochs, their training rows in mini-batches "
        f"at a floor far below any measured step, on {max(1, workers)} worker"
        f"{'s' if workers > 1 else ''}), above {confirm_above:g} h; pass --yes, fewer "
        "epochs in the spec, or --confirm-above HOURS."
    )
