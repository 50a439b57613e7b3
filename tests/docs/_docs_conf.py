"""What the docs tests read from ``docs/conf.py`` without importing Sphinx."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


@functools.cache
def conf_namespaces() -> tuple[str, ...]:
    """``NAMESPACES`` of ``docs/conf.py`` (read, not imported: no Sphinx needed)."""
    tree = ast.parse((DOCS / "conf.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "NAMESPACES" for t in node.targets
        ):
            return tuple(ast.literal_eval(node.value))
    raise AssertionError("docs/conf.py defines no NAMESPACES")


@functools.cache
def lab_namespaces() -> tuple[str, ...]:
    """``LAB_NAMESPACES`` of ``docs/conf.py``: the namespaces of ``otfair_lab``."""
    tree = ast.parse((DOCS / "conf.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "LAB_NAMESPACES" for t in node.targets
        ):
            return tuple(ast.literal_eval(node.value))
    raise AssertionError("docs/conf.py defines no LAB_NAMESPACES")


def module_name(ns: str) -> str:
    """The module of namespace ``ns`` (docs/conf.py's ``module_name``)."""
    return f"otfair_lab.{ns}" if ns in lab_namespaces() else f"otfair.{ns}"
