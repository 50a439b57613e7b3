r"""Fair Normalizing Flows (simplified).

Balunović, Ruoss, Vechev, *Fair Normalizing Flows*, ICLR 2022, §4 (the
AdapFair paper's App. D for the baseline's settings). Each group :math:`s` has an invertible
encoder :math:`T_s` (a coupling flow, :class:`~otfair.models.representation.GroupFlows`)
mapping :math:`x` to a shared latent :math:`z = T_s(x)`. With density estimates
:math:`p_s` of :math:`x \mid s`, the latent densities follow from the change of variables,

.. math::

    \log q_s(z) = \log p_s(T_s^{-1}(z)) + \log\bigl|\det J_{T_s^{-1}}(z)\bigr|,

and the flows and a classifier :math:`g` on :math:`z` minimize the convex combination
(the paper's Eq. 6; AdapFair App. D: "convex combination of KL losses and prediction
losses")

.. math::

    (1 - \gamma)\, \mathrm{CE}(g(z), y)
    + \gamma\, \big[\widehat{KL}(q_0 \| q_1) + \widehat{KL}(q_1 \| q_0)\big],

each KL estimated by Monte Carlo on points *drawn from the density estimates*
(the paper's estimator, §4; :func:`~otfair.penalties._representation_losses.symmetric_kl`):
with :math:`x_i \sim p_0` and :math:`z_i = T_0(x_i)`,

.. math::

    \widehat{KL}(q_0 \| q_1) = \frac1m \sum_i \big[\log p_0(x_i)
    - \log|\det J_{T_0}(x_i)| - \log q_1(z_i)\big] \;\ge 0 \text{ in expectation},

and symmetrically for :math:`KL(q_1 \| q_0)`; the cross-entropy uses the data. Small KLs
bound the statistical distance between the groups' latent laws *under the density
estimates*, hence the balanced accuracy of any adversary and the DP gap of any
classifier on :math:`z` (the paper's §3); how far that carries to the data depends on how
well :math:`p_s` models :math:`x \mid s`. (Evaluating the same expression at the
*data* points is not a KL estimate: it equals
:math:`KL(T_0 \# D_0 \| q_1) - KL(D_0 \| p_0)` plus the symmetric term, is unbounded
below on one-hot columns, and the flows then fit density spikes instead of aligning the
groups; docs/baselines.md.)

Simplifications (documented in docs/baselines.md): :math:`p_s` is a diagonal Gaussian
mixture fitted once by scikit-learn (the paper also uses Gaussian mixtures for
continuous data, with dequantized categorical features and autoregressive flows); the
flows are RealNVP coupling flows; the paper's certification of the bound (the optimal
adversary computed exactly on the latent densities) is not implemented.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import torch
from sklearn.mixture import GaussianMixture
from sklearn.utils.validation import check_is_fitted
from torch.nn import functional as F

from otfair.estimators._docs import fill_estimator_doc
from otfair.estimators.preprocessing.sensitive_column import split_sensitive_column
from otfair.estimators.representation._base import (
    CONVERGENCE,
    FITTED_ATTRIBUTES,
    FitStart,
    GroupWiseSearch,
    RepresentationEstimator,
    cell_batches,
    groupwise_inputs,
)
from otfair.models.mlp import MLP
from otfair.models.representation import GroupFlows
from otfair.penalties._representation_losses import diagonal_gmm_log_prob, symmetric_kl
from otfair.utils import (
    SENSITIVE_COLUMN,
    Interval,
    StrOptions,
    Widths,
    positive_int,
    positive_real,
    use_generator,
)
from otfair.utils._docstrings import fill_doc

__all__ = ["FairNormalizingFlowClassifier"]


class _GMM(torch.nn.Module):
    """A diagonal Gaussian mixture (weights, means, variances) as frozen torch buffers."""

    weights: torch.Tensor
    means: torch.Tensor
    variances: torch.Tensor

    def __init__(self, weights: np.ndarray, means: np.ndarray, variances: np.ndarray) -> None:
        super().__init__()
        self.register_buffer("weights", torch.as_tensor(weights, dtype=torch.float32))
        self.register_buffer("means", torch.as_tensor(means, dtype=torch.float32))
        self.register_buffer("variances", torch.as_tensor(variances, dtype=torch.float32))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return diagonal_gmm_log_prob(x, self.weights, self.means, self.variances)

    def sample(self, n: int, generator: torch.Generator) -> torch.Tensor:
        """Draw ``n`` points of the mixture (a component, then its diagonal Gaussian)."""
        comp = torch.multinomial(self.weights, n, replacement=True, generator=generator)
        eps = torch.randn(n, self.means.shape[1], generator=generator, device=self.means.device)
        return self.means[comp] + eps * self.variances[comp].sqrt()


def fit_density(
    X: np.ndarray,
    *,
    density: str,
    n_components: int,
    reg_covar: float,
    bandwidth: float,
    seed: int,
) -> _GMM:
    r"""Fit one group's density estimate :math:`p_s` as a diagonal Gaussian mixture.

    ``"gmm"``: scikit-learn's EM fit with ``n_components`` components and the variance
    floor ``reg_covar``. ``"kde"``: a Gaussian kernel density estimate on
    ``n_components`` training rows drawn with ``seed`` (all rows when fewer),
    :math:`p(x) = \frac1m \sum_j \mathcal N(x; x_j, h^2 I)` with ``bandwidth`` h: a
    mixture that keeps the data's discrete structure (one-hot columns) that a few EM
    components smooth away; sampling it is drawing a row and adding
    :math:`\mathcal N(0, h^2 I)` noise (Gaussian dequantization).
    """
    if density == "kde":
        rng = np.random.default_rng(seed)
        rows = rng.choice(len(X), size=min(n_components, len(X)), replace=False)
        means = X[np.sort(rows)]
        weights = np.full(len(rows), 1.0 / len(rows))
        found = _GMM(weights, means, np.full_like(means, bandwidth**2))
    else:
        try:
            with np.errstate(all="ignore"):  # raw scales overflow: the check below says so
                gmm = GaussianMixture(
                    min(n_components, len(X)),
                    covariance_type="diag",
                    reg_covar=reg_covar,
                    random_state=seed,
                ).fit(X)
        except ValueError as exc:  # EM's ill-defined covariance at raw scales
            raise ValueError(_unscaled_density_message(X, f"failed ({exc})")) from exc
        found = _GMM(gmm.weights_, gmm.means_, gmm.covariances_)
    if not all(bool(torch.isfinite(b).all()) for b in found.buffers()):
        raise ValueError(_unscaled_density_message(X, "is not finite in float32"))
    return found


def _unscaled_density_message(X: np.ndarray, what: str) -> str:
    """Return the error of a density estimate that failed on ``X``: its scale, the fix."""
    return (
        f"The density estimate of the features {what}: `X` reaches "
        f"{float(np.abs(X).max()):.3g} in magnitude; put a "
        "sklearn.preprocessing.StandardScaler before the estimator in a Pipeline."
    )


@fill_estimator_doc
@fill_doc(fitted_attributes=FITTED_ATTRIBUTES, convergence=CONVERGENCE)
@dataclass(eq=False, repr=False)
class FairNormalizingFlowClassifier(GroupWiseSearch, RepresentationEstimator):
    r"""Fair Normalizing Flows (Balunović et al. 2022), simplified (see the module doc).

    Parameters
    ----------
    strength : float, default=0.5
        :math:`\gamma \in [0, 1)`, the KL weight of the convex combination (0: flows and
        classifier trained on the cross-entropy alone).
    density : {"gmm", "kde"}, default="gmm"
        Each group's density estimate :math:`p_s` (``fit_density``): a diagonal
        Gaussian mixture fitted by EM, or a Gaussian kernel density estimate on
        ``n_components`` training rows with ``bandwidth`` (the better model of one-hot
        features: docs/baselines.md, Adult).
    n_components : int, default=4
        Mixture components (``"gmm"``) or kernel centers (``"kde"``) per group.
    reg_covar : float, default=0.01
        Variance floor of the EM mixtures (one-hot columns have near-zero variance).
    bandwidth : float, default=0.3
        Kernel standard deviation of ``"kde"`` (in the units of the standardized
        features).
    n_blocks : int, default=4
        Coupling blocks per group flow (two coupling layers each).
    flow_hidden : sequence of int, default=(20, 20)
        Conditioner widths (AdapFair App. D: two hidden layers of 20 units).
    head_hidden : sequence of int, default=(20, 20)
        Classifier widths (AdapFair App. D: "matches Naive", two layers of 20).
    epochs : int, default=20
    batch_size : int, default=256
    lr : float, default=1e-3
        Adam learning rate.
    sensitive_column : int or None, default=None
        When set, ``X``'s column of that index is the group (read at predict time when
        ``sensitive_features`` is not given) and is dropped from the flows' inputs (the
        registry's ``fair-nf`` uses -1, the attribute appended last as in AdapFair).
    device : str or None
    random_state : int, RandomState or None
        Seeds the mixtures, the weights and the batch orders.
    verbose : bool, default=False
    {convergence}

    Attributes
    ----------
    flows_ : torch.nn.Module
        The fitted per-group flows.
    densities_ : torch.nn.ModuleList
        The per-group Gaussian-mixture densities of the inputs.
    head_ : torch.nn.Module
        The classifier on the flows' output.
    {fitted_attributes}

    See Also
    --------
    otfair.estimators.DiscreteFairNFClassifier : The paper's exact encoder of a finite input space.
    otfair.estimators.LAFTRClassifier : An adversarial fair representation.

    Notes
    -----
    The encoder is group-specific, so ``predict`` and ``transform`` need
    ``sensitive_features`` (a group unseen at fit time is an error).

    {references_fnf}

    {examples_binary}
    >>> from otfair.estimators import FairNormalizingFlowClassifier
    >>> clf = FairNormalizingFlowClassifier(epochs=2, random_state=0)
    >>> clf.fit(X, y, sensitive_features=s).predict_proba(X, sensitive_features=s).shape
    (200, 2)
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **RepresentationEstimator._parameter_constraints,
        "strength": [Interval(numbers.Real, 0, 1, closed="left")],
        "density": [StrOptions({"gmm", "kde"})],
        "n_components": [positive_int()],
        "reg_covar": [positive_real()],
        "bandwidth": [positive_real()],
        "n_blocks": [positive_int()],
        "flow_hidden": [Widths()],
        "sensitive_column": SENSITIVE_COLUMN,
    }

    strength: float = 0.5
    density: str = "gmm"
    n_components: int = 4
    reg_covar: float = 0.01
    bandwidth: float = 0.3
    n_blocks: int = 4
    flow_hidden: Sequence[int] = (20, 20)
    head_hidden: Sequence[int] = (20, 20)
    sensitive_column: int | None = None

    def _fit(self, data: FitStart, sensitive_features: Any) -> None:
        """Train the group densities, the group flows and the latent classifier."""
        gamma = float(self.strength)  # in [0, 1): 1 drops the task
        n_components, n_blocks = int(self.n_components), int(self.n_blocks)
        reg_covar, bandwidth = float(self.reg_covar), float(self.bandwidth)
        epochs, batch_size, lr = self._training_budget()
        X, y, codes, rng, device, seed, torch_gen = data
        X, _ = split_sensitive_column(X, sensitive_features, self.sensitive_column)

        with use_generator(torch_gen):  # the modules' initial weights
            densities = torch.nn.ModuleList(
                fit_density(
                    X[codes == g],
                    density=self.density,
                    n_components=n_components,
                    reg_covar=reg_covar,
                    bandwidth=bandwidth,
                    seed=seed,
                )
                for g in (0, 1)
            ).to(device)
            flows = GroupFlows(X.shape[1], 2, n_blocks, tuple(self.flow_hidden), seed % 10_000)
            head = MLP(X.shape[1], hidden=tuple(self.head_hidden))
        flows, head = flows.to(device), head.to(device)
        optimizer = torch.optim.Adam([*flows.parameters(), *head.parameters()], lr=lr)

        Xt = torch.as_tensor(X, device=device)
        yt = torch.as_tensor(y, device=device)
        st = torch.as_tensor(codes, device=device)
        epoch_batches = cell_batches(codes, y, batch_size, rng, device)
        gen = torch.Generator(device=device)
        gen.manual_seed(seed)

        def step(idx: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor], float]:
            x, s = Xt[idx], st[idx]
            z, _ = flows(x, s)
            ce = F.binary_cross_entropy_with_logits(head(z)[:, 0], yt[idx])
            logs = {"ce": ce}
            if gamma == 0:
                return ce, logs, float(len(idx))
            n_draw = [max(1, int((s == g).sum())) for g in (0, 1)]
            kl = self._latent_kl(flows, densities, n_draw, gen)
            logs["kl"] = kl
            return (1.0 - gamma) * ce + gamma * kl, logs, float(len(idx))

        self._train(epochs, epoch_batches, step, optimizer, task_key="ce")
        self.flows_, self.head_, self.densities_ = flows.eval(), head.eval(), densities
        self.device_ = device

    @staticmethod
    def _latent_kl(flows, densities, n_draw, generator) -> torch.Tensor:
        """Symmetric KL between the latent laws, Monte Carlo on draws of the densities."""
        log_q = {}
        for g in (0, 1):
            x = densities[g].sample(n_draw[g], generator)
            z, logdet = flows.group(g)(x)
            log_q[g, g] = densities[g](x) - logdet
            other = 1 - g
            x_back, logdet_inv = flows.group(other).inverse(z)
            log_q[other, g] = densities[other](x_back) + logdet_inv
        return symmetric_kl(log_q[0, 0], log_q[1, 0], log_q[0, 1], log_q[1, 1])

    @torch.no_grad()
    def _forward(self, X: Any, sensitive_features: Any) -> tuple[np.ndarray, np.ndarray]:
        check_is_fitted(self, "flows_")
        X, codes = groupwise_inputs(self, X, sensitive_features)
        Xt = torch.as_tensor(X, device=self.device_)
        st = torch.as_tensor(codes, device=self.device_)
        z, _ = self.flows_(Xt, st)
        logits = self.head_(z)[:, 0]
        return z.cpu().numpy().astype(np.float64), logits.cpu().numpy().astype(np.float64)
