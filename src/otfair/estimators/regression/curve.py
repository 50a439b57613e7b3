r"""Train CENet / WassersteinNet: K strengths in one stacked training run.

Pure torch training (:func:`train_stacked_nets` on :class:`StackedNets`): the estimator
(:class:`~otfair.estimators.regression._base.NeuralFairRegressor`) checks the data,
builds each model's nets and hands them here; every fit runs here (a single strength is
a stack of one), and ``fairness_path(CENet(...), X, y, sensitive_features=s,
strengths=[l_1, ..., l_K])`` (or ``WassersteinNet``) trains the K regression nets of the
curve together. Model :math:`k` minimizes, as its separate fit
does (App. B of the accuracy-disparity paper;
:class:`~otfair.estimators.regression._base.NeuralFairRegressor`),

.. math::

    L_k = \mathrm{MSE}\big(h_k(g_k(X)), Y\big) + L_{f_k}\big(R_{\lambda_k}(g_k(X)), Y, A\big),

with its own encoder :math:`g_k`, head :math:`h_k`, adversary :math:`f_k` and gradient
reversal :math:`R_{\lambda_k}` (no adversary when :math:`\lambda_k = 0`). The K encoders,
heads and adversaries are stacked (:class:`~otfair.models.stacked.StackedLayers`,
:class:`~otfair.models.stacked.StackedJointAdversary`) and one Adadelta optimizer
minimizes :math:`\sum_k L_k`: a step is one forward and one backward pass, one
optimizer step and one clipping for the K models. Nothing couples the models: the
gradient of the sum in model k's parameters is :math:`\nabla L_k` (the reversal scales
only model k's slice, ``grad_reverse(z, scale)`` with ``scale`` of shape (K, 1, 1)), and
Adadelta's update and the critic's weight clipping are elementwise, so this is K
separate fits.

Equality with separate fits (same integer ``random_state``):

* initial weights: model k is built on a fresh generator seeded by the fit
  (:func:`otfair.utils.use_generator`), encoder, head, adversary in the order of a
  separate fit;
* batches: a separate fit draws its epoch permutations, and WassersteinNet's extra
  critic batches (``n_critic > 1``), from one generator seeded by the fit. All models
  with an adversary consume it identically, and so do all models when ``n_critic = 1``
  (CENet; WassersteinNet's default): they share one generator and one batch per step.
  With ``n_critic > 1`` the model with strength 0 (no critic, no extra draws) has its
  own generator, seeded alike: its batches are what its separate fit draws, and the
  step feeds each model its own rows (inputs of shape (K, b, d));
* WGAN-GP draws (``gradient_penalty > 0``) continue the generator that built the last
  model; the models with an adversary are built last, so it continues as after a
  separate fit's build, and one draw serves all critics (their separate fits draw the
  same numbers). No global generator is seeded or drawn from;
* arithmetic: the matrix products are made per model as ``nn.Linear`` makes them and
  the elementwise kernels see each model's rows as a separate fit's (see
  :class:`otfair.models.stacked._StackedLinear`), so on one machine the stacked models
  are bitwise the separate ones (measured on Crime and Law, the registry's settings,
  every strength of the grid, 100 epochs). This matters: CENet at a large strength is an
  unstable game that grows a rounding difference of 1e-7 to ~1e-2 of the target range
  within 100 epochs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, cast

import torch
from torch import nn
from torch.nn import functional as F

from otfair.estimators._training import AdversaryStep, EpochLogs, run_epochs
from otfair.models.adversarial import JointAdversary, grad_reverse
from otfair.models.stacked import StackedJointAdversary, StackedLayers
from otfair.penalties import RepresentationAdversary

__all__ = ["Nets", "StackedNets", "train_stacked_nets"]

Nets = tuple[nn.Sequential, nn.Linear, RepresentationAdversary | None]
Batch = tuple[torch.Tensor, torch.Tensor]


@dataclass
class StackedNets:
    """K regression nets stacked: the models without adversary first, then the others."""

    encoder: StackedLayers
    head: StackedLayers
    adversary: StackedJointAdversary | None
    penalty: Any  # the adversary's loss (a _JointAdversaryPenalty of the stack), or None
    scale: torch.Tensor  # (K_adv, 1, 1) reversal scales (strengths) of the adversaries
    n_plain: int  # models without adversary (strength 0): the first n_plain

    @classmethod
    def build(cls, nets: list[Nets], strengths: list[float]) -> StackedNets:
        """Stack the K models' nets (``strengths[k]`` each; those at 0 first)."""
        adversaries = [adv for _, _, adv in nets if adv is not None]
        first = next(iter(nets[0][0].parameters()))
        return cls(
            encoder=StackedLayers.from_linears(
                [_linears(enc) for enc, _, _ in nets], activate_last=True
            ),
            head=StackedLayers.from_linears([[head] for _, head, _ in nets]),
            adversary=(
                StackedJointAdversary([cast(JointAdversary, a.adversary) for a in adversaries])
                if adversaries
                else None
            ),
            penalty=adversaries[0] if adversaries else None,
            scale=torch.tensor(
                [v for v in strengths if v > 0], dtype=first.dtype, device=first.device
            ).reshape(-1, 1, 1),
            n_plain=len(nets) - len(adversaries),
        )

    def parameters(self) -> list[nn.Parameter]:
        """Return every stacked parameter (what the one optimizer updates)."""
        modules: list[nn.Module] = [self.encoder, self.head]
        if self.adversary is not None:
            modules.append(self.adversary)
        return [p for m in modules for p in m.parameters()]

    def adversary_losses(
        self, z: torch.Tensor, y: torch.Tensor, a: torch.Tensor, *, reverse: bool
    ) -> torch.Tensor | None:
        """Losses of the adversaries on their models' ``z`` (K, b, L), shape (K_adv,).

        One model (a single fit) passes ``z`` of shape (b, L) and gets a 0-dim loss: the
        ops of a separate ``JointAdversary`` (:meth:`StackedJointAdversary.forward_one`).
        """
        assert self.adversary is not None  # called only for the models with an adversary
        if z.dim() == 2:
            z_adv = grad_reverse(z, float(self.scale)) if reverse else z
            return self.penalty.joint_loss(self.adversary.forward_one, z_adv, y, a)
        z_adv = z[self.n_plain :]
        if reverse:
            z_adv = grad_reverse(z_adv, self.scale)
        return self.penalty.joint_loss(self.adversary, z_adv, y, a)

    def constrain(self) -> None:
        """Clip the critics' weights (WassersteinNet); run after every optimizer step."""
        if self.adversary is not None:
            self.penalty.after_step(self.adversary)

    def export(self, i: int, nets: Nets) -> None:
        """Copy the stack's model ``i`` back into its own modules ``nets``."""
        encoder, head, adversary = nets
        self.encoder.export_linears(i, _linears(encoder))
        self.head.export_linears(i, [head])
        if adversary is not None:
            assert self.adversary is not None  # stacked from the nets' adversaries
            self.adversary.export(i - self.n_plain, cast(JointAdversary, adversary.adversary))

    def finisher(self, built: list[Nets]) -> Callable[[int, int], None]:
        """Return ``on_converged(i, epoch)``: export model ``i`` into ``built[i]``, then freeze it.

        A net that converges before the others ends there, as its separate fit, and stops
        costing its products (:meth:`freeze`).
        """

        def finish(i: int, epoch: int) -> None:
            self.export(i, built[i])
            self.freeze(i)

        return finish

    def freeze(self, i: int) -> None:
        """Stop computing model ``i`` (converged and exported): :meth:`StackedLayers.freeze`."""
        self.encoder.freeze(i)
        self.head.freeze(i)
        if self.adversary is not None and i >= self.n_plain:
            self.adversary.net.freeze(i - self.n_plain)


def _linears(module: nn.Module) -> list[nn.Linear]:
    return [m for m in module.modules() if isinstance(m, nn.Linear)]


class _Steps:
    """The steps of one stacked training run (:func:`train_stacked_nets`)."""

    def __init__(
        self,
        nets: StackedNets,
        Xt: torch.Tensor,
        yt: torch.Tensor,
        at: torch.Tensor,
        *,
        seed: int,
        batch_size: int,
        n_critic: int,
    ) -> None:
        self.nets, self.Xt, self.yt, self.at = nets, Xt, yt, at
        self.n, self.K, self.device = len(yt), nets.encoder.n_models, Xt.device
        self.batch_size = batch_size
        self.extra = n_critic - 1 if nets.adversary is not None else 0
        self.gen = torch.Generator().manual_seed(seed)  # the models with an adversary (or all)
        # n_critic > 1: the model without critic draws fewer numbers, so it has its own
        self.own = torch.Generator().manual_seed(seed) if self.extra and nets.n_plain else None
        self.zeros = torch.zeros(self.K, device=self.device)

    def epoch_batches(self, epoch: int) -> Iterable[Batch]:
        """Return the epoch's batches ``(rows, adversary rows)``: shared, or rows per model."""
        n, size, nets = self.n, self.batch_size, self.nets
        order = torch.randperm(n, generator=self.gen).to(self.device)
        starts = range(0, n, size)
        if self.own is None:  # one batch (b,) for all models
            return [(order[s : s + size],) * 2 for s in starts]
        plain = torch.randperm(n, generator=self.own).to(self.device)
        rows = torch.cat([plain.expand(nets.n_plain, n), order.expand(self.K - nets.n_plain, n)])
        return [(rows[:, s : s + size], order[s : s + size]) for s in starts]

    def _padded(self, adv: torch.Tensor | None) -> torch.Tensor:
        if adv is None:
            return self.zeros
        return F.pad(adv, (self.nets.n_plain, 0)) if self.nets.n_plain else adv

    def step_one(self, batch: Batch) -> tuple[torch.Tensor, dict[str, torch.Tensor], float]:
        """One model (a single fit): 2-D tensors, the ops of a separate net."""
        nets, idx = self.nets, batch[1]
        z = nets.encoder.forward_one(self.Xt[idx])  # (b, L)
        pred = torch.sigmoid(nets.head.forward_one(z))[:, 0]
        mse = torch.mean((pred - self.yt[idx]) ** 2)
        adv = None
        if nets.adversary is not None:
            adv = nets.adversary_losses(z, self.yt[idx], self.at[idx], reverse=True)
        loss = mse if adv is None else mse + adv
        logs = {"mse": mse, "adversary_loss": self.zeros[0] if adv is None else adv}
        return loss, logs, len(idx)

    def step(self, batch: Batch) -> tuple[torch.Tensor, dict[str, torch.Tensor], float]:
        """K models: inputs (K, b, d), the losses summed."""
        nets = self.nets
        idx, idx_adv = batch  # idx: (b,) shared or (K, b) per model; idx_adv: (b,)
        z = nets.encoder(self.Xt[idx])  # (K, b, L)
        pred = torch.sigmoid(nets.head(z))[..., 0]
        mse = torch.mean((pred - self.yt[idx]) ** 2, dim=-1)
        adv = None
        if nets.adversary is not None:
            adv = nets.adversary_losses(z, self.yt[idx_adv], self.at[idx_adv], reverse=True)
        adv = self._padded(adv)
        return (mse + adv).sum(), {"mse": mse, "adversary_loss": adv}, float(len(idx_adv))

    def critic_loss(self, batch: Batch) -> torch.Tensor | None:
        """WGAN: a critic-only step on a fresh batch, the encoders frozen."""
        idx = torch.randint(self.n, (len(batch[1]),), generator=self.gen).to(self.device)
        with torch.no_grad():
            z = self.nets.encoder(self.Xt[idx])
        adv = self.nets.adversary_losses(z, self.yt[idx], self.at[idx], reverse=False)
        return None if adv is None else adv.sum()


def train_stacked_nets(
    nets: StackedNets,
    Xt: torch.Tensor,
    yt: torch.Tensor,
    at: torch.Tensor,
    *,
    seed: int,
    epochs: int,
    batch_size: int,
    lr: float,
    n_critic: int,
    verbose: bool = False,
    desc: str = "curve",
    stop: Callable[[EpochLogs], bool] | None = None,
) -> list[EpochLogs]:
    """Train the stacked nets on the one engine; return the epoch logs (lists of K).

    Mirrors the step of :meth:`NeuralFairRegressor.fit` for K models at once (see the
    module docstring for what is shared and why each model equals its separate fit).
    ``stop(logs)`` after each epoch ends the run when it returns True (the estimator's
    ``tol``: :class:`~otfair.estimators._training.StopOnPlateau` on the training MSE).
    """
    steps = _Steps(nets, Xt, yt, at, seed=seed, batch_size=batch_size, n_critic=n_critic)
    # foreach: the same elementwise kernels as the single-tensor update, fewer calls for
    # K > 1 (for one model its grouping costs more than it saves: the single-tensor loop)
    optimizer = torch.optim.Adadelta(nets.parameters(), lr=lr, foreach=steps.K > 1)
    # the critic's extra steps use the one optimizer: the stacked encoders and heads
    # have no gradient then and are skipped
    critic = None
    if steps.extra:
        critic = AdversaryStep(steps.critic_loss, optimizer, steps.extra, nets.constrain)
    return run_epochs(
        epochs,
        steps.epoch_batches,
        steps.step_one if steps.K == 1 else steps.step,
        optimizer=optimizer,
        after_step=lambda batch: nets.constrain(),
        adversary=critic,
        stop=stop,
        verbose=verbose,
        desc=desc,
    )
