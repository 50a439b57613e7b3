import numpy as np
import ot as pot
import pytest
import torch
from scipy.spatial.distance import cdist

from otfair.ot import joint_cost, match


def _clouds(n0, n1, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n0, 3)), rng.normal(1.0, 1.0, size=(n1, 3))


@pytest.mark.parametrize("method", ["auto", "emd"])
def test_equal_sizes_is_an_optimal_permutation(method):
    X0, X1 = _clouds(40, 40)
    idx = match(torch.tensor(X0), torch.tensor(X1), method=method)
    assert idx.dtype == torch.int64
    assert sorted(idx.tolist()) == list(range(40))
    C = cdist(X0, X1, "sqeuclidean")
    ours = C[np.arange(40), idx.numpy()].mean()
    assert ours == pytest.approx(pot.emd2(np.full(40, 1 / 40), np.full(40, 1 / 40), C), rel=1e-10)


def test_precomputed_cost_and_callable():
    X0, X1 = _clouds(15, 15, seed=2)
    C = cdist(X0, X1, "cityblock")
    by_matrix = match(torch.tensor(X0), torch.tensor(X1), M=torch.tensor(C))
    by_name = match(torch.tensor(X0), torch.tensor(X1), cost="l1")
    by_callable = match(torch.tensor(X0), torch.tensor(X1), cost=lambda a, b: torch.cdist(a, b, 1))
    best = pot.emd2(np.full(15, 1 / 15), np.full(15, 1 / 15), C)
    for idx in (by_matrix, by_name, by_callable):
        assert C[np.arange(15), idx.numpy()].mean() == pytest.approx(best, rel=1e-10)


def test_joint_cost_matches_within_labels():
    X0, X1 = _clouds(20, 20, seed=3)
    y0 = np.array([0, 1] * 10, dtype=float)
    y1 = np.array([1, 0] * 10, dtype=float)
    M = joint_cost(torch.tensor(X0), torch.tensor(y0), torch.tensor(X1), torch.tensor(y1))
    idx = match(torch.tensor(X0), torch.tensor(X1), M=M).numpy()
    np.testing.assert_array_equal(y0, y1[idx])


def test_unequal_sizes_samples_from_the_kantorovich_plan():
    X0, X1 = _clouds(12, 30, seed=4)
    C = cdist(X0, X1, "sqeuclidean")
    plan = pot.emd(np.full(12, 1 / 12), np.full(30, 1 / 30), C)
    idx = match(torch.tensor(X0), torch.tensor(X1), seed=0).numpy()
    assert idx.shape == (12,)
    assert np.all(plan[np.arange(12), idx] > 0)
    # reproducible with a seed or a generator, and different seeds can differ
    again = match(torch.tensor(X0), torch.tensor(X1), seed=0).numpy()
    gen = torch.Generator().manual_seed(0)
    with_gen = match(torch.tensor(X0), torch.tensor(X1), generator=gen).numpy()
    np.testing.assert_array_equal(idx, again)
    np.testing.assert_array_equal(idx, with_gen)


def test_unequal_sizes_partner_frequencies_follow_the_plan():
    # one source point, three targets: the plan spreads its row uniformly
    X0 = torch.zeros(1, 1)
    X1 = torch.tensor([[0.0], [1.0], [2.0]])
    gen = torch.Generator().manual_seed(1)
    draws = np.array([int(match(X0, X1, generator=gen)[0]) for _ in range(600)])
    freq = np.bincount(draws, minlength=3) / 600
    np.testing.assert_allclose(freq, [1 / 3] * 3, atol=0.07)


def test_bad_input():
    with pytest.raises(ValueError, match="same number of features"):
        match(torch.zeros(3, 2), torch.zeros(3, 3))
    with pytest.raises(ValueError, match="`M` must have shape"):
        match(torch.zeros(3, 2), torch.zeros(3, 2), M=torch.zeros(3, 4))
    with pytest.raises(ValueError, match="equal sizes"):
        match(torch.zeros(3, 2), torch.zeros(4, 2), method="assignment")
    with pytest.raises(ValueError, match="`method`"):
        match(torch.zeros(3, 2), torch.zeros(3, 2), method="hungarian")
    with pytest.raises(ValueError, match="`X0`"):
        match(torch.full((3, 2), float("nan")), torch.zeros(3, 2))
