"""FTM's Reduction (FairTorch's released loss) is Gap Reg's penalty times 2 pi_1^2.

The FTM paper compares its "Reduction" (FairTorch's ``DemographicParityLoss``, App. D.2)
and "Reg" (the squared mean-score gap) as two baselines. FairTorch 0.1.2's four
constraint rows all read group 0's moment, so its loss is 2 (mu_0 - mu)^2 = 2 pi_1^2
(mu_0 - mu_1)^2 (``tests/penalties/test_fairtorch.py`` checks it against the package):
on a batch with the group shares the sweep's stratified batches keep fixed, the two
objectives are one up to the multiplier of lambda. docs/reproduction/deviations.md and
claims.md cite this test.
"""

import pytest
import torch

from otfair.penalties import make_penalty


@pytest.mark.parametrize(("n", "seed", "share1"), [(16, 0, 0.5), (200, 1, 0.31), (999, 2, 0.1)])
def test_fairtorch_reduction_is_gapreg_times_two_pi1_squared(n, seed, share1):
    g = torch.Generator().manual_seed(seed)
    scores = torch.sigmoid(2 * torch.randn(n, generator=g, dtype=torch.float64))
    s = (torch.rand(n, generator=g) < share1).long()
    s[0], s[1] = 0, 1
    pi1 = float(s.double().mean())
    # the independent reference: the squared gap of the group means, by hand
    gap2 = float(scores[s == 0].mean() - scores[s == 1].mean()) ** 2
    h1 = scores.clone().requires_grad_(True)
    h2 = scores.clone().requires_grad_(True)
    reduction = make_penalty("fairtorch-dp", "dp")(h1, s)
    gapreg = make_penalty("gapreg", "dp")(h2, s)
    assert float(gapreg.detach()) == pytest.approx(gap2, rel=1e-10)
    assert float(reduction.detach()) == pytest.approx(2 * pi1**2 * gap2, rel=1e-10)
    reduction.backward()
    gapreg.backward()
    # the gradients too: one objective, lambda rescaled by 2 pi_1^2
    torch.testing.assert_close(h1.grad, 2 * pi1**2 * h2.grad, rtol=1e-9, atol=1e-15)
