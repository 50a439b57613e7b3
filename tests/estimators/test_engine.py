"""The one training engine: optimizer protocol, hooks, weighted epoch logs, progress."""

import numpy as np
import pytest
import torch

from otfair.estimators._training import (
    AdversaryStep,
    predict_from_proba,
    run_epochs,
    stratified_batches,
)


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


# --- the one stratified batcher ---------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("every_stratum", [False, True])
def test_stratified_batches_is_a_permutation_in_near_equal_batches(seed, every_stratum):
    rng = np.random.default_rng(seed)
    strata = rng.choice(4, size=1003, p=[0.6, 0.25, 0.1, 0.05])
    parts = stratified_batches(
        strata, 100, np.random.default_rng(seed), every_stratum=every_stratum
    )
    assert np.array_equal(np.sort(np.concatenate(parts)), np.arange(len(strata)))
    sizes = [len(p) for p in parts]
    assert len(parts) == min(11, np.bincount(strata).min()) if every_stratum else len(parts) == 11
    # proportions: each batch's stratum counts are within a few of the overall share
    for p in parts:
        expected = np.bincount(strata, minlength=4) * len(p) / len(strata)
        assert np.all(np.abs(np.bincount(strata[p], minlength=4) - expected) <= 2.5)
    assert max(sizes) - min(sizes) <= (8 if every_stratum else 1)


@pytest.mark.parametrize("seed", range(20))
def test_every_stratum_puts_every_stratum_in_every_batch_even_when_tiny(seed):
    rng = np.random.default_rng(seed)
    strata = np.r_[np.zeros(500, int), np.ones(7, int), np.full(40, 2)]
    rng.shuffle(strata)
    parts = stratified_batches(strata, 32, rng, every_stratum=True)
    assert len(parts) == 7  # capped at the smallest stratum
    for p in parts:
        assert set(np.unique(strata[p])) == {0, 1, 2}
    # the count cut (FairClassifier) cannot promise this with ceil(547/32) = 18 batches
    parts = stratified_batches(strata, 32, np.random.default_rng(seed))
    assert len(parts) == 18 and any(1 not in set(strata[p]) for p in parts)


def test_stratified_batches_without_strata_is_a_seeded_shuffle():
    a = stratified_batches(None, 10, np.random.default_rng(3), n=25)
    b = stratified_batches(None, 10, np.random.default_rng(3), n=25)
    assert [len(p) for p in a] == [9, 8, 8]
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    with pytest.raises(ValueError, match="`n` is required"):
        stratified_batches(None, 10, np.random.default_rng(3))


def test_the_engine_runs_the_adversary_steps_after_each_step():
    """AdversaryStep: `steps` adversary updates per training step, each followed by `after`."""
    data = [torch.tensor([1.0, 2.0]), torch.tensor([3.0])]
    w, opt = _setup()
    v = torch.nn.Parameter(torch.tensor([0.5]))
    adv_opt = torch.optim.SGD([v], lr=0.1)
    calls = []

    def adversary_loss(xb):
        calls.append(("loss", v.item()))
        return None if len(xb) == 1 else ((v - xb.mean()) ** 2).sum()

    adversary = AdversaryStep(
        adversary_loss, adv_opt, steps=2, after=lambda: calls.append("after")
    )
    run_epochs(
        1, lambda epoch: data, lambda xb: (w * xb).sum(), optimizer=opt, adversary=adversary
    )
    # batch 1: two SGD steps on (v - 1.5)^2 from 0.5; batch 2 (None): nothing changes
    expected, value = [], 0.5
    for _ in range(2):
        expected += [("loss", pytest.approx(value)), "after"]
        value -= 0.1 * 2 * (value - 1.5)
    expected += [("loss", pytest.approx(value)), ("loss", pytest.approx(value))]
    assert calls == expected
    assert v.item() == pytest.approx(value)


def test_only_the_engine_makes_optimizer_steps_and_epoch_loops():
    """No `zero_grad` / `backward` / `.step()` or epoch loop outside the engine (issue 25)."""
    import re
    from pathlib import Path

    import otfair

    root = Path(otfair.__file__).parent
    engine = {root / "estimators" / "_training.py", root / "estimators" / "_lbfgs.py"}
    pattern = re.compile(
        r"\.zero_grad\(|\.backward\(|(optimizer|opt)\.step\(|for \w+ in range\(.*epochs"
    )
    offenders = []
    for path in [*root.rglob("*.py"), *root.with_name("otfair_lab").rglob("*.py")]:
        if path in engine:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#")[0]
            if pattern.search(code) and ">>>" not in code:
                offenders.append(f"{path.relative_to(root.parent)}:{number}: {line.strip()}")
    assert not offenders, offenders
