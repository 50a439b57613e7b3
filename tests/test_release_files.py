"""The files a release has sit beside the README and agree with the package's version."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
FILES = ("LICENSE", "CHANGELOG.md", "CITATION.cff", "CONTRIBUTING.md", "README.md")


def _version() -> str:
    # the source of truth, read as text: an installed copy's metadata may be older
    text = (ROOT / "src" / "otfair" / "_version.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__ = "([^"]+)"$', text, flags=re.M)
    assert match, "src/otfair/_version.py must assign __version__ a literal"
    return match.group(1)


@pytest.mark.parametrize("name", FILES)
def test_release_file_exists_beside_the_readme(name):
    path = ROOT / name
    assert path.is_file(), name
    assert len(path.read_text(encoding="utf-8").strip()) > 200, f"{name} is nearly empty"


def test_license_is_the_declared_mit():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License")
    assert "Copyright (c) 2026 The otfair developers" in text
    assert "WITHOUT WARRANTY OF ANY KIND" in text
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["license"] == "MIT"


def test_the_version_has_one_source():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    attr = project["tool"]["setuptools"]["dynamic"]["version"]["attr"]
    assert attr == "otfair._version.__version__"
    import otfair

    assert otfair.__version__ == _version()


def test_changelog_has_an_entry_for_the_current_version():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## \[([^\]]+)\]", text, flags=re.M)
    assert headings, "no '## [X.Y.Z]' entry"
    assert headings[0] == _version(), "the newest entry must be the current version"
    # each entry has at least one section of Keep a Changelog with an item
    for entry in re.split(r"^## ", text, flags=re.M)[1:]:
        assert re.search(r"^### (Added|Changed|Deprecated|Removed|Fixed|Security)$", entry, re.M)
        assert re.search(r"^- \S", entry, re.M), entry.splitlines()[0]


def test_citation_cff_is_valid_and_cites_the_four_papers():
    yaml = pytest.importorskip("yaml")
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    # the keys CFF 1.2.0 requires, and what a citation of the software needs
    for key in ("cff-version", "message", "title", "authors"):
        assert cff.get(key), key
    assert cff["cff-version"] == "1.2.0"
    assert str(cff["version"]) == _version()
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(cff["date-released"]))
    assert cff["license"] == "MIT"
    for author in cff["authors"]:
        assert "name" in author or "family-names" in author
    titles = {ref["title"] for ref in cff["references"]}
    assert titles == {
        "Optimal Transport of Classifiers to Fairness",
        "Fairness Through Matching",
        "AdapFair: Ensuring Adaptive Fairness for Machine Learning Operations",
        "Understanding and Mitigating Accuracy Disparity in Regression",
    }
    for ref in cff["references"]:
        # a reference needs type, title and authors in CFF 1.2.0
        assert ref["type"] in {"article", "conference-paper"}
        assert ref["authors"] and all("family-names" in a for a in ref["authors"])
        assert isinstance(ref["year"], int)
