"""Fixtures for the reproduction tests: the papers' text (``../shared/papers``)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

PAPER_FILES = {
    "otf": "otf-optimal-transport-to-fairness.txt",
    "ftm": "fairness-through-matching.txt",
    "adapfair": "adapfair.txt",
    "accuracy_parity": "accuracy-disparity-regression.txt",
}


def _papers_dir() -> Path:
    if "OTFAIR_PAPERS_DIR" in os.environ:
        return Path(os.environ["OTFAIR_PAPERS_DIR"])
    return Path(os.environ["OTFAIR_DATA_DIR"]).parent / "papers"


@pytest.fixture(scope="session")
def paper_text():
    """``paper_text(paper)``: the paper's text with runs of whitespace made one space."""
    folder = _papers_dir()
    if not folder.is_dir():
        pytest.skip(f"paper texts not found in {folder} (set OTFAIR_PAPERS_DIR)")
    cache: dict[str, str] = {}

    def read(paper: str) -> str:
        if paper not in cache:
            raw = (folder / PAPER_FILES[paper]).read_text(encoding="utf-8")
            cache[paper] = re.sub(r"\s+", " ", raw)
        return cache[paper]

    return read
