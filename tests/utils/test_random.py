"""Local randomness: seeds from any random_state, generators that replace the global one."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch
from sklearn.utils import check_random_state
from torch import nn

from otfair.models import MLP
from otfair.utils import (
    draw_seed,
    local_random_state,
    reset_parameters,
    torch_generator,
    use_generator,
)


def test_draw_seed_from_every_kind_of_random_state():
    assert draw_seed(7) == check_random_state(7).randint(2**31 - 1)
    assert draw_seed(np.random.RandomState(7)) == np.random.RandomState(7).randint(2**31 - 1)
    assert draw_seed(np.random.default_rng(7)) == np.random.default_rng(7).integers(2**31 - 1)
    gen = np.random.default_rng(3)
    assert draw_seed(gen) != draw_seed(gen)  # the caller's generator advances
    with pytest.raises(ValueError, match="cannot be used to seed"):
        draw_seed("x")


def test_none_draws_fresh_seeds_without_numpy_global_generator():
    np.random.seed(5)  # noqa: NPY002 - the caller's global stream
    state = np.random.get_state()[1].copy()  # noqa: NPY002
    seeds = {draw_seed(None) for _ in range(4)}
    assert len(seeds) > 1
    assert np.array_equal(state, np.random.get_state()[1])  # noqa: NPY002
    assert isinstance(local_random_state(np.random.default_rng(0)), np.random.RandomState)


def test_torch_generator_draws_what_the_seeded_global_generator_draws():
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(11)
        expected = torch.rand(5), torch.randperm(9)
    gen = torch_generator(11)
    assert torch.equal(torch.rand(5, generator=gen), expected[0])
    assert torch.equal(torch.randperm(9, generator=gen), expected[1])


def _build() -> tuple[nn.Module, torch.Tensor]:
    return MLP(5, hidden=(7, 3)), torch.randn(4)


def test_use_generator_builds_the_modules_of_the_global_seeding_and_leaves_it_alone():
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(3)
        ref, ref_extra = _build()
        ref_next = torch.rand(3)
    torch.manual_seed(99)
    before = torch.get_rng_state()
    with use_generator(torch_generator(3)) as gen:
        net, extra = _build()
    assert torch.equal(torch.get_rng_state(), before)
    for p, q in zip(ref.parameters(), net.parameters(), strict=True):
        assert torch.equal(p, q)
    assert torch.equal(extra, ref_extra)
    assert torch.equal(torch.rand(3, generator=gen), ref_next)  # the stream continues


def test_use_generator_refuses_draws_that_cannot_take_a_generator():
    with use_generator(torch_generator(0)), pytest.raises(RuntimeError, match="bernoulli"):
        nn.functional.dropout(torch.ones(4), 0.5, training=True)


def test_use_generator_is_local_to_its_thread():
    n = 20_000
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(1)
        expected = torch.rand(n)
    out: dict[str, torch.Tensor] = {}
    start, stop = threading.Event(), threading.Event()

    def other() -> None:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(1)
            start.set()
            out["draws"] = torch.cat([torch.rand(1) for _ in range(n)])
        stop.set()

    thread = threading.Thread(target=other)
    thread.start()
    start.wait()
    with use_generator(torch_generator(0)):
        while not stop.is_set():
            MLP(8, hidden=(16,))
    thread.join()
    assert torch.equal(out["draws"], expected)


def test_reset_parameters_equals_construction_after_manual_seed():
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(5)
        ref = MLP(6, hidden=(4, 4))
        ref_norm = nn.LayerNorm(3)
    net = MLP(6, hidden=(4, 4))  # other initial weights
    reset_parameters(net, torch_generator(5))
    for p, q in zip(ref.parameters(), net.parameters(), strict=True):
        assert torch.equal(p, q)
    norm = nn.LayerNorm(3)
    with torch.no_grad():
        norm.weight.fill_(2.0)
    reset_parameters(norm, torch_generator(5))
    assert torch.equal(norm.weight, ref_norm.weight)


@pytest.fixture
def registry(monkeypatch):
    """The penalty registry, restored after the test (the probes are not left behind)."""
    from otfair.penalties import _base, _registry

    monkeypatch.setattr(_registry, "_FACTORIES", dict(_registry._FACTORIES))
    monkeypatch.setattr(_base, "PENALTY_OBJECTS", dict(_base.PENALTY_OBJECTS))


def _probe_penalty(draws: bool):
    """The name of a score penalty calling ``torch.rand_like`` (0 weight), refused in the
    generator mode, whose ``draws`` is ``draws``."""
    from otfair.penalties import FairnessPenalty, register_penalty

    class Probe(FairnessPenalty):
        def evaluate(self, batch):
            s = batch.sensitive.to(batch.scores.dtype)
            gap = batch.scores @ ((1 - s) / (1 - s).sum() - s / s.sum())
            return gap.abs() + 0.0 * torch.rand_like(gap)

    Probe.draws = draws
    name = f"probe-draws-{draws}".lower()
    register_penalty(name, lambda notion: Probe(), replace=True)
    return name


def test_a_penalty_that_never_draws_trains_outside_the_generator_mode(registry):
    """``draws = False``: no generator mode around training (its dispatch costs every
    torch call); the default ``True`` keeps it (a global-only draw is refused there)."""
    from otfair.estimators import FairClassifier

    rng = np.random.default_rng(0)
    s = (rng.random(300) < 0.4).astype(int)
    X = (rng.normal(size=(300, 3)) + s[:, None]).astype(np.float32)
    y = (X[:, 0] + rng.normal(size=300) > 0.5).astype(int)
    settings = {"epochs": 2, "solver": "adam", "tol": None, "random_state": 0}
    FairClassifier(_probe_penalty(False), 1.0, **settings).fit(X, y, sensitive_features=s)
    with pytest.raises(RuntimeError, match="global generator"):
        FairClassifier(_probe_penalty(True), 1.0, **settings).fit(X, y, sensitive_features=s)


@pytest.mark.parametrize("name", ["otf", "gapreg", "norm", "barycenter", "fairtorch-dp"])
def test_the_drawless_penalties_train_alike_with_and_without_the_generator_mode(monkeypatch, name):
    """The penalties that say ``draws = False``: their Adam fits are bitwise those of
    before, when they trained inside the generator mode."""
    from otfair.estimators import FairClassifier, fairness_path
    from otfair.penalties import make_penalty

    rng = np.random.default_rng(1)
    s = (rng.random(600) < 0.4).astype(int)
    X = (rng.normal(size=(600, 4)) + s[:, None]).astype(np.float32)
    y = (X[:, 0] + rng.normal(size=600) > 0.5).astype(int)
    est = FairClassifier(name, 0.3, model="mlp", epochs=3, solver="adam", tol=None,
                         batch_size=200, random_state=0)  # fmt: skip
    cls = type(make_penalty(name, "dp"))
    assert cls.draws is False
    fits = []
    for draws in (False, True):
        monkeypatch.setattr(cls, "draws", draws)
        path = fairness_path(est, X, y, sensitive_features=s, strengths=[0.1, 0.3])
        fits.append([e.predict_proba(X) for e in path.estimators_])
    for without, within in zip(*fits, strict=True):
        np.testing.assert_array_equal(without, within)
