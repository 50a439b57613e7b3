"""The ``Examples`` of every public name's docstring run and print what they show.

The API reference renders these examples; a stale one is a broken page. Collected from
the ``__all__`` of the documented namespaces (docs/conf.py), so a new public name's
example is run without being listed here.
"""

from __future__ import annotations

import doctest
import importlib
import inspect

import pytest
from _docs_conf import conf_namespaces, module_name

NAMESPACES = list(conf_namespaces())  # docs/conf.py's, read without Sphinx


def _docstring_tests():
    finder = doctest.DocTestFinder(recurse=True, exclude_empty=True)
    seen = set()
    for ns in NAMESPACES:
        module = importlib.import_module(module_name(ns))
        for name in module.__all__:
            obj = getattr(module, name)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)) or id(obj) in seen:
                continue
            seen.add(id(obj))
            # as pytest --doctest-modules: the names of the namespace are in scope
            for test in finder.find(obj, f"{module_name(ns)}.{name}", globs=dict(vars(module))):
                if test.examples:
                    yield pytest.param(test, id=test.name)


@pytest.mark.parametrize("test", list(_docstring_tests()))
def test_docstring_example(test):
    runner = doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False
    )
    runner.run(test, out=lambda text: print(text, end=""))
    assert runner.failures == 0, f"{test.name}: {runner.failures} failing example(s)"
