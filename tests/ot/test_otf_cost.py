"""The fused class-reduced Euclidean cost of the OTF penalty (issue 26) against scipy."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.spatial.distance import cdist
from scipy.special import logsumexp

from otfair.ot import OTFProblem
from otfair.ot._otf_cost import euclidean_class_cost, in_float_range
from otfair.ot._otf_problem import euclidean_class_problem


def _reference(X: np.ndarray, classes: np.ndarray, eps: float) -> tuple[np.ndarray, float]:
    C = cdist(X, X)  # exact pairwise distances, 0 on the diagonal
    scale = C.mean()
    C = C / scale
    cols = [logsumexp(-C[:, classes == k] / eps, axis=1) for k in range(classes.max() + 1)]
    return -eps * np.stack(cols, axis=1), scale


@pytest.mark.parametrize("chunk_elements", [1 << 18, 97])  # one chunk; many uneven ones
@pytest.mark.parametrize("eps", [1e-3, 0.3])
def test_euclidean_class_cost_equals_scipy(chunk_elements, eps):
    rng = np.random.default_rng(0)
    counts = [13, 40, 7]
    X = rng.normal(size=(60, 5))
    X[50] = X[3]  # a duplicate point: a zero distance off the diagonal
    classes = np.repeat(np.arange(3), counts)
    want, want_scale = _reference(X, classes, eps)
    got, scale = euclidean_class_cost(torch.tensor(X), counts, eps, chunk_elements=chunk_elements)
    assert got.dtype == torch.float64 and got.shape == (60, 3)
    assert scale == pytest.approx(want_scale, rel=1e-12)
    # the product formula's rounding: ~1e-8 on distances of order 1 in float64
    np.testing.assert_allclose(got.numpy(), want, rtol=0, atol=1e-7)


def test_euclidean_class_cost_checks_counts():
    with pytest.raises(ValueError, match="counts"):
        euclidean_class_cost(torch.zeros(5, 2), [2, 2], 0.1)


def test_euclidean_class_problem_solves_the_dense_normalized_problem():
    """Same OTF0 (1e-8) as the dense problem of the normalized cost, in the batch's order."""
    rng = np.random.default_rng(1)
    n = 80
    X = torch.tensor(rng.normal(size=(n, 4)))
    s = torch.tensor((rng.uniform(size=n) < 0.3) * 1.0)
    G = torch.stack([s / s.mean() - 1, (1 - s) / (1 - s).mean() - 1])
    h = torch.sigmoid(X[:, 0] + s)
    order, problem = euclidean_class_problem(X, G, 0.01)
    assert torch.equal(s[order], torch.sort(s).values) and problem.C is None
    C = torch.tensor(cdist(X.numpy(), X.numpy()))
    dense = OTFProblem(C / C.mean(), G)
    want = dense.otf0(h, 0.01, tol=1e-10, max_iter=200)
    got = problem.otf0(h[order], 0.01, tol=1e-10, max_iter=200)
    assert float(got) == pytest.approx(float(want), rel=1e-8, abs=1e-12)
    assert float(want) > 0


def test_euclidean_class_problem_names_an_empty_group_and_skips_continuous_rows():
    X = torch.randn(20, 3, dtype=torch.float64)
    G = torch.stack([torch.ones(20), -torch.ones(20)]).double()
    G[0, 0] = -1.0
    with pytest.raises(ValueError, match="`G` row 1"):
        euclidean_class_problem(X, G, 0.1)
    assert euclidean_class_problem(X, torch.randn(1, 20, dtype=torch.float64), 0.1) is None


@pytest.mark.parametrize("factor", [1e20, 1e-25])
def test_raw_features_past_float32s_range_give_the_unit_scale_cost(factor):
    """Squared norms of float32 features near 1e20 overflow (near 1e-25 underflow); the
    cost is mean-normalized, so a power-of-two rescaling gives the unit-scale answer."""
    rng = np.random.default_rng(1)
    counts = [20, 25]
    X = rng.normal(size=(45, 4)).astype(np.float32)
    want, _ = euclidean_class_cost(torch.tensor(X), counts, 0.1)
    got, _ = euclidean_class_cost(torch.tensor(X * np.float32(factor)), counts, 0.1)
    assert torch.isfinite(got).all()
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=0, atol=1e-5)


def test_features_on_a_usual_scale_are_not_rescaled():
    X = torch.randn(10, 3) * 1e6
    assert in_float_range(X) is X  # the same object: the usual fit's rounding is untouched
    scaled = in_float_range(X * 1e15)
    assert scaled.abs().max() < 1.0 <= 2 * scaled.abs().max()  # divided by a power of 2
