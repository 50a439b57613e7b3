"""Penalty values against independent references (scipy, numpy, hand computations)."""

import numpy as np
import pytest
import torch
from scipy.stats import wasserstein_distance

from otfair.penalties import (
    AdversaryPenalty,
    BarycenterPenalty,
    GapPenalty,
    LinearConstraints,
    MatchedDemographicParity,
    NormPenalty,
    PenaltyBatch,
)


def test_barycenter_matches_scipy_two_groups(rng):
    n0, n1 = rng.integers(3, 40, size=2)
    h0, h1 = rng.random(n0), rng.random(n1) ** 2
    scores = torch.tensor(np.concatenate([h0, h1]), dtype=torch.float64)
    s = torch.tensor([0] * n0 + [1] * n1)
    p0, p1 = n0 / (n0 + n1), n1 / (n0 + n1)
    expected = 2 * p0 * p1 * wasserstein_distance(h0, h1)  # W1 to the 1-D barycenter
    assert float(BarycenterPenalty()(scores, s)) == pytest.approx(expected, rel=1e-10)


def test_barycenter_gradient_finite_differences():
    rng = np.random.default_rng(3)
    scores = torch.tensor(rng.random(12), dtype=torch.float64, requires_grad=True)
    s = torch.tensor([0, 1] * 6)
    assert torch.autograd.gradcheck(lambda h: BarycenterPenalty()(h, s), (scores,))


def test_gap_hand_computed_and_gradient():
    h = torch.tensor([0.2, 0.4, 0.9, 0.6], dtype=torch.float64, requires_grad=True)
    s = torch.tensor([0, 0, 1, 1])
    value = GapPenalty()(h, s)
    assert float(value.detach()) == pytest.approx((0.3 - 0.75) ** 2)
    value.backward()
    # d/dh_i (m0 - m1)^2 = 2 (m0 - m1) * (+-1/2)
    expected = torch.tensor([-0.45, -0.45, 0.45, 0.45], dtype=torch.float64)
    torch.testing.assert_close(h.grad, expected)


@pytest.mark.parametrize("notion", ["eo", "eopp"])
def test_gap_label_notions_sum_the_cells_gaps(notion):
    """GapReg per label cell through the notion (what AdapFair's base classifier used)."""
    gen = torch.Generator().manual_seed(0)
    h = torch.rand(60, generator=gen, dtype=torch.float64)
    s = (torch.arange(60) % 3 == 0).long()
    y = (torch.arange(60) % 2).double()
    cells = (0.0, 1.0) if notion == "eo" else (1.0,)
    expected = sum(float(GapPenalty()(h[y == c], s[y == c])) for c in cells)
    pen = GapPenalty(notion)
    assert float(pen(h, s, y)) == pytest.approx(expected, rel=1e-12)
    assert float(pen.evaluate(PenaltyBatch(h, s, y))) == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError, match="labels"):
        pen(h, s)


def test_mdp_hand_computed():
    h0 = torch.tensor([0.1, 0.8, 0.5])
    h1 = torch.tensor([0.3, 0.8, 0.2])
    codes = torch.tensor([0, 0, 0, 1, 1, 1])
    value = MatchedDemographicParity()(torch.cat([h0, h1]), codes)
    assert float(value) == pytest.approx((0.2 + 0 + 0.3) / 3)
    with pytest.raises(ValueError, match="m zeros then m ones"):
        MatchedDemographicParity()(torch.cat([h0, h1]), codes.flip(0))
    with pytest.warns(DeprecationWarning, match="deprecated"):  # the old two-vector call
        assert float(MatchedDemographicParity()(h0, h1)) == pytest.approx(float(value))
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="same shape"):
        MatchedDemographicParity()(h0, h1[:2])


def test_constraints_dp_rows_and_norm_equal_covariance():
    """For binary S, |G h|/n rows are E[S h]/E[S] - E[h] = E[h|S=1] - E[h] (numpy)."""
    rng = np.random.default_rng(0)
    s = (rng.random(300) < 0.3).astype(int)
    h = rng.random(300)
    c = LinearConstraints("dp").fit(s)
    G = c.matrix(s, dtype=torch.float64).numpy()
    assert G.shape == (2, 300)
    np.testing.assert_allclose(G @ h / 300, [h[s == 1].mean() - h.mean(),
                                             h[s == 0].mean() - h.mean()])  # fmt: skip
    norm = NormPenalty(c)(torch.tensor(h), torch.tensor(s))
    expected = abs(h[s == 1].mean() - h.mean()) + abs(h[s == 0].mean() - h.mean())
    assert float(norm) == pytest.approx(expected, rel=1e-5)


def test_constraints_eo_and_continuous():
    rng = np.random.default_rng(1)
    n = 400
    y = (rng.random(n) < 0.5).astype(int)
    age = rng.normal(40, 10, n)
    sex = (rng.random(n) < 0.5).astype(int)
    S = np.column_stack([sex, age])
    c = LinearConstraints("eo").fit(S, y)
    assert c.n_constraints == 2 * 2 + 2  # sex: 2 groups x 2 labels; age: 1 row x 2 labels
    G = c.matrix(S, y, dtype=torch.float64).numpy()
    h = rng.random(n)
    # continuous row, label 1: E[Y_1 (S - E[S|Y=1]) / sd h] is the within-label covariance
    row = G[-1]
    sel = y == 1
    expected = np.mean(sel * (age - age[sel].mean()) / age[sel].std() * h)
    assert row @ h / n == pytest.approx(expected)
    # a fair score (depends on nothing) satisfies every row in expectation on the fit data
    np.testing.assert_allclose(G @ np.full(n, 0.4) / n, 0, atol=1e-12)


def test_constraints_errors():
    with pytest.raises(ValueError, match="notion"):
        LinearConstraints("xx")
    with pytest.raises(ValueError, match="constant"):
        LinearConstraints().fit(np.zeros(10))
    with pytest.raises(ValueError, match="labels"):
        LinearConstraints("eo").fit(np.array([0, 1, 0, 1]))
    c = LinearConstraints().fit(np.array([0, 1, 0, 1]))
    with pytest.raises(ValueError, match="columns"):
        c.matrix(np.ones((4, 2)))
    with pytest.raises(RuntimeError, match="not fitted"):
        LinearConstraints().matrix(np.array([0, 1]))


def test_adversary_zero_for_uninformative_and_positive_when_it_learns():
    torch.manual_seed(0)
    n = 400
    s = (torch.rand(n) < 0.5).long()
    leaky = torch.where(s == 1, torch.tensor(0.9), torch.tensor(0.1))
    pen = AdversaryPenalty(hidden=8)
    opt = torch.optim.Adam(pen.parameters(), lr=0.05)
    for _ in range(200):
        opt.zero_grad()
        pen.adversary_objective(PenaltyBatch(leaky, s)).backward()
        opt.step()
    prior = -np.log(0.5)  # about log 2 for balanced groups
    assert float(pen(leaky, s).detach()) > 0.5 * prior  # the adversary reads S from the score
    assert float(pen(torch.full((n,), 0.5), s).detach()) == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("seed", [0, 1])
def test_unchecked_value_matches_forward_and_numpy(seed):
    # `evaluate` (the training loop's unchecked path) must give the checked value and the
    # numpy squared mean gap, with the same gradient.
    rng = np.random.default_rng(seed)
    s_np = (rng.random(50) < 0.3).astype(np.int64)
    s_np[:2] = [0, 1]
    h_np = rng.random(50)
    gap = h_np[s_np == 0].mean() - h_np[s_np == 1].mean()
    pen = GapPenalty()
    grads = []
    for call in (pen, lambda h, s: pen.evaluate(PenaltyBatch(h, s))):
        h = torch.tensor(h_np, requires_grad=True)
        out = call(h, torch.from_numpy(s_np))
        out.backward()
        grads.append(h.grad)
        assert out.item() == pytest.approx(gap**2, rel=1e-12)
    torch.testing.assert_close(grads[0], grads[1])


def test_the_call_checks_and_evaluate_is_the_formula():
    # A penalty implements `evaluate` (the formula, what the engine calls on the data it
    # validated once); the call checks the batch first.
    from otfair.penalties import FairnessPenalty

    class MeanScore(FairnessPenalty):
        def evaluate(self, batch):
            return batch.scores.mean()

    with pytest.raises(ValueError, match="must be probabilities"):
        MeanScore()(torch.tensor([0.1, 2.0]), torch.tensor([0, 1]))
    assert float(MeanScore()(torch.tensor([0.1, 0.3]), torch.tensor([0, 1]))) == pytest.approx(0.2)
    unchecked = MeanScore().evaluate(PenaltyBatch(torch.tensor([0.1, 2.0]), None))
    assert float(unchecked) == pytest.approx(1.05)
    # the built-ins' call checks the batch (their `evaluate` is the engine's bare formula)
    with pytest.raises(ValueError, match="empty group"):
        BarycenterPenalty()(torch.tensor([0.1, 0.2]), torch.tensor([1, 1]))


@pytest.mark.parametrize("notion", ["dp", "eo"])
def test_otf_penalty_equals_otf0_on_the_mean_normalized_exact_cost(notion):
    """The penalty's shortcuts (mm cost, class sort, eps rescaling, warm start) change
    nothing: it equals ``otf0`` on ``C / mean(C)`` with the exact distance."""
    from otfair.ot import euclidean_cost, otf0

    rng = np.random.default_rng(4)
    n = 120
    s = rng.integers(0, 3, size=n)
    y = (rng.uniform(size=n) < 0.5).astype(float)
    X = torch.tensor(rng.normal(size=(n, 5)) + s[:, None], dtype=torch.float64)
    h = torch.sigmoid(X[:, 0] - 1).requires_grad_(True)
    cons = LinearConstraints(notion).fit(s, y)
    G = cons.matrix(s, y, dtype=torch.float64)
    C = euclidean_cost(X, X)
    C = C / C.mean()
    ref = otf0(h, C, G, 0.05, tol=1e-9, max_iter=200)
    (g_ref,) = torch.autograd.grad(ref, h)
    from otfair.penalties import OTFPenalty

    pen = OTFPenalty(cons, eps=0.05, tol=1e-9, max_iter=200)
    for _ in range(2):  # second call: warm-started from the first
        value = pen.from_matrix(h, G, X)
        (grad,) = torch.autograd.grad(value, h)
        assert float(value.detach()) == pytest.approx(float(ref.detach()), rel=1e-6)
        torch.testing.assert_close(grad, g_ref, rtol=1e-5, atol=1e-8)
