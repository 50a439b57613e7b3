"""Every number claims.md quotes is found in a file that its row or paragraph links.

claims.md decides the papers' headline claims on otfair's committed results. A number it
quotes ("FTM 0.750 ± 0.015 over 3 seeds") must come from a committed file that the same
table row or paragraph links: the linked Markdown or CSV itself, the CSVs named after a
linked page (``sfp_flips.md`` -> ``sfp_flips*.csv``), or, for a report's ``index.md``, its
``comparison.csv`` and ``figure_points.csv``. A number counts as found when a number of
those files rounds to it at its printed digits (percentages also as fractions). Section
numbers (``§5.3``) are not results. When a report is regenerated and a value moves, this
test names the sentence that went stale.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

REPRO = Path(__file__).resolve().parents[2] / "docs" / "reproduction"
QUOTED = re.compile(r"(?<![\w.§])(\d+\.\d+)(?![\w.])")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
ANY_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE]-?\d+)?")


@cache
def _numbers(path: Path) -> frozenset[float]:
    text = path.read_text(encoding="utf-8", errors="ignore") if path.is_file() else ""
    return frozenset(float(s) for s in ANY_NUMBER.findall(text))


def _sources(block: str) -> set[Path]:
    """The files a row / paragraph links, and the CSVs that go with them."""
    found: set[Path] = set()
    for target in LINK.findall(block):
        if target.startswith("http"):
            continue
        path = (REPRO / target).resolve()
        found.add(path)
        if path.suffix == ".md":
            found |= set(path.parent.glob(f"{path.stem}*.csv"))
            if path.name == "index.md":
                found |= {path.parent / "comparison.csv", path.parent / "figure_points.csv"}
    return found


def _blocks(text: str) -> list[str]:
    """Table rows and paragraphs."""
    return [b for b in re.split(r"\n(?=\|)|\n\n", text) if b.strip()]


def _found(quoted: str, sources: set[Path]) -> bool:
    digits = len(quoted.split(".")[1])
    x = round(float(quoted), digits)
    for path in sources:
        for v in map(abs, _numbers(path)):  # "lowers the gap by 0.013": -0.013 in the CSV
            if round(v, digits) == x or round(100 * v, digits) == x:
                return True
    return False


def test_every_number_in_claims_md_is_in_a_file_it_links():
    text = (REPRO / "claims.md").read_text(encoding="utf-8")
    missing = []
    quoted_total = 0
    for block in _blocks(text):
        sources = _sources(block)
        for quoted in QUOTED.findall(block):
            quoted_total += 1
            if not _found(quoted, sources):
                missing.append(f"{quoted} in: {block[:90]!r}")
    assert quoted_total > 50  # the file quotes results; the check is not vacuous
    assert not missing, "\n".join(missing)


def test_a_changed_value_is_caught(tmp_path):
    # the check fails when the linked file no longer holds the quoted number
    page = tmp_path / "page.md"
    page.write_text("accuracy 0.7512 on seed 0", encoding="utf-8")
    assert _found("0.751", {page}) and _found("75.1", {page})
    assert not _found("0.749", {page})
