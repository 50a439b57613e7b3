"""Reduction baseline: fairlearn's exponentiated gradient around logistic regression."""

from __future__ import annotations

import contextlib
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression
from sklearn.utils.validation import check_is_fitted, validate_data

from otfair.estimators._torch_base import encode_binary_labels
from otfair.notions import as_notion
from otfair.utils import (
    RANDOM_STATE,
    Interval,
    StrOptions,
    check_consistent_length,
    draw_seed,
    encode_groups,
    fit_context,
    local_random_state,
    set_params_from_init,
)
from otfair.utils._warnings import quiet_fairlearn_deprecations

#: the prediction rules of :class:`ReductionClassifier`
PREDICTIONS = ("randomized", "deterministic")


class ReductionClassifier(ClassifierMixin, BaseEstimator):
    r"""Exponentiated-gradient reduction (Agarwal et al. 2018) via fairlearn.

    Solves :math:`\min_Q \mathrm{err}(Q)` s.t. :math:`|\gamma(Q)| \le \epsilon` over
    randomized classifiers :math:`Q` (mixtures of logistic regressions) with
    :class:`fairlearn.reductions.ExponentiatedGradient` and the
    ``DemographicParity`` / ``EqualizedOdds`` moment (the "Reduction" baseline of
    Kim et al., TMLR 2024, App. D.2; the paper used a torch version).

    :meth:`predict_proba` returns the mixture's *expected* positive probability
    :math:`p(x) = \sum_t Q_t h_t(x)` with :math:`h_t(x) \in \{0, 1\}` the base models'
    labels (fairlearn's ``_pmf_predict``): the probability that the randomized classifier
    predicts 1, a step function of few values, not a calibrated :math:`P(Y = 1 \mid x)`
    (its log-loss is not a model's, and its AUC ranks few distinct values).
    :meth:`predict` is, by default, fairlearn's
    randomized prediction: :math:`\hat y = 1` iff :math:`p(x) \ge u` with
    :math:`u \sim U[0, 1)` drawn per row, so that :math:`P(\hat y = 1 \mid x) = p(x)`
    and the constraint :math:`|\gamma(Q)| \le \epsilon` that exponentiated gradient
    guarantees for :math:`Q` holds for the predictions themselves (Agarwal et al. 2018,
    §3). ``prediction="deterministic"`` thresholds :math:`p(x) \ge 0.5` instead:
    reproducible per row, but without that guarantee (the thresholded labels' violation
    can exceed ``eps``).

    Parameters
    ----------
    eps : float, default=0.01
        Allowed constraint violation (smaller is fairer); the method's strength.
    notion : {"dp", "eo"}, default="dp"
    max_iter : int, default=50
        Iterations of exponentiated gradient.
    C : float, default=1.0
        Inverse L2 strength of the base logistic regression.
    prediction : {"randomized", "deterministic"}, default="randomized"
        How :meth:`predict` turns the mixture into labels (see above). Reported by
        ``get_params()`` and, after ``fit``, by ``prediction_``.
    random_state : int, RandomState or None
        Seeds the base learner (the fitted mixture is deterministic given it) and the
        randomized predictions, exactly as fairlearn's
        ``ExponentiatedGradient.predict(X, random_state=random_state)``: with an int, every
        call of :meth:`predict` returns the same labels.

    Attributes
    ----------
    mitigator_ : fairlearn.reductions.ExponentiatedGradient
    prediction_ : str
        The prediction rule this fit uses (``"randomized"`` or ``"deterministic"``).

    See Also
    --------
    otfair.estimators.FairClassifier : A fairness penalty in the training loss (OTF, FTM, GapReg).
    otfair.estimators.WassersteinBarycenterClassifier
        Post-processing of a trained classifier's scores.

    References
    ----------
    .. [1] Agarwal, A., Beygelzimer, A., Dudík, M., Langford, J. and Wallach, H. *A
       Reductions Approach to Fair Classification*. ICML 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from otfair.estimators import ReductionClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); s = rng.integers(0, 2, 200)
    >>> y = (X[:, 0] + s + rng.normal(size=200) > 0.5).astype(int)
    >>> clf = ReductionClassifier(eps=0.05, max_iter=10, random_state=0)
    >>> clf.fit(X, y, sensitive_features=s).predict_proba(X).shape
    (200, 2)
    """

    _parameter_constraints: dict = {
        "eps": [Interval(Real, 0, None, closed="neither")],
        "notion": [StrOptions({"dp", "eo"})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "C": [Interval(Real, 0, None, closed="neither")],
        "prediction": [StrOptions(set(PREDICTIONS))],
        "random_state": RANDOM_STATE,
    }

    def __init__(
        self,
        eps: float = 0.01,
        *,
        notion: str = "dp",
        max_iter: int = 50,
        C: float = 1.0,
        prediction: str = "randomized",
        random_state: Any = None,
    ) -> None:
        set_params_from_init(self, locals())

    @fit_context
    def fit(self, X: Any, y: Any, *, sensitive_features: Any) -> ReductionClassifier:
        """Fit the randomized classifier; returns ``self``."""
        from fairlearn.reductions import (
            DemographicParity,
            EqualizedOdds,
            ExponentiatedGradient,
        )

        # eps > 0 and prediction in PREDICTIONS: _parameter_constraints, checked on entry
        notion = as_notion(self.notion, allowed=("dp", "eo"))
        with contextlib.suppress(TypeError):  # inputs without a length: validate_data's words
            check_consistent_length(X=X, y=y)
        X, y = validate_data(self, X, y, dtype=np.float64)
        classes, y = encode_binary_labels(y, "y")
        if sensitive_features is None:
            raise ValueError("`sensitive_features` is required.")
        codes, _ = encode_groups(sensitive_features, "sensitive_features")
        if codes.shape[0] != X.shape[0]:
            raise ValueError(
                f"`sensitive_features` has {codes.shape[0]} rows but X has {X.shape[0]}."
            )
        seed = draw_seed(self.random_state)
        # fairlearn >= 0.5: the allowed violation is the moment's `difference_bound`;
        # ExponentiatedGradient's `eps` only bounds the multipliers' L1 norm (1 / eps).
        # Without it every eps targets a zero violation (one model for the whole grid).
        moment_cls = EqualizedOdds if notion.requires_labels else DemographicParity
        moment = moment_cls(difference_bound=self.eps)
        base = LogisticRegression(C=self.C, max_iter=1000, random_state=seed)
        self.mitigator_ = ExponentiatedGradient(
            base, constraints=moment, eps=self.eps, max_iter=self.max_iter
        )
        with quiet_fairlearn_deprecations():  # pandas 3's, about fairlearn's own lines
            self.mitigator_.fit(X, y, sensitive_features=codes)
        self.classes_ = classes
        self.prediction_ = self.prediction
        return self

    def __sklearn_tags__(self):  # a binary classifier (the fairness notions' label cells)
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def predict_proba(self, X: Any) -> np.ndarray:
        r"""Return the probability that the randomized classifier predicts each class, (n, 2).

        A mixture of the base models' labels (class docstring), not a calibrated
        :math:`P(Y \mid x)`.
        """
        check_is_fitted(self, "mitigator_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        pmf = np.asarray(self.mitigator_._pmf_predict(X), dtype=np.float64)
        # A convex mixture of probabilities can leave [0, 1] by ~1e-16 in rounding.
        p1 = np.clip(pmf[:, 1], 0.0, 1.0)
        return np.column_stack([1.0 - p1, p1])

    def predict(self, X: Any) -> np.ndarray:
        """Return labels of ``classes_``: randomized (``p >= u``, seeded) or ``p >= 0.5``."""
        check_is_fitted(self, "mitigator_")
        if self.prediction_ == "deterministic":
            return self.classes_[(self.predict_proba(X)[:, 1] >= 0.5).astype(np.int64)]
        # fairlearn's ExponentiatedGradient.predict: one uniform draw per row, compared
        # with the (unclipped) mixture probability
        X = validate_data(self, X, dtype=np.float64, reset=False)
        p1 = np.asarray(self.mitigator_._pmf_predict(X), dtype=np.float64)[:, 1]
        u = local_random_state(self.random_state).rand(p1.shape[0])
        return self.classes_[(p1 >= u).astype(np.int64)]
