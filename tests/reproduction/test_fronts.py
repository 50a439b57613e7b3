"""otfair_lab.reproduction.compare_fronts: matched levels, paired standard errors, the floor."""

from __future__ import annotations

import pandas as pd
import pytest

from otfair_lab.reproduction import FRONT_VERDICTS, compare_fronts, paired_difference


def _runs(points, offsets):
    """Per-seed AUCs around each point's mean; ``offsets[label]`` by seed (the split)."""
    rows = []
    for label, strength, auc, pdp in points:
        for seed, e in enumerate(offsets[label]):
            rows.append({"label": label, "strength": strength, "seed": seed,
                         "auc": auc + e, "pdp": pdp})  # fmt: skip
    return pd.DataFrame(rows)


POINTS = [
    ("otf", 0.1, 0.90, 0.10),
    ("otf", 0.5, 0.85, 0.02),
    ("norm", 0.1, 0.86, 0.10),  # OTF higher by 0.04
    ("norm", 0.9, 0.847, 0.05),  # OTF's best at <= 0.05 is 0.85: +0.003, under the floor
    ("norm", 0.95, 0.80, 0.01),  # OTF does not reach 0.01
]


def test_fronts_are_compared_at_matched_levels_paired_by_seed():
    # a per-seed shift shared by both methods (the split) cancels in the paired difference
    runs = _runs(POINTS, {"otf": [0.03, -0.03, 0.0], "norm": [0.031, -0.029, 0.001]})
    table = compare_fronts(runs, "otf", ["norm", "absent"], performance="auc", fairness="pdp")
    assert set(table["verdict"]) <= set(FRONT_VERDICTS) and set(table["baseline"]) == {"norm"}
    table["level"] = table["level"].round(9)  # a mean over seeds: 0.1 + 2e-17
    at_norm = table[table["direction"] == "at the baseline's levels"].set_index("level")
    assert at_norm.loc[0.10, "verdict"] == "target higher"
    assert at_norm.loc[0.10, "d"] == pytest.approx(0.039)  # Norm's offsets average +0.001
    assert at_norm.loc[0.10, "se"] == pytest.approx(0.0, abs=1e-12)  # 0.039 on every seed
    assert at_norm.loc[0.10, "seeds"] == 3
    assert at_norm.loc[0.05, "verdict"] == "similar"
    assert at_norm.loc[0.05, "target_strength"] == 0.5
    assert at_norm.loc[0.01, "verdict"] == "target does not reach"
    at_otf = table[table["direction"] == "at the target's levels"].set_index("level")
    assert at_otf.loc[0.02, "baseline_value"] == pytest.approx(0.801)  # Norm's 0.01 point
    assert at_otf.loc[0.02, "verdict"] == "target higher"


def test_unpaired_noise_widens_the_tolerance():
    # opposite per-seed shifts: differences 0.10, -0.02, 0.04; SE 0.06 / sqrt(3) = 0.035
    runs = _runs(POINTS, {"otf": [0.03, -0.03, 0.0], "norm": [-0.03, 0.03, 0.0]})
    table = compare_fronts(runs, "otf", ["norm"], performance="auc", fairness="pdp")
    table["level"] = table["level"].round(9)
    row = table[table["direction"] == "at the baseline's levels"].set_index("level").loc[0.10]
    assert row["se"] == pytest.approx(0.06 / 3**0.5)
    assert row["verdict"] == "similar"  # 0.04 < 2 SE = 0.069
    a = pd.Series({"label": "otf", "strength": 0.1})
    b = pd.Series({"label": "norm", "strength": 0.1})
    d, se, n = paired_difference(runs, a, b, "auc")
    assert (d, n) == (pytest.approx(0.04), 3) and se == pytest.approx(0.06 / 3**0.5)


def test_bad_requests_name_the_argument():
    runs = _runs(POINTS, {"otf": [0.0], "norm": [0.0]})
    with pytest.raises(ValueError, match="target"):
        compare_fronts(runs, "nope", ["norm"], performance="auc", fairness="pdp")
    with pytest.raises(ValueError, match="runs"):
        compare_fronts(runs.drop(columns="seed"), "otf", ["norm"], performance="auc", fairness="x")
    one_seed = compare_fronts(runs, "otf", ["norm"], performance="auc", fairness="pdp")
    assert one_seed["se"].isna().all()  # one seed: no SE, only the floor decides
