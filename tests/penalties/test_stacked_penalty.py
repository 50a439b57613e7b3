"""StackedPenalty: value k equals the single penalty of instance k on scores[k]."""

import numpy as np
import pytest
import torch

from otfair.penalties import make_penalty
from otfair.penalties._stacked import StackedPenalty


def _batch(n=60, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, 3, generator=g, dtype=torch.float64)
    s = (torch.arange(n) % 3 == 0).long()
    y = (torch.rand(n, generator=g) < 0.5).double()
    H = torch.rand(4, n, generator=g, dtype=torch.float64) * 0.9 + 0.05
    return X, s, y, H


@pytest.mark.parametrize(
    "name,notion",
    [
        ("gapreg", "dp"),
        ("gapreg", "eopp"),
        ("norm", "dp"),
        ("norm", "eo"),
        ("otf", "dp"),
        ("otf", "eo"),
        ("barycenter", "dp"),
        ("adv", "dp"),
        ("ftm", "dp"),
        ("fairtorch-dp", "dp"),
    ],
)
def test_values_equal_single_penalties(name, notion):
    X, s, y, H = _batch()
    K = H.shape[0]
    torch.manual_seed(0)
    singles = [make_penalty(name, notion).fit(s.numpy(), y.numpy()).double() for _ in range(K)]
    torch.manual_seed(0)
    stacked = StackedPenalty(
        [make_penalty(name, notion).fit(s.numpy(), y.numpy()).double() for _ in range(K)]
    )
    G = None
    if singles[0].linear:
        G = singles[0].constraints.matrix(s.numpy(), y.numpy(), dtype=torch.float64)
    hs = [H[k].clone().requires_grad_(True) for k in range(K)]
    ref = torch.stack(
        [
            p.from_matrix(h, G, X) if G is not None else p.value(h, s, y, X)
            for p, h in zip(singles, hs, strict=True)
        ]
    )
    ref.sum().backward()
    Hg = H.clone().requires_grad_(True)
    out = stacked.values(Hg, s, y, X, G)
    torch.testing.assert_close(out, ref.detach(), rtol=1e-6, atol=1e-9)
    # one backward of the sum gives each model its own gradient
    out.sum().backward()
    for k in range(K):
        torch.testing.assert_close(Hg.grad[k], hs[k].grad, rtol=1e-5, atol=1e-8)


def test_errors():
    from otfair.penalties import GapPenalty, NormPenalty

    with pytest.raises(ValueError, match="at least one"):
        StackedPenalty([])
    lc = make_penalty("norm").fit(np.array([0, 1, 0, 1]))
    with pytest.raises(ValueError, match="one class"):
        StackedPenalty([GapPenalty(), lc])
    with pytest.raises(ValueError, match="scores"):
        StackedPenalty([GapPenalty()]).values(torch.rand(2, 4), torch.tensor([0, 1, 0, 1]))
    assert isinstance(lc, NormPenalty)


def test_otf_batch_key_reuses_the_compact_problem():
    X, s, y, H = _batch()
    torch.manual_seed(0)
    pens = [make_penalty("otf").fit(s.numpy(), y.numpy()).double() for _ in range(4)]
    G = pens[0].constraints.matrix(s.numpy(), y.numpy(), dtype=torch.float64)
    fresh = StackedPenalty(pens).values(H, s, y, X, G)
    for p in pens:
        p._details = None
    cached = StackedPenalty(pens)
    first = cached.values(H, s, y, X, G, batch_key=7)
    again = cached.values(H, s, y, X, G, batch_key=7)
    assert cached._problems[7][1].C is None  # only the class-reduced cost is kept
    torch.testing.assert_close(first, fresh)
    torch.testing.assert_close(again, fresh, rtol=1e-5, atol=1e-9)
