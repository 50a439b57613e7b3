"""Shared test configuration.

Real datasets are found by the library's own search order (``data_home`` >
``$OTFAIR_DATA_DIR`` > user cache > download, see ``otfair.datasets``); the only thing
added here is ``OTFAIR_DATA_DIR=../shared/datasets`` (beside the checkout) when the
variable is unset and that folder exists.
"""

from __future__ import annotations

import functools
import http.server
import os
import threading
from pathlib import Path

import numpy as np
import pytest

_REPO = Path(__file__).resolve().parents[1]
_SHARED = _REPO.parent / "shared" / "datasets"

if "OTFAIR_DATA_DIR" not in os.environ and _SHARED.is_dir():
    os.environ["OTFAIR_DATA_DIR"] = str(_SHARED)

# One torch thread per test worker: CI runs `pytest -n 2` on 2 cores.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


@pytest.fixture(params=[0, 1, 2])
def rng(request) -> np.random.Generator:
    """A numpy Generator seeded 0, 1 and 2 in turn: the test runs once per seed."""
    return np.random.default_rng(request.param)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The directory holding the benchmark files, found by the library's search order.

    It must exist in CI (``../shared/datasets``, ``$OTFAIR_DATA_DIR`` or a cache filled
    by ``otfair datasets fetch --all``); nothing is skipped.
    """
    from otfair.datasets._fetch import locate

    found = locate("adult/adult.data")
    assert found is not None, (
        "no data directory holds adult/adult.data: set OTFAIR_DATA_DIR or run "
        "`otfair datasets fetch --all`"
    )
    return found.path


@pytest.fixture
def isolated_data(tmp_path, monkeypatch) -> Path:
    """An empty user cache and no ``$OTFAIR_DATA_DIR``: only what a test puts there.

    Returns the (not yet created) user cache directory ``<tmp>/xdg/otfair``.
    """
    from otfair.datasets import _verify

    monkeypatch.delenv("OTFAIR_DATA_DIR", raising=False)
    monkeypatch.delenv("OTFAIR_VERIFY", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    _verify.forget()
    yield tmp_path / "xdg" / "otfair"
    _verify.forget()


class _Handler(http.server.SimpleHTTPRequestHandler):
    requests: list[str] = []

    def do_GET(self):  # noqa: N802 - http.server API
        type(self).requests.append(self.path)
        super().do_GET()

    def log_message(self, *args):
        pass


@pytest.fixture
def http_server(tmp_path):
    """A local HTTP server: ``(root folder served, base URL, list of request paths)``."""
    root = tmp_path / "www"
    root.mkdir()
    _Handler.requests = []
    handler = functools.partial(_Handler, directory=str(root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{httpd.server_address[1]}", _Handler.requests
    httpd.shutdown()
    httpd.server_close()
    thread.join(5)


@pytest.fixture
def unreachable_url():
    """A URL on a local port where nobody listens (a download fails at once)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture(autouse=True)
def _torch_single_thread():
    import torch

    torch.set_num_threads(1)
    yield
