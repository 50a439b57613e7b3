"""The house's dependency direction, read from every module's imports (issue 25, item 9).

``docs/architecture.md``: ``utils <- ot <- notions <- penalties <- estimators (+ models,
metrics, datasets)`` in the library ``otfair``, then the research harness ``otfair_lab``
on top: ``experiments / reproduction <- cli``; ``ot`` knows nothing of fairness and
nothing imports ``experiments`` or ``cli``. Imports inside functions count too (a lazy
import is still an arrow), ``if TYPE_CHECKING:`` blocks do not. That ``otfair`` imports
nothing of ``otfair_lab`` and the lab only public names of otfair is
``tests/test_package_split.py``.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

#: Layer of each top-level subpackage of both packages: a module may import its own
#: layer or lower ones (a subpackage missing here fails the test: give it a layer).
LAYERS = {
    "otfair": 0,  # the root: __version__ only
    "otfair._version": 0,
    "otfair.utils": 0,
    "otfair.ot": 1,
    "otfair.notions": 2,
    "otfair.metrics": 2,
    "otfair.datasets": 2,
    "otfair.models": 2,
    "otfair.penalties": 3,
    "otfair.estimators": 4,
    # the research harness, a package of its own on top of the library
    "otfair_lab": 5,  # the root: lazy subpackages only
    "otfair_lab.experiments": 5,
    "otfair_lab.reproduction": 5,
    "otfair_lab.cli": 6,
    "otfair_lab.__main__": 7,  # ``python -m otfair_lab``: the command line, above everything
}

#: Import circles between modules still to be broken: none.
#: The test fails on any circle not listed here, and on a listed one that is gone.
KNOWN_CIRCLES: set[frozenset[str]] = set()


def _modules() -> dict[str, Path]:
    out = {}
    for path in [*(SRC / "otfair").rglob("*.py"), *(SRC / "otfair_lab").rglob("*.py")]:
        parts = path.relative_to(SRC).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _is_type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(test)


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Modules of otfair that ``name`` imports anywhere (but under TYPE_CHECKING)."""
    tree = ast.parse(path.read_text())
    skip = {id(n) for node in ast.walk(tree) if _is_type_checking(node) for n in ast.walk(node)}
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join([*base, *([node.module] if node.module else [])])
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in modules else target)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return {m for m in found if m in modules and m != name}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _layer(module: str) -> int:
    return LAYERS[".".join(module.split(".")[:2])]


def test_every_subpackage_has_a_layer():
    missing = {".".join(m.split(".")[:2]) for m in _modules()} - set(LAYERS)
    assert not missing, f"give these a layer in LAYERS: {sorted(missing)}"


def test_the_lab_sits_above_the_library():
    library = [v for k, v in LAYERS.items() if k.split(".")[0] == "otfair"]
    lab = [v for k, v in LAYERS.items() if k.split(".")[0] == "otfair_lab"]
    assert max(library) < min(lab)


def test_no_module_imports_a_higher_layer():
    upward = [f"{m} -> {d}" for m, deps in _graph().items() for d in deps if _layer(d) > _layer(m)]
    assert not upward, upward


def _circles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    # a package's __init__ re-exporting its own submodules is not a circle
    graph = {m: {d for d in ds if not d.startswith(m + ".")} for m, ds in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: set[frozenset[str]] = set()

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.add(frozenset(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_the_circle_finder_on_a_hand_built_graph():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "p": {"p.x"}, "p.x": {"p"}}
    assert _circles(graph) == {frozenset("abc"), frozenset({"p", "p.x"})} - {
        frozenset({"p", "p.x"})
    }


def test_no_new_import_circles():
    found = _circles(_graph())
    assert found - KNOWN_CIRCLES == set(), "new import circles"
    assert KNOWN_CIRCLES - found == set(), "a known circle is gone: remove it from the list"
