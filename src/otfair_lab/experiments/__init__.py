"""Experiments: single runs, resumable sweeps, a SQLite result store and trade-off reports.

A *run* fits one registered method (``otfair_lab.experiments.methods``) on one seeded split
of one dataset and audits it on the test split (:func:`run_single`). A *sweep* is the
grid datasets x methods x strengths x notions x seeds described by a TOML spec
(:func:`load_spec`); :func:`run_sweep` executes it on local worker processes or a Dask
cluster, and the parent process writes each finished run to a SQLite
:class:`ResultStore` in its own transaction, so a sweep never loses finished work and a
rerun skips it. :func:`make_report` turns the stored rows into trade-off plots and
tables, :func:`load_archive` reads a committed runs archive (``seed-N.jsonl``) as a
table and :func:`export_runs` writes a store's finished runs into one (archives merge);
:func:`fairness_tradeoff` fits a whole trade-off curve (one stacked run for a
:class:`~otfair.estimators.FairClassifier`) and returns its front as a table and a plot.
Nothing in the library imports this package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: Public name -> the submodule defining it. Imported on first access (PEP 562), so that
#: ``otfair_lab.experiments._spec`` or ``.methods`` can be used (e.g. by the CLI checking a
#: user's names) without importing torch or scikit-learn.
_EXPORTS = {
    "export_runs": "_archive",
    "load_archive": "_archive",
    "StoreConflictError": "_claim",
    "demo_spec": "_demo",
    "packaged_config": "_demo",
    "make_report": "_report",
    "pareto_front": "_report",
    "SweepInterrupted": "_runner",
    "SweepSummary": "_runner",
    "execute_run": "_runner",
    "run_sweep": "_runner",
    "run_single": "_single",
    "ConfigError": "_spec",
    "RunConfig": "_spec",
    "SweepSpec": "_spec",
    "load_spec": "_spec",
    "parse_spec": "_spec",
    "STORE_FILENAME": "_store",
    "ResultStore": "_store",
    "open_store": "_store",
    "fairness_tradeoff": "tradeoff",
}

if TYPE_CHECKING:
    from otfair_lab.experiments._archive import export_runs, load_archive
    from otfair_lab.experiments._claim import StoreConflictError
    from otfair_lab.experiments._demo import demo_spec, packaged_config
    from otfair_lab.experiments._report import make_report, pareto_front
    from otfair_lab.experiments._runner import (
        SweepInterrupted,
        SweepSummary,
        execute_run,
        run_sweep,
    )
    from otfair_lab.experiments._single import run_single
    from otfair_lab.experiments._spec import (
        ConfigError,
        RunConfig,
        SweepSpec,
        load_spec,
        parse_spec,
    )
    from otfair_lab.experiments._store import STORE_FILENAME, ResultStore, open_store
    from otfair_lab.experiments.tradeoff import fairness_tradeoff


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


__all__ = [
    "STORE_FILENAME",
    "ConfigError",
    "ResultStore",
    "RunConfig",
    "SweepInterrupted",
    "StoreConflictError",
    "SweepSpec",
    "SweepSummary",
    "demo_spec",
    "execute_run",
    "export_runs",
    "fairness_tradeoff",
    "load_archive",
    "load_spec",
    "make_report",
    "open_store",
    "packaged_config",
    "parse_spec",
    "pareto_front",
    "run_single",
    "run_sweep",
]
