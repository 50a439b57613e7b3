"""Open the documentation site (or a sweep report) in headless Chromium and check it.

Usage::

    python tests/docs/browser_check.py                      # the built site, docs/_build/html
    python tests/docs/browser_check.py --build              # build it first (sphinx -W)
    python tests/docs/browser_check.py --report otfair-demo/report   # an HTML sweep report
    python tests/docs/browser_check.py --screenshots docs/_static/screenshots

The site is served on 127.0.0.1 by ``http.server``; Chromium (Debian's ``chromium``)
runs headless with a fresh profile and no network beyond 127.0.0.1, driven through the
DevTools protocol (``websocket-client``). For each page: no console error or uncaught
exception, no failed request to the local server, every image rendered
(``naturalWidth > 0``) and every internal link answered with HTTP 200. On the site, a
search for "wasserstein" must return results. External resources (MathJax's CDN) are
blocked and listed, not failed: the check is about this site's own files.
Exit status 0 when every check passes, 1 otherwise (each problem printed).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SITE = REPO / "docs" / "_build" / "html"
#: the pages of the site that are checked and photographed
SITE_PAGES = {
    "index": "index.html",
    "api": "api/generated/otfair.estimators.FairClassifier.html",
    "gallery": "auto_examples/plot_otf_tradeoff.html",
    "reproduction": "reproduction/otf/index.html",
    "installation": "installation.html",
    "getting_started": "getting_started.html",
    "concepts": "concepts.html",
    "faq": "faq.html",
    "changelog": "changelog.html",
    "otf_guide": "guide/otf.html",
    "execution_times": "sg_execution_times.html",
}
#: wide content (code, display math, tables, titles) that spills past its box at 1280 px
#: without a scrollable box around it is clipped at the right edge or overlaps the page
CLIPPED = """(async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
  }
  const out = [];
  const page = document.documentElement;
  if (page.scrollWidth > window.innerWidth + 1) {
    out.push(`the page is ${page.scrollWidth} px wide in a ${window.innerWidth} px window`);
  }
  const scrolls = (el) => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
  const wide = '.bd-article pre, .bd-article div.math, .bd-article mjx-container[display], '
    + '.bd-article table, .bd-article h1, .bd-article h2, .bd-article dt';
  for (const el of document.querySelectorAll(wide)) {
    // an inline box has no client width of its own: only blocks can be clipped
    if (getComputedStyle(el).display.startsWith('inline')) continue;
    if (el.scrollWidth <= el.clientWidth + 1 || scrolls(el)) continue;
    let box = el.parentElement;
    while (box && !box.classList.contains('bd-article') && !scrolls(box)) {
      box = box.parentElement;
    }
    if (!box || !scrolls(box)) {
      out.push(`${el.tagName.toLowerCase()} clipped: ${el.textContent.trim().slice(0, 60)}`);
    }
  }
  // a name or link that runs past the window's right edge is cut off (side bars too)
  const names = '.bd-sidebar-secondary a, .bd-sidebar-secondary code, '
    + '.bd-sidebar-primary a, .bd-article a, .bd-article code, .bd-header a';
  for (const el of document.querySelectorAll(names)) {
    const box = el.getBoundingClientRect();
    if (box.width > 0 && box.right > window.innerWidth + 1) {
      out.push(`past the right edge: ${el.textContent.trim().slice(0, 60)}`);
    }
  }
  return out;
})()"""
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--hide-scrollbars",
    "--window-size=1280,900",
    # nothing but the local server resolves: the check needs no network
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]


def find_chromium() -> str | None:
    """The Chromium executable, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        pass


class _Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        """A request the browser dropped by navigating on (a broken pipe) is no error."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def serve(root: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    """Serve ``root`` on 127.0.0.1 (a free port) in a thread; return the server and URL."""
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = _Server(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


class Browser:
    """Headless Chromium driven over the DevTools protocol (one tab)."""

    def __init__(self, executable: str):
        import websocket  # websocket-client, from the [docs] extra

        self.profile = tempfile.mkdtemp(prefix="otfair-chromium-")
        self.proc = subprocess.Popen(
            [
                executable,
                *CHROMIUM_FLAGS,
                "--remote-debugging-port=0",
                f"--user-data-dir={self.profile}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        port_file = Path(self.profile) / "DevToolsActivePort"
        deadline = time.time() + 30
        while not port_file.is_file() or not port_file.read_text().strip():
            if time.time() > deadline or self.proc.poll() is not None:
                self.close()
                raise RuntimeError("Chromium did not open its DevTools port in 30 s.")
            time.sleep(0.1)
        port = port_file.read_text().split()[0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
            tabs = [t for t in json.load(r) if t.get("type") == "page"]
        self.ws = websocket.create_connection(
            tabs[0]["webSocketDebuggerUrl"], timeout=60, suppress_origin=True
        )
        self.next_id = 0
        self.events: list[dict] = []
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=1280,
            height=900,
            deviceScaleFactor=1,
            mobile=False,
        )

    def call(self, method: str, **params):
        """Send one command and return its result (events met on the way are kept)."""
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)

    def wait_event(self, name: str, timeout: float = 60) -> None:
        """Wait for an event (e.g. ``Page.loadEventFired``)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if any(e["method"] == name for e in self.events):
                return
            self.ws.settimeout(max(0.1, deadline - time.time()))
            message = json.loads(self.ws.recv())
            if "method" in message:
                self.events.append(message)
        raise TimeoutError(f"no {name} within {timeout} s")

    def open(self, url: str) -> None:
        """Navigate and wait for the load event, then let scripts settle."""
        self.events = []
        self.call("Page.navigate", url=url)
        self.wait_event("Page.loadEventFired")
        time.sleep(1.0)
        self.evaluate("1")  # collects the events that arrived meanwhile

    def evaluate(self, expression: str):
        result = self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        return result.get("result", {}).get("value")

    def screenshot(self, path: Path) -> None:
        import base64

        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        with contextlib.suppress(Exception):  # closing after any earlier failure
            self.ws.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


def _local(url: str, base: str) -> bool:
    """A URL of the served folder (not the favicon that Chromium asks every server for)."""
    return url.startswith(base) and url != base + "favicon.ico"


def page_problems(browser: Browser, base: str, external: set[str]) -> list[str]:
    """Console errors, failed local requests, unrendered images and broken links."""
    problems = []
    failed_ids = {}
    for event in browser.events:
        method, params = event["method"], event.get("params", {})
        if method == "Runtime.exceptionThrown":
            problems.append(f"uncaught exception: {params['exceptionDetails'].get('text')}")
        elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"])
            problems.append(f"console error: {text}")
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            url = params["entry"].get("url", "")
            if url == base + "favicon.ico":
                continue
            if url and not _local(url, base):
                external.add(url)
            else:
                problems.append(f"console error: {params['entry']['text']} {url}")
        elif method == "Network.requestWillBeSent":
            failed_ids[params["requestId"]] = params["request"]["url"]
        elif method == "Network.loadingFailed":
            url = failed_ids.get(params["requestId"], "?")
            if _local(url, base):
                problems.append(f"request failed: {url} ({params.get('errorText')})")
            else:
                external.add(url)
        elif method == "Network.responseReceived":
            response = params["response"]
            if _local(response["url"], base) and response["status"] >= 400:
                problems.append(f"HTTP {response['status']}: {response['url']}")
    images = browser.evaluate(
        "Array.from(document.images).map(i => [i.currentSrc || i.src, i.complete, i.naturalWidth])"
    )
    problems += browser.evaluate(CLIPPED)
    for src, complete, width in images:
        if _local(src, base) and not (complete and width > 0):
            problems.append(f"image not rendered: {src}")
    links = browser.evaluate("Array.from(document.querySelectorAll('a[href]')).map(a => a.href)")
    for link in sorted({link.split("#")[0] for link in links if _local(link, base)}):
        try:
            with urllib.request.urlopen(link, timeout=10) as response:
                status = response.status
        except urllib.error.HTTPError as err:
            status = err.code
        if status != 200:
            problems.append(f"broken internal link: {link} (HTTP {status})")
    return problems


def check_site(root: Path, screenshots: Path | None) -> list[str]:
    """Check the pages of ``SITE_PAGES`` and the search of the built site."""
    problems = []
    external: set[str] = set()
    server, base = serve(root)
    browser = Browser(find_chromium())
    try:
        for name, page in SITE_PAGES.items():
            if not (root / page).is_file():
                problems.append(f"{name}: {page} is not in the built site")
                continue
            browser.open(base + page)
            found = page_problems(browser, base, external)
            n_images = browser.evaluate("document.images.length")
            print(f"{name:13s} {page}: {n_images} images, {len(found)} problems")
            problems += [f"{page}: {p}" for p in found]
            if screenshots is not None:
                if name == "gallery":  # the example's figure, not only its code
                    browser.evaluate(
                        "document.querySelector('img.sphx-glr-single-img')"
                        "?.scrollIntoView({block: 'center'})"
                    )
                    time.sleep(0.3)
                browser.screenshot(screenshots / f"{name}.png")
        browser.open(base + "search.html?q=wasserstein")
        hits = 0
        for _ in range(60):
            hits = browser.evaluate("document.querySelectorAll('#search-results li').length")
            if hits:
                break
            time.sleep(0.5)
        print(f"search        'wasserstein': {hits} results")
        if not hits:
            problems.append("search for 'wasserstein' returned no results")
        problems += [f"search.html: {p}" for p in page_problems(browser, base, external)]
    finally:
        browser.close()
        server.shutdown()
    if external:
        print(f"blocked external resources (not checked): {sorted(external)}")
    return problems


def check_report(root: Path, screenshot: Path | None = None) -> list[str]:
    """Check an HTML sweep report (``index.html`` of ``otfair sweep`` / ``otfair demo``)."""
    external: set[str] = set()
    server, base = serve(root)
    browser = Browser(find_chromium())
    try:
        browser.open(base + "index.html")
        problems = page_problems(browser, base, external)
        n_images = browser.evaluate("document.images.length")
        print(f"report        {root}: {n_images} images, {len(problems)} problems")
        if not n_images:
            problems.append("the report shows no image")
        if screenshot is not None:
            browser.screenshot(screenshot)
    finally:
        browser.close()
        server.shutdown()
    return [f"{root}/index.html: {p}" for p in problems]


def build_site() -> None:
    """Build the site with the project's one command (warnings are errors)."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "--keep-going",
            "-b",
            "html",
            "docs",
            "docs/_build/html",
        ],
        cwd=REPO,
        check=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=SITE, help="the built site")
    parser.add_argument("--build", action="store_true", help="build the site first")
    parser.add_argument("--screenshots", type=Path, help="save the pages' screenshots here")
    parser.add_argument(
        "--report",
        type=Path,
        action="append",
        default=[],
        help="an HTML sweep report folder to check instead (repeatable)",
    )
    args = parser.parse_args(argv)
    if find_chromium() is None:
        print("error: no chromium found (apt-get install -y chromium)", file=sys.stderr)
        return 2
    problems = []
    if args.report:
        for folder in args.report:
            shot = (
                args.screenshots / f"report_{folder.parent.name}.png" if args.screenshots else None
            )
            problems += check_report(folder, shot)
    else:
        if args.build:
            build_site()
        if not (args.site / "index.html").is_file():
            print(f"error: no built site at {args.site} (use --build)", file=sys.stderr)
            return 2
        problems = check_site(args.site, args.screenshots)
    for problem in problems:
        print("FAIL", problem)
    print("browser check:", "ok" if not problems else f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
