"""The verdict rule: reproduced within the spread or 0.01, close within 0.03 or 2x."""

from __future__ import annotations

import math

import pytest

from otfair.reproduction import verdict


@pytest.mark.parametrize(
    ("paper", "ours", "ours_std", "paper_std", "expected"),
    [
        (0.743, 0.743, None, None, "reproduced"),
        (0.743, 0.733, None, None, "reproduced"),  # 0.010 absolute (edge)
        (0.743, 0.7329, None, None, "close"),
        (0.743, 0.713, None, None, "close"),  # 0.030 (edge)
        (0.743, 0.712, None, None, "differs"),
        (0.743, 0.713, 0.04, None, "reproduced"),  # within our seed spread
        (0.045, 0.080, None, 0.021, "close"),  # 0.035 <= 2 x 0.021
        (0.045, 0.090, None, 0.021, "differs"),
        (0.743, 0.70, math.nan, math.nan, "differs"),  # NaN std counts as 0
    ],
)
def test_rule(paper, ours, ours_std, paper_std, expected):
    assert verdict(paper, ours, ours_std, paper_std=paper_std) == expected


def test_symmetric_and_relative_tolerance():
    assert verdict(0.5, 0.52) == verdict(0.52, 0.5) == "close"
    assert verdict(6098, 6050, abs_tol=0, close_tol=0, rel_tol=0.01) == "reproduced"
    assert verdict(175, 200, abs_tol=0, close_tol=0, rel_tol=0.05) == "differs"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"paper_value": math.nan, "ours_mean": 0.5}, "paper_value"),
        ({"paper_value": 0.5, "ours_mean": math.inf}, "ours_mean"),
        ({"paper_value": 0.5, "ours_mean": 0.5, "ours_std": -1.0}, "ours_std"),
        ({"paper_value": 0.5, "ours_mean": 0.5, "abs_tol": -0.1}, "abs_tol"),
        ({"paper_value": 0.5, "ours_mean": 0.5, "close_tol": 0.001}, "close_tol"),
    ],
)
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        verdict(**kwargs)
