"""The API reference has one page per public name of every namespace.

``docs/conf.py`` writes ``docs/api/<namespace>.rst`` from the namespace's ``__all__`` at
build time and autosummary turns each entry into a page. These tests check the parts
that can fail without a build (every namespace declares ``__all__``, every name resolves
and is listed) and, when a built site is present (``docs/_build/html``, as CI builds it
before running ``tests/docs`` again), that every name has its HTML page.
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

import pytest
from _docs_conf import conf_namespaces, module_name

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
BUILT = DOCS / "_build" / "html"
NAMESPACES = list(conf_namespaces())  # docs/conf.py's, read without Sphinx


@pytest.fixture(scope="module")
def conf():
    pytest.importorskip(
        "sphinx", reason="the docs extra is not installed (pip install -e '.[docs]')"
    )
    spec = importlib.util.spec_from_file_location("otfair_docs_conf", DOCS / "conf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_conf_documents_every_namespace(conf):
    assert conf.NAMESPACES == NAMESPACES


@pytest.mark.parametrize("ns", NAMESPACES)
def test_namespace_declares_all_and_names_resolve(ns):
    module = importlib.import_module(module_name(ns))
    names = getattr(module, "__all__", None)
    assert names, f"{module_name(ns)} declares no __all__"
    assert len(set(names)) == len(names), f"{module_name(ns)}.__all__ repeats a name"
    missing = [name for name in names if not hasattr(module, name)]
    assert not missing, f"{module_name(ns)}.__all__ names missing attributes: {missing}"


@pytest.mark.parametrize("ns", NAMESPACES)
def test_generated_page_lists_every_public_name(conf, ns):
    text = conf.api_page(ns)
    listed = {line.strip() for line in text.split(".. autosummary::")[1].splitlines()[4:] if line}
    public = set(importlib.import_module(module_name(ns)).__all__)
    assert listed == public


@pytest.mark.parametrize("ns", NAMESPACES)
def test_api_page_links_back_to_its_user_guide(conf, ns):
    """Each namespace's page opens with a "User guide" line naming existing guide pages."""
    docs = conf.GUIDES.get(ns)
    assert docs, f"docs/conf.py's GUIDES names no user-guide page for {module_name(ns)}"
    missing = [doc for doc in docs if not (DOCS / f"{doc}.md").is_file()]
    assert not missing, f"{module_name(ns)}: GUIDES names missing pages {missing}"
    head = conf.api_page(ns).split(".. automodule::")[0]
    assert "User guide: " + ", ".join(f":doc:`/{doc}`" for doc in docs) in head


def test_api_index_links_every_namespace():
    index = (DOCS / "api" / "index.rst").read_text()
    for ns in NAMESPACES:
        assert f"\n   {ns}\n" in index, f"docs/api/index.rst does not list {ns}"


def test_every_estimator_docstring_cites_and_shows(conf):
    """Each estimator's page shows its paper (References) and a short example."""
    import inspect

    from sklearn.base import BaseEstimator

    from otfair import estimators

    # FairnessCV implements no paper: a model-selection tool (its See Also names LassoCV)
    no_paper = {"FairnessCV"}
    lacking = []
    for name in estimators.__all__:
        obj = getattr(estimators, name)
        if inspect.isclass(obj) and issubclass(obj, BaseEstimator):
            doc = inspect.getdoc(obj) or ""
            for section in ("Parameters", "References", "Examples"):
                if section == "References" and name in no_paper:
                    continue
                if f"\n{section}\n--" not in doc:
                    lacking.append(f"{name}: {section}")
    assert not lacking, f"estimator docstrings lack sections: {lacking}"


@pytest.mark.skipif(not (BUILT / "index.html").is_file(), reason="site not built")
@pytest.mark.parametrize("ns", NAMESPACES)
def test_built_site_has_a_page_per_public_name(ns):
    module = importlib.import_module(module_name(ns))
    pages = BUILT / "api" / "generated"
    missing = [n for n in module.__all__ if not (pages / f"{module_name(ns)}.{n}.html").is_file()]
    assert not missing, f"no page for {module_name(ns)}: {missing}"
