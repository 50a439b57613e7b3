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

The estimators live in subpackages by kind (``classification/``, ``regression/``,
``preprocessing/``); the one mini-batch engine they share is
:mod:`otfair.estimators._training`. The methods that ``otfair fit`` and
``otfair sweep`` run are listed by :func:`otfair.estimators.registry.list_methods`.
"""

from otfair.estimators._regression_defaults import paper_settings
from otfair.estimators.classification import (
    FairClassifier,
    FTMMatchingCache,
    ReductionClassifier,
)
from otfair.estimators.preprocessing import (
    AdapFairClassifier,
    AdapFairPreprocessor,
    TorchScorer,
    as_torch_classifier,
    train_base_classifier,
)
from otfair.estimators.registry import MethodSpec, get_method, list_methods
from otfair.estimators.regression import (
    BGLRegressor,
    CENet,
    CODRegressor,
    UnfairRegressor,
    WassersteinNet,
)

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
