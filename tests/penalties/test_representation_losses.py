"""The fair-representation losses against hand computations, sklearn and finite differences."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.metrics import log_loss
from sklearn.mixture import GaussianMixture
from sklearn.utils.class_weight import compute_sample_weight

from otfair.penalties._representation_losses import (
    balanced_cross_entropy,
    conditional_adversary_loss,
    diagonal_gmm_log_prob,
    laftr_adversary_objective,
    sigmoid_ipm,
    symmetric_kl,
)


def test_laftr_dp_hand_computed():
    h = torch.tensor([0.2, 0.4, 0.9, 0.5, 0.7])
    s = torch.tensor([0, 0, 1, 1, 1])
    # 1 - [mean(0.2, 0.4) + mean(0.1, 0.5, 0.3)] = 1 - (0.3 + 0.3) = 0.4
    assert float(laftr_adversary_objective(h, s)) == pytest.approx(0.4)


def test_laftr_dp_is_the_dp_gap_of_a_hard_adversary():
    rng = np.random.default_rng(0)
    s = rng.integers(0, 2, 50)
    h = rng.integers(0, 2, 50).astype(float)
    gap = h[s == 1].mean() - h[s == 0].mean()
    val = laftr_adversary_objective(torch.tensor(h), torch.tensor(s))
    assert float(val) == pytest.approx(gap)


@pytest.mark.parametrize("notion", ["dp", "eo"])
def test_laftr_constant_adversary_scores_zero_and_perfect_scores_max(notion):
    rng = np.random.default_rng(1)
    s = torch.tensor(rng.integers(0, 2, 40))
    y = torch.tensor(rng.integers(0, 2, 40))
    const = torch.full((40,), 0.37, dtype=torch.float64)
    assert float(laftr_adversary_objective(const, s, y, notion=notion)) == pytest.approx(0.0)
    perfect = s.to(torch.float64)
    top = 1.0 if notion == "dp" else 2.0
    assert float(laftr_adversary_objective(perfect, s, y, notion=notion)) == pytest.approx(top)


def test_laftr_eo_hand_computed_and_errors():
    h = torch.tensor([0.1, 0.3, 0.8, 0.6, 0.5, 0.9])
    s = torch.tensor([0, 1, 1, 0, 1, 0])
    y = torch.tensor([0, 0, 0, 1, 1, 1])
    # y=0: 1 - |0.1| - mean(|0.3-1|, |0.8-1|) = 1 - 0.1 - 0.45 = 0.45
    # y=1: 1 - mean(0.6, 0.9) - |0.5-1| = 1 - 0.75 - 0.5 = -0.25
    assert float(laftr_adversary_objective(h, s, y, notion="eo")) == pytest.approx(0.2)
    with pytest.raises(ValueError, match="`y`"):
        laftr_adversary_objective(h, s, notion="eo")
    with pytest.raises(ValueError, match="`notion`"):
        laftr_adversary_objective(h, s, y, notion="eopp")


def test_sigmoid_ipm_hand_computed_and_gradcheck():
    rng = np.random.default_rng(2)
    z = rng.normal(size=(30, 3))
    s = rng.integers(0, 2, 30)
    s[:2] = [0, 1]
    theta, mu = rng.normal(size=3), 0.3
    out = 1.0 / (1.0 + np.exp(-(z @ theta + mu)))
    expected = abs(out[s == 0].mean() - out[s == 1].mean())
    zt = torch.tensor(z, requires_grad=True)
    tt = torch.tensor(theta, requires_grad=True)
    mt = torch.tensor(mu, dtype=torch.float64, requires_grad=True)
    st = torch.tensor(s)
    assert float(sigmoid_ipm(zt, st, tt, mt).detach()) == pytest.approx(expected)
    assert torch.autograd.gradcheck(lambda a, b, c: sigmoid_ipm(a, st, b, c), (zt, tt, mt))


def test_sigmoid_ipm_zero_for_identical_groups():
    z = torch.randn(10, 2, dtype=torch.float64)
    zz = torch.cat([z, z])
    s = torch.cat([torch.zeros(10), torch.ones(10)])
    val = sigmoid_ipm(zz, s, torch.randn(2, dtype=torch.float64), torch.zeros(()))
    assert float(val) == pytest.approx(0.0, abs=1e-12)


def test_balanced_cross_entropy_equals_sklearn_balanced_log_loss():
    rng = np.random.default_rng(3)
    logits = rng.normal(size=25)
    t = (rng.random(25) < 0.2).astype(int)
    t[:2] = [0, 1]
    p = 1.0 / (1.0 + np.exp(-logits))
    ref = log_loss(t, p, sample_weight=compute_sample_weight("balanced", t))
    got = balanced_cross_entropy(torch.tensor(logits), torch.tensor(t))
    assert float(got) == pytest.approx(ref)


def test_balanced_cross_entropy_one_class_is_plain_mean():
    logits = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    t = torch.ones(3)
    ref = torch.nn.functional.binary_cross_entropy_with_logits(logits, t.double())
    assert float(balanced_cross_entropy(logits, t)) == pytest.approx(float(ref))


def test_conditional_adversary_loss_sums_per_label_balanced_losses():
    rng = np.random.default_rng(4)
    adv = rng.normal(size=(40, 2))
    s = rng.integers(0, 2, 40)
    y = rng.integers(0, 2, 40)
    ref = 0.0
    for label in (0, 1):
        rows = y == label
        p = 1.0 / (1.0 + np.exp(-adv[rows, label]))
        ref += log_loss(s[rows], p, sample_weight=compute_sample_weight("balanced", s[rows]))
    got = conditional_adversary_loss(torch.tensor(adv), torch.tensor(s), torch.tensor(y))
    assert float(got) == pytest.approx(ref)


def test_diagonal_gmm_log_prob_matches_sklearn():
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.normal(0, 1, (100, 3)), rng.normal(3, 0.5, (100, 3))])
    gmm = GaussianMixture(3, covariance_type="diag", random_state=0).fit(x)
    got = diagonal_gmm_log_prob(
        torch.tensor(x),
        torch.tensor(gmm.weights_),
        torch.tensor(gmm.means_),
        torch.tensor(gmm.covariances_),
    )
    np.testing.assert_allclose(got.numpy(), gmm.score_samples(x), rtol=1e-10)


def test_symmetric_kl_of_two_gaussians_matches_closed_form():
    # N(0, 1) vs N(1, 1): KL both ways = 1/2 each, symmetric = 1.
    torch.manual_seed(0)
    z0 = torch.randn(200_000, dtype=torch.float64)
    z1 = torch.randn(200_000, dtype=torch.float64) + 1.0

    def logq(z, m):
        return -0.5 * (z - m) ** 2 - 0.5 * np.log(2 * np.pi)

    val = symmetric_kl(logq(z0, 0), logq(z0, 1), logq(z1, 0), logq(z1, 1))
    assert float(val) == pytest.approx(1.0, abs=0.02)
