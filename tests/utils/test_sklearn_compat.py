"""scikit-learn's private names enter through one module: ``otfair.utils._sklearn_compat``."""

from __future__ import annotations

import ast
from pathlib import Path

import otfair.utils as utils
from otfair.utils import _sklearn_compat

SRC = Path(__file__).resolve().parents[2] / "src"
ADAPTER = Path("otfair/utils/_sklearn_compat.py")


def _private(dotted: str) -> bool:
    return any(part.startswith("_") for part in dotted.split("."))


def _private_sklearn_imports(path: Path) -> list[str]:
    """``module: name`` of every private scikit-learn name that ``path`` imports or reads."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "sklearn":
            module = node.module or ""
            for alias in node.names:
                if _private(module) or _private(alias.name):
                    found.append(f"{node.lineno}: from {module} import {alias.name}")
        elif isinstance(node, ast.Import):
            found += [
                f"{node.lineno}: import {a.name}"
                for a in node.names
                if a.name.split(".")[0] == "sklearn" and _private(a.name)
            ]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            dotted = ast.unparse(node)  # sklearn.utils._param_validation.Interval
            if dotted.split(".")[0] == "sklearn" and not node.attr.startswith("__"):
                found.append(f"{node.lineno}: {dotted}")
    return found


def test_the_scan_finds_a_private_import(tmp_path):
    sample = tmp_path / "m.py"
    sample.write_text(
        "from sklearn.base import _fit_context\n"
        "from sklearn.utils._param_validation import Interval\n"
        "import sklearn.utils._indexing\n"
        "from sklearn.base import clone\n"
        "x = sklearn.utils._safe_indexing\n"
    )
    assert len(_private_sklearn_imports(sample)) == 4


def test_no_module_but_the_adapter_imports_a_private_sklearn_name():
    offenders = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC)
        if rel == ADAPTER:
            continue
        found = _private_sklearn_imports(path)
        if found:
            offenders[rel.as_posix()] = found
    assert not offenders, f"import scikit-learn's private names from {ADAPTER}: {offenders}"
    assert _private_sklearn_imports(SRC / ADAPTER)  # the adapter is where they are


def test_the_adapter_names_are_public_in_utils():
    for name in ("Interval", "StrOptions", "HasMethods", "Options", "InvalidParameterError"):
        assert getattr(utils, name) is getattr(_sklearn_compat, name)
    assert utils.make_constraint is _sklearn_compat.make_constraint
    assert utils.safe_indexing([10, 20, 30], [2, 0]) == [30, 10]
