r"""Pure torch losses of the fair-representation baselines (docs/baselines.md).

Functions of batch tensors only (no modules, no state), shared by the penalties of
:mod:`otfair.penalties._representation` and tested against hand computations,
scikit-learn and finite differences:

* :func:`laftr_adversary_objective` — LAFTR's group-normalized L1 adversary objective,
  DP and EO variants (Madras et al. 2018, §3, Eqs. 4-5);
* :func:`sigmoid_ipm` — the sigmoid IPM between the groups' representation laws for
  one sigmoid discriminator (Kim et al. 2022, §3, Eq. 3);
* :func:`balanced_cross_entropy` and :func:`conditional_adversary_loss` — CFair's
  balanced error and its per-label, group-balanced alignment losses (Zhao et al. 2020,
  §3.2, Eq. 5);
* :func:`diagonal_gmm_log_prob` and :func:`symmetric_kl` — the density pieces of Fair
  Normalizing Flows (Balunovic et al. 2022, §4, Eq. 6).

Group codes ``s`` and labels ``y`` are 0/1 tensors of shape (n,).
"""

from __future__ import annotations

import math
from typing import cast

import torch
from torch.nn import functional as F

from otfair.notions import Notion, as_notion

__all__ = [
    "balanced_cross_entropy",
    "conditional_adversary_loss",
    "diagonal_gmm_log_prob",
    "laftr_adversary_objective",
    "sigmoid_ipm",
    "symmetric_kl",
]


def _cell_mean(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean of ``values`` over ``mask`` (0 for an empty cell, so batches never NaN)."""
    count = mask.sum()
    return (values * mask).sum() / count.clamp_min(1)


def laftr_adversary_objective(
    adv_prob: torch.Tensor,
    s: torch.Tensor,
    y: torch.Tensor | None = None,
    *,
    notion: str | Notion = "dp",
) -> torch.Tensor:
    r"""LAFTR's adversary objective (Madras et al. 2018, §3, Eqs. 4-5).

    With :math:`h(z) \in [0, 1]` the adversary's probability of :math:`S = 1`,

    .. math::

        L^{DP}_{adv} = 1 - \sum_{a \in \{0,1\}} \frac{1}{|D_a|}
                       \sum_{i \in D_a} |h(z_i) - a|, \qquad
        L^{EO}_{adv} = 2 - \sum_{a, y \in \{0,1\}} \frac{1}{|D_a^y|}
                       \sum_{i \in D_a^y} |h(z_i) - a|.

    The adversary *maximizes* it, the encoder minimizes it. A constant adversary scores
    0 and a perfect one 1 (DP) or 2 (EO); for DP the objective equals
    :math:`P(h=1 \mid S=1) - P(h=1 \mid S=0)` for a hard adversary, i.e. the DP gap of
    the adversary's prediction (the paper's Theorem 2 link). A cell absent from the
    batch contributes no term (and the constant is lowered by one per missing cell of
    a group pair, so the objective stays 0 for a constant adversary).

    Parameters
    ----------
    adv_prob : tensor of shape (n,)
        Adversary probabilities :math:`h(z_i)`.
    s : tensor of shape (n,)
        Group codes 0/1.
    y : tensor of shape (n,), optional
        Labels 0/1 (required for ``notion="eo"``).
    notion : {"dp", "eo"} or Notion, default="dp"

    Returns
    -------
    torch.Tensor
        0-dim objective.
    """
    notion = as_notion(notion, allowed=("dp", "eo"))
    s = s.to(adv_prob.dtype)
    err = torch.abs(adv_prob - s)
    if not notion.requires_labels:
        cells = [s == 0, s == 1]
        return 1.0 - cast(torch.Tensor, sum(_cell_mean(err, c) for c in cells))
    if y is None:
        raise ValueError(f"`y` is required for notion={notion.name!r}.")
    total = adv_prob.new_zeros(())
    for label in notion.label_cells:
        in_y = y == label
        a0, a1 = in_y & (s == 0), in_y & (s == 1)
        if bool(a0.any()) and bool(a1.any()):  # a label cell pair with both groups
            total = total + 1.0 - _cell_mean(err, a0) - _cell_mean(err, a1)
    return total


def sigmoid_ipm(
    z: torch.Tensor, s: torch.Tensor, theta: torch.Tensor, mu: torch.Tensor
) -> torch.Tensor:
    r"""Sigmoid IPM for one discriminator (Kim et al. 2022, §3, Eq. 3).

    .. math::

        d_{\theta,\mu}(P_0, P_1) = \Big| \frac{1}{n_0}\sum_{s_i=0}
        \sigma(\theta^\top z_i + \mu) - \frac{1}{n_1}\sum_{s_i=1}
        \sigma(\theta^\top z_i + \mu) \Big|;

    the sIPM is its supremum over :math:`(\theta, \mu)`, found by gradient ascent.

    Parameters
    ----------
    z : tensor of shape (n, d)
    s : tensor of shape (n,)
        Group codes 0/1 (both present).
    theta : tensor of shape (d,)
    mu : tensor of shape () or (1,)

    Returns
    -------
    torch.Tensor
        0-dim distance, in [0, 1].
    """
    out = torch.sigmoid(z @ theta + mu.reshape(()))
    one = s == 1
    return torch.abs(out[~one].mean() - out[one].mean())


def balanced_cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    r"""Class-balanced binary cross-entropy (CFair's balanced error surrogate).

    .. math::

        \mathrm{BCE}(f) = \frac{1}{|C|}\sum_{c \in C} \frac{1}{n_c}
        \sum_{t_i = c} \mathrm{CE}(t_i, f_i),

    :math:`C` the classes present. Equals scikit-learn's ``log_loss`` with
    ``compute_sample_weight("balanced", t)`` weights. Zhao et al. (2020, §3.2) train the
    classifier on it so that its error is balanced over the labels (the balanced error
    rate :math:`\tfrac12(P(\hat Y \ne Y \mid Y=0) + P(\hat Y \ne Y \mid Y=1))`).

    Parameters
    ----------
    logits : tensor of shape (n,)
    targets : tensor of shape (n,)
        0/1 targets.
    """
    targets = targets.to(logits.dtype)
    ce = F.binary_cross_entropy_with_logits(logits, targets, reduction="none")
    present = [targets == c for c in (0, 1) if bool((targets == c).any())]
    return cast(torch.Tensor, sum(_cell_mean(ce, m) for m in present)) / len(present)


def conditional_adversary_loss(
    adv_logits: torch.Tensor, s: torch.Tensor, y: torch.Tensor
) -> torch.Tensor:
    r"""CFair's conditional alignment loss (Zhao et al. 2020, §3.2, Eq. 5).

    Column ``y`` of ``adv_logits`` is adversary :math:`h_y`'s logit of :math:`S = 1`;
    each adversary is scored on the examples with :math:`Y = y` by the group-balanced
    cross-entropy, and the losses are summed over the labels:

    .. math::

        L_{adv} = \sum_{y \in \{0,1\}} \mathrm{BCE}\big(h_y(z), s \mid Y = y\big).

    The adversaries minimize it; the encoder maximizes it (gradient reversal), which
    drives the group-balanced error of every :math:`h_y` to 1/2, i.e. aligns
    :math:`Z \mid S=0, Y=y` and :math:`Z \mid S=1, Y=y` (equalized odds). A label absent
    from the batch contributes nothing.

    Parameters
    ----------
    adv_logits : tensor of shape (n, 2)
    s, y : tensors of shape (n,)
        Group codes and labels, 0/1.
    """
    total = adv_logits.new_zeros(())
    for label in (0, 1):
        in_y = y == label
        if bool(in_y.any()):
            total = total + balanced_cross_entropy(adv_logits[in_y, label], s[in_y])
    return total


def diagonal_gmm_log_prob(
    x: torch.Tensor, weights: torch.Tensor, means: torch.Tensor, variances: torch.Tensor
) -> torch.Tensor:
    r"""Log-density of a diagonal Gaussian mixture at the rows of ``x``.

    .. math::

        \log p(x) = \log \sum_k \pi_k \prod_j \mathcal N(x_j; m_{kj}, v_{kj}).

    Matches ``sklearn.mixture.GaussianMixture(covariance_type="diag").score_samples``.

    Parameters
    ----------
    x : tensor of shape (n, d)
    weights : tensor of shape (K,)
    means, variances : tensors of shape (K, d)

    Returns
    -------
    torch.Tensor of shape (n,)
    """
    # the quadratic form expanded into two matrix products,
    # sum_j (x_j - m_kj)^2 / v_kj = x^2 (1/v)^T - 2 x (m/v)^T + sum_j m_kj^2 / v_kj,
    # in float64 (the expansion cancels where x is near a mean of small variance): an
    # (n, d) x (d, K) product instead of an (n, K, d) tensor, for kernel estimates
    # with hundreds of centers (Fair NF's ``density="kde"``)
    x64 = x.double()
    inv = 1.0 / variances.double()
    scaled = means.double() * inv
    const = (means.double() * scaled).sum(-1) + torch.log(variances.double()).sum(-1)
    quad = (x64 * x64) @ inv.T - 2.0 * (x64 @ scaled.T) + const
    comp = -0.5 * (quad + x.shape[1] * math.log(2 * math.pi))
    return torch.logsumexp(comp + torch.log(weights.double()), dim=1).to(x.dtype)


def symmetric_kl(
    log_q0_at_z0: torch.Tensor,
    log_q1_at_z0: torch.Tensor,
    log_q0_at_z1: torch.Tensor,
    log_q1_at_z1: torch.Tensor,
) -> torch.Tensor:
    r"""Monte-Carlo symmetric KL between the latent laws (Balunovic et al. 2022, Eq. 6).

    With :math:`z^0_i \sim Z \mid S=0` and :math:`z^1_j \sim Z \mid S=1`,

    .. math::

        \widehat{KL}(q_0\|q_1) + \widehat{KL}(q_1\|q_0)
        = \frac1{n_0}\sum_i [\log q_0(z^0_i) - \log q_1(z^0_i)]
        + \frac1{n_1}\sum_j [\log q_1(z^1_j) - \log q_0(z^1_j)].
    """
    return (log_q0_at_z0 - log_q1_at_z0).mean() + (log_q1_at_z1 - log_q0_at_z1).mean()
