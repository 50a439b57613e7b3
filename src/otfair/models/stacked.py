r"""K feed-forward models with stacked parameters, trained as one module.

A trade-off curve is K fits of the same small model (logistic regression or an MLP of
width ~100) that differ only in the penalty strength. :class:`StackedMLP` holds the K
models' weights as ``(K, out, in)`` tensors (``nn.Linear.weight`` of each, stacked) and
evaluates all of them on one batch, so a training step is one forward and one backward
pass, one optimizer step and one set of elementwise operations for all K models instead
of K. :class:`StackedLayers` is the general stack of linear layers (the
regression nets' encoder and head), :class:`StackedJointAdversary` the stacked
adversary on ``(Z, Y)`` of CENet and WassersteinNet.

Layer :math:`l` of model :math:`k` computes
:math:`h^{(l)}_k = \sigma(h^{(l-1)}_k W^{(l)\top}_k + b^{(l)}_k)`, with
:math:`h^{(0)}_k = x` shared by all models (or one input per model). The matrix
products are made per model, as ``nn.Linear`` makes them (:class:`_StackedLinear`:
one BLAS call per model inside one autograd node), which keeps a stacked model bitwise
equal to its separate module (batched products round differently for small matrices);
everything else (activations, losses, the optimizer) runs once on the stacked tensors.

Nothing couples the models: the gradient of :math:`\sum_k L_k` with respect to
:math:`W_k` is the gradient of :math:`L_k` alone, and Adam / Adadelta / SGD act
elementwise, so one optimizer over the stacked tensors is exactly K separate
optimizers. Global operations over all parameters (global-norm gradient clipping,
weight decay coupled through a norm) would break this and are not used.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import nn
from torch.nn import functional as F

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
    """Return ``t``, or a fresh (64-byte aligned) copy if its data is not 64-byte aligned.

    MKL's small-matrix and matrix-vector kernels read their operands without packing
    them, so their rounding depends on the alignment (measured: a (59, 50) matrix at
    an offset of 24 bytes sums differently); a separate fit's operands are fresh,
    aligned tensors.
    """
    return t if t.data_ptr() % 64 == 0 else t.clone()


def _aligned_stack(w: torch.Tensor) -> torch.Tensor:
    """Copy ``w`` (K, out, in) so that each model's matrix ``w[k]`` starts 64-byte aligned."""
    K, rows, cols = w.shape
    step = -(-rows * cols // 16) * 16  # 16 float32 entries = 64 bytes
    out = w.new_empty(K * step).as_strided((K, rows, cols), (step, cols, 1))
    return out.copy_(w.detach())


def _model_rows(h: torch.Tensor, k: int) -> torch.Tensor:
    """Model k's input rows, aligned: ``h[k]``, or the shared ``h`` (n, in)."""
    return h if h.dim() == 2 else _aligned(h[k])


class _StackedLinear(torch.autograd.Function):
    r"""K linear layers :math:`h_k W_k^\top + b_k`, each product as ``nn.Linear`` makes it.

    Batched products (``baddbmm``) run other BLAS kernels than ``nn.Linear`` for small
    or one-column matrices and round differently, and an adversarial fit amplifies any
    rounding difference over the epochs (CENet at a large lambda: to ~1e-2 of the target
    range in 100 epochs). So each model's products are the calls of a separate fit,
    with the same operand layouts and alignment: forward ``addmm(b_k, h_k, W_k^T)``,
    backward ``g_k W_k`` (input), ``g_k^T h_k`` (weight), :math:`\sum_i g_{k,i}` (bias),
    one BLAS call per model without autograd overhead (for these small nets about as
    fast as the batched products). A model in ``frozen`` (:meth:`StackedLayers.freeze`)
    makes none: its output is zeros and its gradients are zeros.

    The output (K, n, out) is laid out in rows of more than ``n`` entries when ``n`` is
    not a multiple of :data:`_BLOCK`. Elementwise kernels run a vectorized body and a
    scalar tail, whose transcendental functions (the sigmoid of a regression head, the
    logistic loss of a discriminator) round differently; on a dense tensor the kernel
    sees one run of K n entries and the tail falls elsewhere than in a separate fit's
    run of n, on padded rows it runs row by row, as the separate fit does.
    """

    @staticmethod
    def forward(  # noqa: D102
        ctx, h: torch.Tensor, w: torch.Tensor, b: torch.Tensor, frozen: frozenset[int]
    ) -> torch.Tensor:
        ctx.save_for_backward(h, w)
        ctx.frozen = frozen
        K, n, width = w.shape[0], h.shape[-2], w.shape[1]
        # rows padded to a multiple of 16 entries keep each row's start 64-byte aligned
        rows_out = n if n % _BLOCK == 0 else (n // 16 + 1) * 16
        out = h.new_empty(K, rows_out, width)
        for k in range(K):
            if k in frozen:  # a finished model: zeros, no product
                out[k, :n].zero_()
                continue
            hk = _model_rows(h, k)
            torch.addmm(b[k, 0], hk, _aligned(w[k]).t(), out=out[k, :n])
        return out[:, :n]

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor | None, ...]:  # noqa: D102
        h, w = ctx.saved_tensors
        frozen = ctx.frozen
        grads = [_aligned(g) if k not in frozen else g for k, g in enumerate(grad.unbind(0))]
        grad_h = None
        if ctx.needs_input_grad[0]:
            rows_in = h.shape[-2]
            grad_h = torch.stack(
                [
                    g.mm(_aligned(wk)) if k not in frozen else g.new_zeros(rows_in, wk.shape[1])
                    for k, (g, wk) in enumerate(zip(grads, w, strict=True))
                ]
            )
            if h.dim() == 2:
                grad_h = grad_h.sum(0)
        grad_w = torch.stack(
            [
                g.t().mm(_model_rows(h, k)) if k not in frozen else torch.zeros_like(w[k])
                for k, g in enumerate(grads)
            ]
        )
        grad_b = grad.sum(1, keepdim=True)
        if frozen:
            grad_b[sorted(frozen)] = 0.0
        return grad_h, grad_w, grad_b, None


class StackedLayers(nn.Module):
    r"""K stacks of ``nn.Linear`` layers of one architecture, with stacked parameters.

    Layer :math:`l` of stack :math:`k` computes
    :math:`h^{(l)}_k = \sigma(h^{(l-1)}_k W^{(l)\top}_k + b^{(l)}_k)`; the non-linearity
    :math:`\sigma` follows every layer but the last, and the last too when
    ``activate_last`` (a feature map such as the regression nets' encoder
    ``Linear -> ReLU``). :meth:`forward` returns the whole output, shape (K, n, out).

    Parameters
    ----------
    weights : sequence of tensors of shape (K, out_l, in_l)
        Layer weights (``nn.Linear.weight`` of each model, stacked).
    biases : sequence of tensors of shape (K, 1, out_l)
        Layer biases.
    activation : str, default="relu"
        Non-linearity between the layers (see :class:`~otfair.models.MLP`).
    activate_last : bool, default=False
        Apply the non-linearity after the last layer too.
    """

    def __init__(
        self,
        weights: Sequence[torch.Tensor] | nn.ParameterList,
        biases: Sequence[torch.Tensor] | nn.ParameterList,
        activation: str = "relu",
        activate_last: bool = False,
    ) -> None:
        super().__init__()
        if len(weights) != len(biases) or not weights:
            raise ValueError("`weights` and `biases` must be non-empty and of equal length.")
        act = activation_class(activation)
        self.weights = nn.ParameterList([nn.Parameter(_aligned_stack(w)) for w in weights])
        self.biases = nn.ParameterList([nn.Parameter(b.detach().clone()) for b in biases])
        self.activation = activation
        self.activate_last = bool(activate_last)
        self._act = act()
        self._frozen: frozenset[int] = frozenset()

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
            torch.stack([ls[i].weight.detach() for ls in stacks]) for i in range(len(stacks[0]))
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

    @property
    def frozen(self) -> frozenset[int]:
        """The stacks :meth:`freeze` has finished (their products are no longer made)."""
        return self._frozen

    def freeze(self, k: int) -> None:
        """Finish stack ``k``: from now on it outputs zeros and its parameters get no gradient.

        A curve's model that has converged before the others (its parameters exported)
        stops costing its products: its later epochs are not its fit's, and the other
        stacks' outputs and gradients are those of their separate fits, unchanged.
        Its parameters are left to the optimizer (Adam moves them on its momentum), so
        export a stack before freezing it.
        """
        if not 0 <= int(k) < self.n_models:
            raise ValueError(f"`k` must be in [0, {self.n_models}); got {k!r}.")
        self._frozen = self._frozen | {int(k)}

    def _apply(self, fn, recurse: bool = True):  # noqa: ANN001 - torch's signature
        """Forget the kept layer list when torch converts the parameters (``.to()``)."""
        self.__dict__.pop("_layer_list", None)
        return super()._apply(fn, recurse)

    def _layers(self) -> list[tuple[nn.Parameter, nn.Parameter, bool]]:
        """Return ``(weight, bias, activate)`` per layer, built once.

        The list is kept instead of walking the ``ParameterList`` on every forward;
        ``load_state_dict`` updates the parameters in place and a conversion
        (``.to()``, :meth:`_apply`) drops the list.
        """
        layers = self.__dict__.get("_layer_list")
        if layers is None:
            weights = list(self.weights)
            last = len(weights) - 1
            layers = [
                (w, b, i < last or self.activate_last)
                for i, (w, b) in enumerate(zip(weights, self.biases, strict=True))
            ]
            self.__dict__["_layer_list"] = layers
        return layers

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return the outputs of every stack: shape (K, n, out) for ``x`` of shape (n, d).

        ``x`` of shape (K, n, d) gives each stack its own inputs.
        """
        layers = self._layers()
        if layers[0][0].shape[0] == 1:  # one model (a single fit): nn.Linear's own ops
            # squeeze, not x[0]: a view, whose backward allocates nothing
            return self._forward_one(x if x.dim() == 2 else x.squeeze(0), layers).unsqueeze(0)
        h = x
        frozen = self._frozen
        for w, b, activate in layers:
            h = _StackedLinear.apply(h, w, b, frozen)
            if activate:
                h = self._act(h)
        return h

    def forward_one(self, x: torch.Tensor) -> torch.Tensor:
        """Return the one stacked model's output, shape (n, out), for ``x`` (n, d) (K = 1).

        The products and activations of a separate ``nn.Linear`` stack, op for op (the
        single fit of an estimator is a stack of one model).
        """
        layers = self._layers()
        if layers[0][0].shape[0] != 1:
            raise ValueError(
                f"forward_one needs one stacked model; this stack has {self.n_models}."
            )
        return self._forward_one(x, layers)

    def _forward_one(self, x: torch.Tensor, layers: list) -> torch.Tensor:
        h = x
        for w, b, activate in layers:
            # views (not w[0]): their backward reshapes the gradient, copies nothing
            h = F.linear(h, w.view(w.shape[1:]), b.view(-1))
            if activate:
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
            lin.weight.copy_(w[k])
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
        weights: Sequence[torch.Tensor] | nn.ParameterList,
        biases: Sequence[torch.Tensor] | nn.ParameterList,
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

    def finisher(self, models: Sequence[MLP]) -> Callable[[int, int], None]:
        """Return ``on_converged(k, epoch)``: export model ``k`` to ``models[k]``, then freeze it.

        A curve's model that converges before the others ends there, as its separate fit,
        and stops costing its products (:meth:`freeze`).
        """

        def finish(k: int, epoch: int) -> None:
            self.export(k, models[k])
            self.freeze(k)

        return finish


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

    def forward_one(self, z: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Return the one stacked adversary's scores, shape (n,), for ``z`` (n, latent_dim).

        The ops of a separate :class:`~otfair.models.adversarial.JointAdversary` (K = 1).
        """
        if y.dim() == 1:
            y = y.unsqueeze(1)
        return self.net.forward_one(torch.cat([z, y.to(z.dtype)], dim=1)).squeeze(1)

    def export(self, k: int, adversary: JointAdversary) -> JointAdversary:
        """Copy the parameters of stacked adversary ``k`` into ``adversary``."""
        self.net.export(k, adversary.net)
        return adversary
