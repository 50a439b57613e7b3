"""One ``check_strength`` and one ``check_strengths`` (``otfair.utils._strength``)."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from otfair.utils import check_strength, check_strengths

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.mark.parametrize(
    "value, kwargs, expected",
    [
        (0, {}, 0.0),
        (2.5, {}, 2.5),
        (np.float32(0.5), {"maximum": 1.0}, 0.5),
        (-3, {"minimum": None}, -3.0),
    ],
)
def test_a_strength_is_returned_as_a_float(value, kwargs, expected):
    got = check_strength(value, **kwargs)
    assert got == expected and type(got) is float


@pytest.mark.parametrize(
    "value, kwargs, error, match",
    [
        (-0.1, {}, ValueError, r"`strength` must be a finite number >= 0; got -0.1"),
        (
            1.5,
            {"maximum": 1.0},
            ValueError,
            r"`strength` must be a finite number in \[0, 1\]; got 1.5",
        ),
        (np.inf, {}, ValueError, "`strength` must be a finite number >= 0"),
        (np.nan, {"minimum": None}, ValueError, "`strength` must be a finite number; got nan"),
        (True, {}, TypeError, "`strength` must be a finite number >= 0; got True"),
        ("1", {}, TypeError, "`strength` must be a finite number"),
        (
            [0.1, 1],
            {},
            ValueError,
            r"`strength` must be a number; got \[0.1, 1.0\]\..*fairness_path",
        ),
        (np.array([0.5]), {}, ValueError, "fairness_path"),
    ],
)
def test_a_bad_strength_is_refused_naming_it(value, kwargs, error, match):
    with pytest.raises(error, match=match):
        check_strength(value, **kwargs)
    with pytest.raises(error, match=match.replace("`strength`", "`lam`")):
        check_strength(value, "lam", **kwargs)


def test_strengths_keep_their_order_and_are_checked():
    assert check_strengths([2, 0.5, 0]) == [2.0, 0.5, 0.0]
    assert check_strengths(3) == [3.0]  # a path of one
    for bad, match in [
        ([], "must hold at least one value"),
        ([1.0, 1.0], "values must be distinct"),
        ([0.5, np.nan], "must be finite"),
        (["a"], "must be a list of numbers"),
        ([[0.1, 0.2]], r"must be a 1-D list of numbers; got shape \(1, 2\)"),
    ]:
        with pytest.raises(ValueError, match=f"`strengths` {match}"):
            check_strengths(bad)
    with pytest.raises(ValueError, match=r"`grid` must be >= 0; got \[0.5, -1.0\]"):
        check_strengths([0.5, -1.0], "grid", minimum=0.0)
    assert check_strengths([0.5, -1.0]) == [0.5, -1.0]  # no bound unless asked


def _defined_functions() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef):
                found.setdefault(node.name, []).append(path.relative_to(SRC).as_posix())
    return found


def test_one_home_for_the_strength_checks():
    defined = _defined_functions()
    for name in ("check_strength", "_check_strength", "check_strengths", "_check_strengths"):
        homes = [p for p in defined.get(name, []) if p != "otfair/utils/_strength.py"]
        assert not homes, (
            f"{name} is defined again in {homes}: use otfair.utils.{name.lstrip('_')}"
        )
