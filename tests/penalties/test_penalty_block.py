"""The score-penalty protocol on a (K, n) block of K models' scores (issue 25).

``PenaltyStack(...).evaluate(batch)`` is the call of the training loops: value k of a
block equals the penalty of model k's own instance on ``scores[k]`` (the single-fit
call), values and gradients, for every built-in score penalty; per-model state (OTF's
warm starts, an adversary's parameters) stays per model.
"""

import numpy as np
import pytest
import torch

from otfair.penalties import (
    BarycenterPenalty,
    FairnessPenalty,
    GapPenalty,
    MatchedDemographicParity,
    PenaltyBatch,
    PenaltyStack,
    make_penalty,
    penalty_values,
)


def values(penalties, scores, s, y=None, X=None, G=None, cache=None):
    """The unchecked value(s) the trainers take: the stack of ``penalties`` on a batch."""
    return PenaltyStack(penalties).evaluate(PenaltyBatch(scores, s, y, X, G, cache))


def _batch(n=60, seed=0, K=4):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, 3, generator=g, dtype=torch.float64)
    s = (torch.arange(n) % 3 == 0).long()
    y = (torch.rand(n, generator=g) < 0.5).double()
    H = torch.rand(K, n, generator=g, dtype=torch.float64) * 0.9 + 0.05
    return X, s, y, H


def _instances(name, notion, s, y, K):
    torch.manual_seed(0)  # adversaries: the same initial parameters in both lists
    return [make_penalty(name, notion).fit(s.numpy(), y.numpy()).double() for _ in range(K)]


CASES = [
    ("gapreg", "dp"),
    ("gapreg", "eopp"),
    ("gapreg", "eo"),
    ("norm", "dp"),
    ("norm", "eo"),
    ("otf", "dp"),
    ("otf", "eo"),
    ("barycenter", "dp"),
    ("adv", "dp"),
    ("ftm", "dp"),
    ("fairtorch-dp", "dp"),
]


@pytest.mark.parametrize("name,notion", CASES)
def test_block_equals_the_single_calls(name, notion):
    X, s, y, H = _batch()
    K = H.shape[0]
    singles = _instances(name, notion, s, y, K)
    block = _instances(name, notion, s, y, K)
    G = None
    if singles[0].plan.constraints:
        G = singles[0].constraints.matrix(s.numpy(), y.numpy(), dtype=torch.float64)
    hs = [H[k].clone().requires_grad_(True) for k in range(K)]
    ref = torch.stack([values(p, h, s, y, X, G=G) for p, h in zip(singles, hs, strict=True)])
    assert ref.shape == (K,)
    ref.sum().backward()
    Hg = H.clone().requires_grad_(True)
    out = values(block, Hg, s, y, X, G=G)
    assert out.shape == (K,)
    torch.testing.assert_close(out, ref.detach(), rtol=1e-6, atol=1e-9)
    out.sum().backward()  # one backward of the sum gives each model its own gradient
    for k in range(K):
        torch.testing.assert_close(Hg.grad[k], hs[k].grad, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("name,notion", [c for c in CASES if c[0] != "adv"])
def test_one_instance_evaluates_the_block(name, notion):
    """Stateless penalties: one instance gives the K values (batched or row by row)."""
    X, s, y, H = _batch()
    pen = _instances(name, notion, s, y, 1)[0]
    G = None if not pen.plan.constraints else pen.constraints.matrix(s.numpy(), y.numpy()).double()
    out = values(pen, H, s, y, X, G=G)
    # a fresh instance per row (OTF's warm starts of one vector do not carry to another)
    rows = [values(_instances(name, notion, s, y, 1)[0], h, s, y, X, G=G) for h in H]
    torch.testing.assert_close(out, torch.stack(rows), rtol=1e-6, atol=1e-9)


def test_batched_formulas_against_hand_computations():
    """The block formulas against independent per-row computations (boolean masks)."""
    X, s, y, H = _batch(n=40)
    in0, in1 = s == 0, s == 1
    gap = torch.stack([(h[in0].mean() - h[in1].mean()) ** 2 for h in H])
    torch.testing.assert_close(values(GapPenalty(), H, s), gap)
    m = 20
    mdp = torch.stack([torch.mean(torch.abs(h[:m] - h[m:])) for h in H])
    codes = torch.tensor([0] * m + [1] * m)
    torch.testing.assert_close(values(MatchedDemographicParity(), H, codes), mdp)
    norm = make_penalty("norm", "eo").fit(s.numpy(), y.numpy())
    G = norm.constraints.matrix(s.numpy(), y.numpy(), dtype=torch.float64)
    expected = [sum(abs(float(G[c] @ h)) for c in range(G.shape[0])) / 40 for h in H]
    np.testing.assert_allclose(norm.from_matrix(H, G).numpy(), expected, rtol=1e-12)


def test_otf_warm_starts_stay_per_row():
    """Two batches in a row: the block's row k continues from row k's own duals."""
    X, s, y, H = _batch(n=60, K=3)
    X2, _, _, H2 = _batch(n=60, seed=1, K=3)
    singles = _instances("otf", "dp", s, y, 3)
    block = _instances("otf", "dp", s, y, 1)[0]
    G = block.constraints.matrix(s.numpy(), y.numpy(), dtype=torch.float64)
    for feats, scores in ((X, H), (X2, H2)):
        out = values(block, scores, s, y, feats, G=G)
        ref = [p.from_matrix(h, G, feats) for p, h in zip(singles, scores, strict=True)]
        torch.testing.assert_close(out, torch.stack(ref), rtol=1e-6, atol=1e-9)
    assert isinstance(block._details, list) and len(block._details) == 3
    for mine, theirs in zip(block._details, singles, strict=True):
        torch.testing.assert_close(mine.otf.mu, theirs._details.otf.mu, rtol=1e-5, atol=1e-9)
    # a 1-D call after a block starts cold instead of reusing a row's duals
    single = values(block, H[0], s, y, X, G=G)
    cold = values(_instances("otf", "dp", s, y, 1)[0], H[0], s, y, X, G=G)
    torch.testing.assert_close(single, cold, rtol=1e-6, atol=1e-9)


def test_otf_cache_keeps_the_compact_problem():
    """The general solver's cache (two attributes: two groups take the vectorized
    solvers, below)."""
    X, s, y, H = _batch()
    s = torch.stack([s, (torch.arange(len(s)) % 2 == 0).long()], dim=1)
    pen = _instances("otf", "dp", s, y, 1)[0]
    G = pen.constraints.matrix(s.numpy(), y.numpy(), dtype=torch.float64)
    fresh = values(pen, H, s, y, X, G=G)
    pen.fit(s.numpy(), y.numpy())  # forgets the warm starts
    assert pen._details is None
    cache: dict = {}
    first = values(pen, H, s, y, X, G=G, cache=cache)
    (order, problem) = cache[("otf-problem", pen.eps)]
    assert cache[("two-group", pen.eps)] is None  # two attributes: the general solver
    assert problem.C is None  # only the class-reduced cost is kept
    again = values(pen, H, s, y, X, G=G, cache=cache)
    torch.testing.assert_close(first, fresh)
    torch.testing.assert_close(again, fresh, rtol=1e-5, atol=1e-9)


def test_default_rows_for_a_penalty_that_cannot_batch():
    """An outside penalty implementing only ``evaluate`` gets the row-by-row default."""

    class AbsGap(FairnessPenalty):
        def evaluate(self, batch):
            s = batch.sensitive.to(batch.scores.dtype)
            return (batch.scores @ ((1 - s) / (1 - s).sum() - s / s.sum())).abs()

    X, s, y, H = _batch()
    expected = torch.stack([(h[s == 0].mean() - h[s == 1].mean()).abs() for h in H])
    torch.testing.assert_close(values(AbsGap(), H, s), expected)
    torch.testing.assert_close(values([AbsGap() for _ in H], H, s), expected)
    assert not AbsGap.batchable and not BarycenterPenalty.batchable


def test_errors():
    from otfair.penalties import NormPenalty

    X, s, y, H = _batch()
    with pytest.raises(ValueError, match="at least one"):
        values([], H, s)
    lin = make_penalty("norm").fit(s.numpy())
    assert isinstance(lin, NormPenalty)
    with pytest.raises(ValueError, match="one class"):
        values([GapPenalty(), lin], H[:2], s)
    with pytest.raises(ValueError, match="scores"):
        values([GapPenalty(), GapPenalty()], H, s)  # 4 rows, 2 instances
    with pytest.raises(ValueError, match="scores"):
        values([GapPenalty(), GapPenalty()], H[0], s)
    with pytest.raises(ValueError, match="scores"):
        values(GapPenalty(), H[None], s)


def test_penalty_values_and_value_are_deprecated_aliases():
    X, s, y, H = _batch()
    with pytest.warns(FutureWarning, match="penalty_values"):
        old = penalty_values(GapPenalty(), H, s)
    with pytest.warns(FutureWarning, match="value"):
        row = GapPenalty().value(H[0], s)
    torch.testing.assert_close(old, values(GapPenalty(), H, s))
    torch.testing.assert_close(row, old[0])


@pytest.mark.parametrize("notion", ["dp", "eo", "eopp"])
def test_otf_on_a_fixed_two_group_batch_takes_the_two_group_solver(notion):
    """A fixed batch (a cache) with two groups on the CPU: the block's values and
    gradients come from ``TwoGroupOTF0`` (DP) or ``CellsOTF0`` (EO, equal opportunity),
    kept in the cache per block size, and equal the general solver's to its tolerance;
    without a cache, or with the batched backend forced, the general solver runs."""
    from otfair.ot._otf_cells import CellsOTF0
    from otfair.ot._otf_two_groups import TwoGroupOTF0

    kind = TwoGroupOTF0 if notion == "dp" else CellsOTF0
    X, s, y, H = _batch(n=200, K=3)
    X[:, 0] += s  # the groups differ: a positive penalty
    pen = _instances("otf", notion, s, y, 1)[0]
    G = pen.constraints.matrix(s.numpy(), y.numpy(), dtype=torch.float64)
    cache: dict = {}
    block = H.clone().requires_grad_(True)
    out = pen.from_matrix(block, G, X, cache)
    out.sum().backward()
    assert isinstance(cache[("two-group", pen.eps)], kind)
    assert isinstance(cache[("two-group", pen.eps, 3)], kind)
    assert out.shape == (3,) and (out > 0).all()
    for k in range(3):
        h = H[k].clone().requires_grad_(True)
        ref = pen._general_from_matrix(h, G, X, None)
        ref.backward()
        assert float(out[k].detach()) == pytest.approx(float(ref.detach()), rel=1e-3, abs=1e-7)
        np.testing.assert_allclose(block.grad[k].numpy(), h.grad.numpy(), rtol=2e-3, atol=2e-5)
    single = H[0].clone().requires_grad_(True)  # one model: the same value as row 0
    torch.testing.assert_close(pen.from_matrix(single, G, X, cache), out[0].detach())
    assert ("two-group", pen.eps, 1) not in cache


def test_otf_without_a_cache_or_on_the_batched_backend_keeps_the_general_solver(
    monkeypatch,
):
    X, s, y, H = _batch(n=200, K=2)
    pen = _instances("otf", "dp", s, y, 1)[0]
    G = pen.constraints.matrix(s.numpy(), y.numpy(), dtype=torch.float64)
    pen.from_matrix(H, G, X, None)
    assert pen._details is not None  # the general solver's duals, kept for warm starts
    monkeypatch.setenv("OTFAIR_OTF_SOLVER", "batched")
    cache: dict = {}
    pen.from_matrix(H, G, X, cache)
    assert cache and not any(key[0] == "two-group" for key in cache)
