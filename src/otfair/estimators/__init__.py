"""scikit-learn compatible fair estimators and baselines.

Every estimator follows scikit-learn's conventions: hyperparameters in ``__init__``,
``fit(X, y, *, sensitive_features)`` returning ``self``, learned attributes ending in
``_``, ``random_state`` for reproducibility, and ``sklearn.base.clone`` support.

Classification (OTF and FTM papers)
    :class:`FairClassifier` combines a model (logistic regression or MLP) with a fairness
    penalty from :mod:`otfair.penalties` (``"otf"``, ``"norm"``, ``"barycenter"``,
    ``"ftm"`` (``matching="marginal"`` or ``"joint"``), ``"gapreg"``, ``"adv"`` or
    ``"none"``);
    :class:`ReductionClassifier` wraps fairlearn's exponentiated-gradient reduction.
Regression (accuracy parity)
    :class:`CENet`, :class:`WassersteinNet` and the baselines :class:`UnfairRegressor`,
    :class:`BGLRegressor`, :class:`CODRegressor`.
Preprocessing a frozen classifier (AdapFair)
    :class:`AdapFairPreprocessor` and the end-to-end :class:`AdapFairClassifier`.

The methods that ``otfair fit`` and ``otfair sweep`` run are listed by
:func:`otfair.estimators.registry.list_methods`.
"""

from otfair.estimators._adapfair import AdapFairPreprocessor
from otfair.estimators._adapfair_scorer import TorchScorer, as_torch_classifier
from otfair.estimators._adapfair_workflows import AdapFairClassifier, train_base_classifier
from otfair.estimators._baselines import ReductionClassifier
from otfair.estimators._classifier import FairClassifier
from otfair.estimators._ftm import FTMMatchingCache
from otfair.estimators._regression import CENet, WassersteinNet
from otfair.estimators._regression_baselines import BGLRegressor, CODRegressor, UnfairRegressor
from otfair.estimators._regression_defaults import paper_settings
from otfair.estimators.registry import MethodSpec, get_method, list_methods

__all__ = [
    "AdapFairClassifier",
    "AdapFairPreprocessor",
    "BGLRegressor",
    "CENet",
    "CODRegressor",
    "FTMMatchingCache",
    "FairClassifier",
    "MethodSpec",
    "ReductionClassifier",
    "TorchScorer",
    "UnfairRegressor",
    "WassersteinNet",
    "as_torch_classifier",
    "get_method",
    "list_methods",
    "paper_settings",
    "train_base_classifier",
]
