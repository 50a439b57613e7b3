r"""Fair regression by post-processing to the Wasserstein barycenter (Chzhen et al. 2020).

Chzhen, Denis, Hebiri, Oneto and Pontil, "Fair Regression with Wasserstein Barycenters",
NeurIPS 2020, §3 and Algorithm 1; the relaxed version follows Chzhen and Schreuder (2022)
and several attributes are handled sequentially as in Hu, Ratz and Charpentier (2024,
the EquiPy package). See ``docs/baselines.md``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from numbers import Real
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from otfair.estimators._docs import fill_estimator_doc
from otfair.estimators._quantile_barycenter import (
    GroupQuantiles,
    draw_fit_seed,
    encode_fitted_groups,
    fit_or_calibration_split,
    grouped_score,
)
from otfair.utils import (
    HasMethods,
    Interval,
    StrOptions,
    check_finite_1d,
    check_strength,
    encode_groups,
    fit_context,
    set_params_from_init,
)
from otfair.utils._validation import _to_numpy
from otfair.utils._warnings import user_stacklevel

__all__ = ["WassersteinBarycenterRegressor"]


@fill_estimator_doc
class WassersteinBarycenterRegressor(MetaEstimatorMixin, RegressorMixin, BaseEstimator):
    r"""Post-process a regressor to demographic parity via the Wasserstein barycenter.

    With base predictions :math:`f(x)` and, for every group :math:`s`, the empirical
    CDF :math:`\hat F_s` and quantile function :math:`\hat Q_s` of the *jittered*
    calibration predictions :math:`f(x_i) + \varepsilon_i`,
    :math:`\varepsilon_i \sim \mathcal U(-\sigma, \sigma)`, the fair prediction is
    (Chzhen et al. 2020, eq. (6), Algorithm 1)

    .. math::

        g(x, s) = \sum_{s'} \hat p_{s'}\, \hat Q_{s'}\big(\hat F_s(f(x) + \varepsilon)\big),

    the optimal transport of group :math:`s`'s prediction distribution to the
    :math:`W_2` barycenter of all groups' (:math:`\hat p_{s'}` = calibration group
    shares). The distribution of :math:`g` is then the same in every group (exact
    demographic parity in distribution); the jitter breaks ties. The relaxed version with
    ``strength`` :math:`\lambda \in [0, 1]` follows the :math:`W_2` geodesic,
    :math:`g_\lambda = (1 - \lambda) f + \lambda g`, the risk-optimal interpolation for
    the relative-improvement fairness level (Chzhen & Schreuder 2022).

    Several sensitive attributes (columns of ``sensitive_features``) are handled
    sequentially as EquiPy does (Hu, Ratz & Charpentier 2024): attribute :math:`j` is
    equalized within every combination of the attributes :math:`j+1, \dots, k`, then the
    next attribute on the result; the last one globally.

    Parameters
    ----------
    estimator : sklearn regressor
        Base regressor :math:`f`.
    strength : float or sequence of float, default=1.0
        :math:`\lambda \in [0, 1]` (one per attribute, or one for all); 1 is exact DP, 0
        returns the base predictions. (EquiPy's ``epsilon`` is :math:`1 - \lambda`.)
    sigma : float, default=1e-4
        Half-width of the uniform jitter (in the units of the predictions): small
        against their spread; ``fit`` warns when it exceeds 1% of the base predictions'
        standard deviation (targets on a small scale need a smaller one).
    prefit : bool, default=False
        If True, ``estimator`` is already fitted and all of ``X`` is calibration data
        (``y`` unused). If False, a clone is fitted on a random part of the data and the
        rest (``calibration_fraction``) is the calibration set.
    calibration_fraction : float, default=0.5
        Share of the rows used for calibration when ``prefit=False`` (in (0, 1)).
    quantile_method : str, default="linear"
        :func:`numpy.quantile` method of :math:`\hat Q_s`: ``"linear"`` (EquiPy) or
        ``"inverted_cdf"`` (the generalized inverse of the paper).
    random_state : int, RandomState, Generator or None, default=None
        Seeds the split and the jitter (``predict`` is reproducible); one seed is drawn
        from it at fit time, numpy's global generator is never used.

    Attributes
    ----------
    estimator_ : fitted regressor
    groups_ : list of ndarray
        The groups of every sensitive attribute.
    calibration_predictions_ : ndarray
        Fair predictions (full strength) of the calibration rows, with the jitter drawn at
        fit time: for one attribute, their group distributions differ by at most
        ``1 / min_s n_s`` in Kolmogorov-Smirnov distance.
    calibration_sensitive_ : ndarray
        The sensitive attributes of those rows.

    See Also
    --------
    otfair.estimators.WassersteinBarycenterClassifier
        The same post-processing for classifier scores.
    otfair.estimators.WassersteinNet : Fair training of a regression net.

    Notes
    -----
    Cost: with :math:`n` calibration rows, ``fit`` sorts every group's values once,
    :math:`O(n \log n)`, and maps the calibration rows, :math:`O(k\,n + n \log n)` for
    :math:`k` groups; ``predict`` on :math:`m` rows costs
    :math:`O(k\,m + m \log m + m \log n)` per attribute (the rows sorted, a binary
    search for :math:`\hat F_s`, an index into the sorted values for every
    :math:`\hat Q_{s'}`), plus the base model. Memory :math:`O(n + m)`.

    References
    ----------
    .. [1] Chzhen, E., Denis, C., Hebiri, M., Oneto, L. and Pontil, M. *Fair Regression
       with Wasserstein Barycenters*. NeurIPS 2020.

    {examples_regression}
    >>> from otfair.estimators import WassersteinBarycenterRegressor
    >>> from sklearn.linear_model import LinearRegression
    >>> reg = WassersteinBarycenterRegressor(LinearRegression(), random_state=0)
    >>> reg.fit(X, y, sensitive_features=s).predict(X, sensitive_features=s).shape
    (200,)
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "estimator": [HasMethods(["fit", "predict"])],
        "strength": [Interval(Real, 0, 1, closed="both"), "array-like"],
        "sigma": [Interval(Real, 0, None, closed="left")],
        "prefit": ["boolean"],
        "calibration_fraction": [Interval(Real, 0, 1, closed="neither")],
        "quantile_method": [StrOptions({"linear", "inverted_cdf"})],
        "random_state": ["random_state", np.random.Generator],
    }

    def __init__(
        self,
        estimator: Any,
        *,
        strength: float | Sequence[float] = 1.0,
        sigma: float = 1e-4,
        prefit: bool = False,
        calibration_fraction: float = 0.5,
        quantile_method: str = "linear",
        random_state: Any = None,
    ) -> None:
        set_params_from_init(self, locals())

    @fit_context(validate_nested=True)  # the base model validates its own
    def fit(
        self, X: Any, y: Any = None, *, sensitive_features: Any
    ) -> WassersteinBarycenterRegressor:
        """Fit the base regressor (unless ``prefit``) and the barycenter maps.

        Parameters
        ----------
        X : array-like of shape (n, d)
        y : array-like of shape (n,) or None
            Targets; required when ``prefit=False``.
        sensitive_features : array-like of shape (n,) or (n, k)
            One column per sensitive attribute.
        """
        if not np.isfinite(self.sigma):
            raise ValueError(f"`sigma` must be a finite number >= 0; got {self.sigma!r}.")
        X = validate_data(self, X, dtype=None, ensure_all_finite=True, ensure_min_samples=2)
        sens = _as_columns(sensitive_features, len(X))
        self.groups_, codes = [], []
        for j in range(sens.shape[1]):
            c, g = encode_groups(sens[:, j], f"sensitive_features[:, {j}]")
            self.groups_.append(g)
            codes.append(c)
        codes_arr = np.stack(codes, axis=1)
        self._strengths(sens.shape[1])
        self._seed = draw_fit_seed(self.random_state)
        if not (self.prefit or y is None):
            y = check_finite_1d(column_or_1d(y, warn=True), "y")
        calib = fit_or_calibration_split(
            self, X, y, codes_arr[:, 0], self._seed, self.groups_[0], sensitive=_original(sens)
        )
        self.n_features_in_ = X.shape[1]
        pred = np.asarray(self.estimator_.predict(X[calib]), dtype=np.float64).ravel()
        warn_jitter_scale(self.sigma, pred)
        rng = np.random.default_rng([self._seed, 0])
        self.steps_, fair = [], pred.copy()
        for j in range(codes_arr.shape[1]):
            step, fair = self._fit_step(fair, codes_arr[calib], j, rng)
            self.steps_.append(step)
        self.calibration_predictions_ = fair
        self.calibration_sensitive_ = sens[calib]
        self.calibration_index_ = calib
        return self

    def _fit_step(
        self, pred: np.ndarray, codes: np.ndarray, j: int, rng: np.random.Generator
    ) -> tuple[dict[tuple[int, ...], Any], np.ndarray]:
        """Barycenter maps of attribute ``j`` within every stratum of the later attributes."""
        step: dict[tuple[int, ...], Any] = {}
        out = pred.copy()
        for key, rows in _strata(codes[:, j + 1 :]).items():
            present, local = _local_codes(codes[rows, j])
            if len(present) < 2:
                step[key] = (present, None)
                continue
            jittered = pred[rows] + rng.uniform(-self.sigma, self.sigma, size=len(rows))
            maps = GroupQuantiles(
                jittered, local, len(present), quantile_method=self.quantile_method
            )
            step[key] = (present, maps)
            out[rows] = maps.to_barycenter(jittered, local)
        return step, out

    def score(
        self, X: Any, y: Any, sample_weight: Any = None, *, sensitive_features: Any = None
    ) -> float:
        """Return the :math:`R^2` of :meth:`predict` on ``X`` (groups ``sensitive_features``)."""
        from sklearn.metrics import r2_score

        return grouped_score(self, X, y, sample_weight, sensitive_features, r2_score)

    def _strengths(self, k: int) -> list[float]:
        raw = self.strength
        values = [raw] * k if np.ndim(raw) == 0 else list(raw)
        if len(values) != k:
            raise ValueError(
                f"`strength` has {len(values)} values but there are {k} sensitive attributes."
            )
        return [check_strength(v, maximum=1.0) for v in values]

    def predict(self, X: Any, *, sensitive_features: Any) -> np.ndarray:
        r"""Return the fair predictions :math:`g_\lambda(x, s)`, shape (n,)."""
        check_is_fitted(self, "steps_")
        X = validate_data(self, X, dtype=None, ensure_all_finite=True, reset=False)
        pred = np.asarray(self.estimator_.predict(X), dtype=np.float64).ravel()
        return self.transform_predictions(pred, sensitive_features=sensitive_features)

    def transform_predictions(self, pred: Any, *, sensitive_features: Any) -> np.ndarray:
        """Apply the fitted maps to base predictions ``pred`` (shape (n,))."""
        check_is_fitted(self, "steps_")
        pred = check_finite_1d(pred, "pred")
        sens = _as_columns(sensitive_features, len(pred))
        if sens.shape[1] != len(self.groups_):
            raise ValueError(
                f"`sensitive_features` has {sens.shape[1]} columns; fitted with "
                f"{len(self.groups_)}."
            )
        codes = np.stack(
            [encode_fitted_groups(sens[:, j], g, len(pred)) for j, g in enumerate(self.groups_)],
            axis=1,
        )
        strengths = self._strengths(len(self.groups_))
        rng = np.random.default_rng([self._seed, 1])
        out = pred.copy()
        for j, step in enumerate(self.steps_):
            new = out.copy()
            for key, rows in _strata(codes[:, j + 1 :]).items():
                if key not in step:
                    raise ValueError(
                        f"`sensitive_features`: a combination of attributes {j + 1}.. "
                        "was not seen during fit."
                    )
                present, maps = step[key]
                lookup = np.full(len(self.groups_[j]), -1, dtype=np.int64)
                lookup[present] = np.arange(len(present))
                local = lookup[codes[rows, j]]
                if np.any(local < 0):
                    raise ValueError(
                        f"`sensitive_features[:, {j}]` has a group not seen in its stratum "
                        "during fit."
                    )
                if maps is None:
                    continue
                jit = out[rows] + rng.uniform(-self.sigma, self.sigma, size=len(rows))
                new[rows] = maps.to_barycenter(jit, local)
            out = strengths[j] * new + (1.0 - strengths[j]) * out
        return out


#: the jitter's half-width may be at most this share of the predictions' standard
#: deviation before :func:`warn_jitter_scale` warns
MAX_JITTER_SHARE = 0.01


def warn_jitter_scale(sigma: float, pred: np.ndarray) -> None:
    """Warn when the jitter ``sigma`` is not small against the spread of the predictions.

    ``sigma`` is in the units of the predictions (default 1e-4, for targets of order 1):
    on targets a million times smaller it swamps them and the fair predictions are the
    jitter's quantiles. The message names the value that keeps its share.
    """
    spread = float(np.std(pred))
    if spread > 0 and sigma > MAX_JITTER_SHARE * spread:
        warnings.warn(
            f"WassersteinBarycenterRegressor: the jitter sigma={sigma:g} is "
            f"{sigma / spread:.3g} times the standard deviation of the base predictions "
            f"({spread:.3g}); it would swamp them. `sigma` is in the units of the "
            f"predictions: pass sigma={1e-4 * spread:.3g} (1e-4 of their spread), or "
            "rescale the targets.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )


def _original(sens: np.ndarray) -> np.ndarray:
    """Return the sensitive features as given to ``fit``: one column as a 1-D array."""
    return sens[:, 0] if sens.shape[1] == 1 else sens


def _as_columns(sensitive_features: Any, n: int) -> np.ndarray:
    if sensitive_features is None:
        raise ValueError("`sensitive_features` is required (pass it as a keyword).")
    arr = _to_numpy(sensitive_features, "sensitive_features")
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"`sensitive_features` must be (n,) or (n, k); got {arr.shape}.")
    if len(arr) != n:
        raise ValueError(f"`sensitive_features` has {len(arr)} rows but `X` has {n} samples.")
    return arr


def _local_codes(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return the codes present (sorted) and each row's index among them, O(n), codes >= 0."""
    counts = np.bincount(codes)
    present = np.flatnonzero(counts)
    lookup = np.cumsum(counts > 0) - 1
    return present, lookup[codes]


def _strata(codes: np.ndarray) -> dict[tuple[int, ...], np.ndarray]:
    """Rows of every distinct row of ``codes`` (one stratum when there are no columns)."""
    if codes.shape[1] == 0:
        return {(): np.arange(len(codes))}
    keys, inverse = np.unique(codes, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    return {tuple(int(v) for v in k): np.flatnonzero(inverse == i) for i, k in enumerate(keys)}
