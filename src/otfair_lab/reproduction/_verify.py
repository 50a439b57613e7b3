"""Re-run archived runs with today's code and compare their metrics with the archive.

``otfair reproduce PAPER --verify N --runs DIR`` (:func:`verify_archive`): N runs of the
archive, stratified over (method, dataset) and oldest first within each stratum (the
strata in the order of their oldest run), are re-run from their archived configuration
(the run key is the configuration's hash, so the same configuration is re-run). A run
that was fitted in a stacked group (``stacked_k`` > 1: the K strengths of one dataset,
method and seed fitted as one curve) is re-run with its whole group, as the sweep ran
it, and every run of the group is compared.

Each compared metric's difference ``|new - archived|`` is judged against a tolerance:
:data:`DEFAULT_TOLERANCE` (float rounding of a deterministic fit on another CPU or BLAS),
or, for a run the paper folder's ``unstable.csv`` lists (training that is itself
unstable, e.g. CENet's adversarial game at a large lambda), the spread measured there
for that method, dataset and strength (the range of the same run over torch thread
counts and seeds), whichever is larger. A difference above its tolerance is a run that
does not reproduce at today's code.

A training whose single runs do not travel between machines (CENet's adversarial game:
another CPU moves a seed's R^2 by as much as the whole seed range) is verified at the
level it supports: an ``unstable.csv`` row whose ``level`` is ``mean`` makes every seed
of that (method, dataset, strength) re-run with its stacked group, and its seed mean
compared (:mod:`otfair_lab.reproduction._verify_means`): ``|mean_new - mean_archived|``
within ``MEAN_SE_FACTOR`` standard errors of the difference of the two means (from
the seeds' spread on each side). Each run's own move is still stated (the per-run
spread), not judged.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

#: Absolute tolerance of a re-run metric (a deterministic fit on another CPU / BLAS).
DEFAULT_TOLERANCE = 1e-3

#: The metrics compared (those the reports use), when the archived run has them.
VERIFIED_METRICS: tuple[str, ...] = (
    "accuracy",
    "auc",
    "r2",
    "mse",
    "dp_gap",
    "tpr_gap",
    "eo_gap",
    "error_gap",
    "wdp",
    "mean_score_gap",
    "pdp_violation",
    "peo_violation",
)

#: The file beside a paper's ``runs/`` archive that lists unstable runs and their spread.
UNSTABLE_FILE = "unstable.csv"

#: Columns of ``unstable.csv`` (and the optional ``level``: ``run``, the default, or
#: ``mean``: verified by its seed mean, :mod:`._verify_means`).
UNSTABLE_COLUMNS = ("method", "dataset", "strength", "metric", "spread", "measured")


@dataclass(frozen=True)
class Difference:
    """One re-run metric against its archived value."""

    key: str
    method: str
    dataset: str
    strength: float | None
    seed: int
    revision: str
    metric: str
    archived: float
    new: float
    tolerance: float
    unstable: bool
    #: verified by the seed mean of its (method, dataset, strength), not on its own
    mean_level: bool = False

    @property
    def diff(self) -> float:
        """``new - archived``."""
        return self.new - self.archived

    @property
    def within(self) -> bool:
        """Whether ``|new - archived| <= tolerance`` (NaN on both sides is equal)."""
        if math.isnan(self.archived) and math.isnan(self.new):
            return True
        return abs(self.diff) <= self.tolerance + 1e-12


def _finished(row: Mapping[str, Any]) -> float:
    value = row.get("finished_at")
    return float(value) if value is not None else math.inf


def select_runs(
    rows: Sequence[Mapping[str, Any]],
    n: int,
    *,
    keep: Callable[[Mapping[str, Any]], bool] | None = None,
) -> list[Mapping[str, Any]]:
    """Pick ``n`` archived runs, stratified over (method, dataset), oldest first.

    Within a stratum the runs are ordered by ``finished_at`` (the oldest revision's runs
    first); the strata are visited in the order of their oldest run, one run each per
    round, until ``n`` runs are picked. ``keep`` filters the candidates first.
    """
    if n < 0:
        raise ValueError(f"`n` must be >= 0; got {n}.")
    strata: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for row in rows:
        if keep is None or keep(row):
            stratum = (str(row.get("method")), str(row.get("dataset")))
            strata.setdefault(stratum, []).append(row)
    queues = sorted(
        (sorted(runs, key=lambda r: (_finished(r), r["key"])) for runs in strata.values()),
        key=lambda runs: (_finished(runs[0]), runs[0]["key"]),
    )
    picked: list[Mapping[str, Any]] = []
    depth = 0
    while len(picked) < n and any(depth < len(q) for q in queues):
        for queue in queues:
            if depth < len(queue) and len(picked) < n:
                picked.append(queue[depth])
        depth += 1
    return picked


def run_config(row: Mapping[str, Any]) -> Any:
    """Return the :class:`~otfair_lab.experiments.RunConfig` of an archived run (key checked)."""
    from otfair_lab.experiments._spec import RunConfig

    fields = dict(row["config"])
    if "audits" in fields:
        fields["audits"] = tuple(fields["audits"] or ())
    config = RunConfig(**fields)
    if config.key() != row["key"]:
        raise ValueError(
            f"archived run {row['key']}: its configuration hashes to {config.key()} "
            "(a RunConfig field changed since it was archived)."
        )
    return config


def _group_key(config: Any) -> str:
    from dataclasses import replace

    return replace(config, strength=None).key()


def work_items(
    picked: Sequence[Mapping[str, Any]], rows: Sequence[Mapping[str, Any]]
) -> list[tuple[Mapping[str, Any], ...]]:
    """Return the runs to re-run for ``picked``: each with its stacked group, as fitted.

    The group of a run archived with ``stacked_k`` = K > 1 is the archived runs with the
    same configuration but the strength and the same K (ordered by strength, the
    configs' grids' order); a group is listed once.
    """
    by_group: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        k = (row.get("metrics") or {}).get("stacked_k")
        if k is not None and int(k) > 1:
            by_group.setdefault(_group_key(run_config(row)), []).append(row)
    items: list[tuple[Mapping[str, Any], ...]] = []
    seen: set[str] = set()
    for row in picked:
        if row["key"] in seen:
            continue
        k = (row.get("metrics") or {}).get("stacked_k")
        group = [row]
        if k is not None and int(k) > 1:
            mates = by_group.get(_group_key(run_config(row)), [row])
            same_k = [r for r in mates if (r.get("metrics") or {}).get("stacked_k") == k]
            group = sorted(same_k, key=lambda r: float(r.get("strength") or 0.0))
        seen.update(r["key"] for r in group)
        items.append(tuple(group))
    return items


def rerun(item: Sequence[Mapping[str, Any]], *, threads: int | None = None) -> list[dict]:
    """Re-run one work item with today's code; return each run's metrics (or raise).

    ``threads`` sets torch's thread count for the fit (the sweep uses one thread per
    run; another count changes the order of floating-point sums).
    """
    import otfair_lab.experiments._execute as execute
    from otfair_lab.experiments._execute import execute_item

    configs = tuple(run_config(r) for r in item)
    work = configs[0] if len(configs) == 1 else configs
    original = execute.single_thread
    if threads is not None:

        def _threads() -> None:
            original()
            import torch

            torch.set_num_threads(threads)

        execute.single_thread = _threads
    try:
        records = execute_item(work)
    finally:
        execute.single_thread = original
    records = records if isinstance(records, list) else [records]
    out = []
    for row, record in zip(item, records, strict=True):
        if record.get("status") != "ok":
            raise RuntimeError(f"re-run of {row['key']} failed: {record.get('error')}")
        out.append(record["result"])
    return out


def read_unstable(path: str | Path) -> pd.DataFrame:
    """Read an ``unstable.csv`` (empty table when the file does not exist)."""
    path = Path(path)
    if not path.is_file():
        return pd.DataFrame(columns=list(UNSTABLE_COLUMNS))
    table = pd.read_csv(path)
    missing = set(UNSTABLE_COLUMNS) - set(table.columns)
    if missing:
        raise ValueError(f"{path}: missing columns {sorted(missing)}.")
    return table


def tolerance_for(
    unstable: pd.DataFrame, method: str, dataset: str, strength: float | None, metric: str
) -> tuple[float, bool]:
    """Return the tolerance of one metric of one run: the listed spread or the default.

    Returns ``(tolerance, unstable)``; an ``unstable.csv`` row matches the method, the
    dataset, the strength (blank: every strength) and the metric (blank: every metric).
    """
    if unstable.empty:
        return DEFAULT_TOLERANCE, False
    hit = _matching(unstable, method, dataset, strength)
    if not hit.empty:
        hit = hit[hit["metric"].isna() | (hit["metric"] == metric)]
    if hit.empty:
        return DEFAULT_TOLERANCE, False
    return max(DEFAULT_TOLERANCE, float(hit["spread"].max())), True


def _matching(
    unstable: pd.DataFrame, method: str, dataset: str, strength: float | None
) -> pd.DataFrame:
    hit = unstable[(unstable["method"] == method) & (unstable["dataset"] == dataset)]
    if strength is not None and not hit.empty:
        s = pd.to_numeric(hit["strength"], errors="coerce")
        hit = hit[s.isna() | ((s - float(strength)).abs() <= 1e-9 * max(1.0, abs(strength)))]
    return hit


def is_mean_level(
    unstable: pd.DataFrame, method: str, dataset: str, strength: float | None
) -> bool:
    """Whether ``unstable.csv`` says to verify this run by its seed mean (``level=mean``)."""
    if unstable.empty or "level" not in unstable.columns:
        return False
    hit = _matching(unstable, method, dataset, strength)
    return bool((hit["level"].astype(str).str.strip() == "mean").any())


def compare_run(
    row: Mapping[str, Any], new: Mapping[str, Any], unstable: pd.DataFrame
) -> list[Difference]:
    """Return the :class:`Difference` of each :data:`VERIFIED_METRICS` the run has."""
    old = row.get("metrics") or {}
    strength = row.get("strength")
    mean_level = is_mean_level(
        unstable, str(row["method"]), str(row["dataset"]), None if strength is None else strength
    )
    out = []
    for metric in VERIFIED_METRICS:
        if not isinstance(old.get(metric), (int, float)):
            continue
        tol, flag = tolerance_for(
            unstable, str(row["method"]), str(row["dataset"]), strength, metric
        )
        value = new.get(metric)
        out.append(
            Difference(
                key=str(row["key"]),
                method=str(row["method"]),
                dataset=str(row["dataset"]),
                strength=None if strength is None else float(strength),
                seed=int(row["seed"]),
                revision=str(row.get("git_revision") or "?"),
                metric=metric,
                archived=float(old[metric]),
                new=float(value) if isinstance(value, (int, float)) else math.nan,
                tolerance=tol,
                unstable=flag,
                mean_level=mean_level,
            )
        )
    return out


def group_seconds(rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Return each run's archived cost to re-run: its stacked group's summed wall time."""
    items = work_items(rows, rows)
    out: dict[str, float] = {}
    for item in items:
        total = sum(float(r.get("wall_time_s") or 0.0) for r in item)
        out.update((r["key"], total) for r in item)
    return out


def verify_archive(
    runs: str | Path,
    n: int,
    *,
    unstable: str | Path | None = None,
    keep: Callable[[Mapping[str, Any]], bool] | None = None,
    max_seconds: float | None = None,
    on_item: Callable[[Sequence[Difference]], None] | None = None,
    on_plan: Callable[[Sequence[Sequence[Mapping[str, Any]]]], None] | None = None,
    on_start: Callable[[int, Sequence[Mapping[str, Any]]], None] | None = None,
) -> list[Difference]:
    """Re-run ``n`` runs of the archive ``runs`` (with their stacked groups); compare them.

    Parameters
    ----------
    runs : str or Path
        An archive folder (``seed-N.jsonl``), e.g. ``docs/reproduction/PAPER/runs``.
    n : int
        How many runs to pick (:func:`select_runs`); their groups' runs are re-run and
        compared too.
    unstable : str or Path, optional
        The ``unstable.csv`` to read the spreads from (default: beside ``runs``).
    keep : callable, optional
        A filter of the archived runs (e.g. one method).
    max_seconds : float, optional
        Pick only runs whose group took at most this long when archived
        (:func:`group_seconds`): a quick sample.
    on_item : callable, optional
        Called with each work item's differences as it finishes.
    on_plan : callable, optional
        Called once with the work items (each a tuple of archived rows, a stacked group
        whole) before the first re-run: their archived ``wall_time_s`` is the estimate.
    on_start : callable, optional
        Called with the index and the rows of each work item as it starts.

    A picked run whose (method, dataset, strength) ``unstable.csv`` marks ``level =
    mean`` brings every archived seed of it (:mod:`._verify_means` judges their mean).

    Returns
    -------
    list of Difference
    """
    from otfair_lab.experiments._archive import read_archive

    rows = read_archive(runs)
    if not rows:
        raise FileNotFoundError(f"no archived run in {runs} (seed-N.jsonl files).")
    table = read_unstable(unstable if unstable is not None else Path(runs).parent / UNSTABLE_FILE)
    if max_seconds is not None:
        cost = group_seconds(rows)
        first = keep
        keep = lambda r: cost[r["key"]] <= max_seconds and (first is None or first(r))  # noqa: E731
    picked = select_runs(rows, n, keep=keep)
    grouped = [r for item in work_items(picked, rows) for r in item]  # stacked mates too
    items = work_items(picked + _seeds_of_means(grouped, rows, table), rows)
    if on_plan is not None:
        on_plan(items)
    out: list[Difference] = []
    for index, item in enumerate(items):
        if on_start is not None:
            on_start(index, item)
        news = rerun(item)
        diffs = [d for r, new in zip(item, news, strict=True) for d in compare_run(r, new, table)]
        if on_item is not None:
            on_item(diffs)
        out.extend(diffs)
    return out


def _seeds_of_means(
    picked: Sequence[Mapping[str, Any]],
    rows: Sequence[Mapping[str, Any]],
    table: pd.DataFrame,
) -> list[Mapping[str, Any]]:
    """Return the other archived seeds of each picked mean-level (method, dataset, strength)."""
    wanted = {
        (str(r["method"]), str(r["dataset"]), r.get("strength"))
        for r in picked
        if is_mean_level(table, str(r["method"]), str(r["dataset"]), r.get("strength"))
    }
    chosen = {r["key"] for r in picked}
    return [
        r
        for r in sorted(rows, key=lambda r: (int(r.get("seed") or 0), r["key"]))
        if (str(r["method"]), str(r["dataset"]), r.get("strength")) in wanted
        and r["key"] not in chosen
    ]


def format_differences(diffs: Iterable[Difference]) -> list[str]:
    """One line per run: its largest difference relative to its tolerance, and the verdict."""
    by_run: dict[str, list[Difference]] = {}
    for d in diffs:
        by_run.setdefault(d.key, []).append(d)
    lines = []
    for group in by_run.values():
        worst = max(group, key=lambda d: abs(d.diff) / d.tolerance if d.tolerance else 0.0)
        ok = all(d.within for d in group)
        strength = "-" if worst.strength is None else f"{worst.strength:g}"
        tol = f"{worst.tolerance:.4g}" + (" (unstable: measured spread)" if worst.unstable else "")
        verdict = "ok " if ok else "OUT"
        if worst.mean_level:  # stated; the seed mean is judged (format_means)
            verdict, tol = "run", f"{tol}; judged by the seed mean"
        lines.append(
            f"{verdict} {worst.method} on {worst.dataset}, strength {strength}, "
            f"seed {worst.seed} (archived at {worst.revision}): {worst.metric} "
            f"{worst.archived:.4f} -> {worst.new:.4f} ({worst.diff:+.2e}; tolerance {tol})"
        )
    return lines
