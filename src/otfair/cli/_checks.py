"""Checks of a command line made before torch or scikit-learn is imported.

A mistyped name (dataset, method, notion, ``-o`` key, paper), a missing or malformed
sweep spec and an unreachable scheduler are user errors that should answer at once:
importing torch and scikit-learn alone takes seconds (much longer on a loaded machine).
These checks read the static name table :mod:`otfair.experiments._names` and the TOML
spec parser (:mod:`otfair.experiments._spec`, torch-free); each failure is one
``error:`` line and exit code 2 (:func:`otfair.cli._common.fail`), with the same words as
the library's own check that would run later.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from otfair.cli._common import fail

__all__ = ["check_dataset", "check_fetchable", "check_method", "check_scheduler", "check_spec"]

#: Seconds to wait for a TCP connection to a scheduler before calling it unreachable.
CONNECT_TIMEOUT_S = 5.0


def check_dataset(name: str) -> None:
    """Fail unless ``name`` is a registered dataset (a ``module:function`` factory passes)."""
    from otfair.experiments._names import DATASETS

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

    The words are :func:`otfair.experiments._names.method_problem`'s, which the registry
    raises too. The strength, ``epochs`` and option *values* (``options`` a mapping) are
    checked against the constraints the name table describes
    (:func:`~otfair.experiments._names.values_problem`, the estimator's words); the
    others later, against the estimator's ``_parameter_constraints``.
    """
    from otfair.experiments._names import method_names, method_problem, values_problem

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

    Returns the :class:`~otfair.experiments.SweepSpec` (parsed without importing torch
    unless the spec's ``plugins`` do).
    """
    from otfair.experiments._spec import ConfigError, load_spec

    try:
        return load_spec(config)
    except (ConfigError, FileNotFoundError, ValueError) as exc:
        text = str(exc).strip()
        fail(text.splitlines()[0] if text else type(exc).__name__)
