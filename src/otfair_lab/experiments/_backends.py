"""Where a sweep's runs execute: in process, a local process pool or Dask; signal handling.

Every backend has the same small interface, driven by :func:`otfair_lab.experiments.run_sweep`:
``submit(config)`` returns a future, ``wait(futures, timeout)`` returns the finished ones,
``window`` is how many runs may be in flight, ``close(abandon)`` stops the workers.

Stopping (SIGINT / SIGTERM)
---------------------------
While a sweep runs, :class:`StopSignals` replaces the parent's SIGINT and SIGTERM handlers:
a signal only sets a flag, which the parent checks between two writes, so a row is never
half written. Pool workers ignore both signals (a Ctrl-C reaches the whole process group),
and the parent kills them with SIGKILL when it stops, so no worker outlives it; their runs
are abandoned (not stored, a rerun does them). In process (``workers=1``) the signal raises
:class:`StopRun` inside the running fit, never during a write.

A parent killed outright (SIGKILL, the OOM killer) cannot stop its workers: each worker
dies with it by itself (:func:`die_with_parent`: a parent-death signal on Linux, and a
watchdog thread that notices the new parent id everywhere), and multiprocessing's
resource tracker is started without the parent's stdout and stderr
(:func:`start_resource_tracker`), so nothing holds a killed sweep's output open.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, CancelledError, Future, ProcessPoolExecutor
from concurrent.futures import wait as futures_wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager, suppress
from typing import Any

from otfair_lab.experiments._execute import execute_item, single_thread
from otfair_lab.experiments._plugins import import_plugins
from otfair_lab.experiments._spec import RunConfig

#: Seconds to wait for a Dask scheduler given with ``scheduler=`` before giving up.
CONNECT_TIMEOUT_S = 5.0


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class StopRun(BaseException):
    """Raised inside an in-process run by SIGINT/SIGTERM.

    Not an ``Exception``: a run's error handling must not record it as a failed run.
    """


class SchedulerUnreachableError(ConnectionError):
    """The Dask scheduler given with ``scheduler=`` did not answer in time."""


class ClusterLostError(ConnectionError):
    """The Dask scheduler of a running sweep went away; the sweep stops as on a signal."""


#: Seconds a Dask cluster may have no worker before the sweep says so (once).
NO_WORKERS_WARN_S = 60.0


class StopSignals:
    """Turn SIGINT and SIGTERM into a flag for the duration of a sweep.

    ``signum`` is the first signal received (``None`` until then). Inside
    :meth:`interruptible` a signal also raises :class:`StopRun`. Outside the main thread
    (where handlers cannot be installed) this does nothing.
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.signum: int | None = None
        self._raise = False
        self._old: dict[int, Any] = {}

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            self._old = {s: signal.signal(s, self._handle) for s in self.SIGNALS}
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self._old.items():
            signal.signal(sig, handler)

    def _handle(self, signum: int, frame: object) -> None:
        if self.signum is None:
            self.signum = signum
        if self._raise:
            self._raise = False
            raise StopRun(signum)

    @property
    def name(self) -> str | None:
        """Name of the signal received (``"SIGINT"``), if any."""
        return None if self.signum is None else signal.Signals(self.signum).name

    @contextmanager
    def interruptible(self) -> Iterator[None]:
        """Let a signal interrupt this block at once (by raising :class:`StopRun`)."""
        if self.signum is not None:
            raise StopRun(self.signum)
        self._raise = True
        try:
            yield
        finally:
            self._raise = False


@contextmanager
def signals_blocked() -> Iterator[None]:
    """Block SIGINT and SIGTERM in this thread for the block (they wait, not lost).

    A process started inside inherits the blocked mask across ``exec`` (POSIX), so a
    worker does not die of a Ctrl-C in its start-up; the parent receives the signal when
    the block ends. Does nothing where ``pthread_sigmask`` is missing (Windows).
    """
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, StopSignals.SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


#: Seconds between two checks of the watchdog thread of :func:`die_with_parent`.
PARENT_POLL_S = 0.5
#: ``prctl`` option of Linux: the signal a process gets when its parent dies.
_PR_SET_PDEATHSIG = 1
_watchdog: list[threading.Thread] = []


def die_with_parent() -> None:
    """Make this process (a spawned worker) die as soon as the process that started it does.

    A sweep killed with SIGKILL cannot kill its workers, and a worker blocks on its task
    queue for ever, holding the sweep's stdout and stderr. On Linux the kernel sends
    SIGKILL at the parent's death (``prctl(PR_SET_PDEATHSIG)``); everywhere a daemon
    thread polls :func:`os.getppid` every :data:`PARENT_POLL_S` seconds and exits the
    process when the parent changed (it was adopted). A parent already dead at the call
    is caught too. Does nothing in a process not started by multiprocessing.
    """
    parent = multiprocessing.parent_process()
    if parent is None or parent.pid is None or _watchdog:
        return
    expected = parent.pid
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):  # no libc prctl: the watchdog still works
            pass
    if os.getppid() != expected:  # the parent died before the signal was set
        os._exit(1)

    def watch() -> None:
        while os.getppid() == expected:
            time.sleep(PARENT_POLL_S)
        os._exit(1)

    thread = threading.Thread(target=watch, name="otfair-parent-watchdog", daemon=True)
    thread.start()
    _watchdog.append(thread)


def start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker with stdout and stderr on ``/dev/null``.

    The tracker (started with the first ``spawn`` process) outlives the sweep's parent
    until the last worker is gone; started as it is, it would hold the parent's stdout
    and stderr, so that a reader of a killed sweep's output waits for it. Does nothing
    when the tracker runs already, or outside POSIX.
    """
    if os.name != "posix":
        return
    from multiprocessing import resource_tracker

    tracker = resource_tracker._resource_tracker
    if getattr(tracker, "_fd", None) is not None:
        return
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
    devnull = os.open(os.devnull, os.O_WRONLY)
    saved = [os.dup(1), os.dup(2)]
    try:
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        tracker.ensure_running()
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, devnull):
            os.close(fd)


def warm_up(configs: Sequence[RunConfig]) -> None:
    """Run throwaway tiny fits so that no timed run pays the one-time costs.

    The first fit in a fresh process pays for lazy imports, torch's first operations and
    allocator set-up (about 2 s, against 0.01-0.08 s for the later fits of a small
    model); every worker calls this once before its first timed run. Failures are
    ignored: the real run reports them.
    """
    from otfair_lab.experiments._single import run_single

    for config in configs:
        try:
            with warnings.catch_warnings():  # a throwaway tiny fit: its warnings say nothing
                warnings.simplefilter("ignore")
                run_single(**config.run_kwargs())
        except Exception:  # noqa: BLE001, S112 - a throwaway fit; the real run reports errors
            continue


def warm_up_configs(configs: Sequence[RunConfig]) -> list[RunConfig]:
    """One tiny run per distinct method of ``configs`` on the embedded synthetic data."""
    from otfair_lab.experiments.methods import get_method

    out: dict[str, RunConfig] = {}
    for c in configs:
        if c.method in out:
            continue
        try:
            task = get_method(c.method).task
        except ValueError:
            continue
        out[c.method] = RunConfig(
            dataset="synthetic_regression" if task == "regression" else "synthetic",
            method=c.method,
            seed=0,
            strength=c.strength,
            notion=c.notion,
            epochs=1,
            test_size=0.5,
            max_train_rows=64,
            method_options=dict(c.method_options),
            device=c.device,
        )
    return list(out.values())


#: Share of an accelerator's memory that the workers of one sweep may take together.
ACCELERATOR_SHARE = 0.9


def accelerator_fraction(workers: int, devices: Sequence[str]) -> float | None:
    """Memory fraction of a CUDA device for each of ``workers`` workers, or None.

    ``workers`` processes that train on one GPU (``--device cuda`` or ``auto`` on a CUDA
    machine) each get ``ACCELERATOR_SHARE / workers`` of its memory
    (``torch.cuda.set_per_process_memory_fraction``), so that together they never
    oversubscribe it: a worker that needs more fails with an out-of-memory error that is
    stored as its run's error instead of stalling the others. None when no run uses CUDA.
    """
    import torch

    from otfair.utils import resolve_device

    if workers < 1 or not torch.cuda.is_available():
        return None
    if not any(resolve_device(d).type == "cuda" for d in devices if d):
        return None
    return ACCELERATOR_SHARE / workers


def worker_init(
    plugins: Sequence[str], warmups: Sequence[RunConfig] = (), workers: int = 1
) -> None:
    """Prepare a worker: one thread, plugins imported, signals ignored, GPU share, warm-up."""
    if threading.current_thread() is threading.main_thread():
        for sig in StopSignals.SIGNALS:
            signal.signal(sig, signal.SIG_IGN)  # the parent stops the sweep and kills us
    single_thread()
    import_plugins(plugins)
    fraction = accelerator_fraction(workers, [c.device for c in warmups])
    if fraction is not None:
        import torch

        torch.cuda.set_per_process_memory_fraction(fraction)
    warm_up(warmups)


def pool_worker_init(
    plugins: Sequence[str], warmups: Sequence[RunConfig] = (), workers: int = 1
) -> None:
    """Prepare a process pool's worker: it dies with the sweep, then :func:`worker_init`.

    Dask's workers are left to Dask, which stops a local cluster's workers with their
    parent by itself.
    """
    die_with_parent()
    worker_init(plugins, warmups, workers)


class InlineBackend:
    """Runs one at a time in this process; a signal interrupts the running fit."""

    window = 1

    def __init__(self, plugins: Sequence[str], warmups: Sequence[RunConfig], stop: StopSignals):
        self._execute = execute_item
        self._plugins = tuple(plugins)
        self._stop = stop
        single_thread()
        with stop.interruptible():
            warm_up(warmups)

    def submit(self, config: RunConfig | tuple[RunConfig, ...]) -> Future:
        fut: Future = Future()
        with self._stop.interruptible():
            record = self._execute(config, self._plugins)
        fut.set_result(record)
        return fut

    def wait(self, futures: Sequence[Future], timeout: float) -> list[Future]:
        return [f for f in futures if f.done()]

    def close(self, abandon: bool) -> None:
        return None


class PoolBackend:
    """A ``spawn`` process pool of ``workers`` single-threaded processes (rebuilt if broken)."""

    def __init__(self, plugins: Sequence[str], warmups: Sequence[RunConfig], workers: int):
        self.window = workers
        self._plugins = tuple(plugins)
        self._warmups = tuple(warmups)
        self._pool = self._new_pool()

    def _new_pool(self) -> ProcessPoolExecutor:
        start_resource_tracker()
        return ProcessPoolExecutor(
            max_workers=self.window,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=pool_worker_init,
            initargs=(self._plugins, self._warmups, self.window),
        )

    def submit(self, config: RunConfig | tuple[RunConfig, ...]) -> Future:
        # the pool starts its workers inside submit: they inherit a blocked SIGINT/SIGTERM,
        # so a Ctrl-C while they import (before worker_init ignores it) is not a
        # KeyboardInterrupt traceback in each of them; the parent stops and kills them
        with signals_blocked():
            try:
                return self._pool.submit(execute_item, config, self._plugins)
            except BrokenProcessPool:  # a worker died (its runs were recorded): start afresh
                self._pool.shutdown(wait=True, cancel_futures=True)
                self._pool = self._new_pool()
                return self._pool.submit(execute_item, config, self._plugins)

    def wait(self, futures: Sequence[Future], timeout: float) -> list[Future]:
        done, _ = futures_wait(futures, timeout=timeout, return_when=FIRST_COMPLETED)
        return list(done)

    def close(self, abandon: bool) -> None:
        if not abandon:
            self._pool.shutdown(wait=True)
            return
        procs = list((getattr(self._pool, "_processes", None) or {}).values())
        for proc in procs:
            if proc.is_alive():
                proc.kill()
        self._pool.shutdown(wait=True, cancel_futures=True)
        for proc in procs:
            proc.join(timeout=10)


class DaskBackend:
    """Dask distributed: a scheduler at ``scheduler`` or a local cluster of ``workers``."""

    def __init__(
        self,
        plugins: Sequence[str],
        warmups: Sequence[RunConfig],
        workers: int,
        scheduler: str | None,
        connect_timeout: float = CONNECT_TIMEOUT_S,
    ):
        try:
            from distributed import Client, LocalCluster
        except ImportError as exc:  # pragma: no cover - depends on the installation
            raise ImportError(
                "The cluster backend needs Dask distributed: pip install 'otfair[cluster]'."
            ) from exc
        self._plugins = tuple(plugins)
        self._cluster = None
        self._address = scheduler or "of the local cluster"
        self._no_workers_since: float | None = None
        self._warned = False
        if scheduler is None:
            self._cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=":0",  # any free port: 8787 may be taken
            )
            self._client = Client(self._cluster)
        else:
            try:
                self._client = Client(scheduler, timeout=connect_timeout)
            except (OSError, TimeoutError) as exc:
                first = (str(exc).strip() or type(exc).__name__).splitlines()[0]
                raise SchedulerUnreachableError(
                    f"cannot reach the Dask scheduler {scheduler} within {connect_timeout:g} s "
                    f"({first}); is it running?"
                ) from None
        try:
            self._client.run(worker_init, self._plugins, tuple(warmups))
            threads = sum(
                w.get("nthreads", 1) for w in self._client.scheduler_info()["workers"].values()
            )
        except BaseException:
            self.close(abandon=True)
            raise
        self.window = max(workers, threads)

    def submit(self, config: RunConfig | tuple[RunConfig, ...]) -> Any:
        from otfair_lab.experiments._stacking import configs_of

        return self._client.submit(
            execute_item,
            config,
            self._plugins,
            key=f"otfair-run-{configs_of(config)[0].key()}-{time.time_ns()}",
            pure=False,
        )

    def wait(self, futures: Sequence[Any], timeout: float) -> list[Any]:
        from distributed import wait

        self.check_cluster()
        try:
            wait(list(futures), timeout=timeout, return_when="FIRST_COMPLETED")
        except TimeoutError:
            pass
        except (OSError, CancelledError) as exc:  # the scheduler's connection broke
            self.check_cluster()
            raise ClusterLostError(f"lost the Dask scheduler ({_first_line(exc)})") from None
        return [f for f in futures if f.done()]

    def check_cluster(self, now: float | None = None) -> None:
        """Raise :class:`ClusterLostError` without a scheduler; say when no worker is left.

        A cluster whose workers all died would leave the sweep waiting without a word:
        after :data:`NO_WORKERS_WARN_S` seconds without a worker one line on stderr says
        so (the sweep keeps waiting for workers to join; Ctrl-C stops it, keeping every
        finished run). A client that lost its scheduler is a stop, not a traceback.
        """
        now = time.monotonic() if now is None else now
        status = str(getattr(self._client, "status", "running"))
        if status not in ("running", "newly-created"):
            raise ClusterLostError(
                f"lost the Dask scheduler {self._address} (the client is {status})"
            )
        try:
            workers = self._client.scheduler_info().get("workers") or {}
        except (OSError, AttributeError):  # pragma: no cover - a client going away
            workers = {}
        if workers:
            self._no_workers_since = None
            return
        if self._no_workers_since is None:
            self._no_workers_since = now
        waited = now - self._no_workers_since
        if waited >= NO_WORKERS_WARN_S and not self._warned:
            self._warned = True
            print(
                f"warning: the Dask scheduler {self._address} has had no worker for "
                f"{waited:.0f} s; the sweep waits for one (Ctrl-C stops it, keeping every "
                "finished run).",
                file=sys.stderr,
                flush=True,
            )

    def close(self, abandon: bool) -> None:
        with suppress(OSError, TimeoutError, CancelledError):
            self._client.close()
        if self._cluster is not None:
            self._cluster.close()
