"""The site's structure: one title per page, the newcomer's pages in the home toctree, no
script or style from the network, and a side bar on the reproduction overview.

The source checks run always; the built-site checks run once ``docs/_build/html`` exists
(CI builds it before running ``tests/docs``).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
BUILT = DOCS / "_build" / "html"
NEWCOMER_PAGES = (
    "installation",
    "getting_started",
    "concepts",
    "faq",
    "citing",
    "changelog",
    "contributing",
)


def _committed_pages() -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files", "*.md"], cwd=DOCS, capture_output=True, text=True, check=True
    ).stdout.split()
    return [DOCS / p for p in out if "/runs/" not in p and "figure_6_runs" not in p]


def _title(path: Path) -> str | None:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return None


def test_no_two_pages_share_a_title():
    seen: dict[str, Path] = {}
    for page in _committed_pages():
        title = _title(page)
        if title is None:
            continue
        assert title not in seen, f"{page} and {seen[title]} are both titled {title!r}"
        seen[title] = page


def test_newcomer_pages_are_in_the_home_toctree():
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    toctree = re.search(r"```\{toctree\}\n(.*?)```", index, flags=re.S)
    assert toctree
    entries = toctree.group(1).split()
    for page in NEWCOMER_PAGES:
        assert page in entries, page
        assert (DOCS / f"{page}.md").is_file(), page


def test_changelog_and_contributing_pages_include_the_root_files():
    assert "{include} ../CHANGELOG.md" in (DOCS / "changelog.md").read_text()
    assert "{include} ../CONTRIBUTING.md" in (DOCS / "contributing.md").read_text()


def test_reproduction_overview_has_the_reproduction_pages_as_children():
    text = (DOCS / "reproduction" / "README.md").read_text(encoding="utf-8")
    toctree = re.search(r"```\{toctree\}\n(.*?)```", text, flags=re.S)
    assert toctree, "the overview has no toctree: its side bar would be empty"
    assert "/reproduction/otf/index" in toctree.group(1)


def test_css_keeps_wide_content_in_its_box():
    css = (DOCS / "_static" / "otfair.css").read_text(encoding="utf-8")
    assert re.search(r"pre \{\s*overflow-x: auto;", css)
    assert 'mjx-container[display="true"]' in css
    assert "overflow-wrap: anywhere" in css
    assert 'html_css_files = ["otfair.css"]' in (DOCS / "conf.py").read_text()


_REMOTE = re.compile(
    r"<(?:script[^>]*\bsrc|link[^>]*\bhref)=[\"'](?:https?:)?//[^\"']+[\"']", re.I
)


@pytest.mark.skipif(not (BUILT / "index.html").is_file(), reason="site not built")
def test_built_site_loads_nothing_from_the_network():
    offenders = []
    for page in BUILT.rglob("*.html"):
        text = page.read_text(encoding="utf-8", errors="replace")
        for match in _REMOTE.finditer(text):
            offenders.append(f"{page.relative_to(BUILT)}: {match.group(0)[:120]}")
    assert not offenders, "\n".join(offenders[:20])


@pytest.mark.skipif(not (BUILT / "index.html").is_file(), reason="site not built")
def test_built_pages_exist_with_their_css():
    for page in NEWCOMER_PAGES:
        html = (BUILT / f"{page}.html").read_text(encoding="utf-8")
        assert "otfair.css" in html, page
    assert (BUILT / "_static" / "otfair.css").is_file()
    times = (BUILT / "sg_execution_times.html").read_text(encoding="utf-8")
    assert "datatables" not in times.lower()
