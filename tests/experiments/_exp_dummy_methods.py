"""Tiny methods registered for the experiment tests (imported as a sweep plugin).

``dummy-lr`` wraps scikit-learn's LogisticRegression (strength = inverse regularization
C) so that the runner is tested independently of otfair's own estimators; ``dummy-raise``
always fails in ``fit``. ``sleep`` slows a fit down for the kill-and-resume test.
"""

from __future__ import annotations

import time

from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression

from otfair.experiments.methods import MethodSpec, get_method, list_methods, register_method


class DummyLogistic(ClassifierMixin, BaseEstimator):
    def __init__(self, C=1.0, sleep=0.0, fail=False):
        self.C = C
        self.sleep = sleep
        self.fail = fail

    def fit(self, X, y, *, sensitive_features=None):
        if self.sleep:
            time.sleep(self.sleep)
        if self.fail:
            raise RuntimeError("dummy-raise always fails")
        self.model_ = LogisticRegression(C=self.C, max_iter=500).fit(X, y)
        self.classes_ = self.model_.classes_
        return self

    def predict_proba(self, X):
        return self.model_.predict_proba(X)


def _build(fail):
    def build(strength, *, notion, random_state, epochs, device, dataset, sleep=0.0):
        return DummyLogistic(C=1.0 if strength is None else strength, sleep=sleep, fail=fail)

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
