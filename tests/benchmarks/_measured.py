"""The committed measurement files and the benchmark scripts that wrote them (test helpers)."""

from __future__ import annotations

import csv
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
MEASURED = ROOT / "docs" / "measurements"


def measured_rows(name: str) -> list[dict[str, str]]:
    """Return the rows of ``docs/measurements/<name>.csv`` as strings."""
    with (MEASURED / f"{name}.csv").open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def benchmark_script(name: str) -> ModuleType:
    """Import ``benchmarks/<name>.py`` (with ``benchmarks/`` on the path for ``_common``)."""
    folder = str(ROOT / "benchmarks")
    sys.path.insert(0, folder)
    try:
        spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(folder)
