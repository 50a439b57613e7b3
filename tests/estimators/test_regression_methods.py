"""Registry entries of the regression methods and short runs on Crime and Law."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone

from otfair.estimators.regression.nets import WassersteinNet
from otfair.metrics._accuracy_disparity import accuracy_disparity_audit
from otfair_lab.experiments.methods import get_method, list_methods

NAMES = ("unfair-reg", "cenet", "wassersteinnet", "bgl", "cod")


def test_methods_are_registered_for_regression():
    assert set(NAMES) <= set(list_methods("regression"))
    for name in NAMES:
        spec = get_method(name)
        assert spec.task == "regression" and not spec.sensitive_as_input
        est = spec.build(None, notion=None, random_state=0, epochs=None, device="cpu",
                         dataset="law_school")  # fmt: skip
        assert clone(est).get_params() == est.get_params()


def test_builder_uses_appendix_b_settings():
    est = get_method("wassersteinnet").build(
        2.0, notion=None, random_state=3, epochs=7, device="cpu", dataset="communities_crime"
    )
    assert isinstance(est, WassersteinNet)
    settings = (est.strength, est.clip, est.lr, est.batch_size, est.epochs)
    assert settings == (2.0, 0.002, 0.1, 256, 7)
    assert tuple(est.encoder_hidden) == (50,) and tuple(est.adversary_hidden) == (100,)


@pytest.mark.slow
@pytest.mark.parametrize("dataset", ["law_school", "communities_crime"])
def test_short_real_runs_and_audit_bounds(dataset):
    from otfair.datasets import load_dataset

    split = load_dataset(dataset).split(test_size=0.2, random_state=0)
    for name in ("unfair-reg", "wassersteinnet", "cod"):
        est = get_method(name).build(
            1.0, notion=None, random_state=0, epochs=5, device="cpu", dataset=dataset
        )
        est.fit(split.X_train, split.y_train, sensitive_features=split.s_train)
        pred = est.predict(split.X_test)
        assert est.score(split.X_test, split.y_test) > -0.5
        audit = accuracy_disparity_audit(split.y_test, pred, sensitive_features=split.s_test)
        assert audit["lower_bound_joint_error"] <= audit["joint_error"]
        assert audit["lower_bound_mse"] <= audit["mse"]
        assert audit["upper_bound_gap"] >= audit["error_gap"]
        assert audit["upper_bound_gap_thm33"] >= audit["error_gap"]
        extra = get_method(name).extra_report(est, split)
        assert extra["mse_0"] - extra["mse_1"] == pytest.approx(
            extra["label_term"] + extra["representation_term"]
        )
        assert np.isfinite(list(extra.values())).all()
