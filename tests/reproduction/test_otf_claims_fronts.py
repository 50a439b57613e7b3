"""docs/reproduction/otf/claims_fronts.py: its output and the claims read from it kept true."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd

OTF_DIR = Path(__file__).resolve().parents[2] / "docs" / "reproduction" / "otf"


def _script():
    spec = importlib.util.spec_from_file_location("claims_fronts", OTF_DIR / "claims_fronts.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_claims_fronts_match_the_committed_points():
    m = _script()
    fresh = m.compare(m.load_runs(OTF_DIR / "runs"))
    committed = pd.read_csv(OTF_DIR / "claims_fronts.csv")
    assert list(committed["verdict"]) == list(fresh["verdict"])
    pd.testing.assert_series_equal(committed["d"], fresh["d"], rtol=1e-4, check_names=False)


def test_the_verdicts_claims_md_states_hold_on_the_committed_output():
    # claims.md, O1 and O2: the qualitative statements, checked on claims_fronts.csv
    t = pd.read_csv(OTF_DIR / "claims_fronts.csv")
    adult_eo = t[(t["dataset"] == "adult (sex+race)") & (t["notion"] == "eo")]
    assert (adult_eo["verdict"] != "baseline higher").all()  # OTF never below Norm [eo]
    assert (adult_eo["verdict"] == "OTF higher").sum() >= 4
    diabetes_eo = t[(t["dataset"] == "diabetes") & (t["notion"] == "eo")]
    assert set(diabetes_eo["verdict"]) <= {"similar", "OTF does not reach"}
    dutch = t[(t["dataset"] == "dutch") & (t["notion"] == "dp") & (t["baseline"] == "norm [dp]")]
    assert (dutch["verdict"] == "OTF does not reach").any()
    # O1: outside Dutch, OTF [dp] is never below Norm [dp] or Barycenter, in both directions
    dp = t[(t["notion"] == "dp") & (t["dataset"] != "dutch")]
    assert len(dp) > 50 and (dp["verdict"] != "baseline higher").all()
