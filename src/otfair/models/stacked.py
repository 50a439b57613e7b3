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


#: entries per iteration of the widest vectorized elementwise loop (2 x 16 floats, AVX-512),
#: doubled: rows whose length is a multiple of it split into body and tail alike anyway
_BLOCK = 64


def _aligned(t: torch.Tensor) -> torch.Tensor:
    """``t``, or a fresh (64-byte aligned) copy when its data is not 64-byte aligned.

    A matrix-vector product reads its operands without packing them, so MKL's result
    depends on their alignment (measured: a (59, 50) matrix at an offset of 24 bytes
    sums differently); a separate fit's operands are fresh, aligned tensors.
    """
    return t if t.data_ptr() % 64 == 0 else t.clone()


def _model_rows(h: torch.Tensor, K: int) -> list[torch.Tensor]:
    """Model k's input rows, aligned: ``h[k]``, or the shared ``h`` (n, in)."""
    return [h] * K if h.dim() == 2 else [_aligned(r) for r in h.unbind(0)]


class _NarrowLinear(torch.autograd.Function):
    r"""K layers with one output, :math:`h_k W_k + b_k` (:math:`W_k` of shape (in, 1)).

    A batched product with one output column (``baddbmm``) runs another BLAS kernel
    than ``nn.Linear`` (a matrix-vector product) and rounds differently; the forward
    pass therefore calls ``addmm`` once per model, which gives bitwise the output of
    the separate module (and is faster than ``baddbmm`` for a single column). In the
    backward pass the input gradient is an outer product (exact) and the weight
    gradient one product per model, as autograd of ``nn.Linear`` computes them.

    The output (K, n, 1) is laid out in rows of more than ``n`` entries when ``n`` is
    not a multiple of :data:`_BLOCK`. Elementwise kernels run a vectorized body and a scalar
    tail, and their vectorized and scalar transcendental functions (the sigmoid of the
    regression head, the logistic loss of a discriminator, in both passes) round
    differently; on a dense (K, n) tensor the kernel sees one run of K n entries and
    the tail falls elsewhere than in a separate fit's run of n, while on padded rows it
    runs row by row, exactly as the separate fit does.
    """

    @staticmethod
    def forward(ctx, h: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:  # noqa: D102
        ctx.save_for_backward(h, w)
        rows = _model_rows(h, w.shape[0])
        n = h.shape[-2]
        # unless n is a multiple of the vector block, rows of more than n entries (see the
        # class), each starting 64-byte aligned as a separate fit's fresh output does
        out = h.new_empty(w.shape[0], n if n % _BLOCK == 0 else (n // 16 + 1) * 16, 1)
        for k, (hk, wk, bk) in enumerate(zip(rows, w, b, strict=True)):
            torch.addmm(bk, hk, _aligned(wk), out=out[k, :n])
        return out[:, :n]

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor | None, ...]:  # noqa: D102
        h, w = ctx.saved_tensors
        grad_h = None
        if ctx.needs_input_grad[0]:
            grad_h = grad * w.mT  # (K, n, in): one product per entry, exact
            if h.dim() == 2:
                grad_h = grad_h.sum(0)
        rows = _model_rows(h, w.shape[0])
        # one (in, n) @ (n, 1) product per model: the kernel of nn.Linear's weight gradient
        # (a batched product with one column is ~4x slower here)
        grad_w = torch.stack([hk.mT @ gk for hk, gk in zip(rows, grad, strict=True)])
        return grad_h, grad_w, grad.sum(1, keepdim=True)


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
