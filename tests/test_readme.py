"""README.md stays true: its Python snippets run in order, its links resolve, .gitignore
hides run outputs but not committed reports."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"

_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def code_blocks(text: str, language: str) -> list[str]:
    """The fenced blocks of ``language`` in ``text``, in order."""
    return [body for lang, body in _FENCE.findall(text) if lang == language]


def relative_links(text: str) -> list[str]:
    """Link and image targets of ``text`` (outside code blocks) that point into the repo."""
    prose = _FENCE.sub("", text)
    targets = [m.group(1) for m in _LINK.finditer(prose)]
    return [t for t in targets if not urlparse(t).scheme and not t.startswith("#")]


def test_helpers_on_a_hand_made_page():
    page = (
        "See [a](docs/a.md#x), ![p](img/p.png) and [web](https://x.org), [top](#top).\n"
        "```python\nx = 1\n```\n```bash\nls\n```\n```python\ny = x + 1\n```\n"
        "```text\n[not a link](nowhere.md)\n```\n"
    )
    assert code_blocks(page, "python") == ["x = 1\n", "y = x + 1\n"]
    assert relative_links(page) == ["docs/a.md#x", "img/p.png"]


def test_readme_links_resolve():
    links = relative_links(README.read_text(encoding="utf-8"))
    assert links, "README.md has no relative link"
    missing = [link for link in links if not (REPO / unquote(urlparse(link).path)).exists()]
    assert not missing, f"README.md links to files that do not exist: {missing}"


def test_readme_keeps_the_ci_commands():
    # .ci/run and the quick start run exactly these; changing one silently breaks CI
    text = README.read_text(encoding="utf-8")
    bash = code_blocks(text, "bash")
    assert (
        "python3 -m venv .venv && . .venv/bin/activate && pip install torch==2.13.0 && "
        'pip install -e ".[dev]" && otfair demo --out otfair-demo\n'
    ) in bash
    assert ". .venv/bin/activate && python -m pytest -n 2\n" in bash


@pytest.mark.slow
def test_readme_python_snippets_run_in_order(tmp_path, monkeypatch):
    assert os.environ.get("OTFAIR_DATA_DIR"), "tests/conftest.py sets OTFAIR_DATA_DIR"
    blocks = code_blocks(README.read_text(encoding="utf-8"), "python")
    assert len(blocks) >= 5
    monkeypatch.chdir(tmp_path)  # nothing a snippet writes lands in the checkout
    namespace: dict = {"__name__": "__readme__"}
    for i, block in enumerate(blocks, 1):
        try:
            exec(compile(block, f"README.md python block {i}", "exec"), namespace)
        except Exception as exc:  # name the block in the failure
            raise AssertionError(f"README.md python block {i} failed:\n{block}") from exc
    # the chained snippets end with real objects, not placeholders
    assert 0.0 <= namespace["rep"].summary["dp_gap"] <= 1.0
    assert namespace["proba"].ndim == 1


@pytest.mark.skipif(
    shutil.which("git") is None or not (REPO / ".git").exists(), reason="needs a git checkout"
)
@pytest.mark.parametrize(
    ("path", "ignored"),
    [
        ("results/x.csv", True),
        ("runs/ftm/results.sqlite", True),
        ("otfair-demo/report/index.md", True),
        ("docs/results/ftm_one_split/index.md", False),
        ("docs/reproduction/otf/results/table.csv", False),
        ("docs/reproduction/otf/runs/x.md", False),
    ],
)
def test_gitignore_hides_run_outputs_not_reports(path, ignored):
    res = subprocess.run(["git", "check-ignore", "-q", "--no-index", path], cwd=REPO, check=False)
    assert res.returncode == (0 if ignored else 1), path
