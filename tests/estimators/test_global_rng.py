"""Randomness kept local: a fit neither seeds, draws from nor restores the global generators.

For every registered method (built through the registry, tiny budget):

* the states of python's ``random``, numpy's legacy global generator and torch's CPU
  generator are equal before and after ``fit`` and the prediction methods, with an
  integer ``random_state`` and with ``random_state=None``;
* a second thread that draws from numpy's and torch's global generators (and python's)
  *while* the fit runs gets exactly the sequence it gets without the fit: the fit does
  not seed or restore them (a fork-and-restore passes the first check, not this one);
* the same two checks hold for a path fit (:func:`otfair.estimators.fairness_path`, one
  stacked run of K strengths) of the regression nets and of ``FairClassifier``;
* ``random_state`` may be an int, None, a ``RandomState`` or a ``Generator``; a fresh
  ``RandomState(0)`` / ``default_rng(0)`` gives the same fit twice.
"""

from __future__ import annotations

import random
import sys
import threading
import time

import numpy as np
import pytest
import torch
from _registry_estimators import method_names, tiny, toy_data

from otfair.estimators import fairness_path
from otfair.estimators._path import supports_stacking


def _states() -> tuple:
    return random.getstate(), np.random.get_state(), torch.get_rng_state()  # noqa: NPY002


def _assert_same(before: tuple, after: tuple, what: str) -> None:
    assert before[0] == after[0], f"python's random state changed by {what}"
    for a, b in zip(before[1], after[1], strict=True):
        assert np.array_equal(a, b), f"numpy's global state changed by {what}"
    assert torch.equal(before[2], after[2]), f"torch's CPU state changed by {what}"


def _fit(name: str, random_state=0):
    X, y, s = toy_data(name)
    return tiny(name, random_state=random_state).fit(X, y, sensitive_features=s), X


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


def _draw_while(busy: threading.Event, started: threading.Event) -> dict[str, list]:
    """Seed the global generators, then draw from them until ``busy`` is cleared."""
    out: dict[str, list] = {"np": [], "torch": [], "py": []}
    random.seed(7)
    np.random.seed(7)  # noqa: NPY002 - this thread's global streams
    torch.manual_seed(7)
    started.set()
    while busy.is_set():
        out["np"].append(np.random.random_sample())  # noqa: NPY002
        out["torch"].append(float(torch.rand(1)))
        out["py"].append(random.random())
        time.sleep(1e-4)  # let the fit run between the draws
    return out


def _expected(n: int) -> dict[str, list]:
    rs, py = np.random.RandomState(7), random.Random(7)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(7)
        t = [float(torch.rand(1)) for _ in range(n)]
    return {
        "np": [rs.random_sample() for _ in range(n)],
        "torch": t,
        "py": [py.random() for _ in range(n)],
    }


def _assert_own_sequence_during(work, what: str) -> None:
    """Run ``work()`` while a second thread draws from the global generators; check them."""
    busy, started = threading.Event(), threading.Event()
    busy.set()
    result: dict[str, dict] = {}
    thread = threading.Thread(target=lambda: result.update(d=_draw_while(busy, started)))
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)  # interleave the two threads finely
    try:
        thread.start()
        started.wait()
        work()
    finally:
        busy.clear()
        thread.join()
        sys.setswitchinterval(interval)
    draws = result["d"]
    n = len(draws["np"])
    assert n > 0, "the second thread drew nothing during the fit"
    expected = _expected(n)
    for kind in ("np", "torch", "py"):
        changed = sum(a != b for a, b in zip(draws[kind], expected[kind], strict=True))
        assert changed == 0, f"{what} changed {changed} of {n} {kind} draws of another thread"


@pytest.mark.parametrize("name", method_names())
def test_a_second_thread_draws_its_own_sequence_during_fit(name):
    X, y, s = toy_data(name)
    est = tiny(name, random_state=0)

    def work() -> None:
        est.fit(X, y, sensitive_features=s)
        for method in ("predict_proba", "transform"):
            if hasattr(est, method):
                getattr(est, method)(X)

    _assert_own_sequence_during(work, f"{name}.fit")


#: Methods whose estimators fit a whole path in one stacked run (the regression nets'
#: ``__otfair_fit_path__`` and FairClassifier's curve).
PATH_METHODS = ["cenet", "wassersteinnet", "otf"]


@pytest.mark.parametrize("name", PATH_METHODS)
def test_a_path_fit_keeps_the_global_generators_and_another_threads_draws(name):
    X, y, s = toy_data(name)
    est = tiny(name, random_state=0)
    assert supports_stacking(est)
    strengths = [0.0, 0.5, 0.9]  # convex alpha < 1 (OTF)
    random.seed(123)
    np.random.seed(123)  # noqa: NPY002 - the caller's own global streams
    torch.manual_seed(123)
    before = _states()
    fairness_path(est, X, y, sensitive_features=s, strengths=strengths)
    _assert_same(before, _states(), f"fairness_path({name})")
    _assert_own_sequence_during(
        lambda: fairness_path(est, X, y, sensitive_features=s, strengths=strengths),
        f"fairness_path({name})",
    )


@pytest.mark.parametrize("name", method_names())
def test_random_state_takes_a_random_state_and_a_generator(name):
    for make in (np.random.RandomState, np.random.default_rng):
        first, X = _fit(name, make(0))
        second, _ = _fit(name, make(0))
        method = "predict_proba" if hasattr(first, "predict_proba") else "predict"
        a, b = getattr(first, method)(X), getattr(second, method)(X)
        assert np.all(np.isfinite(a))
        np.testing.assert_array_equal(a, b)  # the same generator state, the same fit


def test_random_state_none_draws_fresh_seeds():
    X, y, s = toy_data("unfair")
    np.random.seed(0)  # noqa: NPY002
    first = tiny("unfair", random_state=None).fit(X, y, sensitive_features=s)
    np.random.seed(0)  # noqa: NPY002 - same global state: the fits must still differ
    second = tiny("unfair", random_state=None).fit(X, y, sensitive_features=s)
    assert not np.array_equal(first.predict_proba(X), second.predict_proba(X))


@pytest.mark.parametrize("name", method_names())
def test_every_fit_works_in_the_users_torch_state(name):
    """A fit inside no_grad / inference_mode, or under a float64 default dtype, works.

    Evaluation code often wraps a whole script in ``torch.no_grad()``; the fit must still
    train (``fits_in_training_state``), predict finite numbers and leave the caller's
    state as it was.
    """
    import warnings

    X, y, s = toy_data(name)
    reference = None
    for state in ("no_grad", "inference_mode", "float64"):
        est = tiny(name, random_state=0)
        before = torch.get_default_dtype()
        if state == "float64":
            torch.set_default_dtype(torch.float64)
        try:
            context = {"no_grad": torch.no_grad, "inference_mode": torch.inference_mode}
            with context.get(state, torch.enable_grad)(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(X, y, sensitive_features=s)
                method = "predict_proba" if hasattr(est, "predict_proba") else "predict"
                out = np.asarray(getattr(est, method)(X), dtype=float)
            assert torch.get_default_dtype() is (torch.float64 if state == "float64" else before)
            assert not torch.is_inference_mode_enabled() and torch.is_grad_enabled()
        finally:
            torch.set_default_dtype(before)
        assert np.all(np.isfinite(out)), (name, state)
        if reference is None:
            reference = out
        else:  # the same seeded fit whatever the caller's state
            np.testing.assert_allclose(out, reference, rtol=1e-4, atol=1e-5)
