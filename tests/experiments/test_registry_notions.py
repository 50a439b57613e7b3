"""The method registry and the estimators agree on fairness notions (issue 28, item 2).

For every registered method and every notion of :data:`otfair.notions.NOTIONS`: a notion
the registry declares trains end to end (``run_single`` on a tiny synthetic split), and a
notion it does not declare is refused by the estimator itself (built without the
registry's check), so that ``otfair fit --notion`` and the library cannot disagree.
"""

from __future__ import annotations

import numpy as np
import pytest

from otfair.datasets import load_dataset
from otfair.notions import NOTIONS
from otfair.penalties import list_penalties
from otfair.penalties._registry import penalty_notions
from otfair_lab.experiments import run_single
from otfair_lab.experiments.methods import get_method, list_methods

#: Small budgets so that one fit per (method, notion) takes about a second.
_QUICK: dict[str, dict] = {
    "adapfair": {"base_epochs": 1},
    "adapfair-blind": {"base_epochs": 1},
    "fair-pca": {"n_components": 2},
}
_CASES = [
    (name, notion) for name in list_methods() if get_method(name).notions for notion in NOTIONS
]


def _split(name: str):
    spec = get_method(name)
    ds = load_dataset("synthetic" if spec.task == "classification" else "synthetic_regression")
    return ds.split(random_state=0, sensitive_as_input=spec.sensitive_as_input)


def _shipped(task: str | None = None) -> list[str]:
    """The package's methods (other tests in the same worker may register toy ones)."""
    return [
        m for m in list_methods(task) if get_method(m).build.__module__.startswith("otfair_lab.")
    ]


def test_fair_classifier_methods_take_their_notions_from_the_penalty():
    for name in _shipped("classification"):
        spec = get_method(name)
        build = spec.build(None, notion=None, epochs=1, random_state=0)
        if getattr(build, "penalty", None) in list_penalties():
            assert spec.notions == penalty_notions(build.penalty), name


def test_penalty_notions_is_what_make_penalty_accepts():
    assert penalty_notions("gapreg") == ("dp", "eopp", "eo")
    assert penalty_notions("ftm") == ("dp",)
    assert penalty_notions("adv") == ("dp", "eo")
    with pytest.raises(ValueError, match="Unknown penalty"):
        penalty_notions("nope")


@pytest.mark.parametrize(("name", "notion"), _CASES)
def test_registry_notions_are_exactly_what_the_estimator_accepts(name, notion):
    spec = get_method(name)
    options = _QUICK.get(name, {})
    if notion in spec.notions:
        res = run_single(
            "synthetic" if spec.task == "classification" else "synthetic_regression",
            name,
            notion=notion,
            seed=0,
            epochs=1,
            max_train_rows=300,
            method_options=options,
        )
        assert res["notion"] == notion and np.isfinite(res["n_test"])
        return
    est = spec.build(None, notion=notion, random_state=0, epochs=1, **options)
    params = est.get_params(deep=True)  # wrappers: "repair__notion", "estimator__notion"
    if not any(k == "notion" or k.endswith("__notion") for k in params):
        # the notion is fixed by the estimator (CFair: EO; OT repair, fair NF: DP): the
        # registry states that one notion and nothing can ask the estimator for another
        assert len(spec.notions) == 1, name
        return
    split = _split(name)
    with pytest.raises(ValueError, match="notion"):
        est.fit(split.X_train[:300], split.y_train[:300], sensitive_features=split.s_train[:300])


_STRENGTH_CASES = [
    (name, which)
    for name in list_methods()
    if get_method(name).has_strength and get_method(name).default_strengths
    for which in ("min", "max")
]


@pytest.mark.parametrize(("name", "which"), _STRENGTH_CASES)
def test_every_registered_strength_is_one_the_estimator_takes(name, which):
    # the grid `otfair sweep` sweeps by default: its ends fit (no range error)
    spec = get_method(name)
    grid = spec.default_strengths
    strength = min(grid) if which == "min" else max(grid)
    res = run_single(
        "synthetic" if spec.task == "classification" else "synthetic_regression",
        name,
        strength=strength,
        seed=0,
        epochs=1,
        max_train_rows=300,
        method_options=_QUICK.get(name, {}),
    )
    assert res["strength"] == strength
