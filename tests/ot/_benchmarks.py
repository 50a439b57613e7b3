"""Import a script of the repository's ``benchmarks/`` directory (not a package) by name."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def load(name: str) -> ModuleType:
    """Return ``benchmarks/<name>.py`` as a module (cached in ``sys.modules``).

    The directory goes on ``sys.path`` as when the script runs, so that a benchmark can
    import its siblings (``from otf_alternating import AlternatingSolver``).
    """
    if str(BENCHMARKS) not in sys.path:
        sys.path.append(str(BENCHMARKS))
    key = f"_otfair_benchmarks_{name}"
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module
    spec.loader.exec_module(module)
    return module
