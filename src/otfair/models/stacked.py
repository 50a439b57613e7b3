r"""K feed-forward models with stacked parameters, evaluated in one batched pass.

A trade-off curve is K fits of the same small model (logistic regression or an MLP of
width ~100) that differ only in the penalty strength. :class:`StackedMLP` holds the K
models' weights as ``(K, in, out)`` tensors and evaluates all of them on one batch with
batched matrix products, so a training step costs one pass over the batch for all K
models instead of K passes (issue 17).

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

from otfair.models.mlp import _ACTIVATIONS, MLP, activation_class


def _linear_layers(model: MLP) -> list[nn.Linear]:
    return [m for m in model.net if isinstance(m, nn.Linear)]


def _activation_name(model: MLP) -> str:
    for m in model.net:
        for name, cls in _ACTIVATIONS.items():
            if type(m) is cls:
                return name
    return "relu"


class StackedMLP(nn.Module):
    """K :class:`~otfair.models.MLP` s of one architecture with stacked parameters.

    Build it from K initialized models (:meth:`from_models`) so that model ``k`` starts
    exactly where a separate fit with the same seed starts, train the stacked tensors,
    and write model ``k`` back with :meth:`export`.

    Parameters
    ----------
    weights : sequence of tensors of shape (K, in_l, out_l)
        Layer weights (the transpose of ``nn.Linear.weight``, so ``h @ W``).
    biases : sequence of tensors of shape (K, 1, out_l)
        Layer biases.
    activation : str, default="relu"
        Hidden non-linearity of the models (see :class:`~otfair.models.MLP`).

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
        super().__init__()
        if len(weights) != len(biases) or not weights:
            raise ValueError("`weights` and `biases` must be non-empty and of equal length.")
        act = activation_class(activation)
        self.weights = nn.ParameterList([nn.Parameter(w.detach().clone()) for w in weights])
        self.biases = nn.ParameterList([nn.Parameter(b.detach().clone()) for b in biases])
        self.activation = activation
        self._act = act()

    @classmethod
    def from_models(cls, models: Sequence[MLP]) -> StackedMLP:
        """Stack K models of one architecture (their parameters are copied)."""
        if not models:
            raise ValueError("`models` must hold at least one MLP.")
        layers = [_linear_layers(m) for m in models]
        shapes = [tuple(lin.weight.shape for lin in ls) for ls in layers]
        if any(s != shapes[0] for s in shapes):
            raise ValueError("`models` must share one architecture (layer shapes differ).")
        weights = [
            torch.stack([ls[i].weight.detach().T for ls in layers]) for i in range(len(layers[0]))
        ]
        biases = [
            torch.stack([ls[i].bias.detach()[None, :] for ls in layers])
            for i in range(len(layers[0]))
        ]
        return cls(weights, biases, activation=_activation_name(models[0]))

    @property
    def n_models(self) -> int:
        """Number K of stacked models."""
        return self.weights[0].shape[0]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits of the first output of every model: shape (K, n) for ``x`` of shape (n, d).

        ``x`` of shape (K, n, d) gives each model its own inputs.
        """
        h = x
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            # shared input (n, d): one broadcast product for all K models
            h = torch.matmul(h, w) + b if h.dim() == 2 else torch.baddbmm(b, h, w)
            if i < last:
                h = self._act(h)
        return h[..., 0]

    @torch.no_grad()
    def export(self, k: int, model: MLP) -> MLP:
        """Copy the parameters of stacked model ``k`` into ``model`` (same architecture)."""
        if not 0 <= int(k) < self.n_models:
            raise ValueError(f"`k` must be in [0, {self.n_models}); got {k!r}.")
        layers = _linear_layers(model)
        if len(layers) != len(self.weights):
            raise ValueError("`model` has a different number of layers.")
        for lin, w, b in zip(layers, self.weights, self.biases, strict=True):
            lin.weight.copy_(w[k].T)
            lin.bias.copy_(b[k, 0])
        return model
