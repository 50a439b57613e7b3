"""Two packages, one direction (issue 46, item 1).

The library ``otfair`` imports nothing of the research harness ``otfair_lab``, and the
harness uses only otfair's public names: no private module (``otfair.x._y``), no private
name (``_z``) imported from a public module, and no name outside a module's ``__all__``
when the module declares one. Read from the source of every module of both packages
(``src/``), imports inside functions and under ``if TYPE_CHECKING:`` included, as are
``importlib.import_module("...")`` calls with a literal name.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
LIBRARY, LAB = "otfair", "otfair_lab"


def _module_name(path: Path) -> tuple[str, bool]:
    """Dotted name of the module at ``path`` and whether it is a package's ``__init__``."""
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def _modules(package: str) -> list[Path]:
    return sorted((SRC / package).rglob("*.py"))


_IMPORT_CALLS = ("importlib.import_module", "import_module", "__import__")


def imports(source: str, module: str, is_package: bool) -> list[tuple[str, str | None, int]]:
    """Every import of ``source``: ``(module, name or None, line)``, relative ones resolved.

    ``from a.b import c`` gives ``("a.b", "c", line)``; ``import a.b`` and
    ``importlib.import_module("a.b")`` give ``("a.b", None, line)``.
    """
    package = module.split(".") if is_package else module.split(".")[:-1]
    found: list[tuple[str, str | None, int]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            found += [(target, alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(alias.name, None, node.lineno) for alias in node.names]
        elif (
            isinstance(node, ast.Call)
            and ast.unparse(node.func) in _IMPORT_CALLS
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append((node.args[0].value, None, node.lineno))
    return found


def _in(target: str, package: str) -> bool:
    return target == package or target.startswith(package + ".")


def _private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


@cache
def declared_all(module: str) -> frozenset[str] | None:
    """The literal ``__all__`` of an otfair module (``None``: none, or not a literal)."""
    base = SRC.joinpath(*module.split("."))
    path = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
    if not path.is_file():
        return None
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and "__all__" in ast.unparse(node):
            try:
                return frozenset(ast.literal_eval(node.value))  # type: ignore[arg-type]
            except ValueError:
                return None
    return None


def _is_submodule(module: str, name: str) -> bool:
    base = SRC.joinpath(*module.split("."), name)
    return base.is_dir() or base.with_suffix(".py").is_file()


def private_uses(target: str, name: str | None) -> str | None:
    """Why importing ``name`` from otfair module ``target`` is not public (None: it is)."""
    if any(_private(p) for p in target.split(".")):
        return f"private module {target}"
    if name is None:
        return None
    if _private(name):
        return f"private name {name} of {target}"
    public = declared_all(target)
    if public is not None and name not in public and not _is_submodule(target, name):
        return f"{name} is not in {target}.__all__"
    return None


def lab_violations(source: str, module: str, is_package: bool) -> list[str]:
    out = []
    for target, name, line in imports(source, module, is_package):
        if _in(target, LIBRARY):
            why = private_uses(target, name)
            if why:
                out.append(f"{module}:{line}: {why}")
    return out


def library_violations(source: str, module: str, is_package: bool) -> list[str]:
    return [
        f"{module}:{line}: imports {target}" + (f".{name}" if name else "")
        for target, name, line in imports(source, module, is_package)
        if _in(target, LAB)
    ]


def _check(package: str, rule) -> list[str]:
    out = []
    for path in _modules(package):
        module, is_package = _module_name(path)
        out += rule(path.read_text(encoding="utf-8"), module, is_package)
    return out


def test_both_packages_are_there():
    assert (SRC / LIBRARY / "__init__.py").is_file() and (SRC / LAB / "__init__.py").is_file()
    assert len(_modules(LAB)) > 50 and len(_modules(LIBRARY)) > 50
    for gone in ("experiments", "reproduction", "cli", "__main__.py"):
        assert not (SRC / LIBRARY / gone).exists(), f"src/otfair/{gone} is back"


def test_otfair_imports_nothing_of_the_lab():
    found = _check(LIBRARY, library_violations)
    assert not found, "\n".join(found)


def test_the_lab_imports_only_public_otfair_names():
    found = _check(LAB, lab_violations)
    assert not found, "\n".join(found)


def test_the_lab_uses_otfair():  # the checks above would pass on a lab importing nothing
    targets = {
        target
        for path in _modules(LAB)
        for target, _, _ in imports(path.read_text(encoding="utf-8"), *_module_name(path))
    }
    assert {"otfair.estimators", "otfair.datasets", "otfair.metrics"} <= targets


# ------------------------------------------------------------- the checkers themselves
@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from otfair.estimators import FairClassifier", []),
        ("from otfair import __version__", []),
        ("def f():\n    from otfair.estimators._path import x", ["private module"]),
        ("from otfair._version import __version__", ["private module"]),
        ("from otfair.metrics import _helper", ["private name _helper"]),
        ("from otfair.datasets import NOT_EXPORTED_NAME", ["not in otfair.datasets.__all__"]),
        ("from otfair.estimators import preprocessing", []),  # a public subpackage
        ("import otfair.utils._constraints", ["private module"]),
        ("import importlib\nimportlib.import_module('otfair.ot._sinkhorn')", ["private module"]),
        ("from .._private import x", []),  # relative: inside the lab, its own business
        ("from otfair_lab.experiments._spec import RunConfig", []),
    ],
)
def test_the_lab_checker(source, expected):
    found = lab_violations(source, "otfair_lab.experiments.mod", False)
    assert len(found) == len(expected), found
    for message, words in zip(found, expected, strict=True):
        assert words in message


@pytest.mark.parametrize(
    ("source", "caught"),
    [
        ("from otfair.estimators import FairClassifier", False),
        ("def f():\n    from otfair_lab.experiments import run_sweep", True),
        ("import otfair_lab", True),
        ("from ..experiments import x", False),  # inside otfair, not the lab
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import otfair_lab.cli", True),
        ("import importlib\nimportlib.import_module('otfair_lab.cli')", True),
    ],
)
def test_the_library_checker(source, caught):
    found = library_violations(source, "otfair.estimators.mod", False)
    assert bool(found) == caught, found


def test_one_distribution_installs_both_packages():
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    project = tomllib.loads((SRC.parent / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["scripts"]["otfair"] == "otfair_lab.cli:main"
    assert project["tool"]["setuptools"]["packages"]["find"]["where"] == ["src"]
    data = project["tool"]["setuptools"]["package-data"]
    for pattern in data[LAB]:  # every pattern of the lab's data matches a file
        assert list((SRC / LAB).glob(pattern)), f"{LAB}: {pattern} matches no file"
    assert (SRC / LAB / "__main__.py").is_file()
