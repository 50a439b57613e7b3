"""Run the browser check (tests/docs/browser_check.py) where Chromium and a built site exist.

CI builds the site, then runs ``pytest tests/docs`` and the check itself; elsewhere this
test is skipped (no chromium, no ``websocket-client``, or no ``docs/_build/html``).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

spec = importlib.util.spec_from_file_location("browser_check", HERE / "browser_check.py")
browser_check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(browser_check)

needs_browser = pytest.mark.skipif(
    browser_check.find_chromium() is None or importlib.util.find_spec("websocket") is None,
    reason="needs chromium and websocket-client (pip install -e '.[docs]')",
)


@pytest.mark.network
@needs_browser
@pytest.mark.skipif(not (browser_check.SITE / "index.html").is_file(), reason="site not built")
def test_built_site_in_chromium(tmp_path):
    problems = browser_check.check_site(browser_check.SITE, tmp_path)
    assert not problems
    for name in browser_check.SITE_PAGES:
        assert (tmp_path / f"{name}.png").stat().st_size > 10_000


@pytest.mark.network
@needs_browser
@pytest.mark.skipif(
    not (REPO / "otfair-demo" / "report" / "index.html").is_file(),
    reason="no demo report (otfair demo --out otfair-demo)",
)
def test_demo_report_in_chromium():
    assert not browser_check.check_report(REPO / "otfair-demo" / "report")


@pytest.mark.network
def test_problem_detection_on_a_broken_page(tmp_path):
    """The checks find a missing image and a broken link (no browser needed for links)."""
    if browser_check.find_chromium() is None or importlib.util.find_spec("websocket") is None:
        pytest.skip("needs chromium and websocket-client")
    (tmp_path / "index.html").write_text(
        "<html><body><img src='missing.png'><a href='nowhere.html'>x</a>"
        "<script>console.error('boom')</script></body></html>"
    )
    problems = browser_check.check_report(tmp_path)
    text = "\n".join(problems)
    assert "image not rendered" in text
    assert "broken internal link" in text
    assert "console error: boom" in text
    assert "the report shows no image" not in text
