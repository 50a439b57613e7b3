import numpy as np
import ot as pot
import pytest
import torch
from scipy.stats import wasserstein_distance

from otfair.ot import wasserstein_1d, wasserstein_1d_power

SIZES = [(50, 50), (37, 61), (1, 9), (200, 13)]


def _sample(n0, n1, seed, weighted):
    rng = np.random.default_rng(seed)
    u, v = rng.normal(size=n0), rng.normal(0.5, 2.0, size=n1)
    a = rng.uniform(0.1, 1.0, size=n0) if weighted else None
    b = rng.uniform(0.1, 1.0, size=n1) if weighted else None
    return u, v, a, b


def _t(x):
    return None if x is None else torch.tensor(x, dtype=torch.float64)


@pytest.mark.parametrize(("n0", "n1"), SIZES)
@pytest.mark.parametrize("weighted", [False, True])
def test_w1_matches_scipy_and_pot(n0, n1, weighted):
    u, v, a, b = _sample(n0, n1, n0 + n1, weighted)
    ours = float(wasserstein_1d(_t(u), _t(v), _t(a), _t(b), p=1))
    ref_scipy = wasserstein_distance(u, v, a, b)
    aa = np.full(n0, 1 / n0) if a is None else a / a.sum()
    bb = np.full(n1, 1 / n1) if b is None else b / b.sum()
    ref_pot = float(pot.wasserstein_1d(u, v, aa, bb, p=1))
    assert ours == pytest.approx(ref_scipy, abs=1e-10, rel=1e-10)
    assert ours == pytest.approx(ref_pot, abs=1e-10, rel=1e-10)


@pytest.mark.parametrize(("n0", "n1"), SIZES)
@pytest.mark.parametrize("weighted", [False, True])
def test_w2_is_root_of_pot_power_and_of_emd(n0, n1, weighted):
    u, v, a, b = _sample(n0, n1, 3 * n0 + n1, weighted)
    aa = np.full(n0, 1 / n0) if a is None else a / a.sum()
    bb = np.full(n1, 1 / n1) if b is None else b / b.sum()
    pot_power = float(pot.wasserstein_1d(u, v, aa, bb, p=2))  # POT returns W_p^p
    lp = float(pot.emd2(aa, bb, (u[:, None] - v[None, :]) ** 2))  # exact LP, any dimension
    power = float(wasserstein_1d_power(_t(u), _t(v), _t(a), _t(b), p=2))
    dist = float(wasserstein_1d(_t(u), _t(v), _t(a), _t(b), p=2))
    assert power == pytest.approx(pot_power, rel=1e-9)
    assert power == pytest.approx(lp, rel=1e-7)
    assert dist == pytest.approx(np.sqrt(lp), rel=1e-7)


def test_float32_agrees_with_scipy_to_1e6():
    u, v, _, _ = _sample(300, 170, 1, False)
    ours = float(wasserstein_1d(torch.tensor(u, dtype=torch.float32), torch.tensor(v)))
    assert ours == pytest.approx(wasserstein_distance(u, v), abs=1e-6)


@pytest.mark.parametrize("p", [1, 2, 3])
@pytest.mark.parametrize(("n0", "n1"), [(9, 9), (7, 12)])
def test_gradient_matches_finite_differences(p, n0, n1):
    u, v, a, b = _sample(n0, n1, 7, weighted=n0 != n1)
    ut = torch.tensor(u, requires_grad=True)
    vt = torch.tensor(v, requires_grad=True)
    fn = lambda x, y: wasserstein_1d(x, y, _t(a), _t(b), p=p)  # noqa: E731
    assert torch.autograd.gradcheck(fn, (ut, vt), eps=1e-7, atol=1e-6)


def test_gradient_equal_sizes_by_hand():
    # sorted pairing u_(i) <-> v_(i): d W1 / d u_i = sign(u_i - v_sigma(i)) / n
    u = torch.tensor([3.0, 0.0, 1.0], requires_grad=True)
    v = torch.tensor([0.5, 2.0, 5.0])
    wasserstein_1d(u, v).backward()
    # u sorted: 0->0.5 (-), 1->2 (-), 3->5 (-)
    torch.testing.assert_close(u.grad, torch.full((3,), -1.0 / 3))


def test_gradient_is_finite_at_zero_distance():
    u = torch.tensor([0.1, 0.7, 0.3], requires_grad=True)
    wasserstein_1d(u, u.detach().clone(), p=2).backward()
    assert torch.isfinite(u.grad).all()
    assert torch.all(u.grad == 0)


def test_zero_weights_drop_points():
    u = torch.tensor([0.0, 10.0, 1.0], dtype=torch.float64)
    v = torch.tensor([1.0], dtype=torch.float64)
    w = torch.tensor([1.0, 0.0, 1.0], dtype=torch.float64)
    assert float(wasserstein_1d(u, v, w)) == pytest.approx(0.5)


def test_bad_input():
    u = torch.rand(5)
    with pytest.raises(ValueError, match="`u_weights`"):
        wasserstein_1d(u, u, u_weights=torch.tensor([1.0, -1, 1, 1, 1]))
    with pytest.raises(ValueError, match="`v_weights`"):
        wasserstein_1d(u, u, v_weights=torch.zeros(5))
    with pytest.raises(ValueError, match="`u_weights` has 3 entries"):
        wasserstein_1d(u, u, u_weights=torch.ones(3))
    with pytest.raises(ValueError, match="`v`"):
        wasserstein_1d(u, torch.tensor([0.1, float("nan")]))
    with pytest.raises(ValueError, match="1-D"):
        wasserstein_1d(torch.rand(3, 2), u)
    with pytest.raises(ValueError, match="empty"):
        wasserstein_1d(torch.rand(0), u)
    with pytest.raises(ValueError, match="`p`"):
        wasserstein_1d(u, u, p=0.5)
