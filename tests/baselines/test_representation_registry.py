"""Registry entries of the fair-representation baselines."""

from __future__ import annotations

import numpy as np
import pytest

from otfair.estimators.representation import (
    CFairClassifier,
    DiscreteFairNFClassifier,
    FairNormalizingFlowClassifier,
    LAFTRClassifier,
    SIPMClassifier,
)
from otfair_lab.experiments.methods import get_method

CASES = {
    "laftr": LAFTRClassifier,
    "sipm-lfr": SIPMClassifier,
    "cfair": CFairClassifier,
    "fair-nf": FairNormalizingFlowClassifier,
    "fair-nf-discrete": DiscreteFairNFClassifier,
}


@pytest.mark.parametrize("name", list(CASES))
def test_registered_builds_the_estimator_with_the_run_arguments(name):
    spec = get_method(name)
    assert spec.task == "classification" and spec.default_strengths
    est = spec.build(None, random_state=3, epochs=2, notion=spec.notions[0])
    assert isinstance(est, CASES[name])
    assert est.strength == spec.default_strength
    assert est.epochs == 2 and est.random_state == 3


def test_fair_nf_reads_the_group_from_the_last_column():
    rng = np.random.default_rng(0)
    s = rng.integers(0, 2, 120)
    X = np.column_stack([rng.normal(size=(120, 3)), s]).astype(np.float32)
    y = (X[:, 0] > 0).astype(int)
    est = get_method("fair-nf").build(0.5, random_state=0, epochs=1, n_blocks=1)
    est.fit(X, y, sensitive_features=s)
    np.testing.assert_array_equal(est.predict_proba(X), est.predict_proba(X, sensitive_features=s))
    assert est.transform(X).shape == (120, 3)
