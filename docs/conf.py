"""Sphinx configuration of the otfair documentation site.

Build (no network needed):  python -m sphinx -W --keep-going -b html docs docs/_build/html
Stack: myst-parser (the Markdown pages), numpydoc + autosummary (the API reference, one
page per public name of every namespace's ``__all__``), sphinx-gallery (``examples/``,
executed at build time) and the PyData theme.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
REPO = DOCS.parent
# Document (and run the gallery against) this checkout's code, not an installed copy.
sys.path.insert(0, str(REPO / "src"))
# Real datasets beside the checkout, as tests/conftest.py does, when the variable is unset.
_SHARED = REPO.parent / "shared" / "datasets"
if "OTFAIR_DATA_DIR" not in os.environ and _SHARED.is_dir():
    os.environ["OTFAIR_DATA_DIR"] = str(_SHARED)
# The gallery's timings are for one thread per process (CI has 2 cores).
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MPLBACKEND", "agg")

from docutils import nodes  # noqa: E402
from sphinx import addnodes  # noqa: E402
from sphinx.transforms.post_transforms import SphinxPostTransform  # noqa: E402

import otfair  # noqa: E402

project = "otfair"
author = "otfair developers"
copyright = "otfair developers"  # noqa: A001
release = otfair.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
    # MathJax 3 copied into the site: the math renders offline (no CDN)
    "sphinx-mathjax-offline",
]

# --- sources -------------------------------------------------------------------------
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = [
    "_build",
    "api/generated/*.examples",
    # archived runs, their configs and scripts are data, not pages
    "**/runs/**",
    "**/figure_6_runs/**",
    "**/*.ipynb",
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "auto_examples/*.zip",
    "auto_examples/*.md5",
    "auto_examples/*.codeobj.json",
]
templates_path = ["_templates"]

# --- cross-references: every one must resolve (a wrong name fails the build) ---------
nitpicky = True
nitpick_ignore_regex = [
    # Third-party names: the build is offline, so there is no intersphinx inventory to
    # resolve them against (the docstrings still name them for the reader).
    (r"py:.*", r"(abc|warnings|numpy|torch|sklearn|fairlearn)(\..+)?"),
]
nitpick_ignore = [
    # Private base classes that ``:show-inheritance:`` names on public classes' pages:
    # implementation details with no page of their own (their public members are
    # documented on the subclasses).
    ("py:class", "otfair.estimators._torch_base.TorchEstimatorMixin"),
    ("py:class", "otfair.estimators.regression._base.FairRegressorMixin"),
    ("py:class", "otfair.estimators.regression._base.NeuralFairRegressor"),
    ("py:class", "otfair.estimators.representation._base.RepresentationClassifier"),
    ("py:class", "otfair.estimators.representation._base.RepresentationEstimator"),
    ("py:class", "otfair.estimators.representation._base.GroupWiseSearch"),
    ("py:class", "otfair.penalties._critics._JointAdversaryPenalty"),
    # parameter declarations shared by dataclass estimator families, and the penalty
    # protocol's private parts (the old evaluation methods, the grids' mixin)
    ("py:class", "otfair.estimators.preprocessing.adapfair.FlowParams"),
    ("py:class", "otfair.estimators.regression.nets.AdversarialNet"),
    ("py:class", "otfair.estimators.regression.baselines.CODParams"),
    ("py:class", "otfair.penalties._legacy.LegacyEvaluation"),
    ("py:class", "otfair.penalties._plan.StrengthGrids"),
]
# the long guides skip heading levels (## then ####) on purpose: not a broken page
suppress_warnings = ["myst.header"]

# --- Markdown (myst) -----------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 4  # `[text](page.md#a-heading)` links resolve
myst_dmath_double_inline = True

# --- API reference: autosummary + numpydoc -------------------------------------------
NAMESPACES = [
    "estimators",
    "penalties",
    "metrics",
    "ot",
    "datasets",
    "experiments",
    "experiments.methods",
    "reproduction",
    "notions",
]
#: the namespaces of the research harness, in the package otfair_lab (the others are
#: otfair's)
LAB_NAMESPACES = ["experiments", "experiments.methods", "reproduction"]


def module_name(ns: str) -> str:
    """Return the module of namespace ``ns``: ``otfair.<ns>`` or ``otfair_lab.<ns>``."""
    return f"otfair_lab.{ns}" if ns in LAB_NAMESPACES else f"otfair.{ns}"


autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "none"  # numpydoc's Parameters section carries the types
numpydoc_show_class_members = False  # the class template lists the methods
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True

# --- gallery -------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(REPO / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "backreferences_dir": "api/generated/backreferences",
    "doc_module": ("otfair", "otfair_lab"),
    "download_all_examples": False,
    "remove_config_comments": True,
    "plot_gallery": "True",
    "abort_on_example_error": False,
    "only_warn_on_example_error": False,
    "write_computation_times": True,
}

# --- HTML ----------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"otfair {release}"
html_static_path = ["_static"]
# long code lines and formulas scroll in their box, long API titles wrap (no clipping)
html_css_files = ["otfair.css"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 6,
    "icon_links": [],
}
html_show_sourcelink = False
# top-level pages without sub-pages: no empty "Section Navigation" column beside them
html_sidebars = {
    page: []
    for page in (
        "installation",
        "getting_started",
        "concepts",
        "faq",
        "citing",
        "changelog",
        "contributing",
        "building",
    )
}
# an explicit colour mode: with none the theme logs "invalid theme mode" on a first visit
html_context = {"default_mode": "light"}


#: the user-guide pages each namespace's API page links back to (docnames, first = main)
GUIDES = {
    "estimators": ("guide/index", "guide/otf", "guide/ftm", "guide/adapfair", "classifiers"),
    "penalties": ("guide/otf", "guide/ftm", "guide/extending", "extending"),
    "metrics": ("guide/metrics", "metrics"),
    "ot": ("guide/ot", "ot"),
    "datasets": ("datasets",),
    "experiments": ("guide/sweeps", "experiments"),
    "experiments.methods": ("experiments", "guide/extending"),
    "reproduction": ("guide/reproduction",),
    "notions": ("concepts",),
}


def api_page(ns: str) -> str:
    """Return the text of ``api/<ns>.rst``: one autosummary entry per ``__all__`` name.

    Under the title, a "User guide" line links the namespace's guide pages (``GUIDES``).
    """
    module = importlib.import_module(module_name(ns))
    title = f"``{module_name(ns)}``"
    lines = [title, "=" * len(title), ""]
    if ns in GUIDES:
        lines += ["User guide: " + ", ".join(f":doc:`/{doc}`" for doc in GUIDES[ns]), ""]
    lines += [f".. automodule:: {module_name(ns)}", "   :no-members:"]
    lines += ["", f".. currentmodule:: {module_name(ns)}", ""]
    lines += [".. autosummary::", "   :toctree: generated", "   :nosignatures:", ""]
    lines += [f"   {name}" for name in sorted(module.__all__, key=str.lower)]
    return "\n".join(lines) + "\n"


def _write_api_pages(app) -> None:
    """Write ``api/<namespace>.rst`` from the namespace's ``__all__`` (one stub per name).

    A name added to ``__all__`` gets its page at the next build; nothing is listed by hand.
    """
    out = DOCS / "api"
    out.mkdir(exist_ok=True)
    for ns in NAMESPACES:
        text = api_page(ns)
        page = out / f"{ns}.rst"
        if not page.exists() or page.read_text() != text:  # unchanged: no rebuild
            page.write_text(text)


def _link_extending(app, docname, source) -> None:
    """Point the "Extending otfair" guide at ``docs/extending.md`` once it exists."""
    if docname == "guide/extending" and (DOCS / "extending.md").exists():
        source[0] += "\n\n```{toctree}\n:maxdepth: 1\n\n../extending\n```\n"


_CDN_BLOCK = re.compile(r"^  \.\. raw:: html\n.*?(?=^  \.\. list-table::)", re.S | re.M)


def _offline_execution_times(app, docname, source) -> None:
    """Drop the CDN scripts and styles sphinx-gallery puts on its computation-times pages.

    ``sg_execution_times.rst`` (one per gallery and one for the site) loads jQuery,
    DataTables and Bootstrap from CDNs to make its table sortable; an offline build must
    load nothing from the network, so the page keeps the plain table.
    """
    if docname.endswith("sg_execution_times"):
        source[0] = _CDN_BLOCK.sub("", source[0])


def _skip_foreign_members(app, what, name, obj, skip, options):
    """Leave out methods inherited from scikit-learn (``set_fit_request``, ...)."""
    if getattr(obj, "__module__", None) and obj.__module__.startswith("sklearn"):
        return True
    return None


class _FolderLinksAsText(SphinxPostTransform):
    """A Markdown link to a committed folder (``runs/``, an archive) stays plain text.

    The archives are data, not pages (``exclude_patterns``); the link text names them.
    Runs before myst's own resolver, which would warn about the missing target.
    """

    default_priority = 5

    def run(self, **kwargs) -> None:
        for node in list(self.document.findall(addnodes.pending_xref)):
            target = node.get("reftarget", "")
            folder = DOCS / Path(self.env.docname).parent / target
            if node.get("reftype") == "myst" and target.endswith("/") and folder.is_dir():
                node.replace_self(node.children or [nodes.Text(target)])


# The API pages are written when this file is read, before Sphinx looks for its sources:
# a page written later (even at builder-inited) is not among the documents autosummary
# scans on a clean checkout, and its stubs would be missing.
_write_api_pages(None)


def setup(app):
    """Connect the hooks above (the API pages are already written)."""
    app.connect("source-read", _link_extending)
    app.connect("source-read", _offline_execution_times)
    app.connect("autodoc-skip-member", _skip_foreign_members)
    app.add_post_transform(_FolderLinksAsText)
