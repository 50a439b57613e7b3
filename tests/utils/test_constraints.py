"""Parameters declared once: the constraint helpers and their messages."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from sklearn.base import BaseEstimator

from otfair.utils import (
    DEVICE,
    RANDOM_STATE,
    InvalidParameterError,
    Widths,
    check_params,
    fit_context,
    non_negative_real,
    positive_int,
    positive_real,
    validate_option,
)


class _Toy(BaseEstimator):
    _parameter_constraints = {
        "epochs": [positive_int()],
        "lr": [positive_real()],
        "lam": [non_negative_real()],
        "hidden": [Widths()],
        "random_state": RANDOM_STATE,
        "device": DEVICE,
    }

    def __init__(self, epochs=1, lr=0.1, lam=0.0, hidden=(), random_state=None, device=None):
        self.epochs, self.lr, self.lam, self.hidden = epochs, lr, lam, hidden
        self.random_state, self.device = random_state, device

    @fit_context
    def fit(self, X=None, y=None):
        self.fitted_ = True
        return self


@pytest.mark.parametrize(
    "name, value",
    [
        ("epochs", 3),
        ("lr", 1e-3),
        ("lam", 0),
        ("hidden", [4, 2]),
        ("hidden", ()),
        ("random_state", 2**32 - 1),
        ("random_state", np.random.RandomState(0)),
        ("random_state", np.random.default_rng(0)),
        ("random_state", None),
        ("device", "cuda:1"),
        ("device", torch.device("cpu")),
    ],
)
def test_valid_values_pass(name, value):
    assert validate_option(_Toy, name, value) is value
    _Toy(**{name: value}).fit()


@pytest.mark.parametrize(
    "name, value, accepted",
    [
        ("epochs", 0, r"an int in the range \[1, inf\)"),
        ("epochs", 2.0, r"an int in the range \[1, inf\)"),
        ("lr", 0.0, r"a float in the range \(0.0, inf\)"),
        ("lam", -1, r"a float in the range \[0.0, inf\)"),
        ("hidden", (4, 0), "a tuple or list of positive ints"),
        ("hidden", 4, "a tuple or list of positive ints"),
        ("random_state", -1, "a numpy.random.Generator or None"),
        ("random_state", "x", r"an int in the range \[0, 4294967295\]"),
        ("device", 3, "a torch.device"),
    ],
)
def test_bad_values_name_the_parameter_and_what_it_accepts(name, value, accepted):
    got = re.escape(repr(value))
    pattern = f"The '{name}' parameter of _Toy must be .*{accepted}.* Got {got} instead"
    with pytest.raises(InvalidParameterError, match=pattern):
        validate_option(_Toy, name, value)
    with pytest.raises(InvalidParameterError, match=pattern):  # the same message from fit
        _Toy(**{name: value}).fit()
    with pytest.raises(ValueError):  # InvalidParameterError is a ValueError and a TypeError
        check_params(_Toy(), {name: value})


def test_unknown_parameter_and_missing_constraints():
    with pytest.raises(InvalidParameterError, match="_Toy has no parameter 'nosuch'"):
        check_params(_Toy, {"nosuch": 1})
    with pytest.raises(TypeError, match="declares no `_parameter_constraints`"):
        check_params(BaseEstimator, {})
    assert check_params(_Toy, {"epochs": 2, "lr": 1.0}) == {"epochs": 2, "lr": 1.0}


def test_widths_without_empty():
    assert not Widths(allow_empty=False).is_satisfied_by(())
    assert Widths().is_satisfied_by(())
    assert not Widths().is_satisfied_by((True,))
