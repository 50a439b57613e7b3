"""How many modules of estimators/ and penalties/ one FairClassifier fit enters.

A fit builds one training problem and hands it to pure trainer functions; a fit that
bounces between modules spreads one concept over many files. Counted with a
``sys.setprofile`` trace of the Python functions called during one fit (imports done
before). The bound is 7 for every built-in penalty: the five modules of the estimator
and the training engine (``_torch_base``, ``_training`` (epochs), ``_lbfgs`` (full-batch
L-BFGS), ``classification/_train``, ``classification/fair_classifier``) and two of
penalties/: ``_base`` (the protocol, the penalty object's base and the name table of
penalty objects) and the penalty's own module (its object and its torch penalty). OTF's
logistic fit enters ``classification/_logistic`` (its NumPy objective) instead of
``classification/_train`` and also ``_bfgs`` (full-memory BFGS, which minimizes that
nonsmooth objective; ``_lbfgs`` drives it): 8. The eager input checks (``_checks``) and
the plug-in factories (``_registry``) stay outside a fit, so a change that adds a module
fails here.
"""

import os
import sys

import numpy as np
import pytest

import otfair
from otfair.estimators import FairClassifier

ROOT = os.path.dirname(otfair.__file__)
#: the bound per penalty
BOUNDS = {
    **dict.fromkeys(["ftm", "gapreg", "norm", "barycenter", "adv", "fairtorch-dp"], 7),
    "otf": 8,
}


def _entered(penalty, **kw):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    s = (rng.random(120) < 0.5).astype(int)
    y = (X[:, 0] + s > 0.5).astype(int)

    def make():
        return FairClassifier(penalty, 0.5, epochs=1, batch_size=40, random_state=0, **kw)

    make().fit(X, y, sensitive_features=s)  # imports and caches outside the trace
    seen = set()

    def trace(frame, event, arg):
        if event == "call":
            rel = os.path.relpath(frame.f_code.co_filename, ROOT)
            if rel.startswith(("estimators", "penalties")):
                seen.add(rel)

    sys.setprofile(trace)
    try:
        make().fit(X, y, sensitive_features=s)
    finally:
        sys.setprofile(None)
    return seen


@pytest.mark.parametrize("penalty", sorted(BOUNDS))
def test_one_fit_enters_few_modules(penalty):
    kw = {} if penalty in ("otf", "norm") else {"model": "mlp", "hidden": (4,)}
    seen = _entered(penalty, **kw)
    assert "estimators/classification/fair_classifier.py" in seen  # the trace sees the fit
    assert len(seen) <= BOUNDS[penalty], sorted(seen)
