"""RunRequest: one validated object for a run; the stages of run_single over it (issue 25)."""

import dataclasses
import inspect

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from otfair.datasets import load_dataset
from otfair_lab.experiments import run_single
from otfair_lab.experiments._request import RunRequest
from otfair_lab.experiments._single import (
    build_estimator,
    evaluate,
    fit_estimator,
    prepare_data,
    run_request,
    run_strength,
)


def test_from_args_normalizes_and_fills_the_method_defaults(plugin_path):
    req = RunRequest.from_args(
        "synthetic", "dummy-lr", strength=1, seed=np.int64(2), audits=["ftm"], data_home="/x"
    )
    assert (req.strength, req.seed, req.audits) == (1.0, 2, ("ftm",))
    assert type(req.strength) is float and type(req.seed) is int
    assert req.notion == "dp"  # the method's first notion
    assert req.dataset_options == {"data_home": "/x"} and req.domains is None
    assert req.spec.name == "dummy-lr"
    with pytest.raises(dataclasses.FrozenInstanceError):
        req.seed = 3  # type: ignore[misc]


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"seed": -1}, "`seed`"),
        ({"epochs": 0}, "'epochs' parameter of"),
        ({"train_group_share": 1.0}, "`train_group_share`"),
        ({"notion": "eopp"}, "supports the notion"),
        ({"source_domain": "a"}, "given together"),
        ({"audits": "ftm"}, "`audits`"),
        ({"method": "gapreg", "method_options": {"nope": 1}}, "nope"),
    ],
)
def test_every_instance_is_checked_replace_included(plugin_path, change, match):
    req = RunRequest("synthetic", "dummy-lr")
    with pytest.raises((ValueError, TypeError), match=match):
        dataclasses.replace(req, **change)


def test_run_single_forwards_exactly_the_request_fields(plugin_path):
    """run_single hands its parameters to from_args by name: the fields, data_home, announce."""
    params = list(inspect.signature(run_single).parameters)
    fields = [f.name for f in dataclasses.fields(RunRequest)]
    assert [p for p in params if p not in ("data_home", "announce")] == fields
    assert params[-1] == "announce"
    req = RunRequest.from_args("synthetic", "dummy-lr", audits=None, verbose=1)
    assert req.audits == () and req.verbose is True
    with pytest.raises(TypeError, match="nope"):
        RunRequest.from_args("synthetic", "dummy-lr", nope=1)


def test_data_home_only_with_a_registered_name(plugin_path):
    with pytest.raises(ValueError, match="`data_home`"):
        RunRequest.from_args("otfair.datasets:make_synthetic", "dummy-lr", data_home="/x")


def test_stages_compose_to_run_single(plugin_path):
    """prepare -> build -> fit -> evaluate gives run_single's result (timings aside)."""
    req = RunRequest.from_args("synthetic", "dummy-lr", strength=0.1, seed=3, test_size=0.25)
    data = prepare_data(req)
    split = load_dataset("synthetic").split(test_size=0.25, random_state=3)
    np.testing.assert_array_equal(data.split.X_train, split.X_train)
    assert data.fit_kwargs.keys() == {"sensitive_features"} and data.source is None
    strength = run_strength(req, data)
    est = build_estimator(req, data, strength)
    assert est.C == 0.1 and not hasattr(est, "model_")
    fit_time = fit_estimator(est, data)
    ref = LogisticRegression(C=0.1, max_iter=500).fit(split.X_train, split.y_train)
    np.testing.assert_allclose(est.predict_proba(split.X_test), ref.predict_proba(split.X_test))
    staged = evaluate(req, data, est, strength=strength, fit_time=fit_time)
    whole = run_single("synthetic", "dummy-lr", strength=0.1, seed=3, test_size=0.25)
    timing = {"fit_time_s", "predict_time_s"}
    assert list(staged) == list(whole)  # the same keys in the same order
    np.testing.assert_equal(  # NaN equals NaN here (metrics that do not apply)
        {k: v for k, v in staged.items() if k not in timing},
        {k: v for k, v in whole.items() if k not in timing},
    )
    assert run_request(req)["accuracy"] == whole["accuracy"]


def test_default_strength_is_resolved_per_dataset(plugin_path):
    req = RunRequest.from_args("synthetic", "dummy-lr")
    assert req.strength is None
    assert run_strength(req, prepare_data(req)) == req.spec.strength_for("synthetic")
