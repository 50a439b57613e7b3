"""The house's dependency direction, read from every module's imports (issue 25, item 9).

``docs/architecture.md``: ``utils <- ot <- notions <- penalties <- estimators (+ models,
metrics, datasets) <- experiments / reproduction <- cli``; ``ot`` knows nothing of fairness
and nothing imports ``experiments`` or ``cli``. Imports inside functions count too (a lazy
import is still an arrow), ``if TYPE_CHECKING:`` blocks do not.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

#: Layer of each top-level subpackage: a module may import its own layer or lower ones.
LAYERS = {
    "_version": 0,
    "utils": 0,
    "ot": 1,
    "notions": 2,
    "metrics": 2,
    "datasets": 2,
    "models": 2,
    "penalties": 3,
    "estimators": 4,
    "experiments": 5,
    "reproduction": 5,
    "cli": 6,
    "__main__": 7,  # ``python -m otfair``: the command line, above everything
}

#: Import circles between modules still to be broken: none.
#: The test fails on any circle not listed here, and on a listed one that is gone.
KNOWN_CIRCLES: set[frozenset[str]] = set()


def _modules() -> dict[str, Path]:
    out = {}
    for path in (SRC / "otfair").rglob("*.py"):
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
    parts = module.split(".")
    return LAYERS.get(parts[1], 0) if len(parts) > 1 else 0  # the root: __version__ only


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
