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

#: Helper modules (``_name.py``) are imported by the tests that need them, never collected:
#: ``--doctest-modules`` (pyproject's addopts) would import them all at collection, and
#: some register toy methods in the registry, which would change other modules' cases.
collect_ignore_glob = ["_[!_]*.py", "*/_[!_]*.py"]

_REPO = Path(__file__).resolve().parents[1]
_SHARED = _REPO.parent / "shared" / "datasets"

if "OTFAIR_DATA_DIR" not in os.environ and _SHARED.is_dir():
    os.environ["OTFAIR_DATA_DIR"] = str(_SHARED)

# `.ci/run` runs the fast tests a second time against the built wheel installed in a fresh
# environment (not editable), from outside the checkout: OTFAIR_TEST_INSTALLED=1 asks that
# otfair then really comes from that install, not from this checkout's src/.
if os.environ.get("OTFAIR_TEST_INSTALLED") == "1":
    import otfair as _otfair

    _where = Path(_otfair.__file__).resolve()
    assert "site-packages" in _where.parts and _REPO not in _where.parents, (
        f"OTFAIR_TEST_INSTALLED=1 but otfair is imported from {_where}"
    )

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


@pytest.fixture(autouse=True, scope="session")
def _torch_single_thread_session():
    """One torch thread from the start, so module fixtures' fits run as the tests' do.

    A function-scoped autouse fixture is set up after a test's module fixtures: a module
    fixture built by a worker's first test would otherwise fit on torch's default threads
    and the test body on one. Fits are meant not to depend on it (an OTF logistic fit
    did, by 0.02 in probability, until the two-group OTF0's value stopped jumping under
    rounding: ``tests/estimators/test_otf_lbfgs.py``); one thread keeps the comparisons
    of two fits exact all the same.
    """
    import torch

    torch.set_num_threads(1)
    yield


@pytest.fixture(autouse=True)
def _torch_single_thread():
    import torch

    torch.set_num_threads(1)
    yield


# --------------------------------------------------------------------------------------
# The fast default and the `slow` set: `python -m pytest -n 2` runs every test not marked
# slow (addopts `-m "not slow"` in pyproject.toml); `python -m pytest -n 2 -m slow` runs
# the rest. .ci/run runs both, so CI still covers everything.
# --------------------------------------------------------------------------------------

#: Tests marked slow here rather than in their module (node-id prefixes), with why. Chosen
#: from per-test durations measured with `pytest -n 2 -p durplug` on the 2-core
#: development machine under load (each over ~8 s there): real-data end-to-end runs,
#: subprocess CLI runs that import torch, and long trainings.
SLOW_TESTS: dict[str, str] = {
    "tests/cli/test_newcomer_errors.py": "63 subprocess CLI runs, each importing the package",
    "tests/cli/test_cli_demo.py::test_demo_end_to_end": "the whole demo sweep",
    "tests/cli/test_cli_demo.py::test_law_school_demo_settings": "a real-data demo fit",
    "tests/cli/test_cli_datasets.py::test_subprocess_missing_data_no_traceback": "subprocess",
    "tests/cli/test_cli_sweep.py::test_sweep_with_failures_exits_1": "a sweep with a report",
    "tests/cli/test_cli_sweep.py::test_unreachable_scheduler_is_one_line": "dask start-up",
    "tests/baselines/test_representation.py::test_strength_lowers_the_dp_gap": "trainings",
    "tests/baselines/test_representation.py::test_fair_nf_dp_gap_falls_with_gamma": "Crime",
    "tests/baselines/test_representation.py::test_cfair_eo_gap_falls_with_mu": "Adult",
    "tests/baselines/test_ot_repair.py::test_adult_total_repair": "Adult",
    "tests/baselines/test_fair_nf_discrete.py::test_adult_dp_gap_halves": "Adult",
    "tests/baselines/test_fair_nf_density.py::test_kde_fit_is_seeded": "two KDE fits",
    "tests/baselines/test_cod_rff.py": "QCQP solves on Law School",
    "tests/baselines/test_wb_regression.py::test_agrees_with_equipy": "equipy comparison",
    "tests/benchmarks/test_peers_smoke.py": "peer libraries' trainings",
    "tests/estimators/test_classif_reduction_registry.py": "fairlearn reductions",
    "tests/golden/test_golden_fit.py::test_fit_panel_matches_golden": "37 CLI fits",
    "tests/golden/test_golden_fit.py::test_a_perturbed_model_fails": "3 CLI fits",
    "tests/reproduction/": "reproduction protocols end to end",
}

#: scikit-learn's checks in the fast set: one method per estimator family (plain and
#: penalized FairClassifier, a representation learner, a regression net, a fairlearn
#: wrapper, a post-processor), so a fast run still catches an API break; every method's
#: checks run in the slow set.
FAST_SKLEARN_METHODS = frozenset(
    {"unfair", "otf", "laftr", "cenet", "reduction", "wb-postprocess"}
)


def pytest_collection_modifyitems(config, items):
    slow = pytest.mark.slow
    for item in items:
        nodeid = item.nodeid
        if any(nodeid.startswith(prefix) for prefix in SLOW_TESTS):
            item.add_marker(slow)
        elif nodeid.startswith("tests/estimators/test_sklearn_checks.py::test_sklearn_checks["):
            method = item.module._METHOD_OF.get(id(item.callspec.params["estimator"]))
            if method not in FAST_SKLEARN_METHODS:
                item.add_marker(slow)
