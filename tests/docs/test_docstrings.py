"""Docstrings and docs cite papers, not internal issue numbers or file paths.

The site renders the docstrings: an "issue 27" means nothing to a reader, nor does a
path to a local copy of a paper. Papers are cited by authors, venue and year (the full
references are on the user guide's pages).
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src" / "otfair"
LAB = REPO / "src" / "otfair_lab"
#: "issue 27", "issues 18 and 27", "Issue #5", "the issue-15 baselines"
ISSUE = re.compile(r"\bissues?(?:\s+|-)#?\d+", re.IGNORECASE)
#: a path to a local copy of a paper, or the paper files' names
PAPER_PATH = re.compile(
    r"shared/papers|\b(?:otf-optimal-transport-to-fairness|fairness-through-matching|"
    r"accuracy-disparity-regression|adapfair)\.txt\b"
)


def _hits(pattern: re.Pattern, files) -> list[str]:
    out = []
    for path in files:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                out.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    return out


def test_no_internal_issue_numbers_in_src():
    hits = _hits(ISSUE, sorted([*SRC.rglob("*.py"), *LAB.rglob("*.py")]))
    assert not hits, "internal issue numbers in src/:\n" + "\n".join(hits)


def _docs_pages():
    return [p for p in sorted((REPO / "docs").rglob("*.md")) if "_build" not in p.parts]


def _docs_scripts():
    """The scripts committed beside the pages (they are linked from them)."""
    skip = {"_build", "auto_examples", "runs"}
    return [p for p in sorted((REPO / "docs").rglob("*.py")) if not skip & set(p.parts)]


def test_no_internal_issue_numbers_in_docs_or_readme():
    """A page describes the thing itself; "issue 26's target" means nothing to a reader."""
    files = [REPO / "README.md", *_docs_pages(), *_docs_scripts()]
    hits = _hits(ISSUE, files)
    assert not hits, "internal issue numbers in the docs:\n" + "\n".join(hits)


def test_no_paper_paths_in_src_docs_or_readme():
    """Papers are cited by authors, title and venue, on the reproduction pages and in
    the scripts beside them too, never by the name or path of a local copy."""
    files = sorted([*SRC.rglob("*.py"), *LAB.rglob("*.py")]) + [REPO / "README.md"]
    files += _docs_pages() + _docs_scripts()
    hits = _hits(PAPER_PATH, files)
    assert not hits, "papers cited by a file path:\n" + "\n".join(hits)


def test_patterns_catch_what_they_should():
    assert ISSUE.search("as measured (issue 27: FTM)")
    assert ISSUE.search("(issues 18 and 27)")
    assert ISSUE.search("with the issue-15 baselines")
    assert not ISSUE.search("issue `otfair.ot.ConvergenceWarning`")
    assert not ISSUE.search("an issue with 2 groups")
    assert PAPER_PATH.search("`../shared/papers/adapfair.txt` (§III)")
    assert PAPER_PATH.search("**The claim** (fairness-through-matching.txt, App. E.3)")
    assert not PAPER_PATH.search("(Kim et al., *Fairness Through Matching*, TMLR 2024)")
    assert PAPER_PATH.search("(fairness-through-matching.txt §4.3)")
    assert not PAPER_PATH.search("Kim et al., TMLR 2024, §4.3")
