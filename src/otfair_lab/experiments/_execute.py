"""The one run executor: a work item (a run, or a stacked group of runs) in this process.

Every run of a sweep goes through :func:`execute_group`, a single run as a group of one:
the stages of :mod:`otfair_lab.experiments._single` (prepare the data, build, fit,
evaluate), the error records and the timing are written once, here. A group of runs
that differ only in strength (:mod:`otfair_lab.experiments._stacking`) prepares its data
once and fits one path (:func:`otfair.estimators.fairness_path`) when its built
estimators can share it; a group of one fits its estimator alone.

``execute_item`` is what the backends, the pilots and the reproduction checks
call: it never raises (a failing run comes back as an ``error`` record with the
formatted traceback) and gives each run its share of the fit (:func:`share_fit_time`,
``stacked_k`` = K, 1 for a run fitted alone). :func:`single_thread` keeps one
BLAS/torch thread per process, since a sweep's workers share the machine's cores.
Neither the runner nor the backends are imported here, so that both can import this.
"""

from __future__ import annotations

import socket
import time
import traceback
import warnings
from collections.abc import Sequence
from typing import Any

from otfair_lab.experiments._plugins import import_plugins
from otfair_lab.experiments._spec import RunConfig
from otfair_lab.experiments._stacking import WorkItem, configs_of, curve_param, path_template

__all__ = [
    "execute_group",
    "execute_item",
    "execute_run",
    "share_fit_time",
    "single_thread",
    "warning_line",
]


def single_thread() -> None:
    """Use one BLAS/torch thread (several workers share the machine's cores)."""
    import os

    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    import torch

    torch.set_num_threads(1)


class _Records:
    """The records of a group's runs; their wall spans tile the group's wall time.

    A record's ``started_at`` is when the previous record of the group was finished (the
    group's start for the first), so the first finished run carries the shared data
    preparation and the stacked fit, as a single run would.
    """

    def __init__(self, k: int) -> None:
        self.host = socket.gethostname()
        self.mark = time.time()
        self.records: list[dict[str, Any] | None] = [None] * k

    def _close(self, i: int, **fields: Any) -> None:
        now = time.time()
        record = {"host": self.host, "started_at": self.mark, **fields, "finished_at": now}
        self.records[i] = record
        self.mark = now

    def ok(self, i: int, result: dict[str, Any]) -> None:
        self._close(i, status="ok", result=result)

    def error(self, indices: Sequence[int], exc: BaseException) -> None:
        """Record ``exc`` (the exception being handled) for the runs ``indices``."""
        text, trace = f"{type(exc).__name__}: {exc}", traceback.format_exc()
        for i in indices:
            self._close(i, status="error", error=text, traceback=trace)

    def open(self) -> list[int]:
        """Return the runs without a record yet."""
        return [i for i, r in enumerate(self.records) if r is None]


def _fit_path(estimators: Sequence[Any], data: Any) -> list[tuple[Any, float]] | None:
    """Fit ``estimators`` (K > 1 strengths) as one path; ``None`` when they cannot share one.

    Returns each strength's fitted estimator (``path.estimators_[k]``) and its fit time:
    the whole path's on the first, 0 on the others (:func:`share_fit_time` spreads it).
    """
    from otfair.estimators import fairness_path

    param = curve_param(estimators[0]) if len(estimators) > 1 else None
    template = path_template(estimators, param) if param is not None else None
    if template is None:
        return None
    assert param is not None  # a template needs the strength parameter
    start = time.perf_counter()
    path = fairness_path(
        template,
        data.split.X_train,
        data.split.y_train,
        strengths=[getattr(est, param) for est in estimators],
        **data.fit_kwargs,
    )
    total = time.perf_counter() - start
    return [(fitted, total if k == 0 else 0.0) for k, fitted in enumerate(path.estimators_)]


def execute_group(
    configs: Sequence[RunConfig], plugins: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """Run the runs ``configs`` (one, or K that differ only in strength); one record each.

    Each run's request is validated (:class:`~otfair_lab.experiments._request.RunRequest`),
    the data prepared once (the runs differ only in strength), the estimators built by
    the registry; K > 1 of them are fitted as one path by
    :func:`otfair.estimators.fairness_path` when :func:`path_template` finds they can
    share it (its ``estimators_[k]`` is evaluated as the k-th run, so a row is what that
    run alone computes from the shared path), else each is fitted on its own, as a
    single run is. Never raises: a failing stage gives an ``error`` record (message and
    formatted traceback) to the runs it concerns. A record's ``result`` has the run's
    own ``fit_time_s`` (the first run of a path carries the path's fit;
    :func:`share_fit_time` spreads it).
    """
    from otfair_lab.experiments._request import RunRequest
    from otfair_lab.experiments._single import (
        build_estimator,
        evaluate,
        fit_estimator,
        prepare_data,
        run_strength,
    )

    out = _Records(len(configs))
    try:
        single_thread()
        import_plugins(plugins)
        requests = {}
        for i, config in enumerate(configs):
            try:
                requests[i] = RunRequest.from_args(**config.run_kwargs())
            except Exception as exc:  # noqa: BLE001 - any failure of a run is recorded
                out.error([i], exc)
        if not requests:
            return out.records  # type: ignore[return-value]
        data = prepare_data(next(iter(requests.values())))  # the same data for every run
        built: dict[int, tuple[Any, float | None]] = {}
        for i, request in requests.items():
            try:
                strength = run_strength(request, data)
                built[i] = (build_estimator(request, data, strength), strength)
            except Exception as exc:  # noqa: BLE001
                out.error([i], exc)
        fitted: dict[int, tuple[Any, float]] = {}
        path = _fit_path([est for est, _ in built.values()], data) if built else None
        if path is not None:
            fitted = dict(zip(built, path, strict=True))
        else:
            for i, (est, _) in built.items():
                try:
                    fitted[i] = (est, fit_estimator(est, data))
                except Exception as exc:  # noqa: BLE001
                    out.error([i], exc)
        for i, (est, fit_time) in fitted.items():
            try:
                result = evaluate(requests[i], data, est, strength=built[i][1], fit_time=fit_time)
            except Exception as exc:  # noqa: BLE001
                out.error([i], exc)
            else:
                out.ok(i, result)
    except Exception as exc:  # noqa: BLE001 - a shared stage failed: every open run
        out.error(out.open(), exc)
    return out.records  # type: ignore[return-value]


def share_fit_time(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Give each successful run of a group of K its share of the group's fit.

    The first run's fit trains all K models and the others reuse them (~0 s), so the
    measured ``fit_time_s`` would put the whole curve on the first strength. Each run
    gets ``sum(fit_time_s) / K`` instead and ``stacked_k`` = K (a run fitted alone: its
    own fit time and ``stacked_k`` = 1); a stacked run (K > 1) also gets
    ``stacked_runs`` = K, the key of stores written before ``stacked_k``, so that a
    report's timing column reads as the cost per strength of the stacked fit.
    """
    k = len(records)
    ok = [r for r in records if r.get("status") == "ok"]
    total = sum(float(r["result"].get("fit_time_s") or 0.0) for r in ok)
    for record in ok:
        result = record["result"]
        if k > 1:
            result["fit_time_s"] = total / k
            result["stacked_runs"] = k
        result["stacked_k"] = k
    return records


def execute_item(item: WorkItem, plugins: Sequence[str] = ()) -> Any:
    """Run a work item: one record for a run, a list of records for a group.

    Both through :func:`execute_group` (a run is a group of one) and
    :func:`share_fit_time`. The warnings of the item are caught, not printed (under the
    active warning filters, each once per place per item; an ``error`` filter still
    raises): every record gets ``warnings``, their distinct lines (:func:`warning_line`),
    which the runner counts, so a sweep prints each once with the number of runs that
    gave it instead of one copy per run and worker.
    """
    with warnings.catch_warnings(record=True) as caught:  # the active filters apply
        records = share_fit_time(execute_group(configs_of(item), plugins))
    said = sorted({warning_line(w) for w in caught})
    if said:
        for record in records:
            record["warnings"] = said
    return records if isinstance(item, tuple) else records[0]


#: The longest warning line a sweep prints (the fixes come last in otfair's messages)
WARNING_LINE_MAX = 800


def warning_line(caught: warnings.WarningMessage) -> str:
    """One line naming a caught warning: ``UserWarning: first line of its message``.

    A line longer than :data:`WARNING_LINE_MAX` ends in an ellipsis, never mid-word
    without a sign.
    """
    text = str(caught.message).strip()
    first = text.splitlines()[0] if text else ""
    line = f"{caught.category.__name__}: {first}"
    return line if len(line) <= WARNING_LINE_MAX else line[: WARNING_LINE_MAX - 1] + "…"


def execute_run(config: RunConfig, plugins: Sequence[str] = ()) -> dict[str, Any]:
    """Run one configuration and return a record for :meth:`ResultStore.write`.

    The executor of every sweep run (``execute_item`` on one run). Never raises for
    a failing run: the record then has ``status="error"``, the error message and the
    formatted traceback.
    """
    record: dict[str, Any] = execute_item(config, plugins)
    return record
