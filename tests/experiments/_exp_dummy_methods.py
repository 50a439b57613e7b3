"""Tiny methods registered for the experiment tests (imported as a sweep plugin).

``dummy-lr`` wraps scikit-learn's LogisticRegression (strength = inverse regularization
C) so that the runner is tested independently of otfair's own estimators; ``dummy-raise``
always fails in ``fit``. ``sleep`` slows a fit down for the kill-and-resume and signal
tests (only fits on more than 100 rows: the runner's warm-up fits on fewer, and stays
fast); ``mark_dir`` makes each such fit leave a file there when it starts (so a test knows
that a run is in flight); ``cold_start`` delays the first fit of each process (a stand-in
for one-time costs such as lazy imports, which the runner's warm-up must absorb);
``crash_dir`` with ``crash_strength`` and ``crash_times`` makes the fit at that strength
kill its worker process (never the test process) its first ``crash_times`` times, leaving
one file in ``crash_dir`` per crash (a stand-in for the OOM killer). ``warn`` makes each
such fit warn twice, the same ``UserWarning`` (as a small-group warning does).
"""

from __future__ import annotations

import multiprocessing
import os
import time
import warnings
from pathlib import Path

from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression

from otfair_lab.experiments.methods import MethodSpec, get_method, list_methods, register_method

_FITS_IN_PROCESS = [0]


class DummyLogistic(ClassifierMixin, BaseEstimator):
    def __init__(
        self,
        C=1.0,
        sleep=0.0,
        fail=False,
        mark_dir=None,
        cold_start=0.0,
        crash_dir=None,
        crash_strength=None,
        crash_times=0,
        warn=False,
    ):
        self.C = C
        self.sleep = sleep
        self.fail = fail
        self.mark_dir = mark_dir
        self.cold_start = cold_start
        self.crash_dir = crash_dir
        self.crash_strength = crash_strength
        self.crash_times = crash_times
        self.warn = warn

    def fit(self, X, y, *, sensitive_features=None):
        if self.cold_start and _FITS_IN_PROCESS[0] == 0:
            time.sleep(self.cold_start)
        _FITS_IN_PROCESS[0] += 1
        if len(X) > 100:
            if self.mark_dir:
                Path(self.mark_dir, f"{os.getpid()}-{time.time_ns()}").touch()
            if self.sleep:
                time.sleep(self.sleep)
            self._maybe_crash()
            for _ in range(2 if self.warn else 0):
                warnings.warn("dummy-lr: a small group", UserWarning, stacklevel=2)
        if self.fail:
            raise RuntimeError("dummy-raise always fails")
        self.model_ = LogisticRegression(C=self.C, max_iter=500).fit(X, y)
        self.classes_ = self.model_.classes_
        return self

    def _maybe_crash(self):
        if not self.crash_dir or self.crash_strength != self.C:
            return
        if multiprocessing.parent_process() is None:  # never kill the test process
            return
        if len(list(Path(self.crash_dir).iterdir())) < self.crash_times:
            Path(self.crash_dir, f"{os.getpid()}-{time.time_ns()}").touch()
            os._exit(1)

    def predict_proba(self, X):
        return self.model_.predict_proba(X)


def _build(fail):
    def build(strength, *, notion, random_state, epochs, device, dataset, **options):
        return DummyLogistic(C=1.0 if strength is None else strength, fail=fail, **options)

    return build


def _extra(estimator, split):
    return {"reference": {"n_features": int(split.X_train.shape[1])}}


if "dummy-lr" not in list_methods():
    register_method(
        MethodSpec(
            name="dummy-lr",
            task="classification",
            build=_build(False),
            strength_name="C",
            default_strengths=(0.01, 0.1, 1.0),
            notions=("dp", "eo"),
            extra_report=_extra,
        )
    )
    register_method(MethodSpec(name="dummy-raise", task="classification", build=_build(True)))

__all__ = ["DummyLogistic", "get_method"]
