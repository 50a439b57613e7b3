"""Every module of ``otfair`` and ``otfair_lab`` stays under 500 lines (one job per module)."""

from __future__ import annotations

from pathlib import Path

import otfair
import otfair_lab

MAX_LINES = 500
SRC = Path(otfair.__file__).parent
LAB = Path(otfair_lab.__file__).parent

#: Modules allowed past the limit (a name here needs a reason beside it), by their path
#: inside their package.
ALLOWED: frozenset[str] = frozenset(
    {
        # FairClassifier: its numpydoc documents 25 parameters (~170 lines), and a fit
        # may enter only six modules of estimators/ and penalties/
        # (tests/estimators/test_fit_files_entered.py), so its two solvers' set-up stays
        # beside the settings they read
        "estimators/classification/fair_classifier.py",
    }
)


def test_no_module_exceeds_the_line_limit():
    too_long = {}
    for path in sorted([*SRC.rglob("*.py"), *LAB.rglob("*.py")]):
        rel = path.relative_to(LAB if path.is_relative_to(LAB) else SRC).as_posix()
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MAX_LINES and rel not in ALLOWED:
            too_long[rel] = n
    assert not too_long, f"modules over {MAX_LINES} lines: {too_long}"
