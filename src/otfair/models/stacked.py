r"""K feed-forward models with stacked parameters, evaluated in one batched pass.

A trade-off curve is K fits of the same small model (logistic regression or an MLP of
width ~100) that differ only in the penalty strength. :class:`StackedMLP` holds the K
models' weights as ``(K, in, out)`` tensors and evaluates all of them on one batch with
batched matrix products, so a training step costs one pass over the batch for all K
models instead of K passes (issue 17). :class:`StackedLayers` is the general stack of
linear layers (the regression nets' encoder and head), :class:`StackedJointAdversary`
the stacked adversary on ``(Z, Y)`` of CENet and WassersteinNet.

Layer :math:`l` of model :math:`k` computes
:math:`h^{(l)}_k = \sigma(h^{(l-1)}_k W^{(l)}_k + b^{(l)}_k)`, with :math:`h^{(0)}_k = x`
shared by all models; as a batched product ``torch.baddbmm(b, h, W)`` (the first layer
broadcasts ``x @ W`` over k).

Nothing couples the models: the gradient of :math:`\sum_k L_k` with respect to
:math:`W_k` is the gradient of :math:`L_k` alone, and Adam / SGD act elementwise, so one
optimizer over the stacked tensors is exactly K separate optimizers (up to float
rounding of the batched products). Global operations over all parameters (global-norm
gradient clipping, weight decay coupled through a norm) would break this and are not
used.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from otfair.models.adversarial import JointAdversary
from otfair.models.mlp import _ACTIVATIONS, MLP, activation_class


def _linear_layers(model: MLP) -> list[nn.Linear]:
    return [m for m in model.net if isinstance(m, nn.Linear)]


def _activation_name(model: MLP) -> str:
    for m in model.net:
        for name, cls in _ACTIVATIONS.items():
            if type(m) is cls:
                return name
    return "relu"


class _NarrowLinear(torch.autograd.Function):
    r"""K layers with one output, :math:`h_k W_k + b_k` (:math:`W_k` of shape (in, 1)).

    A batched product with one output column (``baddbmm``) runs another BLAS kernel
    than ``nn.Linear`` (a matrix-vector product) and rounds differently; the forward
    pass therefore calls ``addmm`` once per model, which gives bitwise the output of
    the separate module (and is faster than ``baddbmm`` for a single column). The
    backward products have an inner dimension of 1 or are the batched products that
    autograd of ``nn.Linear`` computes per model, so they match bitwise too.
    """

    @staticmethod
    def forward(ctx, h: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:  # noqa: D102
        ctx.save_for_backward(h, w)
        rows = h.unbind(0) if h.dim() == 3 else [h] * w.shape[0]
        return torch.stack(
            [torch.addmm(bk, hk, wk) for hk, wk, bk in zip(rows, w, b, strict=True)]
        )

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor | None, ...]:  # noqa: D102
        h, w = ctx.saved_tensors
        grad_h = None
        if ctx.needs_input_grad[0]:
            grad_h = torch.matmul(grad, w.mT)
            if h.dim() == 2:
                grad_h = grad_h.sum(0)
        return grad_h, torch.matmul(h.mT, grad), grad.sum(1, keepdim=True)


class StackedLayers(nn.Module):
    r"""K stacks of ``nn.Linear`` layers of one architecture, with stacked parameters.

    Layer :math:`l` of stack :math:`k` computes
    :math:`h^{(l)}_k = \sigma(h^{(l-1)}_k W^{(l)}_k + b^{(l)}_k)`; the non-linearity
    :math:`\sigma` follows every layer but the last, and the last too when
    ``activate_last`` (a feature map such as the regression nets' encoder
    ``Linear -> ReLU``). :meth:`forward` returns the whole output, shape (K, n, out).

    Parameters
    ----------
    weights : sequence of tensors of shape (K, in_l, out_l)
        Layer weights (the transpose of ``nn.Linear.weight``, so ``h @ W``).
    biases : sequence of tensors of shape (K, 1, out_l)
        Layer biases.
    activation : str, default="relu"
        Non-linearity between the layers (see :class:`~otfair.models.MLP`).
    activate_last : bool, default=False
        Apply the non-linearity after the last layer too.
    """

    def __init__(
        self,
        weights: Sequence[torch.Tensor],
        biases: Sequence[torch.Tensor],
        activation: str = "relu",
        activate_last: bool = False,
    ) -> None:
        super().__init__()
        if len(weights) != len(biases) or not weights:
            raise ValueError("`weights` and `biases` must be non-empty and of equal length.")
        act = activation_class(activation)
        self.weights = nn.ParameterList([nn.Parameter(w.detach().clone()) for w in weights])
        self.biases = nn.ParameterList([nn.Parameter(b.detach().clone()) for b in biases])
        self.activation = activation
        self.activate_last = bool(activate_last)
        self._act = act()

    @classmethod
    def from_linears(
        cls,
        stacks: Sequence[Sequence[nn.Linear]],
        activation: str = "relu",
        activate_last: bool = False,
    ) -> StackedLayers:
        """Stack K lists of ``nn.Linear`` layers of one architecture (parameters copied)."""
        if not stacks:
            raise ValueError("`models` must hold at least one model.")
        shapes = [tuple(lin.weight.shape for lin in ls) for ls in stacks]
        if any(s != shapes[0] for s in shapes):
            raise ValueError("`models` must share one architecture (layer shapes differ).")
        weights = [
            torch.stack([ls[i].weight.detach().T for ls in stacks]) for i in range(len(stacks[0]))
        ]
        biases = [
            torch.stack([ls[i].bias.detach()[None, :] for ls in stacks])
            for i in range(len(stacks[0]))
        ]
        return cls(weights, biases, activation=activation, activate_last=activate_last)

    @property
    def n_models(self) -> int:
        """Number K of stacked models."""
        return self.weights[0].shape[0]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return the outputs of every stack: shape (K, n, out) for ``x`` of shape (n, d).

        ``x`` of shape (K, n, d) gives each stack its own inputs.
        """
        h = x
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            if w.shape[-1] == 1:  # one output: per model, as nn.Linear computes it
                h = _NarrowLinear.apply(h, w, b)
            else:  # shared input (n, d): one broadcast product for all K models
                h = torch.matmul(h, w) + b if h.dim() == 2 else torch.baddbmm(b, h, w)
            if i < last or self.activate_last:
                h = self._act(h)
        return h

    @torch.no_grad()
    def export_linears(self, k: int, layers: Sequence[nn.Linear]) -> None:
        """Copy the parameters of stack ``k`` into ``layers`` (same architecture)."""
        if not 0 <= int(k) < self.n_models:
            raise ValueError(f"`k` must be in [0, {self.n_models}); got {k!r}.")
        if len(layers) != len(self.weights):
            raise ValueError("`model` has a different number of layers.")
        for lin, w, b in zip(layers, self.weights, self.biases, strict=True):
            lin.weight.copy_(w[k].T)
            lin.bias.copy_(b[k, 0])


class StackedMLP(StackedLayers):
    """K :class:`~otfair.models.MLP` s of one architecture with stacked parameters.

    Build it from K initialized models (:meth:`from_models`) so that model ``k`` starts
    exactly where a separate fit with the same seed starts, train the stacked tensors,
    and write model ``k`` back with :meth:`export`. The parameters are those of
    :class:`StackedLayers` (``weights``, ``biases``, ``activation``: the hidden
    non-linearity); :meth:`forward` returns the first output of every model.

    Examples
    --------
    >>> import torch
    >>> from otfair.models import MLP
    >>> torch.manual_seed(0) and None
    >>> nets = [MLP(4, hidden=(8,)) for _ in range(3)]
    >>> stacked = StackedMLP.from_models(nets)
    >>> x = torch.randn(5, 4)
    >>> stacked(x).shape
    torch.Size([3, 5])
    >>> bool(torch.allclose(stacked(x)[1], nets[1](x)[:, 0], atol=1e-6))
    True
    """

    def __init__(
        self,
        weights: Sequence[torch.Tensor],
        biases: Sequence[torch.Tensor],
        activation: str = "relu",
    ) -> None:
        super().__init__(weights, biases, activation=activation)

    @classmethod
    def from_models(cls, models: Sequence[MLP]) -> StackedMLP:
        """Stack K models of one architecture (their parameters are copied)."""
        if not models:
            raise ValueError("`models` must hold at least one MLP.")
        stacked = StackedLayers.from_linears([_linear_layers(m) for m in models])
        return cls(stacked.weights, stacked.biases, activation=_activation_name(models[0]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits of the first output of every model: shape (K, n) for ``x`` of shape (n, d).

        ``x`` of shape (K, n, d) gives each model its own inputs.
        """
        return super().forward(x)[..., 0]

    def export(self, k: int, model: MLP) -> MLP:
        """Copy the parameters of stacked model ``k`` into ``model`` (same architecture)."""
        self.export_linears(k, _linear_layers(model))
        return model


class StackedJointAdversary(nn.Module):
    r"""K :class:`~otfair.models.adversarial.JointAdversary` s of one architecture, stacked.

    Adversary :math:`k` scores :math:`f_k([Z_k, Y])` from its own representation
    :math:`Z_k` and the target (shared by the K models, or one per model); the MLPs run
    as one :class:`StackedMLP`. Used by the curve fits of CENet and WassersteinNet.

    Parameters
    ----------
    adversaries : sequence of JointAdversary
        K initialized adversaries of one architecture (their parameters are copied).
    """

    def __init__(self, adversaries: Sequence[JointAdversary]) -> None:
        super().__init__()
        if not adversaries:
            raise ValueError("`adversaries` must hold at least one JointAdversary.")
        self.net = StackedMLP.from_models([a.net for a in adversaries])
        self.latent_dim = adversaries[0].latent_dim

    def forward(self, z: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Return one score per model and row, shape (K, n).

        Parameters
        ----------
        z : torch.Tensor of shape (K, n, latent_dim)
            Each model's representations.
        y : torch.Tensor of shape (n,), (n, t) or (K, n, t)
            Targets, shared by the models unless given per model.
        """
        if y.dim() == 1:
            y = y.unsqueeze(1)
        y = y.to(z.dtype).expand(*z.shape[:-1], y.shape[-1])
        return self.net(torch.cat([z, y], dim=-1))

    def export(self, k: int, adversary: JointAdversary) -> JointAdversary:
        """Copy the parameters of stacked adversary ``k`` into ``adversary``."""
        self.net.export(k, adversary.net)
        return adversary
