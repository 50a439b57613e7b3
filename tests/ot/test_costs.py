import numpy as np
import pytest
import torch
from scipy.spatial.distance import cdist

from otfair.ot import cost_matrix, euclidean_cost, joint_cost, l1_cost, sqeuclidean_cost


@pytest.fixture
def points():
    rng = np.random.default_rng(0)
    return rng.normal(size=(7, 3)), rng.normal(size=(5, 3))


@pytest.mark.parametrize(
    ("fn", "metric"),
    [(sqeuclidean_cost, "sqeuclidean"), (euclidean_cost, "euclidean"), (l1_cost, "cityblock")],
)
def test_costs_match_scipy(points, fn, metric):
    X, Y = points
    C = fn(torch.tensor(X), torch.tensor(Y))
    assert C.shape == (7, 5)
    np.testing.assert_allclose(C.numpy(), cdist(X, Y, metric=metric), rtol=1e-12, atol=1e-12)


def test_cost_matrix_dispatch_and_exact_zero_diagonal(points):
    X = torch.tensor(points[0], dtype=torch.float32) * 1e3
    C = cost_matrix(X, X, metric="euclidean")
    assert torch.all(torch.diagonal(C) == 0)
    with pytest.raises(ValueError, match="metric"):
        cost_matrix(X, X, metric="cosine")


def test_euclidean_gradient_is_finite_at_zero_distance():
    X = torch.randn(4, 2, dtype=torch.float64, requires_grad=True)
    euclidean_cost(X, X.detach()).sum().backward()
    assert torch.isfinite(X.grad).all()


def test_joint_cost_adds_weighted_gap(points):
    X, Y = points
    y0 = np.array([0, 1, 1, 0, 1, 0, 0.3])
    y1 = np.array([1, 1, 0, 0, 2.5])
    args = (torch.tensor(X), torch.tensor(y0), torch.tensor(Y), torch.tensor(y1))
    for a in (100.0, 0.7):
        expected = cdist(X, Y, "sqeuclidean") + a * np.abs(y0[:, None] - y1[None, :])
        np.testing.assert_allclose(joint_cost(*args, weight=a).numpy(), expected, rtol=1e-12)
        # the former keyword still works and means the same
        np.testing.assert_allclose(joint_cost(*args, label_weight=a).numpy(), expected, rtol=1e-12)
    with pytest.raises(ValueError, match="not both"):
        joint_cost(*args, weight=2.0, label_weight=3.0)


def test_cost_bad_input():
    with pytest.raises(ValueError, match="same number of features"):
        euclidean_cost(torch.zeros(3, 2), torch.zeros(3, 4))
    with pytest.raises(ValueError, match="`X`"):
        euclidean_cost(torch.tensor([[np.nan, 1.0]]), torch.zeros(1, 2))
    with pytest.raises(ValueError, match="`y0`"):
        joint_cost(torch.zeros(3, 2), torch.zeros(2), torch.zeros(3, 2), torch.zeros(3))
    with pytest.raises(ValueError, match="`weight`"):
        joint_cost(torch.zeros(3, 2), torch.zeros(3), torch.zeros(3, 2), torch.zeros(3), weight=-1)
