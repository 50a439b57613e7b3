"""Seeded synthetic generators: group shift + label bias, the FTM linear SCM, regression."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from otfair.datasets._base import FairDataset, Task


def _check_positive_int(value: int, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"`{name}` must be an integer >= {minimum}; got {value!r}.")
    return int(value)


def _check_ratio(value: float, name: str) -> float:
    if not 0.0 < float(value) < 1.0:
        raise ValueError(f"`{name}` must be in (0, 1); got {value!r}.")
    return float(value)


def _check_sizes(n_samples: int, n_features: int, group_ratio: float) -> tuple[int, int, float]:
    """Check the size arguments every generator takes: rows (>= 10), features, P(S = 1)."""
    n = _check_positive_int(n_samples, "n_samples", 10)
    d = _check_positive_int(n_features, "n_features")
    return n, d, _check_ratio(group_ratio, "group_ratio")


def _check_pair(value: tuple[float, float], name: str, *, positive: bool) -> np.ndarray:
    """Return a per-group pair of positive (or non-negative) numbers as an array."""
    pair = np.asarray(value, dtype=np.float64)
    if pair.shape != (2,) or not np.all(pair > 0 if positive else pair >= 0):
        what = "positive" if positive else "non-negative"
        raise ValueError(f"`{name}` must be two {what} numbers; got {value!r}.")
    return pair


def _features(X: np.ndarray) -> pd.DataFrame:
    """Return the Gaussian features as columns ``x0..x{d-1}``."""
    return pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])


def _dataset(
    name: str,
    data: pd.DataFrame,
    y: np.ndarray,
    s: np.ndarray,
    task: Task,
    description: str,
    **fields: Any,
) -> FairDataset:
    """Return a generated :class:`FairDataset` whose sensitive column is ``group``."""
    sensitive = pd.DataFrame({"group": s})
    return FairDataset(name, data, y, sensitive, task, description, **fields)


def _groups(rng: np.random.Generator, n: int, ratio: float) -> np.ndarray:
    """Draw group labels with both groups present (at least one row each)."""
    s = (rng.random(n) < ratio).astype(np.int64)
    s[0], s[-1] = 0, 1
    return s


def _weights(d: int) -> np.ndarray:
    """Return fixed, seed-independent coefficients ``w_j = (-1)^j / (1 + j/2)``."""
    j = np.arange(d)
    return (-1.0) ** j / (1.0 + j / 2.0)


def make_synthetic(
    n_samples: int = 4000,
    *,
    n_features: int = 5,
    covariate_shift: float = 1.0,
    label_bias: float = 1.0,
    group_ratio: float = 0.4,
    random_state: int | None = 0,
) -> FairDataset:
    r"""Two groups with controllable covariate shift and label bias (classification).

    .. math::

        S \sim \mathrm{Bernoulli}(\pi), \quad
        X \mid S \sim \mathcal N(\delta S u, I_d), \quad
        Y \mid X, S \sim \mathrm{Bernoulli}\big(\sigma(w^\top X + \beta S)\big)

    with :math:`u = \mathbf 1 / \sqrt d` (so the group means are :math:`\delta` apart),
    :math:`w_j = (-1)^j / (1 + j/2)`, :math:`\delta` = ``covariate_shift`` and
    :math:`\beta` = ``label_bias``. A categorical column ``segment`` (``a``/``b``/``c``,
    from the tertiles of :math:`x_0` plus noise) exercises one-hot encoding.
    Group 1 (``group = 1``) is the shifted group favoured by the label bias.

    Parameters
    ----------
    n_samples : int, default=4000
    n_features : int, default=5
        Number of Gaussian features.
    covariate_shift : float, default=1.0
        Distance :math:`\delta` between the group means.
    label_bias : float, default=1.0
        Logit bonus :math:`\beta` of group 1.
    group_ratio : float, default=0.4
        :math:`\pi = P(S = 1)`.
    random_state : int or None, default=0

    Returns
    -------
    FairDataset
    """
    n, d, ratio = _check_sizes(n_samples, n_features, group_ratio)
    rng = np.random.default_rng(random_state)
    s = _groups(rng, n, ratio)
    u = np.ones(d) / np.sqrt(d)
    X = rng.standard_normal((n, d)) + float(covariate_shift) * s[:, None] * u
    logits = X @ _weights(d) + float(label_bias) * s
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-logits))).astype(np.float64)
    noisy = X[:, 0] + 0.5 * rng.standard_normal(n)
    segment = np.array(["a", "b", "c"])[np.digitize(noisy, np.quantile(noisy, [1 / 3, 2 / 3]))]
    data = _features(X)
    data["segment"] = segment
    description = (
        f"Synthetic two-group data (n={n}, d={d}, seed={random_state}): X|S ~ N(delta*S*u, I) "
        f"with delta={covariate_shift}, Y ~ Bernoulli(sigmoid(w'X + beta*S)) with "
        f"beta={label_bias}, P(S=1)={ratio}. group = 1 is the shifted, favoured group."
    )
    return _dataset(
        "synthetic", data, y, s, "classification", description, categorical=["segment"]
    )


@dataclass(frozen=True)
class SyntheticSCM:
    r"""Data of the linear SCM of FTM §4.1 with its known counterfactuals.

    Attributes
    ----------
    dataset : FairDataset
        Features ``x0..x{d-1}``, sensitive ``group``, binary label.
    counterfactual : numpy.ndarray of shape (n, d)
        :math:`x^{CF}` of every row: the same noise pushed through the other group's
        equation.
    A, B : numpy.ndarray of shape (d, d)
        Strictly lower-triangular structural matrix and :math:`B = (I - A)^{-1}`.
    mu : numpy.ndarray of shape (2, d)
        Group intercepts :math:`\mu_0, \mu_1`.
    sigma : numpy.ndarray of shape (2,)
        Noise scales :math:`\sigma_0, \sigma_1`.
    D : numpy.ndarray of shape (d,)
        Diagonal of the noise covariance :math:`D`.
    """

    dataset: FairDataset
    counterfactual: np.ndarray
    A: np.ndarray
    B: np.ndarray
    mu: np.ndarray
    sigma: np.ndarray
    D: np.ndarray

    def counterfactual_of(self, X: np.ndarray, s: np.ndarray) -> np.ndarray:
        r"""Counterfactual of rows ``X`` observed in groups ``s`` (Prop. 4.3).

        .. math::

            x^{CF} = B\mu_{s'} + \frac{\sigma_{s'}}{\sigma_s}\,(x - B\mu_s),
            \qquad s' = 1 - s
        """
        X = np.asarray(X, dtype=np.float64)
        s = np.asarray(s, dtype=np.int64)
        if X.ndim != 2 or X.shape[1] != self.B.shape[0]:
            raise ValueError(f"`X` must have shape (n, {self.B.shape[0]}); got {X.shape}.")
        if s.shape != (X.shape[0],) or not np.all(np.isin(s, (0, 1))):
            raise ValueError("`s` must be a 0/1 array with one entry per row of `X`.")
        Bmu = self.mu @ self.B.T  # row g = B mu_g
        ratio = self.sigma[1 - s] / self.sigma[s]
        return Bmu[1 - s] + ratio[:, None] * (X - Bmu[s])

    def covariance(self, group: int) -> np.ndarray:
        r"""Covariance :math:`\sigma_s^2 B D B^\top` of :math:`X \mid S = s`."""
        return self.sigma[group] ** 2 * (self.B * self.D) @ self.B.T


def make_synthetic_scm(
    n_samples: int = 2000,
    *,
    n_features: int = 4,
    mean_shift: float = 1.0,
    sigma: tuple[float, float] = (1.0, 1.5),
    group_ratio: float = 0.5,
    random_state: int | None = 0,
) -> SyntheticSCM:
    r"""Sample the linear structural causal model of FTM §4.1, eq. (4).

    .. math::

        X_s = \mu_s + A X_s + \epsilon_s, \quad
        \epsilon_s \sim \mathcal N(0, \sigma_s^2 D)
        \;\Longrightarrow\; X_s = B(\mu_s + \epsilon_s),\ B = (I - A)^{-1}

    with :math:`A` strictly lower triangular (a DAG; entries drawn from
    :math:`U(-0.5, 0.5)` by the seed), :math:`\mu_0 = 0`, :math:`\mu_1 = m\mathbf 1`,
    :math:`D` diagonal with entries in :math:`U(0.5, 1.5)`, and
    :math:`Y \sim \mathrm{Bernoulli}(\sigma(w^\top (X - \bar X)))`. By Proposition 4.3 the
    counterfactual :math:`B\mu_{s'} + (\sigma_{s'}/\sigma_s)(x - B\mu_s)` equals the image
    of :math:`x` by the marginal OT map between the two group distributions.

    Parameters
    ----------
    n_samples : int, default=2000
    n_features : int, default=4
    mean_shift : float, default=1.0
        :math:`m`.
    sigma : tuple of two floats, default=(1.0, 1.5)
        :math:`(\sigma_0, \sigma_1)`, both positive.
    group_ratio : float, default=0.5
        :math:`P(S = 1)`.
    random_state : int or None, default=0

    Returns
    -------
    SyntheticSCM
    """
    n, d, ratio = _check_sizes(n_samples, n_features, group_ratio)
    sig = _check_pair(sigma, "sigma", positive=True)
    rng = np.random.default_rng(random_state)
    A = np.tril(rng.uniform(-0.5, 0.5, size=(d, d)), k=-1)
    B = np.linalg.inv(np.eye(d) - A)
    D = rng.uniform(0.5, 1.5, size=d)
    mu = np.vstack([np.zeros(d), np.full(d, float(mean_shift))])
    s = _groups(rng, n, ratio)
    eps = rng.standard_normal((n, d)) * np.sqrt(D)  # standard noise, scaled per group below
    X = (mu[s] + sig[s][:, None] * eps) @ B.T
    X_cf = (mu[1 - s] + sig[1 - s][:, None] * eps) @ B.T
    logits = (X - X.mean(axis=0)) @ _weights(d)
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-logits))).astype(np.float64)
    description = (
        f"Linear SCM of FTM §4.1 (n={n}, d={d}, seed={random_state}): X_s = B(mu_s + eps_s), "
        f"mu_1 - mu_0 = {mean_shift}, sigma = {tuple(sig.tolist())}; known counterfactuals "
        "(make_synthetic_scm(...).counterfactual). group = 1 has mean mu_1."
    )
    dataset = _dataset(
        "synthetic_scm", _features(X), y, s, "classification", description, scaling="minmax"
    )
    return SyntheticSCM(dataset=dataset, counterfactual=X_cf, A=A, B=B, mu=mu, sigma=sig, D=D)


def make_synthetic_regression(
    n_samples: int = 4000,
    *,
    n_features: int = 5,
    label_shift: float = 1.0,
    noise: tuple[float, float] = (0.3, 1.0),
    group_ratio: float = 0.3,
    random_state: int | None = 0,
) -> FairDataset:
    r"""Regression with group-dependent label distributions and noise.

    .. math::

        X \mid S \sim \mathcal N(0.5 S \mathbf 1, I_d), \quad
        Y = w_S^\top X + \gamma S + \nu_S \varepsilon, \ \varepsilon \sim \mathcal N(0, 1)

    with :math:`w_0 = w`, :math:`w_1 = w + 0.5 \cdot \mathbf 1` (a different conditional
    law), :math:`\gamma` = ``label_shift`` and noise levels :math:`(\nu_0, \nu_1)` =
    ``noise``. Any single regressor has a larger error on the noisier group, so an
    accuracy disparity exists (accuracy-disparity paper, §3).

    Parameters
    ----------
    n_samples : int, default=4000
    n_features : int, default=5
    label_shift : float, default=1.0
    noise : tuple of two floats, default=(0.3, 1.0)
        Noise standard deviation of group 0 and group 1 (non-negative).
    group_ratio : float, default=0.3
        :math:`P(S = 1)`; group 1 is the minority with the noisier labels.
    random_state : int or None, default=0

    Returns
    -------
    FairDataset
    """
    n, d, ratio = _check_sizes(n_samples, n_features, group_ratio)
    nu = _check_pair(noise, "noise", positive=False)
    rng = np.random.default_rng(random_state)
    s = _groups(rng, n, ratio)
    X = rng.standard_normal((n, d)) + 0.5 * s[:, None]
    w = np.vstack([_weights(d), _weights(d) + 0.5])
    y = np.einsum("ij,ij->i", X, w[s]) + float(label_shift) * s
    y = y + nu[s] * rng.standard_normal(n)
    description = (
        f"Synthetic regression (n={n}, d={d}, seed={random_state}): Y = w_S'X + "
        f"{label_shift}*S + noise_S*eps, noise = {tuple(nu.tolist())}. group = 1 is the "
        "minority with a different slope and noisier labels."
    )
    return _dataset("synthetic_regression", _features(X), y, s, "regression", description)
