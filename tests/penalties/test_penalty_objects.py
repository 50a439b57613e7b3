"""Penalty objects (issue 25 item 3): FairClassifier(penalty=OTF(eps=...)), cloneable."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.base import clone

from otfair.estimators import FairClassifier
from otfair.penalties import (
    FTM,
    OTF,
    Adversary,
    Barycenter,
    FairTorchDP,
    GapReg,
    Norm,
    OTFPenalty,
    Penalty,
    as_penalty_object,
    list_penalties,
    make_penalty,
)
from otfair_lab.experiments.methods import get_method
from otfair_lab.experiments.methods._options import check_options


def two_group_data(n: int = 600, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group 1 (40%) shifted along feature 0, which sets the label."""
    rng = np.random.default_rng(seed)
    s = (rng.random(n) < 0.4).astype(int)
    X = rng.normal(size=(n, 3))
    X[:, 0] += 1.5 * s
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0.7).astype(int)
    return X, y, s


OBJECTS = [OTF(eps=0.01), Norm(), Barycenter(), GapReg(), Adversary(hidden=8, lr=0.01),
           FTM("joint", group_batch_size=32), FairTorchDP()]  # fmt: skip


@pytest.mark.parametrize("obj", OBJECTS, ids=lambda o: type(o).__name__)
def test_objects_follow_sklearns_parameter_protocol(obj):
    copy = clone(obj)
    assert copy is not obj and copy == obj and repr(copy) == repr(obj)
    params = obj.get_params()
    assert type(obj)(**params) == obj
    if params:
        name = next(iter(params))
        with pytest.raises(ValueError, match="Invalid parameter 'nope'"):
            clone(obj).set_params(nope=1)
        assert clone(obj).set_params(**{name: params[name]}) == obj


def test_every_builtin_name_maps_to_its_object_and_builds_the_same_penalty():
    for name in list_penalties():
        obj = as_penalty_object(name)
        assert obj.name == name
        assert type(obj.build("dp")) is type(make_penalty(name))
    assert as_penalty_object("otf") == OTF() and isinstance(as_penalty_object("group-w2"), Penalty)
    with pytest.raises(ValueError, match="`penalty` must be 'none', a penalty object"):
        as_penalty_object("nonsense")
    with pytest.raises(ValueError, match="'penalty' parameter of FairClassifier"):
        FairClassifier(3.0, 0.5).fit(*two_group_data(60)[:2], sensitive_features=np.zeros(60))


def test_an_object_gives_the_fit_its_name_gives_and_is_not_changed_by_fit():
    X, y, s = two_group_data(300)
    kw = {"epochs": 2, "batch_size": 100, "random_state": 0}
    obj = OTF(eps=1e-3)
    before = repr(obj)
    by_object = FairClassifier(obj, 0.3, **kw).fit(X, y, sensitive_features=s)
    by_name = FairClassifier("otf", 0.3, **kw).fit(X, y, sensitive_features=s)
    np.testing.assert_array_equal(by_object.predict_proba(X), by_name.predict_proba(X))
    assert repr(obj) == before and by_object.penalty is obj
    assert isinstance(by_object.penalty_, OTFPenalty) and by_object.penalty_.eps == 1e-3


def test_a_setting_reaches_the_penalty_through_nested_set_params():
    X, y, s = two_group_data(300)
    clf = FairClassifier(OTF(), 0.3, epochs=1, batch_size=100, random_state=0)
    assert clf.get_params()["penalty__eps"] == 1e-3
    clf.set_params(penalty__eps=0.05).fit(X, y, sensitive_features=s)
    assert clf.penalty_.eps == 0.05
    other = FairClassifier(OTF(eps=1e-3), 0.3, epochs=1, batch_size=100, random_state=0)
    other.fit(X, y, sensitive_features=s)
    assert not np.allclose(clf.predict_proba(X), other.predict_proba(X))


def test_adversary_lr_and_ftm_settings_are_read_from_the_object():
    X, y, s = two_group_data(300)
    adv = FairClassifier(Adversary(hidden=4, lr=0.05), 1.0, model="mlp", epochs=1,
                         random_state=0).fit(X, y, sensitive_features=s)  # fmt: skip
    assert adv._adversary_optimizer([adv.penalty_]).param_groups[0]["lr"] == 0.05
    ftm = FairClassifier(FTM(group_batch_size=20, n_pairing_rounds=1), 1.0, model="mlp",
                         epochs=1, random_state=0).fit(X, y, sensitive_features=s)  # fmt: skip
    # one round pairs the larger group's points once: ceil(n_large / m) pairings
    assert ftm.n_pairings_ == int(np.ceil(np.bincount(s).max() / 20))
    with pytest.raises(ValueError, match="'matching' parameter of FTM"):
        FairClassifier(FTM("sideways"), 1.0).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="'group_batch_size' parameter of FTM"):
        FairClassifier(FTM(group_batch_size=0), 1.0).fit(X, y, sensitive_features=s)


def test_registry_options_reach_the_penalty_object():
    ftm = get_method("ftm-joint").build(1.0, random_state=0, label_weight=5.0, matching_seed=2)
    assert ftm.penalty == FTM("joint", label_weight=5.0, group_batch_size=1024, matching_seed=2)
    adv = get_method("adv").build(1.0, random_state=0, lr=0.01, penalty__lr=0.1)
    assert adv.lr == 0.01 and adv.penalty.lr == 0.1  # the flat `lr` is the classifier's
    with pytest.raises(ValueError, match="unknown option"):
        check_options(get_method("ftm"), {"matching": "joint"})  # fixed by the method
    # a penalty setting is checked by the penalty object's constraints, in its fit's words
    with pytest.raises(ValueError) as from_registry:
        check_options(get_method("otf"), {"eps": "small"})
    X, y, s = two_group_data(120)
    with pytest.raises(ValueError) as from_fit:
        FairClassifier(OTF(eps="small"), 0.5, epochs=1).fit(X, y, sensitive_features=s)
    assert str(from_registry.value) == str(from_fit.value)
    assert "The 'eps' parameter of OTF must be a float" in str(from_fit.value)


def test_fixed_batches_auto_fixes_them_for_a_penalty_that_keeps_batch_work():
    """OTF keeps each batch's class-reduced cost: "auto" trains it on fixed batches."""
    X, y, s = two_group_data(400)
    kw = {"solver": "adam", "epochs": 3, "batch_size": 100, "random_state": 0}

    def proba(penalty, strength, fixed):
        clf = FairClassifier(penalty, strength, fixed_batches=fixed, **kw)
        return clf.fit(X, y, sensitive_features=s).predict_proba(X)[:, 1]

    assert OTFPenalty.plan.fixed_batches and not make_penalty("norm").plan.fixed_batches
    with pytest.warns(FutureWarning, match="keeps_batch_work"):  # the old trait's name
        assert make_penalty("otf").keeps_batch_work
    np.testing.assert_array_equal(proba(OTF(), 0.3, "auto"), proba(OTF(), 0.3, True))
    assert not np.array_equal(proba(OTF(), 0.3, "auto"), proba(OTF(), 0.3, False))
    np.testing.assert_array_equal(proba(Norm(), 0.5, "auto"), proba(Norm(), 0.5, False))
    with pytest.raises(ValueError, match="'fixed_batches' parameter of FairClassifier"):
        FairClassifier(OTF(), 0.3, fixed_batches="yes", **kw).fit(X, y, sensitive_features=s)
    # the registry builds with the estimator's own defaults (OTF on fixed batches); the
    # reproduction config states the OTF paper's protocol, new batches, as an option
    built = get_method("otf").build(0.01, random_state=0)
    assert built.fixed_batches == FairClassifier().get_params()["fixed_batches"] == "auto"
    paper = get_method("otf").build(0.01, random_state=0, fixed_batches=False)
    assert paper.fixed_batches is False


def test_otf_object_and_penalty_share_their_defaults():
    """One source of OTF's defaults: the object's settings are the penalty's defaults."""
    import inspect

    from otfair.penalties._otf import DEFAULTS

    signature = inspect.signature(OTFPenalty).parameters
    assert OTF().get_params() == DEFAULTS
    assert {k: signature[k].default for k in DEFAULTS} == DEFAULTS
    built = OTF().build("dp")
    assert {k: getattr(built, k) for k in DEFAULTS} == DEFAULTS


def test_make_penalty_of_a_builtin_name_is_its_objects_build():
    pen = make_penalty("otf", "eo", eps=0.05, max_iter=7)
    assert isinstance(pen, OTFPenalty) and pen.requires_labels
    assert (pen.eps, pen.max_iter) == (0.05, 7)
    assert repr(make_penalty("adv", "eo", hidden=3)) == repr(Adversary(hidden=3).build("eo"))


@pytest.mark.parametrize(
    ("obj", "notion", "message"),
    [
        (FTM(), "eo", r"\(DP only\); use matching='joint' to target EO"),
        (Barycenter(), "eopp", r"\(DP only\)"),
        (FairTorchDP(), "eo", r"\(DP only\)"),
        (Adversary(), "eopp", r"\(DP, EO only\)"),
    ],
)
def test_build_refuses_a_notion_the_penalty_cannot_serve_with_one_message(obj, notion, message):
    with pytest.raises(ValueError, match=f"notion='{notion}' is not supported by this penalty"):
        obj.build(notion)
    with pytest.raises(ValueError, match=message):
        make_penalty(obj.name, notion)
    X, y, s = two_group_data(60)
    with pytest.raises(ValueError, match=message):
        FairClassifier(obj, 1.0, notion=notion, epochs=1).fit(X, y, sensitive_features=s)


def test_register_penalty_takes_a_penalty_object_class(monkeypatch):
    from otfair.penalties import GapPenalty, PenaltyObject, _base, _registry, register_penalty

    monkeypatch.setattr(_registry, "_FACTORIES", dict(_registry._FACTORIES))
    monkeypatch.setattr(_base, "PENALTY_OBJECTS", dict(_base.PENALTY_OBJECTS))

    class EOppGap(PenaltyObject):
        name = "eopp-gap"
        notions = ("eopp",)

        def make(self, notion):
            return GapPenalty(notion)

    register_penalty(EOppGap)
    register_penalty(EOppGap)  # the same class again: no error
    assert as_penalty_object("eopp-gap") == EOppGap()
    assert make_penalty("eopp-gap", "eopp").notion.name == "eopp"
    with pytest.raises(ValueError, match=r"\(EOPP only\)"):
        make_penalty("eopp-gap", "dp")

    class Other(EOppGap):
        pass

    with pytest.raises(ValueError, match="already registered"):
        register_penalty(Other)
    with pytest.raises(TypeError, match="alone"):
        register_penalty(EOppGap, lambda notion: GapPenalty(notion))
    # a factory registered under the name replaces the object: the name means Penalty(name)
    register_penalty("eopp-gap", lambda notion, **kw: GapPenalty(notion), replace=True)
    assert as_penalty_object("eopp-gap") == Penalty("eopp-gap")


def test_norms_full_batch_variant_is_the_smoothed_absolute_value():
    """sqrt(v^2 + mu^2) - mu per constraint, within mu of |v|; the penalty itself unchanged."""
    from otfair.notions import as_notion
    from otfair.penalties import Norm
    from otfair.penalties._norm import SMOOTHING

    rng = np.random.default_rng(0)
    s = rng.integers(0, 2, 200).astype(float)[:, None]
    y = rng.integers(0, 2, 200)
    penalty = Norm().make(as_notion("dp")).fit(s, y)
    G = penalty.constraints.matrix(s, y).double()
    h = torch.from_numpy(rng.random(200))
    smooth = penalty.full_batch_variant()
    v = (G @ h / 200).numpy()
    expected = np.sum(np.sqrt(v**2 + SMOOTHING**2) - SMOOTHING)
    np.testing.assert_allclose(float(smooth.from_matrix(h, G)), expected, rtol=1e-10)
    exact = float(penalty.from_matrix(h, G))
    np.testing.assert_allclose(exact, np.abs(v).sum(), rtol=1e-10)
    assert exact - len(v) * SMOOTHING <= float(smooth.from_matrix(h, G)) <= exact
    assert penalty.smoothing == 0.0 and smooth is not penalty
