"""``--verify`` at the level a method supports (issue 48, item 8).

A (method, dataset, strength) that ``unstable.csv`` marks ``level = mean`` (CENet's
adversarial game: a single run does not travel between CPUs) is verified by its seed
mean: every archived seed is re-run and ``|mean_new - mean_archived|`` must lie within
``MEAN_SE_FACTOR`` standard errors of the difference of the means; each run's move is
stated, not judged. The re-runs are replaced by a stand-in here (no training); the
statistics are checked against numpy's.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import otfair_lab.reproduction._verify as verify
from otfair_lab.reproduction._verify import (
    DEFAULT_TOLERANCE,
    Difference,
    is_mean_level,
    read_unstable,
    verify_archive,
)
from otfair_lab.reproduction._verify_means import MEAN_SE_FACTOR, compare_means, judged_outside

ARCHIVED = np.array([0.40, 0.37, 0.42, 0.35, 0.39, 0.41, 0.36, 0.38, 0.43, 0.34])


def _diffs(new: np.ndarray, *, mean_level: bool = True) -> list[Difference]:
    return [
        Difference(
            f"k{seed}", "cenet", "adult", 50.0, seed, "r", "r2", a, n, 0.0987, True, mean_level
        )
        for seed, (a, n) in enumerate(zip(ARCHIVED, new, strict=True))
    ]


def test_the_seed_mean_is_judged_within_its_standard_error():
    new = ARCHIVED[::-1] + 0.001  # each seed lands elsewhere, from the same distribution
    (mean,) = compare_means(_diffs(new))
    se = math.sqrt(ARCHIVED.var(ddof=1) / 10 + new.var(ddof=1) / 10)
    assert mean.seeds == 10 and mean.se == pytest.approx(se)
    assert mean.archived == pytest.approx(ARCHIVED.mean()) and mean.new == pytest.approx(
        new.mean()
    )
    assert mean.tolerance == pytest.approx(max(DEFAULT_TOLERANCE, MEAN_SE_FACTOR * se))
    assert mean.spread == pytest.approx(np.abs(new - ARCHIVED).max())  # stated, not judged
    assert mean.spread > 0.05 > mean.tolerance and mean.within  # runs moved, the mean not
    runs_out, means_out = judged_outside(_diffs(new))
    assert runs_out == set() and means_out == []
    shifted = ARCHIVED + 4 * se  # every seed higher: the mean moved by 4 SE
    (moved,) = compare_means(_diffs(shifted))
    assert not moved.within
    assert judged_outside(_diffs(shifted))[1] == [moved]


def test_a_run_level_entry_keeps_its_own_verdict():
    far = ARCHIVED + 0.2
    assert compare_means(_diffs(far, mean_level=False)) == []
    runs_out, means_out = judged_outside(_diffs(far, mean_level=False))
    assert len(runs_out) == 10 and means_out == []


def test_the_committed_cenet_rows_are_verified_by_their_mean():
    from pathlib import Path

    table = read_unstable(
        Path(__file__).resolve().parents[2] / "docs/reproduction/accuracy_parity/unstable.csv"
    )
    assert is_mean_level(table, "cenet", "adult (regression)", 50.0)
    assert is_mean_level(table, "cenet", "compas (regression)", 1.0)
    assert not is_mean_level(table, "cenet", "adult (regression)", 0.1)  # stable: not listed
    assert not is_mean_level(table, "cenet", "law_school", 50.0)


def _archive(tmp_path, seeds=5):
    from otfair_lab.experiments._spec import RunConfig

    runs = tmp_path / "runs"
    runs.mkdir()
    rows = []
    for seed in range(seeds):
        config = RunConfig(
            dataset="synthetic_regression", method="cenet", seed=seed, strength=50.0
        )
        rows.append(
            {
                "key": config.key(),
                "method": "cenet",
                "dataset": "synthetic_regression",
                "strength": 50.0,
                "seed": seed,
                "status": "ok",
                "finished_at": float(seed),
                "wall_time_s": 2.0,
                # the identity the runner stores (the key is its hash; an archive line
                # whose config does not hash to its key is refused as edited)
                "config": json.loads(json.dumps(config.identity(), default=list)),
                "metrics": {"r2": 0.3 + 0.01 * seed, "stacked_k": 1},
            }
        )
        (runs / f"seed-{seed}.jsonl").write_text(json.dumps(rows[-1]) + "\n")
    pd.DataFrame(
        [
            {
                "method": "cenet",
                "dataset": "synthetic_regression",
                "strength": 50.0,
                "metric": "r2",
                "spread": 0.05,
                "measured": "x",
                "level": "mean",
            }
        ]
    ).to_csv(tmp_path / "unstable.csv", index=False)
    return runs


def test_verify_re_runs_every_seed_of_a_mean_level_strength(tmp_path, monkeypatch):
    runs = _archive(tmp_path)
    rerun_seeds: list[int] = []

    def fake_rerun(item, threads=None):  # a re-run that moved each run, not the mean
        rerun_seeds.extend(int(r["seed"]) for r in item)
        return [{"r2": 0.34 - 0.01 * int(r["seed"])} for r in item]

    monkeypatch.setattr(verify, "rerun", fake_rerun)
    planned, started = [], []
    diffs = verify_archive(
        runs,
        1,
        on_plan=lambda items: planned.extend(items),
        on_start=lambda i, item: started.append(i),
    )
    assert sorted(rerun_seeds) == [0, 1, 2, 3, 4]  # one picked, every seed re-run
    assert len(planned) == 5 and started == [0, 1, 2, 3, 4]
    (mean,) = compare_means(diffs)
    assert mean.seeds == 5 and mean.archived == pytest.approx(mean.new) and mean.within
    assert mean.spread == pytest.approx(0.04)


def test_cli_verify_method_needs_verify():
    from otfair_lab.cli import app

    result = CliRunner().invoke(app, ["reproduce", "otf", "--verify-method", "cenet"])
    assert result.exit_code == 2 and "--verify-method applies with --verify only" in result.output
