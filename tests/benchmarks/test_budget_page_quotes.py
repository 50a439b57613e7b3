"""docs/budget.md quotes the committed comparison with fairlearn, not numbers of its own."""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import fairness_cv_vs_fairlearn as bench  # noqa: E402

DOCS = Path(__file__).resolve().parents[2] / "docs"
MEASUREMENTS = DOCS / "measurements"
#: "accuracy at violation", as the page quotes a choice's test measures
PAIR = re.compile(r"(\d\.\d{4}) at (\d\.\d{4})")
#: the CSV columns of a choice's test accuracy and violation (default, margins, refine)
COLUMNS = [
    ("test_accuracy", "test_violation"),
    ("m0_5_test_accuracy", "m0_5_test_violation"),
    ("m1_test_accuracy", "m1_test_violation"),
    ("refined_test_accuracy", "refined_test_violation"),
]


def _committed_pairs() -> set[tuple[str, str]]:
    pairs = set()
    for name in ("fairness_cv_vs_fairlearn.csv", "fairness_cv_vs_fairlearn_default_threads.csv"):
        for row in bench.read_rows(MEASUREMENTS / name):
            for acc, viol in COLUMNS:
                if acc in row and viol in row:
                    pairs.add((f"{float(row[acc]):.4f}", f"{float(row[viol]):.4f}"))
    return pairs


def _sections(page: str, *titles: str) -> str:
    """Return the text of the page's ``## `` sections whose title starts with ``titles``."""
    parts = re.split(r"\n(?=## )", page)
    return "\n".join(p for p in parts if p.startswith(tuple(f"## {t}" for t in titles)))


def test_the_budget_page_quotes_the_committed_comparison():
    page = (DOCS / "budget.md").read_text()
    text = " ".join(_sections(page, "The budget on new data", "Measured: against").split())
    quoted = PAIR.findall(text)
    assert len(quoted) > 10  # the sections still quote the table
    missing = sorted(set(quoted) - _committed_pairs())
    assert not missing, f"quoted in docs/budget.md, in no committed row: {missing}"


#: a quoted CPU ratio, "7.0x" or "54x"
RATIO = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)x\b")


def _matches(quoted: str, value: float) -> bool:
    """Whether ``value`` rounds to ``quoted`` at the last digit it prints (190: the tens)."""
    if "." in quoted:
        unit = 10.0 ** -len(quoted.split(".")[1])
    else:
        unit = 10.0 ** (len(quoted) - len(quoted.rstrip("0")))
    return abs(value - float(quoted)) <= unit / 2 + 1e-12


def _committed_ratios(name: str) -> list[float]:
    rows = bench.read_rows(MEASUREMENTS / name)
    return [float(row["cpu_ratio"]) for row in rows if row.get("cpu_ratio") not in (None, "")]


def test_the_budget_pages_cpu_ratios_are_the_committed_ones():
    page = " ".join((DOCS / "budget.md").read_text().split())
    start = page.index("* CPU, one torch and one BLAS thread")
    bullet = page[start : page.index(" * ", start)]
    # the stacked curve's own benchmark (1.67x, 1.00x) is quoted from its file
    bullet = re.sub(r"\(each fold's grid[^\]]*\]\([^)]*\)\)", "", bullet)
    one, default = bullet.split("With the libraries' default")
    for text, name in (
        (one, "fairness_cv_vs_fairlearn.csv"),
        (default, "fairness_cv_vs_fairlearn_default_threads.csv"),
    ):
        ratios = _committed_ratios(name)
        quoted = RATIO.findall(text)
        assert len(quoted) > 5  # the bullet still quotes the table's ratios
        missing = [q for q in quoted if not any(_matches(q, r) for r in ratios)]
        assert not missing, f"CPU ratios quoted in docs/budget.md, in no row of {name}: {missing}"
