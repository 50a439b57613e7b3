"""No function of the installed packages is longer than 80 lines (issue 46, item 5).

A function's length is counted from its ``def`` line to its last line, docstring and
comments included: what a reader has to hold at once. A longer one is split into helpers
whose names say what each part does. The limit covers both packages, the library
(``otfair``) and the research harness (``otfair_lab``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
LIMIT = 80


def _long_functions() -> list[str]:
    found = []
    for package in ("otfair", "otfair_lab"):
        for path in sorted((SRC / package).rglob("*.py")):
            tree = ast.parse(path.read_text(), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    length = (node.end_lineno or node.lineno) - node.lineno + 1
                    if length > LIMIT:
                        rel = path.relative_to(SRC)
                        found.append(f"{rel}:{node.lineno} {node.name} ({length} lines)")
    return found


def test_no_function_longer_than_the_limit() -> None:
    assert _long_functions() == []


def test_the_count_sees_a_long_function(tmp_path: Path) -> None:
    """The measure itself: a 81-line function is found, an 80-line one is not."""
    body = "\n".join(f"    x{i} = {i}" for i in range(LIMIT - 1))
    tree = ast.parse(f"def f():\n{body}\n\ndef g():\n{body}\n    y = 0\n")
    lengths = {
        n.name: n.end_lineno - n.lineno + 1
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef)
    }
    assert lengths == {"f": LIMIT, "g": LIMIT + 1}


@pytest.mark.parametrize("package", ["otfair", "otfair_lab"])
def test_both_packages_are_measured(package: str) -> None:
    assert any((SRC / package).rglob("*.py"))
