"""The declared dependency lower bounds are the versions CI tests (issue 28)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def _lower_bounds() -> dict[str, str]:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    out = {}
    for dep in deps:
        m = re.fullmatch(r"([A-Za-z0-9_.\-\[\]]+)>=([0-9.]+)(;.*)?", dep.replace(" ", ""))
        if m and ";" not in dep:
            out[m.group(1).split("[")[0].lower()] = m.group(2)
    return out


def _constraints() -> dict[str, str]:
    out = {}
    for line in (ROOT / "ci" / "constraints-oldest.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, version = line.split("==")
            out[name.lower()] = version
    return out


def test_every_lower_bound_is_pinned_in_the_oldest_constraints():
    bounds, pins = _lower_bounds(), _constraints()
    # torch: CI can only install the CPU wheel 2.13.0 on its disk (said in the file)
    assert set(bounds) - {"torch"} == set(pins)
    for name, pinned in pins.items():
        declared = tuple(int(x) for x in bounds[name].split("."))
        got = tuple(int(x) for x in pinned.split(".")[: len(declared)])
        assert got == declared, f"{name}: declared >={bounds[name]}, CI pins {pinned}"


def test_ci_runs_the_readme_commands_and_the_oldest_versions():
    ci = (ROOT / ".ci" / "run").read_text()
    readme = (ROOT / "README.md").read_text()
    for command in re.findall(
        r"```bash\n(python3 -m venv .*?|\. \.venv/bin/activate .*?)\n```", readme
    ):
        assert command in ci, command
    assert "-c ci/constraints-oldest.txt" in ci


def test_ci_tests_the_built_wheel_outside_the_checkout():
    """`.ci/run` builds the wheel, installs it (not editable) into a fresh environment
    and runs the smoke script and fast tests against it from outside the checkout."""
    ci = (ROOT / ".ci" / "run").read_text()
    build = ci.index("python -m build")
    assert ci.index("-m pytest -n 2 -m slow") < build < ci.index("python -m sphinx")
    assert "python3 -m venv /tmp/otfair-wheel-venv" in ci
    assert 'pip install -q "$(ls "$CHECKOUT"/dist/otfair-*.whl)[dev]"' in ci
    assert "cd /tmp/otfair-wheel-run" in ci and "ci/wheel_smoke.py" in ci
    assert ci.count("OTFAIR_TEST_INSTALLED=1 python -m pytest") == 2
    assert (ROOT / "ci" / "wheel_smoke.py").is_file()
    dev = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(dep.startswith("build") for dep in dev["dev"])
