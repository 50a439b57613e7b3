"""otfair.utils.to_jsonable: strict JSON of results, the same as the run store's copy."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from otfair.utils import to_jsonable

CASES = [
    {"gap": float("nan"), "n": np.int64(3), "ok": np.bool_(True), 1: (0.5, np.inf)},
    [np.float32(0.25), -np.inf, None, "text", np.array([[1, 2], [3, 4]])],
    {"nested": {"labels": np.array(["female", "male"]), "x": np.float64(-0.0)}},
    pd.Timestamp("2026-12-01"),
]


@pytest.mark.parametrize("value", CASES)
def test_result_is_strict_json_and_round_trips(value):
    out = to_jsonable(value)
    assert json.loads(json.dumps(out, allow_nan=False)) == out


def test_values_it_converts():
    out = to_jsonable(CASES[0])
    assert out == {"gap": None, "n": 3, "ok": True, "1": [0.5, None]}
    assert type(out["n"]) is int and type(out["ok"]) is bool
    assert to_jsonable(CASES[1])[4] == [[1, 2], [3, 4]]
    assert to_jsonable(CASES[3]) == str(CASES[3])


@pytest.mark.parametrize("value", CASES)
def test_same_as_the_run_stores_copy(value):
    from otfair_lab.experiments._store import to_jsonable as store_copy

    assert to_jsonable(value) == store_copy(value)
