r"""Fair and optimal classification by post-processing scores (Xian, Yin and Zhao 2023).

Xian, Yin and Zhao, "Fair and Optimal Classification via Post-Processing", ICML 2023,
§3-4 (the Wasserstein-barycenter characterization and the relaxed-DP linear program);
the binary case is solved in closed form here. See ``docs/baselines.md``.
"""

from __future__ import annotations

from numbers import Real
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from otfair.estimators._docs import fill_estimator_doc
from otfair.estimators._quantile_barycenter import (
    check_fit_groups,
    draw_fit_seed,
    encode_fitted_groups,
    fit_or_calibration_split,
    grouped_score,
)
from otfair.estimators._torch_base import encode_binary_labels
from otfair.utils import HasMethods, Interval, fit_context, set_params_from_init

__all__ = ["WassersteinBarycenterClassifier"]

_GRID = 4001


@fill_estimator_doc
class WassersteinBarycenterClassifier(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    r"""Post-process a probabilistic classifier to (relaxed) demographic parity.

    Xian et al. show that the error-optimal DP classifier built on calibrated scores
    :math:`f(x) = P(Y = 1 \mid X = x, S = s)` transports every group's score distribution
    to a common output distribution :math:`q` minimizing
    :math:`\sum_s \pi_s W_1(\mathcal L(f \mid S = s), q)` — a Wasserstein barycenter, here
    on the labels :math:`\{0, 1\}`. In the binary case the optimal transport of a score
    law to :math:`\mathrm{Bernoulli}(r_s)` accepts the top :math:`r_s` share of the group
    (randomizing on a tie so that the rate is exactly :math:`r_s`), and the weighted error
    is

    .. math::

        \mathrm{err}(r) = \sum_s \pi_s \Big(E[f \mid S = s]
        + \int_0^{r_s} \big(1 - 2 Q^{\downarrow}_s(u)\big)\,du\Big),

    with :math:`Q^{\downarrow}_s` the group's decreasing score quantile function: convex
    in every :math:`r_s`, minimized by :math:`r_s^\ast = P(f > 1/2 \mid S = s)`.
    Relaxed DP asks :math:`\max_s r_s - \min_s r_s \le \alpha`; for the interval
    :math:`[c, c + \alpha]` the optimum is :math:`r_s = \mathrm{clip}(r_s^\ast, c, c +
    \alpha)` and :math:`c` minimizes a convex function of one variable (grid search).
    ``strength`` :math:`\lambda` sets :math:`\alpha = (1 - \lambda)(\max_s r_s^\ast -
    \min_s r_s^\ast)`: :math:`\lambda = 1` is exact DP (one common rate), 0 the
    unconstrained Bayes rule :math:`f \ge 1/2`.

    Parameters
    ----------
    estimator : sklearn classifier with ``predict_proba``
        Base scorer; binary labels.
    strength : float, default=1.0
        :math:`\lambda \in [0, 1]`.
    prefit : bool, default=False
        If True, ``estimator`` is fitted and all of ``X`` is the calibration set;
        otherwise a clone is fitted on ``1 - calibration_fraction`` of the rows.
    calibration_fraction : float, default=0.5
        Calibration share when ``prefit=False``.
    random_state : int, RandomState, Generator or None, default=None
        Seeds the split and the randomized predictions (``predict`` is reproducible);
        one seed is drawn from it at fit time, numpy's global generator is never used.

    Attributes
    ----------
    groups_ : ndarray
    rates_ : ndarray
        Positive rate :math:`r_s` of every group on the calibration set.
    thresholds_, tie_probability_ : ndarray
        Group :math:`s` predicts 1 when :math:`f > t_s`, and with probability
        :math:`\gamma_s` when :math:`f = t_s`.

    See Also
    --------
    otfair.estimators.WassersteinBarycenterRegressor : The same post-processing for regression.
    otfair.estimators.OTRepair : Repairs the features instead of the scores.
    otfair.estimators.FairClassifier : Fair training instead of post-processing.

    Notes
    -----
    Cost: with :math:`n` calibration rows, ``fit`` sorts every group's scores,
    :math:`O(n \log n)`, and evaluates the error curves on a fixed grid of
    :math:`G = 4001` common rates, :math:`O(k\,(n + G))` for :math:`k` groups;
    ``predict`` on :math:`m` rows compares each score with its group's threshold,
    :math:`O(m)`, plus the base model. Memory :math:`O(n)`.

    References
    ----------
    .. [1] Xian, R., Yin, L. and Zhao, H. *Fair and Optimal Classification via
       Post-Processing*. ICML 2023.

    {examples_binary}
    >>> from otfair.estimators import WassersteinBarycenterClassifier
    >>> from sklearn.linear_model import LogisticRegression
    >>> clf = WassersteinBarycenterClassifier(LogisticRegression(), random_state=0)
    >>> clf.fit(X, y, sensitive_features=s).predict(X, sensitive_features=s).shape
    (200,)
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "estimator": [HasMethods(["fit", "predict_proba"])],
        "strength": [Interval(Real, 0, 1, closed="both")],
        "prefit": ["boolean"],
        "calibration_fraction": [Interval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state", np.random.Generator],
    }

    def __init__(
        self,
        estimator: Any,
        *,
        strength: float = 1.0,
        prefit: bool = False,
        calibration_fraction: float = 0.5,
        random_state: Any = None,
    ) -> None:
        set_params_from_init(self, locals())

    def __sklearn_tags__(self):  # a binary classifier (the fairness notions' label cells)
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    @fit_context(validate_nested=True)  # the base model validates its own
    def fit(
        self, X: Any, y: Any = None, *, sensitive_features: Any
    ) -> WassersteinBarycenterClassifier:
        """Fit the base classifier (unless ``prefit``) and the group thresholds."""
        strength = float(self.strength)  # fit_context checked it
        X = validate_data(self, X, dtype=None, ensure_min_samples=2)
        codes, self.groups_ = check_fit_groups(X, sensitive_features)
        self.n_features_in_ = X.shape[1]
        self._seed = draw_fit_seed(self.random_state)
        classes, y = (None, None) if self.prefit else encode_binary_labels(y, "y")
        calib = fit_or_calibration_split(
            self, X, y, codes, self._seed, self.groups_, sensitive=self.groups_[codes]
        )
        self.classes_ = np.asarray(self.estimator_.classes_) if classes is None else classes
        scores = self._scores(X[calib])
        codes = codes[calib]
        k = len(self.groups_)
        if np.any(np.bincount(codes, minlength=k) == 0):
            raise ValueError("every group needs calibration rows; use more data.")
        self.weights_ = np.bincount(codes, minlength=k) / len(codes)
        desc = [np.sort(scores[codes == g])[::-1] for g in range(k)]
        self.rates_ = _optimal_rates(desc, self.weights_, strength)
        self.thresholds_, self.tie_probability_ = _thresholds(desc, self.rates_)
        return self

    def _scores(self, X: np.ndarray) -> np.ndarray:
        if not hasattr(self.estimator_, "predict_proba"):
            raise TypeError("`estimator` must have predict_proba (calibrated scores).")
        proba = np.asarray(self.estimator_.predict_proba(X), dtype=np.float64)
        if proba.ndim != 2 or proba.shape[1] != 2:
            raise ValueError("`estimator` must be a binary classifier (predict_proba (n, 2)).")
        return proba[:, 1]

    def predict_acceptance(self, X: Any, *, sensitive_features: Any) -> np.ndarray:
        """Probability that the randomized classifier predicts 1, shape (n,)."""
        check_is_fitted(self, "thresholds_")
        X = validate_data(self, X, dtype=None, reset=False)
        codes = encode_fitted_groups(sensitive_features, self.groups_, len(X))
        scores = self._scores(X)
        t, gamma = self.thresholds_[codes], self.tie_probability_[codes]
        return (scores > t).astype(np.float64) + gamma * (scores == t)

    def predict(self, X: Any, *, sensitive_features: Any) -> np.ndarray:
        """Seeded randomized predictions (labels of ``classes_``), shape (n,)."""
        accept = self.predict_acceptance(X, sensitive_features=sensitive_features)
        rng = np.random.default_rng([self._seed, 1])
        return self.classes_[(rng.uniform(size=len(accept)) < accept).astype(np.int64)]

    def score(
        self, X: Any, y: Any, sample_weight: Any = None, *, sensitive_features: Any = None
    ) -> float:
        """Return the accuracy of :meth:`predict` on ``X`` (its groups ``sensitive_features``)."""
        from sklearn.metrics import accuracy_score

        return grouped_score(self, X, y, sample_weight, sensitive_features, accuracy_score)


def _error_curve(q: np.ndarray, rates: np.ndarray) -> np.ndarray:
    """Group error minus E[f | S = s] when accepting the top ``rates`` share (q decreasing)."""
    n = len(q)
    cum = np.r_[0.0, np.cumsum(1.0 - 2.0 * q)] / n  # exact at rates 0, 1/n, ..., 1
    return np.interp(rates, np.arange(n + 1) / n, cum)  # linear in between (randomization)


def _optimal_rates(desc: list[np.ndarray], weights: np.ndarray, strength: float) -> np.ndarray:
    """Rates minimizing the weighted error under max - min <= alpha (closed form in c)."""
    free = np.array([np.mean(q > 0.5) for q in desc])
    alpha = (1.0 - strength) * (free.max() - free.min())
    grid = np.unique(np.r_[np.linspace(0.0, 1.0, _GRID), free, np.clip(free - alpha, 0, 1)])
    grid = grid[grid <= 1.0 - alpha + 1e-15]
    rates = np.clip(free[:, None], grid[None, :], grid[None, :] + alpha)  # (k, len(grid))
    err = np.zeros(len(grid))
    for g, q in enumerate(desc):
        err += weights[g] * _error_curve(q, rates[g])
    return rates[:, int(np.argmin(err))]


def _thresholds(desc: list[np.ndarray], rates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-group threshold and tie probability giving exactly ``rates`` on the calibration set."""
    t, gamma = np.empty(len(desc)), np.empty(len(desc))
    for g, (q, r) in enumerate(zip(desc, rates, strict=True)):
        m = r * len(q)
        if m <= 1e-12:
            t[g], gamma[g] = np.inf, 0.0
            continue
        t[g] = q[min(int(np.ceil(m - 1e-9)), len(q)) - 1]
        above, tied = np.sum(q > t[g]), np.sum(q == t[g])
        gamma[g] = np.clip((m - above) / tied, 0.0, 1.0)
    return t, gamma
