"""The mean-level judgement of ``--verify``: a seed mean, archived vs re-run, within its SE.

A training whose single runs do not travel between machines is verified by the seed mean
of each (method, dataset, strength) that ``unstable.csv`` marks ``level=mean``
(:func:`otfair_lab.reproduction._verify.is_mean_level`): ``|mean_new - mean_archived|``
within :data:`MEAN_SE_FACTOR` standard errors of the difference of the two means.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from otfair_lab.reproduction._verify import DEFAULT_TOLERANCE, Difference

#: Standard errors of the difference of two seed means within which a mean-level
#: (method, dataset, strength) reproduces (3: a 0.3 % false alarm per metric when
#: nothing changed, under normal seed noise).
MEAN_SE_FACTOR = 3.0


@dataclass(frozen=True)
class MeanDifference:
    """The seed mean of one metric of one (method, dataset, strength), archived vs new.

    ``se`` is the standard error of the difference of the two means,
    ``sqrt(var_archived / n + var_new / n)`` (sample variances over the seeds); the
    tolerance is :data:`MEAN_SE_FACTOR` of it (at least :data:`DEFAULT_TOLERANCE`).
    ``spread`` is the largest single run's move ``|new - archived|`` (stated, not judged).
    """

    method: str
    dataset: str
    strength: float | None
    metric: str
    seeds: int
    archived: float
    new: float
    se: float
    spread: float

    @property
    def diff(self) -> float:
        """``new - archived`` (of the means)."""
        return self.new - self.archived

    @property
    def tolerance(self) -> float:
        """``MEAN_SE_FACTOR * se``, at least :data:`DEFAULT_TOLERANCE`."""
        return max(DEFAULT_TOLERANCE, MEAN_SE_FACTOR * self.se)

    @property
    def within(self) -> bool:
        """Whether the means differ by at most the tolerance (NaN means: not within)."""
        if math.isnan(self.diff):
            return math.isnan(self.archived) and math.isnan(self.new)
        return abs(self.diff) <= self.tolerance + 1e-12


def compare_means(diffs: Iterable[Difference]) -> list[MeanDifference]:
    """Return the :class:`MeanDifference` of every mean-level (method, dataset, strength, metric).

    Built from the runs' :class:`Difference` marked ``mean_level`` (one per seed); a group
    of fewer than two seeds has no standard error and keeps its runs' own verdicts.
    """
    groups: dict[tuple[Any, ...], list[Difference]] = {}
    for d in diffs:
        if d.mean_level:
            groups.setdefault((d.method, d.dataset, d.strength, d.metric), []).append(d)
    out = []
    for (method, dataset, strength, metric), group in groups.items():
        by_seed = {d.seed: d for d in group}  # a run re-run twice counts once
        old = pd.Series([d.archived for d in by_seed.values()], dtype=float)
        new = pd.Series([d.new for d in by_seed.values()], dtype=float)
        n = len(by_seed)
        if n < 2:
            continue
        se = math.sqrt(float(old.var(ddof=1)) / n + float(new.var(ddof=1)) / n)
        out.append(
            MeanDifference(
                method=method,
                dataset=dataset,
                strength=strength,
                metric=metric,
                seeds=n,
                archived=float(old.mean()),
                new=float(new.mean()),
                se=se,
                spread=float((new - old).abs().max()),
            )
        )
    return out


def judged_outside(diffs: Sequence[Difference]) -> tuple[set[str], list[MeanDifference]]:
    """Return the runs outside their own tolerance and the means outside theirs.

    A mean-level run is judged by its mean (:func:`compare_means`); when its group has a
    single seed it falls back to its own tolerance.
    """
    means = compare_means(diffs)
    by_mean = {(m.method, m.dataset, m.strength, m.metric) for m in means}
    runs = {
        d.key
        for d in diffs
        if not d.within
        and not (d.mean_level and (d.method, d.dataset, d.strength, d.metric) in by_mean)
    }
    return runs, [m for m in means if not m.within]


def format_means(means: Iterable[MeanDifference]) -> list[str]:
    """One line per mean-level (method, dataset, strength, metric): the verdict of the mean."""
    lines = []
    for m in means:
        strength = "-" if m.strength is None else f"{m.strength:g}"
        lines.append(
            f"{'ok ' if m.within else 'OUT'} {m.method} on {m.dataset}, strength {strength}, "
            f"mean of {m.seeds} seeds: {m.metric} {m.archived:.4f} -> {m.new:.4f} "
            f"({m.diff:+.2e}; tolerance {MEAN_SE_FACTOR:g} SE = {m.tolerance:.4g}); "
            f"per-run spread {m.spread:.4g}"
        )
    return lines
