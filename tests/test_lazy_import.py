"""``import otfair`` reaches its subpackages lazily (PEP 562), and stays light.

Each check runs in a fresh interpreter, since this test session has imported everything
already.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys


def _run(code: str) -> dict:
    # the child imports the otfair this session imports (its PYTHONPATH, or the install)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_otfair_is_light():
    got = _run(
        "import json, sys, otfair\n"
        "print(json.dumps({'heavy': sorted(m for m in ('torch', 'sklearn', 'pandas')"
        " if m in sys.modules), 'loaded': sorted(m for m in sys.modules"
        " if m.startswith('otfair.'))}))"
    )
    assert got["heavy"] == []
    assert got["loaded"] == ["otfair._version"]


def test_subpackages_are_reached_on_attribute_access():
    got = _run(
        "import json, otfair\n"
        "cls = otfair.estimators.FairClassifier\n"
        "from otfair.estimators import FairClassifier\n"
        "print(json.dumps({'same': cls is FairClassifier,"
        " 'metrics': callable(otfair.metrics.demographic_parity_gap),"
        " 'dir': [n for n in ('estimators', 'metrics', 'datasets') if n in dir(otfair)],"
        " 'all': sorted(otfair.__all__)}))"
    )
    assert got["same"] is True
    assert got["metrics"] is True
    assert got["dir"] == ["estimators", "metrics", "datasets"]
    assert "estimators" in got["all"] and "__version__" in got["all"]


def test_an_unknown_attribute_is_an_attribute_error():
    got = _run(
        "import json, otfair\n"
        "try:\n    otfair.nosuch\n    r = None\n"
        "except AttributeError as e:\n    r = str(e)\n"
        "print(json.dumps({'error': r, 'has': hasattr(otfair, 'nosuch')}))"
    )
    assert got["error"] == "module 'otfair' has no attribute 'nosuch'"
    assert got["has"] is False


def test_the_library_loads_nothing_of_the_lab():
    got = _run(
        "import json, sys, otfair\n"
        "import otfair.estimators, otfair.metrics, otfair.datasets\n"
        "try:\n    getattr(otfair, 'experiments')\n    r = None\n"
        "except AttributeError as e:\n    r = str(e)\n"
        "print(json.dumps({'error': r, 'lab': sorted(m for m in sys.modules"
        " if m.startswith('otfair_lab'))}))"
    )
    assert got["lab"] == []
    assert "otfair_lab.experiments" in got["error"]


def test_the_lab_reaches_its_subpackages_lazily():
    got = _run(
        "import json, sys, otfair_lab\n"
        "light = sorted(m for m in ('torch', 'sklearn') if m in sys.modules)\n"
        "values = otfair_lab.reproduction.load_paper_values\n"
        "from otfair_lab.reproduction import load_paper_values\n"
        "print(json.dumps({'light': light, 'same': values is load_paper_values,"
        " 'all': sorted(otfair_lab.__all__)}))"
    )
    assert got["light"] == []
    assert got["same"] is True
    assert got["all"] == ["cli", "experiments", "reproduction"]
