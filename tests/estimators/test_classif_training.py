"""Training loops of FairClassifier against hand/numpy references."""

import numpy as np
import pytest
import torch
from scipy.special import expit

from otfair.estimators._training import TrainData, TrainLoop, batches, batches_complete
from otfair.estimators.classification._train import TrainingProblem, train
from otfair.models import MLP
from otfair.models.stacked import StackedMLP
from otfair.penalties import MatchedDemographicParity, PenaltyStack
from otfair.penalties._ftm import MatchedSchedule


def test_batches_complete_matches_np_unique(rng):
    codes = rng.choice(3, size=200, p=[0.9, 0.07, 0.03])
    parts = batches(rng.permutation(200), 17)
    expected = [len(np.unique(codes[p])) == 3 for p in parts]
    assert batches_complete(codes, parts, 3) == expected
    assert not all(expected)  # the case the loop must detect occurs here
    assert batches_complete(None, parts, 0) == [True] * len(parts)


@pytest.mark.parametrize("strength", [0.0, 2.0])
def test_matched_batches_loss_is_group_weighted_ce_plus_mdp(strength):
    # One pairing, one step: the recorded loss is the objective at the initial model,
    # recomputed here in numpy (group-proportion weighted CE + lambda * MDP).
    rng = np.random.default_rng(0)
    n, d, m = 40, 3, 5
    X = rng.normal(size=(n, d)).astype(np.float32)
    y = (rng.random(n) < 0.4).astype(np.float32)
    pool = np.stack([rng.choice(np.arange(0, 30), m, replace=False),
                     rng.choice(np.arange(30, 40), m, replace=False)])[None]  # fmt: skip
    torch.manual_seed(0)
    model = MLP(d, hidden=(4,))
    with torch.no_grad():
        z = model(torch.from_numpy(X))[:, 0].double().numpy()
    w = (0.75, 0.25)  # 30 / 40 and 10 / 40
    ce = [np.mean(np.logaddexp(0, z[i]) - y[i] * z[i]) for i in pool[0]]
    mdp = np.mean(np.abs(expit(z[pool[0, 0]]) - expit(z[pool[0, 1]])))
    expected = w[0] * ce[0] + w[1] * ce[1] + strength * mdp
    data = TrainData(X=torch.from_numpy(X), y=torch.from_numpy(y))
    stacked = StackedMLP.from_models([model])  # a single fit is a curve of one
    opt = torch.optim.SGD(stacked.parameters(), lr=0.0)
    loop = TrainLoop(epochs=1, optimizer=opt, scheduler=None, rng=np.random.default_rng(0))
    # FTM's matched batches (its plan's scheme) on this pool, one step per epoch
    schedule = MatchedSchedule(pool, w, 1, (data.X, data.y), loop.rng)
    penalty = PenaltyStack(MatchedDemographicParity()) if strength else None
    (hist,) = train(TrainingProblem(stacked, data, loop, (strength,), schedule, penalty))
    assert hist[0] == pytest.approx(expected, rel=1e-5)
