"""Sweep runs that differ only in strength, fitted as one stacked training run (issue 17).

``otfair sweep`` groups the pending runs of a sweep that share dataset, method, seed,
notion, epochs, options and audits and differ only in strength, when the method builds an
estimator that fits whole curves (:class:`otfair.estimators.FairClassifier`,
:class:`~otfair.estimators.CENet`, :class:`~otfair.estimators.WassersteinNet`). A group
is one unit of work for the backends: its runs execute one after the other in one
process inside :func:`otfair.estimators._curve.shared_curve`, so the first run's fit
trains the group's models together and the others reuse them. Every run is still
stored as its own row with its share of the stacked fit (``fit_time_s`` = the group's
fit time / K) and ``stacked_k`` = K (1 for a run fitted alone), and resuming works at
run granularity: only the pending strengths of a group are grouped and fitted.
``--no-stack`` (``run_sweep(stack=False)``) keeps one fit per run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from otfair.experiments._spec import RunConfig

#: a unit of work: one run, or the runs of a stacked group
WorkItem = RunConfig | tuple[RunConfig, ...]


def _stackable(config: RunConfig, cache: dict[tuple[str, str], tuple[bool, bool]]) -> bool:
    """Whether ``config``'s method builds an estimator that fits curves (stacked).

    ``cache`` holds, per method and options, (fits curves, takes domains).
    """
    if config.strength is None:
        return False
    key = (config.method, repr(sorted(config.method_options.items())))
    if key not in cache:
        from otfair.estimators import AdapFairClassifier, CENet, FairClassifier, WassersteinNet
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
        curves = isinstance(est, (FairClassifier, CENet, WassersteinNet, AdapFairClassifier))
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
    from otfair.experiments._runner import execute_run

    if not isinstance(item, tuple):
        record = execute_run(item, plugins)
        if record.get("status") == "ok":
            record["result"]["stacked_k"] = 1
        return record
    from otfair.estimators._curve import shared_curve

    with shared_curve([c.strength for c in item]):
        records = [execute_run(c, plugins) for c in item]
    return share_fit_time(records)


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
