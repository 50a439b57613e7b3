"""Adversarial building blocks: gradient reversal, adversaries on (Z, Y), Lipschitz control.

Used by CENet and WassersteinNet (accuracy-disparity paper, §3.2 and App. B): an encoder
``g`` maps ``X`` to ``Z``, an adversary ``f`` looks at ``(Z, Y)`` and the encoder is trained
*against* it through a gradient reversal layer (Ganin et al., 2016), so that one optimizer
step performs the gradient descent-ascent of the minimax game. WassersteinNet's critic is kept
(approximately) Lipschitz by weight clipping (the paper) or a gradient penalty (WGAN-GP).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from otfair.models.mlp import MLP

__all__ = [
    "GradientReversal",
    "JointAdversary",
    "clip_weights_",
    "grad_reverse",
    "gradient_penalty",
]


class _GradReverse(torch.autograd.Function):
    """Identity forward, ``-scale * grad`` backward."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, scale: float) -> torch.Tensor:  # noqa: D102
        ctx.scale = scale
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output: torch.Tensor) -> tuple[torch.Tensor, None]:  # noqa: D102
        return -ctx.scale * grad_output, None


def grad_reverse(x: torch.Tensor, scale: float | torch.Tensor = 1.0) -> torch.Tensor:
    r"""Gradient reversal: the identity forward, the gradient times ``-scale`` backward.

    .. math::

        R_\lambda(x) = x, \qquad \frac{\partial R_\lambda}{\partial x} = -\lambda I.

    Placing :math:`R_\lambda` between an encoder and an adversary that minimizes its own
    loss :math:`L_f` makes the encoder, in the same backward pass, *maximize*
    :math:`\lambda L_f` (Ganin et al., 2016, §3.3).

    Parameters
    ----------
    x : torch.Tensor
        Input tensor.
    scale : float or torch.Tensor, default=1.0
        :math:`\lambda \ge 0`, the factor applied to the reversed gradient; a tensor
        broadcastable to ``x`` gives each slice its own factor (K stacked models: shape
        (K, 1, 1) for ``x`` of shape (K, n, d)).

    Returns
    -------
    torch.Tensor
        A view of ``x`` whose backward pass reverses and scales the gradient.

    Examples
    --------
    >>> x = torch.ones(2, requires_grad=True)
    >>> grad_reverse(x, 3.0).sum().backward()
    >>> x.grad
    tensor([-3., -3.])
    """
    if isinstance(scale, torch.Tensor):
        if not bool((scale >= 0).all()):  # also rejects NaN
            raise ValueError(f"`scale` must be non-negative, got {scale.flatten().tolist()}.")
        return _GradReverse.apply(x, scale.detach())
    scale = float(scale)
    if not scale >= 0.0:  # also rejects NaN
        raise ValueError(f"`scale` must be a non-negative number, got {scale!r}.")
    return _GradReverse.apply(x, scale)


class GradientReversal(nn.Module):
    r"""Module form of :func:`grad_reverse` with a fixed ``scale``.

    Parameters
    ----------
    scale : float, default=1.0
        Factor :math:`\lambda` of the reversed gradient.
    """

    def __init__(self, scale: float = 1.0) -> None:
        super().__init__()
        scale = float(scale)
        if not scale >= 0.0:
            raise ValueError(f"`scale` must be a non-negative number, got {scale!r}.")
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return ``x``; the backward pass multiplies the gradient by ``-scale``."""
        return grad_reverse(x, self.scale)

    def extra_repr(self) -> str:  # noqa: D102
        return f"scale={self.scale}"


class JointAdversary(nn.Module):
    r"""Adversary :math:`f(Z, Y)` on a representation and the target (App. B).

    A ReLU MLP on the concatenation :math:`[Z, Y]` with one output: the logit of
    :math:`P(A = 1 \mid Z, Y)` for CENet's discriminator, or the critic value for
    WassersteinNet. The paper uses one hidden layer ("two-layer network").

    Parameters
    ----------
    latent_dim : int
        Dimension of :math:`Z`.
    target_dim : int, default=1
        Dimension of :math:`Y`.
    hidden : sequence of int, default=(60,)
        Hidden widths.

    Examples
    --------
    >>> f = JointAdversary(5, hidden=(10,))
    >>> f(torch.zeros(3, 5), torch.zeros(3)).shape
    torch.Size([3])
    """

    def __init__(self, latent_dim: int, target_dim: int = 1, hidden: Sequence[int] = (60,)):
        super().__init__()
        if int(latent_dim) < 1 or int(target_dim) < 1:
            raise ValueError(
                f"`latent_dim` and `target_dim` must be >= 1, got {latent_dim}, {target_dim}."
            )
        self.latent_dim = int(latent_dim)
        self.target_dim = int(target_dim)
        self.net = MLP(self.latent_dim + self.target_dim, hidden=hidden, out_features=1)

    def forward(self, z: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Return one score per row, shape (n,).

        Parameters
        ----------
        z : torch.Tensor of shape (n, latent_dim)
            Representations.
        y : torch.Tensor of shape (n,) or (n, target_dim)
            Targets.
        """
        if y.dim() == 1:
            y = y.unsqueeze(1)
        if z.dim() != 2 or z.shape[1] != self.latent_dim:
            raise ValueError(f"`z` must have shape (n, {self.latent_dim}), got {tuple(z.shape)}.")
        if y.shape != (z.shape[0], self.target_dim):
            raise ValueError(
                f"`y` must have shape ({z.shape[0]},) or ({z.shape[0]}, {self.target_dim}); "
                f"got {tuple(y.shape)}."
            )
        return self.net(torch.cat([z, y.to(z.dtype)], dim=1)).squeeze(1)


@torch.no_grad()
def clip_weights_(module: nn.Module, clip: float) -> nn.Module:
    r"""Clamp every parameter of ``module`` to :math:`[-c, c]` in place (WGAN clipping).

    Weight clipping keeps the critic in a compact parameter set, hence
    :math:`K`-Lipschitz for some :math:`K` depending on ``clip`` — the surrogate for the
    1-Lipschitz constraint of the Kantorovich-Rubinstein dual used by WassersteinNet
    (Arjovsky et al., 2017).

    Parameters
    ----------
    module : torch.nn.Module
        The critic.
    clip : float
        :math:`c > 0`.

    Returns
    -------
    torch.nn.Module
        ``module`` itself.
    """
    clip = float(clip)
    if not clip > 0.0:
        raise ValueError(f"`clip` must be a positive number, got {clip!r}.")
    for p in module.parameters():
        p.clamp_(-clip, clip)
    return module


def gradient_penalty(
    critic: nn.Module,
    z0: torch.Tensor,
    y0: torch.Tensor,
    z1: torch.Tensor,
    y1: torch.Tensor,
    *,
    n_pairs: int | None = None,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    r"""WGAN-GP penalty of a critic :math:`f(Z, Y)` between two groups (Gulrajani et al., 2017).

    .. math::

        \mathrm{GP}(f) = \mathbb{E}_{t \sim U[0, 1]}
            \Big(\big\|\nabla_{(z, y)} f\big(t\,(z_0, y_0) + (1 - t)\,(z_1, y_1)\big)\big\|_2
            - 1\Big)^2,

    with :math:`(z_0, y_0)` and :math:`(z_1, y_1)` drawn with replacement from the two
    groups. Added to the critic's loss it softly enforces the 1-Lipschitz constraint of the
    Kantorovich-Rubinstein dual, an alternative to weight clipping that leaves the critic
    free to be non-linear. The inputs are detached: only the critic is penalized.

    K stacked critics (:class:`otfair.models.stacked.StackedJointAdversary`) take ``z0``,
    ``z1`` of shapes (K, n0, k), (K, n1, k) and shared targets: the pairs and weights are
    drawn once, as one critic's call draws them, and the result has shape (K,).

    Parameters
    ----------
    critic : torch.nn.Module
        Called as ``critic(z, y)``, one score per row.
    z0, y0 : torch.Tensor of shapes ([K,] n0, k) and (n0,)
        Group-0 representations and targets.
    z1, y1 : torch.Tensor of shapes ([K,] n1, k) and (n1,)
        Group-1 representations and targets.
    n_pairs : int, optional
        Number of interpolated points (default ``max(n0, n1)``).
    generator : torch.Generator, optional
        CPU generator of the pairs and the interpolation weights.

    Returns
    -------
    torch.Tensor
        Penalty, differentiable in the critic's parameters: a scalar, or shape (K,).

    Examples
    --------
    >>> lin = JointAdversary(2, hidden=(4,))
    >>> gradient_penalty(lin, torch.zeros(3, 2), torch.zeros(3), torch.ones(2, 2),
    ...                  torch.ones(2)).dim()
    0
    """
    n0, n1 = z0.shape[-2], z1.shape[-2]
    if n0 == 0 or n1 == 0:
        raise ValueError("`z0` and `z1` must both be non-empty (one sample of each group).")
    if len(y0) != n0 or len(y1) != n1:
        raise ValueError("`y0`/`y1` must have as many rows as `z0`/`z1`.")
    m = max(n0, n1) if n_pairs is None else int(n_pairs)
    i0 = torch.randint(n0, (m,), generator=generator).to(z0.device)
    i1 = torch.randint(n1, (m,), generator=generator).to(z0.device)
    t = torch.rand(m, 1, generator=generator).to(device=z0.device, dtype=z0.dtype)
    x = (t * _joint_rows(z0, y0, i0) + (1 - t) * _joint_rows(z1, y1, i1)).requires_grad_(True)
    k = z0.shape[-1]
    scores = critic(x[..., :k], x[..., k:])
    (grad,) = torch.autograd.grad(scores.sum(), x, create_graph=True)
    return ((grad.norm(dim=-1) - 1.0) ** 2).mean(dim=-1)


def _joint_rows(z: torch.Tensor, y: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """Rows ``idx`` of ``[z, y]`` (detached); ``y`` is shared by stacked ``z`` (K, n, k)."""
    zi = z.detach()[..., idx, :]
    yi = y.detach().reshape(len(y), -1)[idx].to(z.dtype)
    return torch.cat([zi, yi.expand(*zi.shape[:-1], yi.shape[-1])], dim=-1)
