"""Every relative link of README.md and of the docs' Markdown pages resolves, both when the
page is read in the repository (on GitHub) and in the built site.

A link (or image, or a ``{figure}`` / ``{image}`` directive's file) must point at a file or
folder of the checkout that git does not ignore. The one exception is a page or figure
that the site build generates and git ignores (the gallery's pages and images, the API
namespace pages, the computation-times page): the site reaches it by a ``{doc}``
cross-reference (plain text in the repository, never a Markdown link there), and the
same paragraph (or figure caption) must also link its committed twin (the example's
script, the namespace's source, the measured build times), so that a reader of the
repository has a target too. A directive fence (a ``{figure}`` and its caption) shows as
code on GitHub, so a generated target in one needs its twin linked in the page's prose
as well. Once the site is built (``docs/_build/html``, as CI builds
it before running ``tests/docs`` again) the generated targets must be in it.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from _docs_conf import conf_namespaces

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
BUILT = DOCS / "_build" / "html"

#: a fenced block: its fence, info string and body (a longer fence may hold shorter ones)
_FENCE = re.compile(r"^(`{3,}|~{3,})([^\n]*)\n(.*?)^\1[ \t]*$", re.M | re.S)
#: myst directives whose body is Markdown that the site renders (links in it are links)
_PROSE_DIRECTIVES = {"figure", "image", "note", "warning", "tip", "important", "seealso"}
#: directives whose argument is a file
_FILE_DIRECTIVES = {"figure", "image"}
_CODE_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.S)
_COMMENT = re.compile(r"<!--.*?-->", re.S)
#: ``[text](target)`` / ``![alt](target "title")``; one level of brackets in the text
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def blocks(text: str) -> list[str]:
    """The paragraphs of ``text`` that can hold links, in order.

    Prose is split at blank lines; the body of a Markdown directive fence (a figure and its
    caption, a note) is one block, headed by its ``{name} argument`` line; code fences are
    dropped; HTML comments are removed.
    """
    text = _COMMENT.sub("", text)
    out: list[str] = []
    pos = 0

    def paragraphs(chunk: str) -> list[str]:
        return [p for p in re.split(r"\n[ \t]*\n", chunk) if p.strip()]

    for m in _FENCE.finditer(text):
        out += paragraphs(text[pos : m.start()])
        info = m.group(2).strip()
        directive = re.match(r"\{([\w-]+)\}", info)
        if directive and directive.group(1) in _PROSE_DIRECTIVES:
            out.append(f"{info}\n{m.group(3)}")
        pos = m.end()
    out += paragraphs(text[pos:])
    return out


def _is_directive(block: str) -> bool:
    """``block`` is a directive fence's body (as :func:`blocks` returns it)."""
    return block.startswith("{")


def block_targets(block: str) -> list[str]:
    """The relative link targets of one block (URLs left out, ``#anchor`` kept)."""
    targets = []
    first = block.split("\n", 1)[0]
    directive = re.match(r"\{([\w-]+)\}\s+(\S+)", first)
    if directive and directive.group(1) in _FILE_DIRECTIVES:
        targets.append(directive.group(2))
    targets += _LINK.findall(_CODE_SPAN.sub("``", block))
    return [t for t in targets if not urlparse(t).scheme]


def slug(heading: str) -> str:
    """A heading's anchor as GitHub and myst (``myst_heading_anchors``) write it."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


@functools.cache
def anchors(path: Path) -> frozenset[str]:
    """The anchors of a Markdown page: its headings' slugs (a repeated one gets ``-1``,
    ``-2``, ...), myst ``(label)=`` targets and HTML ``id`` / ``name`` attributes."""
    text = _COMMENT.sub("", path.read_text(encoding="utf-8"))
    prose = _FENCE.sub("", text)
    seen: dict[str, int] = {}
    out = set()
    for m in re.finditer(r"^#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$", prose, re.M):
        s = slug(m.group(1))
        out.add(f"{s}-{seen[s]}" if s in seen else s)
        seen[s] = seen.get(s, 0) + 1
    out |= set(re.findall(r"^\(([^()\s]+)\)=[ \t]*$", prose, re.M))
    out |= set(re.findall(r"\b(?:id|name)=\"([^\"]+)\"", text))
    return frozenset(out)


def repo_path(page: Path, target: str) -> str:
    """``target`` of a link on ``page`` as a POSIX path from the repository root
    (``..``-prefixed when it leaves the repository); no fragment, no trailing slash; a
    bare ``#anchor`` is the page itself."""
    path = unquote(urlparse(target).path) or page.name
    full = os.path.normpath(os.path.join(page.parent, path))
    return Path(os.path.relpath(full, REPO)).as_posix()


def _namespace_twins(ns: str) -> set[str]:
    if ns not in conf_namespaces():
        return set()  # not a page the build writes
    path = ns.replace(".", "/")  # experiments.methods -> src/otfair_lab/experiments/methods
    return {f"src/otfair/{path}/__init__.py", f"src/otfair/{path}", f"src/otfair/{path}.py"}


#: generated, git-ignored target -> (its committed twins, its file in the built site)
GENERATED: list[tuple[re.Pattern, Callable[[re.Match], set[str]], str]] = [
    (
        re.compile(r"docs/auto_examples/index\.rst"),
        lambda m: {"examples"},
        "auto_examples/index.html",
    ),
    (
        re.compile(r"docs/auto_examples/(plot_\w+)\.rst"),
        lambda m: {f"examples/{m[1]}.py"},
        r"auto_examples/\1.html",
    ),
    (
        re.compile(r"docs/auto_examples/images/(sphx_glr_(plot_\w+?)_\d{3}\.png)"),
        lambda m: {f"examples/{m[2]}.py"},
        r"_images/\1",
    ),
    (
        re.compile(r"docs/api/(?!index\.)([\w.]+)\.rst"),
        lambda m: _namespace_twins(m[1]),
        r"api/\1.html",
    ),
    (
        re.compile(r"docs/sg_execution_times\.rst"),
        lambda m: {"docs/measurements/docs_build.txt"},
        "sg_execution_times.html",
    ),
]


@functools.cache
def committed() -> frozenset[str] | None:
    """The files git tracks or would track (not ignored), or None outside a git checkout."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        return None
    res = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    )
    return frozenset(f for f in res.stdout.decode().split("\0") if f)


@functools.cache
def _committed_dirs() -> frozenset[str]:
    files = committed() or frozenset()
    return frozenset(str(parent.as_posix()) for f in files for parent in Path(f).parents)


def is_committed(rel: str) -> bool:
    """``rel`` (from the repository root) is a file or folder that git does not ignore."""
    if rel.startswith("../") or not (REPO / rel).exists():
        return False
    files = committed()
    if files is None:  # no git: existence is all that can be checked
        return True
    return rel in files or rel in _committed_dirs()


def problems(page: Path, text: str, built: Path | None = None) -> list[str]:
    """What is wrong with the relative links of ``text`` (the page at ``page``).

    ``built``: the built site, to check that each generated target is in it.
    """
    out = []
    every = blocks(text)
    in_prose = {
        repo_path(page, t) for b in every if not _is_directive(b) for t in block_targets(b)
    }
    for block in every:
        targets = block_targets(block)
        resolved = {repo_path(page, t) for t in targets}
        for target in targets:
            rel = repo_path(page, target)
            known = committed() is not None and is_committed(rel)  # a committed api/index.rst
            rules = [] if known else [r for r in GENERATED if r[0].fullmatch(rel)]
            rule = rules[0] if rules else None
            if rule is None:
                fragment = urlparse(target).fragment
                if not is_committed(rel):
                    out.append(f"{target} -> {rel}: not a committed file or folder")
                elif fragment and rel.endswith(".md") and fragment not in anchors(REPO / rel):
                    out.append(f"{target} -> {rel}: no heading or label #{fragment}")
                continue
            pattern, twins_of, html = rule
            match = pattern.fullmatch(rel)
            twins = {t for t in twins_of(match) if is_committed(t)}
            if not twins:
                out.append(f"{target} -> {rel}: no page the site build generates")
            elif not twins & resolved:
                out.append(
                    f"{target} -> {rel}: generated by the site build; link its committed "
                    f"twin ({' or '.join(sorted(twins))}) in the same paragraph"
                )
            elif _is_directive(block) and not twins & in_prose:
                out.append(
                    f"{target} -> {rel}: in a directive (code on GitHub); link its committed "
                    f"twin ({' or '.join(sorted(twins))}) in the page's prose too"
                )
            elif built is not None and not (built / match.expand(html)).is_file():
                out.append(f"{target} -> {rel}: not in the built site ({match.expand(html)})")
    return out


def pages() -> list[Path]:
    """README.md and every committed Markdown page under docs/."""
    files = committed()
    if files is not None:
        docs = sorted(REPO / f for f in files if f.startswith("docs/") and f.endswith(".md"))
    else:
        skip = {"_build", "auto_examples"}
        docs = [p for p in sorted(DOCS.rglob("*.md")) if not skip & set(p.parts)]
    return [REPO / "README.md", *docs]


PAGES = pages()


def _id(page: Path) -> str:
    return page.relative_to(REPO).as_posix()


def test_helpers_on_a_hand_made_page():
    page = (
        "See [a](docs/a.md#x), ![p](img/p.png), [web](https://x.org), [top](#top)\n"
        "and [`code` in text](b.py).\n\n"
        "Not a link: `[c](nowhere.md)`.\n"
        "```python\n[d](nowhere.md)\n```\n"
        "```{figure} fig.png\n:width: 10px\n\nA caption ([e](e.rst)).\n```\n"
        "<!-- [f](nowhere.md) -->\n"
        "- item [g](g.md),\n  [h](h.md)\n"
    )
    got = [block_targets(b) for b in blocks(page)]
    assert got == [
        ["docs/a.md#x", "img/p.png", "#top", "b.py"],
        [],
        ["fig.png", "e.rst"],
        ["g.md", "h.md"],
    ]
    assert repo_path(DOCS / "guide" / "x.md", "../../examples/a.py#l1") == "examples/a.py"
    assert repo_path(DOCS / "x.md", "../examples/") == "examples"
    assert repo_path(DOCS / "x.md", "#top") == "docs/x.md"


def test_anchors_of_a_hand_made_page(tmp_path):
    page = tmp_path / "p.md"
    page.write_text(
        "# The page\n\n## `otfair reproduce PAPER`\n\n## Results (so far)\n\n"
        "## Notes\n\n## Notes\n\n(my-label)=\n### [A link](x.md) in a heading\n\n"
        '```bash\n# not a heading\n```\n<a id="table-1"></a>\n',
        encoding="utf-8",
    )
    assert anchors(page) == {
        "the-page",
        "otfair-reproduce-paper",
        "results-so-far",
        "notes",
        "notes-1",
        "my-label",
        "a-link-in-a-heading",
        "table-1",
    }
    assert slug("The FTM paper's sweep, stacked: its wall time") == (
        "the-ftm-papers-sweep-stacked-its-wall-time"
    )


def test_problems_names_each_bad_link():
    page = DOCS / "guide" / "x.md"
    text = (
        "[missing](nothing_here.md) and [outside](../../../elsewhere.md).\n\n"
        "[the example](../auto_examples/plot_otf_tradeoff.rst) alone.\n\n"
        "[API](../api/ot.rst) ([source](../../src/otfair/ot/__init__.py)) and\n"
        "[the example](../auto_examples/plot_otf_tradeoff.rst)\n"
        "([script](../../examples/plot_otf_tradeoff.py)).\n\n"
        "[no such example](../auto_examples/plot_nothing.rst)"
        " ([script](../../examples/plot_nothing.py)).\n\n"
        "[ignored](../_build/html/index.html).\n\n"
        "[a heading](../ot.md#on-an-accelerator), [no heading](../ot.md#nowhere).\n\n"
        "```{figure} ../auto_examples/images/sphx_glr_plot_ftm_audit_001.png\n\n"
        "A caption ([script](../../examples/plot_ftm_audit.py)).\n```\n"
    )
    found = problems(page, text)
    assert len(found) == 8, found
    assert "nothing_here.md" in found[0] and "not a committed" in found[0]
    assert "elsewhere.md" in found[1]
    assert "plot_otf_tradeoff.rst" in found[2] and "examples/plot_otf_tradeoff.py" in found[2]
    assert "plot_nothing.rst" in found[3] and "no page the site build generates" in found[3]
    assert "examples/plot_nothing.py" in found[4] and "not a committed" in found[4]
    assert "_build" in found[5] and "not a committed" in found[5]  # built or not
    assert "#nowhere" in found[6] and "no heading" in found[6]
    assert "sphx_glr_plot_ftm_audit_001.png" in found[7] and "prose" in found[7]
    # the same figure passes once the page's prose links the script
    fixed = text + "\n- Gallery: [audit](../../examples/plot_ftm_audit.py).\n"
    assert len(problems(page, fixed)) == 7


def test_pages_are_found_and_have_links():
    assert len(PAGES) >= 30
    assert REPO / "docs" / "index.md" in PAGES
    links = sum(len(block_targets(b)) for p in PAGES for b in blocks(p.read_text("utf-8")))
    assert links >= 300


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_every_relative_link_resolves(page):
    found = problems(page, page.read_text(encoding="utf-8"))
    assert not found, f"{_id(page)}:\n" + "\n".join(found)


@pytest.mark.skipif(not (BUILT / "index.html").is_file(), reason="site not built")
def test_generated_targets_are_in_the_built_site():
    found = [
        f"{_id(page)}: {p}"
        for page in PAGES
        for p in problems(page, page.read_text(encoding="utf-8"), built=BUILT)
    ]
    assert not found, "\n".join(found)


#: a markdown link whose target is a page the site build generates (git-ignored)
_GENERATED_LINK = re.compile(
    r"\]\((?:\.\./)*(auto_examples/[\w/]+|sg_execution_times|api/(?!index\b)\w+)\.rst\)"
)
#: a ``{doc}`` role: a site-only cross-reference (plain text in the repository)
_DOC_ROLE = re.compile(r"\{doc\}`[^`<]*<(/[\w/]+)>`")


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_generated_pages_are_reached_by_doc_roles_not_links(page):
    """A reader of the repository gets no link it cannot follow: a generated page is a
    ``{doc}`` cross-reference of the site, beside the committed twin's Markdown link."""
    text = page.read_text(encoding="utf-8")
    assert not _GENERATED_LINK.findall(text), f"{_id(page)}: use {{doc}}`text </target>`"
    for target in _DOC_ROLE.findall(text):
        generated = target.startswith(("/auto_examples/", "/api/", "/sg_execution_times"))
        committed_page = any((DOCS / f"{target[1:]}{ext}").is_file() for ext in (".md", ".rst"))
        assert generated or committed_page, f"{_id(page)}: {{doc}} target {target} is no page"
        if generated and (BUILT / "index.html").is_file():
            assert (BUILT / f"{target[1:]}.html").is_file(), f"{target} is not in the built site"
