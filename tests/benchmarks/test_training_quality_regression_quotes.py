"""docs/regression.md describes docs/measurements/training_quality_regression.csv: its rows."""

from __future__ import annotations

import csv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _table() -> dict[tuple[str, str], dict[str, str]]:
    path = ROOT / "docs" / "measurements" / "training_quality_regression.csv"
    with path.open(newline="") as handle:
        return {(r["dataset"], r["model"]): r for r in csv.DictReader(handle)}


def test_the_collapse_the_page_names_is_the_tables_and_it_warned():
    page = " ".join((ROOT / "docs" / "regression.md").read_text().split())
    assert "there CENet at strength 50 on Crime ends below the constant and says so" in page
    row = _table()["communities_crime", "CENet(50)"]
    assert float(row["train_r2"]) < 0
    assert "CENet ends below the best constant" in row["warnings"]


def test_every_net_that_the_table_shows_below_the_constant_warned_and_no_other():
    for (dataset, model), row in _table().items():
        if model in ("best constant", "LinearRegression"):
            continue
        below = float(row["train_r2"]) < 0
        assert below == ("ends below the best constant" in row["warnings"]), (dataset, model)
        assert row["n_iter"] == "50", (dataset, model)  # exactly the default `epochs`
