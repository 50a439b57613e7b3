"""Which successful rows a report averages, and the rows it leaves apart (with why).

A report is of one spec: rows of an earlier, edited spec, of another profile, or whose
key is not the key of their configuration would pass for more seeds if averaged; they
are listed apart (:func:`split_current`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from otfair_lab.experiments._grid import identity_key
from otfair_lab.experiments._store import ResultStore, config_key

#: Run fields that a difference between two configurations is not worth naming by.
_UNNAMED_FIELDS = frozenset({"seed", "device"})


def _differences(config: Mapping[str, Any], current: Mapping[str, Any]) -> str:
    """Name the settings of ``config`` that differ from ``current`` (``epochs 3, not 5``)."""
    parts = []
    for name in sorted(set(config) | set(current)):
        if name in _UNNAMED_FIELDS or config.get(name) == current.get(name):
            continue
        parts.append(f"{name} {config.get(name)!r}, not {current.get(name)!r}")
    return "; ".join(parts)[:200]


def split_current(store: ResultStore) -> tuple[set[str], list[dict[str, Any]]]:
    """Return the keys of the successful rows a report averages, and the rows left apart.

    A report is of one spec: the rows of the runs that the last sweep of each spec
    selected (meta ``spec_keys``, :func:`otfair_lab.experiments._claim.claim_store`).
    Rows of an earlier, edited spec (other epochs, options...) or of another profile,
    and rows whose key is not the key of their ``config`` (an edited archive or row),
    are left apart with the reason: averaged with the others they would pass for seeds.
    A store without ``spec_keys`` (written before it was recorded, or only imported)
    keeps, per dataset, method, notion and strength, the configuration of its latest
    run. Each left-apart row is a dict: ``dataset``, ``method``, ``notion``,
    ``strength``, ``seed``, ``why``.
    """
    rows = store.rows("ok")
    spec_keys = store.get_meta("spec_keys", None)
    selected = (
        {k for keys in spec_keys.values() for k in keys} if isinstance(spec_keys, dict) else None
    )

    def point(row: Mapping[str, Any]) -> tuple[Any, ...]:
        return (row["dataset"], row["method"], row["notion"] or "", row["strength"])

    def variant(row: Mapping[str, Any]) -> str:
        return identity_key({k: v for k, v in row["config"].items() if k not in _UNNAMED_FIELDS})

    sound = [r for r in rows if config_key(r["config"]) == r["key"]]
    if selected is not None:
        kept = [r for r in sound if r["key"] in selected]
    else:  # per point, the configuration of the latest run
        latest: dict[tuple[Any, ...], dict[str, Any]] = {}
        for r in sound:
            old = latest.get(point(r))
            if old is None or (r["finished_at"] or 0) > (old["finished_at"] or 0):
                latest[point(r)] = r
        chosen = {p: variant(r) for p, r in latest.items()}
        kept = [r for r in sound if variant(r) == chosen[point(r)]]
    keys = {r["key"] for r in kept}
    current = {point(r): r["config"] for r in kept}
    apart = []
    for r in rows:
        if r["key"] in keys:
            continue
        if config_key(r["config"]) != r["key"]:
            why = "its key is not the key of its configuration (an edited row)"
        elif point(r) in current:
            diff = _differences(r["config"], current[point(r)])
            why = f"another configuration than the reported runs ({diff or 'edited'})"
        else:
            why = "not a run of the last sweep of its spec (an edited spec or another profile)"
        apart.append(
            {
                "dataset": r["dataset"],
                "method": r["method"],
                "notion": r["notion"],
                "strength": r["strength"],
                "seed": r["seed"],
                "why": why,
            }
        )
    return keys, apart
