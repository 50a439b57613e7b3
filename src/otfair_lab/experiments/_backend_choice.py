"""Choose a sweep's backend: check the backend arguments, then open the backend asked for.

Backends (:mod:`otfair_lab.experiments._backends`)
----------------------------------------------
``local``
    ``workers == 1`` runs in the parent process; more workers use a
    :class:`concurrent.futures.ProcessPoolExecutor` with the ``spawn`` start method
    (fork is unsafe with torch's thread pools), one torch thread per worker.
``cluster``
    Dask distributed: an existing scheduler (``scheduler="tcp://host:8786"``, reached
    within :data:`~otfair_lab.experiments._backends.CONNECT_TIMEOUT_S`) or a
    :class:`distributed.LocalCluster` on 127.0.0.1 with ``workers`` single-threaded
    worker processes. Dask was chosen over Ray because it is pure pip (no separate
    runtime or object store daemon), starts a local cluster in about a second, and its
    futures API mirrors :mod:`concurrent.futures`, so both backends share one loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from otfair_lab.experiments._backends import (
    DaskBackend,
    InlineBackend,
    PoolBackend,
    StopSignals,
)
from otfair_lab.experiments._spec import RunConfig

Backend = Literal["local", "cluster"]


def _open_backend(
    backend: Backend,
    workers: int,
    scheduler: str | None,
    plugins: Sequence[str],
    warmups: Sequence[RunConfig],
    stop: StopSignals,
    connect_timeout: float,
) -> InlineBackend | PoolBackend | DaskBackend:
    if backend == "cluster":
        return DaskBackend(plugins, warmups, workers, scheduler, connect_timeout)
    if workers == 1:
        return InlineBackend(plugins, warmups, stop)
    return PoolBackend(plugins, warmups, workers)


def _check_arguments(workers: int, backend: str, scheduler: str | None) -> None:
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"`workers` must be a positive integer; got {workers!r}.")
    if backend not in ("local", "cluster"):
        raise ValueError(f"`backend` must be 'local' or 'cluster'; got {backend!r}.")
    if scheduler is not None and backend != "cluster":
        raise ValueError("`scheduler` is only used with backend='cluster'.")
    if scheduler is not None:  # a malformed address fails before the store is claimed
        try:
            from distributed.comm import parse_address, parse_host_port
        except ImportError:  # the cluster backend reports the missing package itself
            return
        try:
            parse_host_port(parse_address(scheduler)[1])
        except (ValueError, TypeError) as exc:
            raise ValueError(
                f"`scheduler` must be an address like tcp://host:8786; got {scheduler!r} ({exc})."
            ) from None
