"""docs/classifiers.md quotes docs/measurements/training_quality.csv: the quotes are its."""

from __future__ import annotations

import csv
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _table() -> dict[tuple[str, str], dict[str, str]]:
    path = ROOT / "docs" / "measurements" / "training_quality.csv"
    with path.open(newline="") as handle:
        return {(r["dataset"], r["model"]): r for r in csv.DictReader(handle)}


def _page() -> str:
    return " ".join((ROOT / "docs" / "classifiers.md").read_text().split())


def test_the_stall_rule_iterations_quoted_are_the_tables():
    rows = _table()
    found = re.search(
        r"Adult's, Bank's and German's fits end by the stall rule in (\d+), (\d+) and (\d+) "
        r"iterations",
        _page(),
    )
    assert found, "the quote moved: update this test with it"
    for name, quoted in zip(("adult", "bank", "german"), found.groups(), strict=True):
        assert rows[name, "FairClassifier('otf', 0.9)"]["n_iter"] == quoted, name
    assert rows["diabetes", "FairClassifier('otf', 0.9)"]["n_iter"] == "300"  # the cap


def test_the_default_mlps_diabetes_cpu_quoted_is_the_tables():
    found = re.search(r"Diabetes: 23 CPU s before, ([\d.]+) s in that table", _page())
    assert found, "the quote moved: update this test with it"
    cpu = float(_table()["diabetes", "FairClassifier(model='mlp')"]["cpu_s"])
    assert found.group(1) == f"{cpu:.1f}"
