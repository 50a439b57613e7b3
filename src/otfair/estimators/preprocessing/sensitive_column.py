"""Adapters that read the sensitive attribute from a column of ``X``.

``otfair fit`` calls ``predict_proba(X)`` / ``predict(X)`` without the sensitive attribute,
so methods that need it at predict time get it appended as the last column
(``sensitive_as_input=True``), as AdapFair(Aware) and fair-nf do. These adapters take it
from there (or from ``sensitive_features=`` when given) and drop it from the features:

* :class:`RepairedClassifier` — a fair transformer (``OTRepair``, ``FairPCA``) fitted with
  the groups, then a classifier on its output (registry: ``ot-repair``, ``fair-pca``);
* :class:`SensitiveColumnEstimator` — an estimator whose ``fit`` / ``predict`` take
  ``sensitive_features=`` (the barycenter post-processors ``wb-postprocess``,
  ``wb-regression``); for a classifier with ``predict_acceptance`` its ``predict_proba``
  is (1 - acceptance, acceptance).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from otfair.utils import SENSITIVE_COLUMN, HasMethods, fit_context, set_params_from_init

__all__ = ["RepairedClassifier", "SensitiveColumnEstimator", "split_sensitive_column"]


def _check_input(est: Any, X: Any, *, reset: bool) -> np.ndarray:
    """Return ``X`` checked by scikit-learn's ``validate_data`` (numeric, 2-D, finite).

    Sets (``reset``; a fit needs two samples) or checks ``n_features_in_``, so the
    adapters give scikit-learn's errors for sparse, empty, 1-D or NaN input.
    """
    if reset:
        return validate_data(est, X, ensure_min_samples=2)
    return validate_data(est, X, reset=False)


def split_sensitive_column(
    X: Any, sensitive_features: Any, column: int | None, *, required: bool = True
) -> tuple[np.ndarray, Any]:
    """Return ``X`` without the sensitive column and the sensitive attribute.

    With ``column`` None, ``X`` is returned as is with ``sensitive_features`` (required
    unless ``required=False``); otherwise the column (negative indices count from the
    end) is dropped and, when ``sensitive_features`` is None, read as the attribute.
    """
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"`X` must be 2-D; got shape {X.shape}.")
    if column is None:
        if sensitive_features is None and required:
            raise ValueError("`sensitive_features` is required when `sensitive_column` is None.")
        return X, sensitive_features
    if X.shape[1] < 2:
        raise ValueError("`X` needs the sensitive column and at least one feature.")
    col = int(column) % X.shape[1]
    if sensitive_features is None:
        sensitive_features = X[:, col]
    return np.delete(X, col, axis=1), sensitive_features


class RepairedClassifier(ClassifierMixin, BaseEstimator):
    """A fair transformer fitted with the groups, then a classifier on its output.

    Parameters
    ----------
    repair : transformer
        Fitted as ``repair.fit(X, y, sensitive_features=S)`` and applied as
        ``repair.transform(X, sensitive_features=S)`` (cloned).
    estimator : classifier
        Fitted on the transformed features (cloned).
    sensitive_column : int or None, default=-1
        Column of ``X`` holding the sensitive attribute (dropped from the features); read
        when ``sensitive_features`` is not given. ``None``: ``X`` has no such column.
    """

    _parameter_constraints: dict[str, list[Any]] = {
        "repair": [HasMethods(["fit", "transform"])],
        "estimator": [HasMethods(["fit", "predict"])],
        "sensitive_column": SENSITIVE_COLUMN,
    }

    def __init__(self, repair: Any, estimator: Any, *, sensitive_column: int | None = -1):
        set_params_from_init(self, locals())

    @fit_context(validate_nested=True)  # the user's repair and estimator validate theirs
    def fit(self, X: Any, y: Any, *, sensitive_features: Any = None) -> RepairedClassifier:
        """Fit the transformer with the groups, then the classifier on its output."""
        X = _check_input(self, X, reset=True)
        X, s = split_sensitive_column(X, sensitive_features, self.sensitive_column)
        # ``y`` too: a transformer may fit on labels (FairPCA's notion="eopp": Y = 1 rows)
        self.repair_ = clone(self.repair).fit(X, y, sensitive_features=s)
        Z = self.repair_.transform(X, sensitive_features=s)
        self.estimator_ = clone(self.estimator).fit(Z, y)
        self.classes_ = self.estimator_.classes_
        return self

    def _transform(self, X: Any, sensitive_features: Any) -> np.ndarray:
        check_is_fitted(self, "estimator_")
        X = _check_input(self, X, reset=False)
        X, s = split_sensitive_column(X, sensitive_features, self.sensitive_column, required=False)
        if s is None:  # a group-blind transformer (FairPCA) without a sensitive column
            return self.repair_.transform(X)
        return self.repair_.transform(X, sensitive_features=s)

    def predict_proba(self, X: Any, *, sensitive_features: Any = None) -> np.ndarray:
        """Class probabilities of the classifier on the transformed features."""
        Z = self._transform(X, sensitive_features)  # checks the fit first
        return self.estimator_.predict_proba(Z)

    def predict(self, X: Any, *, sensitive_features: Any = None) -> np.ndarray:
        """Predictions of the classifier on the transformed features."""
        Z = self._transform(X, sensitive_features)  # checks the fit first
        return self.estimator_.predict(Z)


class SensitiveColumnEstimator(BaseEstimator):
    """Run an estimator that takes ``sensitive_features=`` on ``X`` carrying it as a column.

    Parameters
    ----------
    estimator : estimator
        ``fit(X, y, *, sensitive_features)`` and ``predict(X, *, sensitive_features)``;
        cloned.
    sensitive_column : int or None, default=-1
        Column of ``X`` holding the sensitive attribute (dropped from the features); read
        when ``sensitive_features`` is not given. ``None``: ``X`` has no such column and
        ``sensitive_features`` is required.
    """

    _parameter_constraints: dict[str, list[Any]] = {
        "estimator": [HasMethods(["fit"])],
        "sensitive_column": SENSITIVE_COLUMN,
    }

    def __init__(self, estimator: Any, *, sensitive_column: int | None = -1):
        set_params_from_init(self, locals())

    @fit_context(validate_nested=True)  # the user's estimator validates its own
    def fit(self, X: Any, y: Any, *, sensitive_features: Any = None) -> SensitiveColumnEstimator:
        """Fit the wrapped estimator on ``X`` without the sensitive column."""
        X = _check_input(self, X, reset=True)
        if y is not None:
            y = column_or_1d(y, warn=True)  # a column vector warns, as in scikit-learn
        X, s = split_sensitive_column(X, sensitive_features, self.sensitive_column)
        self.estimator_ = clone(self.estimator).fit(X, y, sensitive_features=s)
        if hasattr(self.estimator_, "classes_"):
            self.classes_ = self.estimator_.classes_
        return self

    def predict(self, X: Any, *, sensitive_features: Any = None) -> np.ndarray:
        """Predictions of the wrapped estimator."""
        check_is_fitted(self, "estimator_")
        X = _check_input(self, X, reset=False)
        X, s = split_sensitive_column(X, sensitive_features, self.sensitive_column)
        return self.estimator_.predict(X, sensitive_features=s)

    @available_if(
        lambda self: any(
            hasattr(self.estimator, name) for name in ("predict_proba", "predict_acceptance")
        )
    )
    def predict_proba(self, X: Any, *, sensitive_features: Any = None) -> np.ndarray:
        """(1 - p, p), p the wrapped classifier's acceptance probability, shape (n, 2)."""
        check_is_fitted(self, "estimator_")
        X = _check_input(self, X, reset=False)
        X, s = split_sensitive_column(X, sensitive_features, self.sensitive_column)
        if hasattr(self.estimator_, "predict_acceptance"):
            p = np.asarray(self.estimator_.predict_acceptance(X, sensitive_features=s), float)
            return np.column_stack([1.0 - p, p])
        return self.estimator_.predict_proba(X, sensitive_features=s)

    def score(self, X: Any, y: Any, *, sensitive_features: Any = None) -> float:
        """Accuracy (classifier) or R^2 (regressor) of :meth:`predict`."""
        from sklearn.base import is_regressor
        from sklearn.metrics import accuracy_score, r2_score

        pred = self.predict(X, sensitive_features=sensitive_features)
        return float((r2_score if is_regressor(self.estimator) else accuracy_score)(y, pred))

    def __sklearn_tags__(self):  # classifier or regressor as the wrapped estimator
        tags = super().__sklearn_tags__()
        inner = self.estimator.__sklearn_tags__()
        tags.estimator_type = inner.estimator_type
        tags.classifier_tags = inner.classifier_tags
        tags.regressor_tags = inner.regressor_tags
        return tags
