"""The one training engine: optimizer protocol, hooks, weighted epoch logs, progress."""

import numpy as np
import pytest
import torch

from otfair.estimators._training import predict_from_proba, run_epochs


def _setup():
    torch.manual_seed(0)
    w = torch.nn.Parameter(torch.tensor([2.0]))
    return w, torch.optim.SGD([w], lr=0.1)


def test_run_epochs_matches_a_hand_written_loop():
    """Same updates as zero_grad/backward/step by hand; logs are weighted means."""
    data = [torch.tensor([1.0, 2.0]), torch.tensor([3.0])]
    w, opt = _setup()
    hooks, ends = [], []

    def step(xb):
        loss = ((w * xb - 1.0) ** 2).mean()
        return loss, {"aux": xb.sum()}, float(len(xb))

    hist = run_epochs(
        2,
        lambda epoch: data,
        step,
        optimizer=opt,
        after_step=hooks.append,
        on_epoch_end=lambda e, logs: ends.append(e),
    )
    # reference: plain python loop, recording the loss before each update
    v, losses = 2.0, []
    for _ in range(2):
        tot = 0.0
        for xb in data:
            x = xb.numpy().astype(np.float64)
            tot += np.mean((v * x - 1) ** 2) * len(x)
            v -= 0.1 * np.mean(2 * (v * x - 1) * x)
        losses.append(tot / 3)
    assert float(w.detach()) == pytest.approx(v, rel=1e-5)
    assert [h["loss"] for h in hist] == pytest.approx(losses, rel=1e-5)
    assert hist[0]["aux"] == pytest.approx((3.0 * 2 + 3.0 * 1) / 3)  # weighted by len
    assert len(hooks) == 4 and ends == [0, 1] and hist[0]["time_s"] >= 0


def test_run_epochs_verbose_and_scheduler(capsys):
    w, opt = _setup()
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    run_epochs(3, lambda e: [None], lambda b: (w**2).sum(), optimizer=opt,
               scheduler=sched, verbose=True)  # fmt: skip
    assert opt.param_groups[0]["lr"] == pytest.approx(0.1 * 0.5**3)


def test_threshold_convention_is_p_at_least_half():
    np.testing.assert_array_equal(predict_from_proba([0.49, 0.5, 0.51]), [0, 1, 1])
