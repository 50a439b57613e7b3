"""Every paper setting builds its estimator: ``paper_settings(..., estimator=cls)``."""

from __future__ import annotations

import inspect

import pytest

from otfair_lab.experiments.methods import PAPER_SETTINGS, get_method, paper_settings

_AD_METHODS = ("cenet", "wassersteinnet", "unfair-reg")


@pytest.mark.parametrize("method", _AD_METHODS)
@pytest.mark.parametrize("dataset", sorted(PAPER_SETTINGS["accuracy-disparity"]))
def test_every_accuracy_disparity_row_builds_each_estimator(method, dataset):
    cls = get_method(method).estimator
    settings = paper_settings(dataset, estimator=cls)
    accepted = set(inspect.signature(cls.__init__).parameters)
    assert set(settings) <= accepted
    # every setting the class takes is kept (nothing dropped that it accepts)
    full = paper_settings(dataset)
    assert {k for k in full if k in accepted} == set(settings)
    args = () if method == "unfair-reg" else (1.0,)
    estimator = cls(*args, **settings)
    assert {k: estimator.get_params()[k] for k in settings} == settings
    assert paper_settings(dataset, estimator=method) == settings  # a method name too


def test_law_school_clip_is_wassersteinnet_only():
    assert "clip" in paper_settings("law_school", estimator="wassersteinnet")
    assert "clip" not in paper_settings("law_school", estimator="cenet")
    assert "clip" in paper_settings("law_school")  # the table row itself is unchanged


@pytest.mark.parametrize("method", ["ftm", "ftm-joint", "gapreg", "adv", "unfair-mlp"])
@pytest.mark.parametrize("dataset", sorted(PAPER_SETTINGS["ftm"]))
def test_every_ftm_row_builds_the_ftm_estimators(method, dataset):
    cls = get_method(method).estimator
    settings = paper_settings(dataset, paper="ftm", estimator=cls)
    assert settings == {"batch_size": PAPER_SETTINGS["ftm"][dataset]["batch_size"]}
    assert cls(**settings).get_params()["batch_size"] == settings["batch_size"]
