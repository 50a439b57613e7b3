"""Sweep runs that differ only in strength, fitted as one path (one stacked training run).

``otfair sweep`` groups the pending runs of a sweep that share dataset, method, seed,
notion, epochs, options and audits and differ only in strength, when the method builds
an estimator that fits whole paths in one stacked run
(:func:`otfair.estimators._path.supports_stacking`:
:class:`~otfair.estimators.FairClassifier`, :class:`~otfair.estimators.CENet`,
:class:`~otfair.estimators.WassersteinNet`,
:class:`~otfair.estimators.AdapFairClassifier`). A group is one unit of work for the
backends, run by :func:`execute_group` in one process through the stages of
:mod:`otfair.experiments._single`, explicitly: the data is prepared once, the registry
builds the K single-strength estimators, :func:`path_template` checks that they can
share one path (separate fits when their other parameters differ), and
:func:`otfair.estimators.fairness_path` (the library's one curve implementation) fits it
once; each strength is evaluated as its own run. Every run is still stored as its own
row with its share of the stacked fit (``fit_time_s`` = the group's fit time / K) and
``stacked_k`` = K (1 for a run fitted alone), and resuming works at run granularity:
only the pending strengths of a group are grouped and fitted. ``--no-stack``
(``run_sweep(stack=False)``) keeps one fit per run.
"""

from __future__ import annotations

import numbers
import socket
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from otfair.experiments._spec import RunConfig, import_plugins

#: a unit of work: one run, or the runs of a stacked group
WorkItem = RunConfig | tuple[RunConfig, ...]


def curve_param(estimator: Any) -> str | None:
    """Return the strength parameter of an estimator that fits stacked paths, else None.

    ``strength`` of :class:`~otfair.estimators.FairClassifier`; ``lam`` of
    :class:`~otfair.estimators.CENet`, :class:`~otfair.estimators.WassersteinNet` and
    :class:`~otfair.estimators.AdapFairClassifier`.
    """
    from otfair.estimators._path import strength_param, supports_stacking

    if estimator is None or not supports_stacking(estimator):
        return None
    try:
        return strength_param(estimator)
    except ValueError:
        return None


def path_template(estimators: Sequence[Any], param: str) -> Any | None:
    """Return the estimator whose path fits the single-strength ``estimators`` at once.

    The registry builds the runs of a group that differ only in strength one by one (it
    may map a strength to another value); they share one path when they are all of one
    class, with an integer ``random_state`` (separate fits with another seed would not
    share the initialization), a real, distinct ``param`` each, and every other
    parameter equal (``get_params()``, compared by ``repr``). Returns ``estimators[0]``
    then (the path's template), else ``None`` (each is fitted on its own).
    """
    if not estimators or len({type(est) for est in estimators}) != 1:
        return None
    values = [getattr(est, param, None) for est in estimators]
    if not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in values):
        return None
    if len(set(values)) != len(values):
        return None
    seed = estimators[0].get_params().get("random_state")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        return None
    others = [
        repr(sorted((k, v) for k, v in est.get_params().items() if k != param))
        for est in estimators
    ]
    if any(other != others[0] for other in others[1:]):
        return None
    return estimators[0]


def _stackable(config: RunConfig, cache: dict[tuple[str, str], tuple[bool, bool]]) -> bool:
    """Whether ``config``'s method builds an estimator that fits curves (stacked).

    ``cache`` holds, per method and options, (fits curves, takes domains).
    """
    if config.strength is None:
        return False
    key = (config.method, repr(sorted(config.method_options.items())))
    if key not in cache:
        from otfair.experiments.methods import get_method

        try:
            est = get_method(config.method).build(
                config.strength,
                notion=config.notion,
                random_state=config.seed,
                epochs=config.epochs,
                dataset=config.dataset,
                **dict(config.method_options),
            )
        except Exception:  # noqa: BLE001 - the run itself will report the error
            est = None
        curves = curve_param(est) is not None
        cache[key] = (curves, get_method(config.method).takes_domains)
    curves, takes_domains = cache[key]
    # a domain pair's runs fit on two domains: only a method that takes them (AdapFair)
    return curves and (config.source_domain is None or takes_domains)


def stack_groups(configs: Sequence[RunConfig]) -> list[WorkItem]:
    """Group runs that differ only in strength (stackable methods); keep the order.

    A group takes the position of its first run; runs that cannot be stacked, and
    groups of one, stay single runs.
    """
    cache: dict[tuple[str, str], tuple[bool, bool]] = {}
    groups: dict[str, list[RunConfig]] = {}
    order: list[str | RunConfig] = []
    for config in configs:
        if not _stackable(config, cache):
            order.append(config)
            continue
        key = replace(config, strength=None, dataset_label="", method_label="").key()
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(config)
    out: list[WorkItem] = []
    for entry in order:
        if isinstance(entry, RunConfig):
            out.append(entry)
        else:
            group = groups[entry]
            out.append(group[0] if len(group) == 1 else tuple(group))
    return out


def configs_of(item: WorkItem) -> tuple[RunConfig, ...]:
    """Return the runs of a work item."""
    return item if isinstance(item, tuple) else (item,)


def execute_item(item: WorkItem, plugins: Sequence[str] = ()) -> Any:
    """Run a work item: one record for a run, a list of records for a group."""
    from otfair.experiments._execute import execute_run

    if not isinstance(item, tuple):
        record = execute_run(item, plugins)
        if record.get("status") == "ok":
            record["result"]["stacked_k"] = 1
        return record
    return share_fit_time(execute_group(item, plugins))


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


def execute_group(
    configs: Sequence[RunConfig], plugins: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """Run a stacked group explicitly: one data preparation, one curve fit, K evaluations.

    Each run's request is validated (:class:`~otfair.experiments._request.RunRequest`),
    the data prepared once (the runs differ only in strength), the K estimators built by
    the registry, and :func:`otfair.estimators.fairness_path` fits them as one path
    (when :func:`path_template` finds they can share it); its ``estimators_[k]`` is
    evaluated as the k-th run (so a row is what that run alone computes from the shared
    path). When the built estimators cannot share a curve, each
    is fitted on its own. Never raises: a failing stage gives an ``error`` record to the
    runs it concerns, as :func:`otfair.experiments._execute.execute_run` does for one run.
    The first fitted run carries the fit time (:func:`share_fit_time` spreads it).
    """
    from otfair.estimators import fairness_path
    from otfair.experiments._execute import single_thread
    from otfair.experiments._request import RunRequest
    from otfair.experiments._single import (
        build_estimator,
        evaluate,
        fit_estimator,
        prepare_data,
        run_strength,
    )

    out = _Records(len(configs))
    live = list(range(len(configs)))
    try:
        single_thread()
        import_plugins(plugins)
        requests = {}
        for i in live:
            try:
                requests[i] = RunRequest.from_args(**configs[i].run_kwargs())
            except Exception as exc:  # noqa: BLE001 - any failure of a run is recorded
                out.error([i], exc)
        live = list(requests)
        if not live:
            return out.records  # type: ignore[return-value]
        data = prepare_data(requests[live[0]])  # the same data for every run of the group
        built: dict[int, tuple[Any, float | None]] = {}
        for i in live:
            try:
                strength = run_strength(requests[i], data)
                built[i] = (build_estimator(requests[i], data, strength), strength)
            except Exception as exc:  # noqa: BLE001
                out.error([i], exc)
        live = list(built)
        estimators = [built[i][0] for i in live]
        param = curve_param(estimators[0]) if len(live) > 1 else None
        template = path_template(estimators, param) if param is not None else None
        fit_times: dict[int, float] = {}
        if template is not None:
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
            for k, i in enumerate(live):
                built[i] = (path.estimators_[k], built[i][1])
                fit_times[i] = total if k == 0 else 0.0
        else:
            for i in live:
                try:
                    fit_times[i] = fit_estimator(built[i][0], data)
                except Exception as exc:  # noqa: BLE001
                    out.error([i], exc)
        for i in fit_times:
            try:
                est, strength = built[i]
                result = evaluate(requests[i], data, est, strength=strength, fit_time=fit_times[i])
            except Exception as exc:  # noqa: BLE001
                out.error([i], exc)
            else:
                out.ok(i, result)
    except Exception as exc:  # noqa: BLE001 - a shared stage failed: every open run
        out.error([i for i, r in enumerate(out.records) if r is None], exc)
    return out.records  # type: ignore[return-value]


def share_fit_time(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Give each successful run of a stacked group its share of the group's fit.

    The first run's fit trains all K models and the others reuse them (~0 s), so the
    measured ``fit_time_s`` would put the whole curve on the first strength. Each run
    gets ``sum(fit_time_s) / K`` instead (K = the group's size, ``stacked_k``; also
    ``stacked_runs`` for stores written before ``stacked_k``), so that a report's
    timing column reads as the cost per strength of the stacked fit.
    """
    k = len(records)
    ok = [r for r in records if r.get("status") == "ok"]
    total = sum(float(r["result"].get("fit_time_s") or 0.0) for r in ok)
    for record in ok:
        result = record["result"]
        result["fit_time_s"] = total / k
        result["stacked_k"] = k
        result["stacked_runs"] = k
    return records


def item_records(
    get: Callable[[], Any], item: WorkItem, future_record: Callable[..., dict[str, Any]]
) -> list[dict[str, Any]]:
    """Return the records of a finished work item, one per run.

    A worker that died gives one error record per run of the item.
    """
    record = future_record(get)
    if isinstance(record, list):
        return record
    return [dict(record) for _ in configs_of(item)]
