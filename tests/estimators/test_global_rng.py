"""Fitting and predicting leave the caller's global random streams untouched.

For every registered method (built through the registry, tiny budget): the states of
python's ``random``, numpy's legacy global generator and torch's CPU generator are equal
before and after ``fit`` and the prediction methods, with an integer ``random_state`` and
with ``random_state=None`` (a fresh seed drawn without the global generator).
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch
from _registry_estimators import method_names, tiny, toy_data


def _states() -> tuple:
    return random.getstate(), np.random.get_state(), torch.get_rng_state()  # noqa: NPY002


def _assert_same(before: tuple, after: tuple, what: str) -> None:
    assert before[0] == after[0], f"python's random state changed by {what}"
    for a, b in zip(before[1], after[1], strict=True):
        assert np.array_equal(a, b), f"numpy's global state changed by {what}"
    assert torch.equal(before[2], after[2]), f"torch's CPU state changed by {what}"


@pytest.mark.parametrize("random_state", [0, None])
@pytest.mark.parametrize("name", method_names())
def test_fit_and_predict_keep_the_global_random_state(name, random_state):
    X, y, s = toy_data(name)
    est = tiny(name, random_state=random_state)
    random.seed(123)
    np.random.seed(123)  # noqa: NPY002 - the caller's own global streams
    torch.manual_seed(123)
    before = _states()
    est.fit(X, y, sensitive_features=s)
    _assert_same(before, _states(), f"{name}.fit")
    for method in ("predict", "predict_proba", "transform"):
        if hasattr(est, method):
            getattr(est, method)(X)
            _assert_same(before, _states(), f"{name}.{method}")
    # the caller's streams continue exactly as if nothing had run
    expected = np.random.RandomState(123).rand()
    assert np.random.rand() == expected  # noqa: NPY002


def test_random_state_none_draws_fresh_seeds():
    X, y, s = toy_data("unfair")
    np.random.seed(0)  # noqa: NPY002
    first = tiny("unfair", random_state=None).fit(X, y, sensitive_features=s)
    np.random.seed(0)  # noqa: NPY002 - same global state: the fits must still differ
    second = tiny("unfair", random_state=None).fit(X, y, sensitive_features=s)
    assert not np.array_equal(first.predict_proba(X), second.predict_proba(X))
