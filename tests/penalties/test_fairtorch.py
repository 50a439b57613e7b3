"""FairTorchDemographicParity against the ``fairtorch`` package's own DemographicParityLoss.

``fairtorch`` 0.1.2 (the FTM paper's "Reduction", App. D.2) declares ``torch<2`` but runs
on torch 2; it is a dev dependency installed with ``pip install --no-deps fairtorch``
(pyproject's ``dev`` extra comment). Without it the package comparison is skipped and
the hand re-derivation below still runs.
"""

import pytest
import torch

from otfair.penalties import FairTorchDemographicParity, make_penalty


def _batch(n, seed, share1=0.3):
    g = torch.Generator().manual_seed(seed)
    logits = 2 * torch.randn(n, generator=g, dtype=torch.float64)
    s = (torch.rand(n, generator=g) < share1).long()
    s[0], s[1] = 0, 1  # both groups present
    return logits, s


@pytest.mark.parametrize(("n", "seed", "share1"), [(7, 0, 0.5), (64, 1, 0.3), (513, 2, 0.1)])
def test_equals_fairtorch_demographic_parity_loss(n, seed, share1):
    fairtorch = pytest.importorskip("fairtorch")
    logits, s = _batch(n, seed, share1)
    logits = logits.float()  # FairTorch's M is float32 (a float64 batch fails in torch.mv)
    # FairTorch takes logits (it applies the sigmoid) and puts its tensors on cuda when
    # one is visible; on CPU it is called as the FTM paper's training loop calls it.
    ref_loss = fairtorch.DemographicParityLoss(sensitive_classes=[0, 1], alpha=1.0)
    ref_loss.device = torch.device("cpu")
    z_ref = logits.clone().requires_grad_(True)
    ref = ref_loss(None, z_ref, s)
    ref.backward()
    z = logits.clone().requires_grad_(True)
    pen = make_penalty("fairtorch-dp", "dp")
    value = pen(torch.sigmoid(z), s)
    value.backward()
    torch.testing.assert_close(value.detach(), ref.detach(), rtol=1e-5, atol=1e-9)
    torch.testing.assert_close(z.grad, z_ref.grad, rtol=1e-4, atol=1e-9)
    assert float(ref.detach()) > 1e-4  # a batch with a real gap, not 0 == 0
    # the contrast formula (the engine's and the call's) is FairTorch's relu(M mu)^2
    torch.testing.assert_close(
        _by_matrix(pen, torch.sigmoid(logits), s), value.detach(), rtol=1e-5, atol=1e-9
    )
    # and FairTorch's M matrix is the one the penalty documents
    torch.testing.assert_close(pen.constraint_matrix(torch.float32), ref_loss.M)


def test_hand_rederivation_of_both_row_sets():
    """Closed forms: 2 pi_1^2 (mu_0 - mu_1)^2 and (pi_0^2 + pi_1^2) (mu_0 - mu_1)^2."""
    logits, s = _batch(101, 5)
    h = torch.sigmoid(logits)
    n1 = int(s.sum())
    pi1 = n1 / len(s)
    gap = float(h[s == 0].mean() - h[s == 1].mean())
    released = FairTorchDemographicParity()(h, s)
    pen_pg = FairTorchDemographicParity(rows="per-group")
    per_group = pen_pg(h, s)
    assert float(released) == pytest.approx(2 * pi1**2 * gap**2, rel=1e-10)
    assert float(per_group) == pytest.approx(((1 - pi1) ** 2 + pi1**2) * gap**2, rel=1e-10)
    for pen, value in ((FairTorchDemographicParity(), released), (pen_pg, per_group)):
        assert float(_by_matrix(pen, h, s)) == pytest.approx(float(value), rel=1e-10)


def test_gradient_finite_differences_and_zero_on_fair_batch():
    logits, s = _batch(20, 3)
    h = torch.sigmoid(logits).requires_grad_(True)
    for rows in ("released", "per-group"):
        pen = FairTorchDemographicParity(rows=rows)
        assert torch.autograd.gradcheck(lambda x, p=pen: p(x, s), (h,))
    fair = torch.tensor([0.2, 0.6, 0.4, 0.4], dtype=torch.float64)
    codes = torch.tensor([0, 0, 1, 1])
    assert float(_by_matrix(FairTorchDemographicParity(), fair, codes)) == 0.0
    assert float(FairTorchDemographicParity()(fair, codes)) == pytest.approx(0.0, abs=1e-15)


def _by_matrix(pen, h, s):
    """FairTorch's own computation: ``relu(M mu) @ relu(M mu)`` of the group means."""
    mu = torch.stack([h[s == 0].mean(), h[s == 1].mean(), h.mean()])
    r = torch.relu(pen.constraint_matrix(h.dtype) @ mu)
    return r @ r


def test_errors_name_the_argument():
    h = torch.tensor([0.2, 0.4, 0.9])
    with pytest.raises(ValueError, match="empty group"):
        FairTorchDemographicParity()(h, torch.tensor([0, 0, 0]))
    with pytest.raises(ValueError, match="`rows`"):
        FairTorchDemographicParity(rows="mean")
    with pytest.raises(ValueError, match="DP only"):
        make_penalty("fairtorch-dp", "eo")
    with pytest.raises(ValueError, match="logits"):
        FairTorchDemographicParity()(torch.tensor([-1.0, 2.0]), torch.tensor([0, 1]))
