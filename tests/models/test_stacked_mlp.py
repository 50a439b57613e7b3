"""StackedMLP: K models in one batched pass equal the K separate modules."""

import pytest
import torch

from otfair.models import MLP
from otfair.models.stacked import StackedMLP


@pytest.mark.parametrize("hidden", [(), (7,), (6, 5)])
@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_forward_and_gradient_match_separate_modules(hidden, activation):
    torch.manual_seed(0)
    nets = [MLP(4, hidden=hidden, activation=activation).double() for _ in range(3)]
    stacked = StackedMLP.from_models(nets)
    assert stacked.n_models == 3
    assert stacked.activation == (activation if hidden else "relu")
    x = torch.randn(9, 4, dtype=torch.float64)
    out = stacked(x)
    ref = torch.stack([net(x)[:, 0] for net in nets])
    torch.testing.assert_close(out, ref)
    # per-model inputs (K, n, d)
    xs = torch.randn(3, 9, 4, dtype=torch.float64)
    torch.testing.assert_close(
        stacked(xs), torch.stack([n(xi)[:, 0] for n, xi in zip(nets, xs, strict=True)])
    )
    # gradient of sum_k L_k wrt model k's weights is grad of L_k alone
    w = torch.randn(3, 9, dtype=torch.float64)
    (stacked(x) * w).sum().backward()
    for k, net in enumerate(nets):
        (net(x)[:, 0] * w[k]).sum().backward()
        first = next(m for m in net.net if isinstance(m, torch.nn.Linear))
        torch.testing.assert_close(stacked.weights[0].grad[k], first.weight.grad)
        torch.testing.assert_close(stacked.biases[0].grad[k, 0], first.bias.grad)


def test_export_round_trip():
    torch.manual_seed(1)
    nets = [MLP(3, hidden=(4,)) for _ in range(2)]
    stacked = StackedMLP.from_models(nets)
    with torch.no_grad():
        for p in stacked.parameters():
            p.add_(1.0)
    target = MLP(3, hidden=(4,))
    stacked.export(1, target)
    x = torch.randn(5, 3)
    torch.testing.assert_close(target(x)[:, 0], stacked(x)[1])


def test_errors():
    with pytest.raises(ValueError, match="models"):
        StackedMLP.from_models([])
    with pytest.raises(ValueError, match="architecture"):
        StackedMLP.from_models([MLP(3, hidden=(4,)), MLP(3, hidden=(5,))])
    stacked = StackedMLP.from_models([MLP(3, hidden=())])
    with pytest.raises(ValueError, match="`k`"):
        stacked.export(2, MLP(3, hidden=()))
    with pytest.raises(ValueError, match="activation"):
        StackedMLP(list(stacked.weights), list(stacked.biases), activation="gelu")


def test_a_stack_of_one_is_its_model_and_keeps_track_of_its_parameters():
    """K = 1 (a single fit) runs nn.Linear's ops: equal to the MLP; copies and conversions
    see their own parameters (the layer list a stack keeps is rebuilt for them)."""
    import copy
    import pickle

    from otfair.models import MLP
    from otfair.models.stacked import StackedMLP

    torch.manual_seed(0)
    mlp = MLP(4, hidden=(3,))
    stack = StackedMLP.from_models([mlp])
    x = torch.randn(7, 4)
    out = stack(x)
    assert out.shape == (1, 7)
    assert torch.equal(out[0], mlp(x)[:, 0])  # the same ops, bitwise
    twin = copy.deepcopy(stack)
    with torch.no_grad():
        twin.weights[0].add_(1.0)
    assert torch.equal(stack(x), out) and not torch.equal(twin(x), out)
    assert torch.equal(pickle.loads(pickle.dumps(stack))(x), out)
    stack.to(torch.float64)
    assert stack(x.double()).dtype == torch.float64
    torch.testing.assert_close(stack(x.double()).float(), out)


@pytest.mark.parametrize("per_model_inputs", [False, True])
def test_a_frozen_model_outputs_zeros_and_leaves_the_others_bitwise_equal(per_model_inputs):
    """freeze(k): model k stops costing its products; the others are unchanged, bit for bit."""
    torch.manual_seed(2)
    nets = [MLP(4, hidden=(6, 5)).double() for _ in range(3)]
    x = torch.randn(3, 9, 4, dtype=torch.float64) if per_model_inputs else torch.randn(9, 4)
    x = x.double().requires_grad_(True)
    w = torch.randn(3, 9, dtype=torch.float64)
    runs = []
    for frozen in ([], [1]):
        stacked = StackedMLP.from_models(nets)
        for k in frozen:
            stacked.freeze(k)
        assert stacked.frozen == frozenset(frozen)
        x.grad = None
        out = stacked(x)
        (out * w).sum().backward()
        runs.append((out.detach(), [p.grad.clone() for p in stacked.parameters()], x.grad))
    (full, full_grads, full_x), (part, part_grads, part_x) = runs
    assert torch.equal(part[1], torch.zeros(9, dtype=torch.float64))
    for k in (0, 2):
        assert torch.equal(part[k], full[k])
        for g_part, g_full in zip(part_grads, full_grads, strict=True):
            assert torch.equal(g_part[k], g_full[k])
    for g_part in part_grads:  # model 1 gets no gradient
        assert not g_part[1].any()
    # the input's gradient: model 1's share is gone, the others' stay
    if per_model_inputs:
        assert not part_x[1].any() and torch.equal(part_x[0], full_x[0])
    else:
        alone = StackedMLP.from_models([nets[1]])
        xs = x.detach().clone().requires_grad_(True)
        (alone(xs)[0] * w[1]).sum().backward()
        torch.testing.assert_close(part_x, full_x - xs.grad)
    with pytest.raises(ValueError, match="`k`"):
        StackedMLP.from_models(nets).freeze(3)
