"""The training plan each penalty object hands the estimator, and its default strengths."""

import dataclasses

import numpy as np
import pytest
import torch

from otfair.estimators import FairClassifier
from otfair.estimators._strength_grids import GRIDS, default_strengths
from otfair.penalties import (
    FTM,
    OTF,
    Adversary,
    Barycenter,
    FairnessPenalty,
    FairTorchDP,
    GapReg,
    Norm,
    TrainingPlan,
    as_penalty_object,
)
from otfair.penalties._ftm import MatchedBatches

OBJECTS = [OTF(), Norm(), Barycenter(), GapReg(), Adversary(), FTM(), FairTorchDP()]


def _plan(obj):
    return obj.training_plan(obj.build("dp"))


@pytest.mark.parametrize("obj", OBJECTS, ids=lambda o: o.name)
def test_each_plan_says_what_its_paper_trains(obj):
    plan = _plan(obj)
    assert dataclasses.is_dataclass(plan) and isinstance(plan, TrainingPlan)
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.mixing = "convex"  # type: ignore[misc]
    convex = obj.name in ("otf", "norm", "barycenter")  # OTF paper Eq. 13; else FTM Eq. 7
    assert plan.mixing == ("convex" if convex else "additive")
    assert plan.constraints == (obj.name in ("otf", "norm"))  # the linear notions
    assert plan.adversary == (obj.name == "adv")
    assert (plan.batches is not None) == (obj.name == "ftm")
    # L-BFGS: not for own batches or an adversary; OTF's quadratic cost prefers batches
    assert plan.full_batch == (obj.name not in ("ftm", "adv", "otf"))
    assert (plan.needs_batches() is None) == (obj.name not in ("ftm", "adv"))
    assert plan.fixed_batches == (obj.name == "otf")


def test_settings_of_the_object_reach_the_plan():
    plan = _plan(FTM("joint", label_weight=5.0, group_batch_size=16, matching_seed=3))
    assert plan.batches == MatchedBatches(16, 5.0, 3, 2, None)
    assert _plan(FTM()).batches == MatchedBatches(1024, None, 0, 2, None)
    assert _plan(Adversary(lr=0.05)).adversary_lr == 0.05
    assert _plan(Adversary()).adversary_lr is None  # the classifier's rate


def test_the_matched_schedule_pairs_the_groups_and_weights_the_cross_entropy():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2)).astype(np.float32)
    groups = (np.arange(60) < 45).astype(np.int64)  # 15 of group 0, 45 of group 1
    y = (rng.random(60) < 0.5).astype(np.float32)
    from otfair.penalties import FitRows

    rows = FitRows(X, y, groups, torch.from_numpy(X), torch.from_numpy(y), 20)
    schedule = MatchedBatches(m=5, n_rounds=1).schedule(rows, np.random.default_rng(0))
    assert schedule.fitted == {"n_pairings_": 9}  # ceil(45 / 5) pairings in one round
    batches = list(schedule.epoch(0))
    assert len(batches) == 3  # ceil(60 / 20) steps, the plain loop's
    for b in batches:
        first, second = b.X[:5].numpy(), b.X[5:].numpy()
        assert {groups[np.flatnonzero((r == X).all(1))[0]] for r in first} == {0}
        assert {groups[np.flatnonzero((r == X).all(1))[0]] for r in second} == {1}
        assert b.sensitive.tolist() == [0] * 5 + [1] * 5
        np.testing.assert_allclose(b.ce_weight.numpy(), [0.25 / 5] * 5 + [0.75 / 5] * 5)


@pytest.mark.parametrize("obj", OBJECTS, ids=lambda o: o.name)
def test_the_default_grids_are_the_objects(obj):
    mixing = _plan(obj).mixing
    grid = obj.strength_grid(mixing)
    assert grid[0] == 0.0 and list(grid) == sorted(set(grid))
    low, high = obj.strength_range(mixing)
    assert low == 0.0 and grid[-1] < high  # convex: below 1
    clf = FairClassifier(obj)
    np.testing.assert_array_equal(default_strengths(clf), grid)
    other = "additive" if mixing == "convex" else "convex"
    np.testing.assert_array_equal(
        default_strengths(FairClassifier(obj, mixing=other)), obj.strength_grid(other)
    )
    assert obj.paper_strengths and all(a > 0 for a in obj.paper_strengths)
    if mixing == "convex":
        assert max(obj.paper_strengths) < 1


def test_grids_table_reads_the_penalties():
    assert GRIDS["otf"] == OTF.strength_grid("convex") != GRIDS["convex"]
    assert GRIDS["convex"] == Norm.strength_grid("convex")
    assert GRIDS["additive"] == as_penalty_object("gapreg").strength_grid("additive")
    with pytest.raises(ValueError, match="mixing"):
        OTF.strength_grid("auto")


def test_an_old_style_plugin_has_its_traits_translated_into_its_plan():
    with pytest.warns(FutureWarning, match="default_mixing"):

        class OldStyle(FairnessPenalty):
            default_mixing = "convex"
            keeps_batch_work = True

            def evaluate(self, batch):
                return batch.scores.mean()

    assert OldStyle.plan == TrainingPlan(mixing="convex", full_batch=False, fixed_batches=True)
    with pytest.warns(FutureWarning, match="plan.mixing"):
        assert OldStyle().default_mixing == "convex"
