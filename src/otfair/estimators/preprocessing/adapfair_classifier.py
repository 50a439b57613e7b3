r"""AdapFair's scenarios (Huang et al., 2024, §IV) as one estimator: base classifier + flows.

:class:`AdapFairClassifier` is what ``otfair fit --method adapfair|adapfair-blind`` runs:

- **standard** (§IV-A): a base classifier (MLP with two hidden layers of 20 units, plain
  cross-entropy, App. A-D2) is trained on the training data, frozen, and AdapFair's flows
  are trained in front of it on the same data;
- **data drift** (§IV-B): ``fit(..., source_data=(X_src, y_src, s_src))`` trains the base
  classifier on the source domain and the flows on the target domain;
- **new fairness notion** (§IV-C): ``base_penalty="gapreg"`` with ``base_notion="eo"``
  trains the base classifier for equalized odds (the Gap-Reg penalty of
  :mod:`otfair.penalties`, applied within each label), then the flows adapt it to
  ``notion`` (e.g. ``"dp"``);
- **blind deployment** (§III-D): ``mode="blind"``.

An already trained classifier can be passed as ``base_classifier`` instead.
"""

from __future__ import annotations

import warnings
from dataclasses import KW_ONLY, dataclass
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted, validate_data

from otfair.estimators._docs import fill_estimator_doc
from otfair.estimators._path import check_strengths
from otfair.estimators._torch_base import TorchEstimatorMixin, check_against_constant
from otfair.estimators._training import predict_from_proba
from otfair.estimators.preprocessing.adapfair import AdapFairPreprocessor, FlowParams
from otfair.estimators.preprocessing.adapfair_base import (
    BASE_PENALTIES,
    RENAMED_PENALTIES,
    train_base_classifier,
)
from otfair.notions import Notion
from otfair.penalties._group_wasserstein import DISTANCES
from otfair.utils import (
    SENSITIVE_COLUMN,
    StrOptions,
    check_features,
    check_values,
    fit_context,
    non_negative_real,
    positive_int,
)
from otfair.utils._deprecation import LAM_DOC, renamed_param, renamed_value
from otfair.utils._docstrings import fill_doc
from otfair.utils._torch import TORCH_READY, fits_in_training_state

#: The parameters that AdapFairClassifier passes on to its AdapFairPreprocessor.
_FLOW_PARAMS = tuple(k for k in AdapFairPreprocessor._get_param_names() if k != "classifier")


@fill_estimator_doc
@fill_doc(lam=LAM_DOC)
@dataclass(eq=False, repr=False)
class AdapFairClassifier(TorchEstimatorMixin, ClassifierMixin, BaseEstimator, FlowParams):
    r"""Frozen base classifier + AdapFair flows: the paper's full pipeline (§IV).

    Parameters
    ----------
    base_classifier : torch module, scikit-learn or otfair classifier, optional
        A trained classifier to keep frozen. ``None`` trains one in :meth:`fit` with
        :func:`train_base_classifier` (on ``source_data`` when given).
    output : {"logits", "probability"}, default="logits"
        What a torch ``base_classifier`` returns.
    mode, notion, strength, distance, sinkhorn_eps, n_blocks, hidden, epochs, batch_size, lr
        Passed to :class:`~otfair.estimators.AdapFairPreprocessor` (``strength`` is the
        paper's :math:`\lambda \in [0, 1]`, the weight of the cross-entropy). ``strength``
        is a number; the trade-off curve over several values is
        :func:`otfair.estimators.fairness_path`, whose models share one frozen base
        classifier (trained once) and each have their own flows. Each model equals the
        separate fit with the same seed and ``strength``.
    early_stopping, validation_fraction, n_iter_no_change, tol
        Passed to :class:`~otfair.estimators.AdapFairPreprocessor`: by default the flows
        stop when their objective on a held-out 10% of the rows stops improving, and keep
        their best epoch (``early_stopping=False``: every epoch on every row, the
        paper's protocol).
    base_epochs, base_batch_size : int, default=50, 256
        Epochs and batch size of the base classifier (Adam, learning rate 1e-3).
    base_penalty : {"none", "gapreg"}, default="none"
        Fairness penalty of the base classifier (the new-notion scenario; ``"gap"``, its
        old name, is deprecated).
    base_notion : {"dp", "eo"}, default="eo"
        Notion of that penalty.
    base_strength : float, default=1.0
        Strength of that penalty (the ``strength`` of :func:`train_base_classifier`).
    sensitive_column : int or None, default=None
        If set, column ``sensitive_column`` of ``X`` *is* the sensitive attribute (as in
        a :class:`~otfair.datasets.FairSplit` built with ``sensitive_as_input=True``): it
        selects the group's flow and is dropped before the flows and the classifier see
        ``X``. Lets an aware model predict from ``X`` alone.
    random_state : int or None, default=None
        Seed of the base classifier and of the flows.
    device : str or torch.device or None, default=None
        Torch device.
    verbose : bool, default=False
        Progress bars over the epochs of the base classifier and of the flows.
    {lam}

    Attributes
    ----------
    base_classifier_ : torch.nn.Module or object
        The frozen classifier.
    preprocessor_ : AdapFairPreprocessor
        The fitted flows.
    n_iter_ : int
        Epochs the flows trained (``preprocessor_.n_iter_``; their held-out objective
        per epoch: ``preprocessor_.validation_loss_``).
    fit_quality_warning_ : str or None
        The :class:`~otfair.estimators.FitQualityWarning` of the fitted pipeline, None
        when it gave none.

    See Also
    --------
    otfair.estimators.AdapFairPreprocessor : The flows alone, in front of any frozen classifier.
    otfair.estimators.train_base_classifier : Trains the base classifier this estimator freezes.
    otfair.estimators.FairClassifier : Trains a fair classifier from scratch instead.

    {references_adapfair}

    {examples_binary}
    >>> from otfair.estimators import AdapFairClassifier
    >>> clf = AdapFairClassifier(epochs=2, base_epochs=2, random_state=0)
    >>> clf.fit(X, y, sensitive_features=s).predict_proba(X, sensitive_features=s).shape
    (200, 2)
    """

    #: FairnessCV's default strengths (``GRIDS["adapfair"]``) and their direction: the
    #: strength weighs the cross-entropy, so the smaller strengths are the fairer ones
    _strength_grid = "adapfair"
    _fairer_strengths = "smaller"

    @property
    def _fairness_cv_refusal(self) -> str:
        """Why FairnessCV cannot search this estimator ("" where it can)."""
        if self.mode == "blind" or self.sensitive_column is not None:
            return ""
        return (
            "FairnessCV cannot score an aware AdapFairClassifier as it is: its predictions "
            "need `sensitive_features`, which FairnessCV's held-out scoring does not pass. "
            "Put the group in a column of X and set `sensitive_column` (predict then reads "
            "it from there), or use mode='blind'."
        )

    _parameter_constraints: ClassVar[dict[str, Any]] = {
        **{k: AdapFairPreprocessor._parameter_constraints[k] for k in _FLOW_PARAMS},
        "base_classifier": "no_validation",  # any classifier, or None
        "distance": [StrOptions(set(DISTANCES))],
        "base_epochs": [positive_int()],
        "base_batch_size": [positive_int()],
        "base_penalty": [
            StrOptions({*BASE_PENALTIES, *RENAMED_PENALTIES}, deprecated=set(RENAMED_PENALTIES))
        ],
        "base_notion": [StrOptions({"dp", "eo"}), Notion],
        "base_strength": [non_negative_real()],
        "sensitive_column": SENSITIVE_COLUMN,
    }

    base_classifier: Any = None
    _: KW_ONLY
    base_epochs: int = 50
    base_batch_size: int = 256
    base_penalty: str = "none"
    base_notion: str = "eo"
    base_strength: float = 1.0
    sensitive_column: int | None = None

    def _split_sensitive(self, X: Any, sensitive_features: Any) -> tuple[np.ndarray, Any]:
        X_np = check_features(X, "X")
        if self.sensitive_column is None:
            return X_np, sensitive_features
        col = int(self.sensitive_column)
        if not -X_np.shape[1] <= col < X_np.shape[1] or X_np.shape[1] < 2:
            raise ValueError(
                f"`sensitive_column`={col} is out of range for X with {X_np.shape[1]} columns."
            )
        s_col = X_np[:, col]
        rest = np.delete(X_np, col % X_np.shape[1], axis=1)
        return rest, s_col if sensitive_features is None else sensitive_features

    def __sklearn_clone__(self) -> AdapFairClassifier:
        """Clone the settings, keeping the given pretrained classifier itself.

        ``base_classifier`` is frozen: AdapFair never refits it, so a clone
        (``fairness_path``, ``cross_validate``, ``GridSearchCV``) holds the same fitted
        object, as scikit-learn's ``FrozenEstimator`` is kept, not an unfitted copy.
        """
        twin = super().__sklearn_clone__()
        if self.base_classifier is not None:
            twin.base_classifier = self.base_classifier
        return twin

    @fits_in_training_state
    @fit_context
    def fit(
        self,
        X: Any,
        y: Any,
        *,
        sensitive_features: Any,
        source_data: tuple[Any, Any, Any] | None = None,
    ) -> AdapFairClassifier:
        """Train (or take) the base classifier, freeze it, then train the flows.

        Parameters
        ----------
        X, y, sensitive_features
            Training data of the flows (the *target* domain under drift).
        source_data : tuple (X_src, y_src, s_src), optional
            Data-drift scenario: the base classifier is trained on these instead.

        Returns
        -------
        self
        """
        X = self._check_input(X, reset=True)
        X_np, s = self._split_sensitive(X, sensitive_features)
        y = self._encode_labels(y)
        base = self._base(X_np, y, s, source_data)
        self._fit_flows(base, X, X_np, y, s)
        self._check_against_constant(X_np, y, s)
        return self

    def check_params(self) -> None:
        """Check every parameter without data, before anything trains (fail fast).

        ``fit`` calls it first (its ``fit_context``); ``otfair fit`` and the sweep's
        preflight call it before they announce or start the training: the
        ``_parameter_constraints`` (the flows' are :class:`AdapFairPreprocessor`'s); a list
        ``strength`` names :func:`~otfair.estimators.fairness_path`.

        Raises
        ------
        ValueError
            Naming the first parameter out of its range (``InvalidParameterError``).
        """
        check_values(
            self._parameter_constraints, self.get_params(deep=False), caller="AdapFairClassifier"
        )

    def _check_input(self, X: Any, *, reset: bool) -> np.ndarray:
        """Return ``X`` as float32 by scikit-learn's ``validate_data`` (``n_features_in_``)."""
        if reset:
            return validate_data(
                self,
                X,
                dtype=np.float32,
                ensure_min_samples=2,
                ensure_all_finite=False,
                **TORCH_READY,
            )
        return validate_data(
            self, X, dtype=np.float32, reset=False, ensure_all_finite=False, **TORCH_READY
        )

    def _base(self, X_np: np.ndarray, y: Any, s: Any, source_data: Any) -> Any:
        """Return the given base classifier, or train one on ``source_data`` (else on ``X``)."""
        if self.base_classifier is not None:
            if source_data is not None:
                raise ValueError("Pass either `base_classifier` or `source_data`, not both.")
            return self.base_classifier
        if source_data is not None:
            if len(source_data) != 3:
                raise ValueError("`source_data` must be a tuple (X_src, y_src, s_src).")
            X_src, s_src = self._split_sensitive(source_data[0], source_data[2])
            y_src = self._codes_of(source_data[1], "source_data[1]")
            if X_src.shape[1] != X_np.shape[1]:
                raise ValueError(
                    f"`source_data` has {X_src.shape[1]} features but X has "
                    f"{X_np.shape[1]}; both domains must share one feature space."
                )
        else:
            X_src, y_src, s_src = X_np, y, s
        with warnings.catch_warnings():  # this estimator warns of the scale in its own name
            warnings.filterwarnings("ignore", message="train_base_classifier: feature column")
            return self._train_base(X_src, y_src, s_src)

    def _train_base(self, X_src: Any, y_src: Any, s_src: Any) -> Any:
        """Train the base classifier with this estimator's ``base_*`` settings."""
        return train_base_classifier(
            X_src,
            y_src,
            sensitive_features=s_src,
            penalty=renamed_value(self.base_penalty, RENAMED_PENALTIES, "base_penalty"),
            notion=self.base_notion,
            strength=float(self.base_strength),
            hidden=(20, 20),
            epochs=int(self.base_epochs),
            batch_size=int(self.base_batch_size),
            lr=1e-3,
            random_state=self.random_state,
            device=self.device,
            verbose=self.verbose,
        )

    def _fit_flows(
        self, base: Any, X: Any, X_np: np.ndarray, y: Any, s: Any
    ) -> AdapFairClassifier:
        """Freeze ``base`` and fit the flows of this (single) strength in front of it."""
        self.base_classifier_ = base
        # every parameter of the preprocessor but its classifier is one of this estimator's
        flow_params = {k: getattr(self, k) for k in _FLOW_PARAMS}
        flow_params["strength"] = renamed_param(self, "lam", "strength", default=0.5)
        flow_params["lam"] = "deprecated"
        preprocessor = AdapFairPreprocessor(base, **flow_params)
        preprocessor._owner = type(self).__name__  # its warnings name this estimator
        self.preprocessor_ = preprocessor.fit(X_np, y, sensitive_features=s)
        self.n_iter_ = self.preprocessor_.n_iter_
        self.n_features_in_ = check_features(X, "X").shape[1]
        return self

    @fits_in_training_state
    def __otfair_fit_path__(
        self,
        X: Any,
        y: Any,
        sensitive_features: Any,
        strengths: list[float],
        source_data: tuple[Any, Any, Any] | None = None,
    ) -> list[AdapFairClassifier]:
        """Fit the path (:func:`otfair.estimators.fairness_path`): one base, flows per strength.

        The base classifier and each set of flows are seeded from ``random_state`` alone,
        so model k is the separate fit with ``strength = strengths[k]`` (tested bitwise).
        """
        models = [
            clone(self).set_params(strength=value, lam="deprecated")
            for value in check_strengths(strengths)
        ]
        for model in models:
            model.check_params()
        first = models[0]
        X = first._check_input(X, reset=True)
        X_np, s = first._split_sensitive(X, sensitive_features)
        y = first._encode_labels(y)
        base = first._base(X_np, y, s, source_data)
        for model in models:
            model._fit_flows(base, X, X_np, y, s)
            model.classes_ = first.classes_
            model.n_features_in_ = first.n_features_in_
            if hasattr(first, "feature_names_in_"):
                model.feature_names_in_ = first.feature_names_in_
            model._check_against_constant(X_np, y, s)
        return models

    def _check_against_constant(self, X_np: np.ndarray, y: np.ndarray, s: Any) -> None:
        """Hold the fitted pipeline (flows, frozen classifier) against the best constant.

        :func:`~otfair.estimators._torch_base.check_against_constant` on the training
        rows (``X_np``, ``s``: as :meth:`_split_sensitive` gave them to the flows): a
        training accuracy or cross-entropy below the base rate's, or one predicted class
        for every row, warns (``FitQualityWarning``).
        """
        proba = self.preprocessor_.predict_proba(X_np, sensitive_features=s)
        p1 = proba[:, 1].astype(np.float64)
        if np.all(np.isfinite(p1)):
            p1 = np.clip(p1, 1e-15, 1.0 - 1e-15)  # logits of saturated probabilities
        strength = float(renamed_param(self, "lam", "strength", default=0.5))
        self.fit_quality_warning_ = check_against_constant(
            np.log(p1) - np.log1p(-p1),
            np.asarray(y, dtype=np.float64),
            owner=type(self).__name__,
            strength=strength,
            penalized=strength > 0,
            classes=self.classes_,
            remedy="raise `epochs`, or train a stronger `base_classifier`",
        )

    def predict_proba(self, X: Any, *, sensitive_features: Any = None) -> np.ndarray:
        """Probabilities of the frozen classifier on the preprocessed features, (n, 2)."""
        check_is_fitted(self, "preprocessor_")
        X = self._check_input(X, reset=False)
        X_np, s = self._split_sensitive(X, sensitive_features)
        return self.preprocessor_.predict_proba(X_np, sensitive_features=s)

    def predict(self, X: Any, *, sensitive_features: Any = None) -> np.ndarray:
        """Labels of ``classes_`` (threshold 0.5 on P(y=1))."""
        proba = self.predict_proba(X, sensitive_features=sensitive_features)
        return self._decode_labels(predict_from_proba(proba[:, 1]))

    def baseline_proba(self, X: Any) -> np.ndarray:
        """Positive-class probability of the untouched base classifier, shape (n,)."""
        check_is_fitted(self, "preprocessor_")
        X_np, _ = self._split_sensitive(X, None)
        return self.preprocessor_.classifier_proba(X_np)
