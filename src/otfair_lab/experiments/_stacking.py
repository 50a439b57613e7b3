"""Sweep runs that differ only in strength, fitted as one path (one stacked training run).

``otfair sweep`` groups the pending runs of a sweep that share dataset, method, seed,
notion, epochs, options and audits and differ only in strength, when the method builds
an estimator that fits whole paths in one stacked run
(:func:`otfair.estimators.supports_stacking`:
:class:`~otfair.estimators.FairClassifier`, :class:`~otfair.estimators.CENet`,
:class:`~otfair.estimators.WassersteinNet`,
:class:`~otfair.estimators.AdapFairClassifier`). A group is one unit of work for the
backends, run in one process by the run executor
(:func:`otfair_lab.experiments._execute.execute_group`, which runs a single run as a group
of one) through the stages of :mod:`otfair_lab.experiments._single`: the data is prepared
once, the registry
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
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from otfair_lab.experiments._spec import RunConfig

#: a unit of work: one run, or the runs of a stacked group
WorkItem = RunConfig | tuple[RunConfig, ...]


def curve_param(estimator: Any) -> str | None:
    """Return the strength parameter of an estimator that fits stacked paths, else None.

    ``strength`` of :class:`~otfair.estimators.FairClassifier`,
    :class:`~otfair.estimators.CENet`, :class:`~otfair.estimators.WassersteinNet` and
    :class:`~otfair.estimators.AdapFairClassifier`.
    """
    from otfair.estimators import strength_param, supports_stacking

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
        from otfair_lab.experiments.methods import get_method

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
