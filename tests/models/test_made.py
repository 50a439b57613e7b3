"""The categorical MADE: a normalized density with the autoregressive structure."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from otfair.models.made import CategoricalMADE


def _all_cells(cards):
    cells = np.array(list(itertools.product(*(range(k) for k in cards))))
    offsets = np.cumsum([0, *cards[:-1]])
    x = np.zeros((len(cells), sum(cards)), dtype=np.float32)
    x[np.arange(len(cells))[:, None], cells + offsets] = 1.0
    return torch.as_tensor(x)


@pytest.mark.parametrize("cards", [[3], [2, 3], [4, 2, 3], [2, 2, 2, 2]])
def test_probabilities_sum_to_one_over_the_product_space(cards):
    torch.manual_seed(0)
    made = CategoricalMADE(cards, hidden=(7, 5))
    with torch.no_grad():  # random weights: the masks alone must normalize p
        for p in made.parameters():
            p.normal_(0.0, 2.0)
        total = made.log_prob(_all_cells(cards)).exp().sum()
    assert float(total) == pytest.approx(1.0, abs=1e-5)


def test_logits_of_a_variable_depend_on_earlier_variables_only():
    torch.manual_seed(1)
    cards = [2, 3, 4]
    made = CategoricalMADE(cards, hidden=(16, 16))
    x = _all_cells(cards)[[5]].requires_grad_(True)
    logits = made.net(x)[0]
    offsets = np.cumsum([0, *cards])
    for j in range(len(cards)):
        grad = torch.autograd.grad(logits[offsets[j] : offsets[j + 1]].sum(), x, retain_graph=True)
        seen = np.flatnonzero(grad[0][0].numpy() != 0)
        assert np.all(seen < offsets[j]), f"variable {j} sees inputs {seen}"
    # the last variable does depend on the earlier ones (the masks are not all zero)
    assert len(seen) > 0


def test_maximum_likelihood_recovers_a_dependent_law():
    # p(c1, c2): c1 ~ Bernoulli(0.3), c2 = c1 with prob 0.9; MLE on 4,000 draws.
    rng = np.random.default_rng(0)
    c1 = (rng.random(4000) < 0.3).astype(int)
    c2 = np.where(rng.random(4000) < 0.9, c1, 1 - c1)
    x = torch.as_tensor(np.eye(2)[c1].tolist(), dtype=torch.float32)
    x = torch.cat([x, torch.as_tensor(np.eye(2)[c2], dtype=torch.float32)], dim=1)
    torch.manual_seed(0)
    made = CategoricalMADE([2, 2], hidden=(8,))
    opt = torch.optim.Adam(made.parameters(), lr=0.05)
    for _ in range(300):
        opt.zero_grad()
        (-made.log_prob(x).mean()).backward()
        opt.step()
    with torch.no_grad():
        p = made.log_prob(_all_cells([2, 2])).exp().numpy()
    empirical = np.bincount(c1 * 2 + c2, minlength=4) / 4000
    np.testing.assert_allclose(p, empirical, atol=0.01)


def test_bad_cardinalities_raise():
    with pytest.raises(ValueError, match="cardinalities"):
        CategoricalMADE([2, 0])
