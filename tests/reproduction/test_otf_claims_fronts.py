"""docs/reproduction/otf/claims_fronts.py: its rule on a hand-made front; its output kept true."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd
import pytest

OTF_DIR = Path(__file__).resolve().parents[2] / "docs" / "reproduction" / "otf"


def _script():
    spec = importlib.util.spec_from_file_location("claims_fronts", OTF_DIR / "claims_fronts.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _point(method, strength, auc, se, pdp, label=None):
    return {
        "ref": "Figure 1", "dataset": "d", "label": label or f"{method} [dp]", "method": method,
        "notion": "dp", "strength": strength, "n_seeds": 4, "auc_mean": auc, "auc_se": se,
        "pdp_violation_mean": pdp, "pdp_violation_se": 0.001,
    }  # fmt: skip


def test_fronts_are_compared_at_matched_levels_with_the_standard_error():
    m = _script()
    points = pd.DataFrame(
        [
            _point("otf", 0.1, 0.90, 0.002, 0.10),
            _point("otf", 0.5, 0.85, 0.002, 0.02),
            _point("norm", 0.1, 0.86, 0.002, 0.10),  # OTF higher by 0.04, SE 0.0028
            _point("norm", 0.9, 0.849, 0.002, 0.05),  # OTF's best at <= 0.05: 0.85, within
            _point("norm", 0.95, 0.80, 0.002, 0.01),  # OTF does not reach 0.01
        ]
    )
    table = m.compare(points)
    at_norm = table[table["direction"] == "at norm [dp]'s levels"].set_index("level")
    assert at_norm.loc[0.10, "verdict"] == "OTF higher"
    assert at_norm.loc[0.10, "d"] == pytest.approx(0.04)
    assert at_norm.loc[0.10, "se"] == pytest.approx((2 * 0.002**2) ** 0.5)
    assert at_norm.loc[0.05, "verdict"] == "within 2 SE"
    assert at_norm.loc[0.05, "otf_strength"] == 0.5
    assert at_norm.loc[0.01, "verdict"] == "OTF does not reach"
    at_otf = table[table["direction"] == "at OTF's levels"].set_index("level")
    # at OTF's 0.02, Norm's best at <= 0.02 is its 0.01 point (AUC 0.80)
    assert at_otf.loc[0.02, "other_auc"] == pytest.approx(0.80)
    assert at_otf.loc[0.02, "verdict"] == "OTF higher"
    low = m.lowest_violations(points).iloc[0]
    assert low["otf_lowest"] == 0.02 and low["otf_strength"] == 0.5


def test_committed_claims_fronts_match_the_committed_points():
    m = _script()
    points = pd.read_csv(OTF_DIR / "figure_points.csv")
    points["notion"] = points["notion"].fillna("")
    fresh = m.compare(points)
    committed = pd.read_csv(OTF_DIR / "claims_fronts.csv")
    assert list(committed["verdict"]) == list(fresh["verdict"])
    pd.testing.assert_series_equal(committed["d"], fresh["d"], rtol=1e-4, check_names=False)
