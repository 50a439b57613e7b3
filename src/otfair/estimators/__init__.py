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
    :class:`CODRFFRegressor` (COD with random Fourier features, Komiyama et al. 2018).
Preprocessing
    AdapFair in front of a frozen classifier (:class:`AdapFairPreprocessor`, the
    end-to-end :class:`AdapFairClassifier`); :class:`OTRepair` (Gordaliza et al. 2019)
    and :class:`FairPCA` (Kleindessner et al. 2023) before any model.
Fair representations
    :class:`LAFTRClassifier` (Madras et al. 2018), :class:`SIPMClassifier` (sIPM-LFR,
    Kim et al. 2022), :class:`CFairClassifier` (Zhao et al. 2020) and
    :class:`FairNormalizingFlowClassifier` (Balunovic et al. 2022, simplified) and
    :class:`DiscreteFairNFClassifier` (its exact encoder of a finite input space).
Choosing a strength
    :class:`FairnessCV` picks the most accurate strength whose cross-validated
    violation stays within a budget (``max_violation``).
Post-processing
    :class:`WassersteinBarycenterClassifier` (Xian, Yin and Zhao 2023) and
    :class:`WassersteinBarycenterRegressor` (Chzhen et al. 2020).

Trade-off curves
    :func:`fairness_path` fits an estimator at several strengths (one stacked training
    run wherever the estimator supports it) and returns a :class:`FairnessPath`;
    :func:`strength_param` names an estimator's strength, :func:`supports_stacking`
    says whether its path is one run, :func:`default_strengths` is the grid
    ``FairnessCV`` searches and :func:`get_violation_metric` (names:
    :func:`get_violation_metric_names`; default: :func:`default_violation_metric`) the
    measure it budgets.

The estimators live in subpackages by kind (``classification/``, ``regression/``,
``preprocessing/``, ``postprocessing/``); the one mini-batch engine they share is
``otfair.estimators._training``. The methods that ``otfair fit`` and
``otfair sweep`` run are listed by :func:`otfair_lab.experiments.methods.list_methods`
(``otfair methods``).
"""

from typing import Any

from otfair.estimators._budget_rule import (
    default_violation_metric,
    get_violation_metric,
    get_violation_metric_names,
)
from otfair.estimators._fairness_cv import FairnessCV
from otfair.estimators._path import FairnessPath, fairness_path, strength_param, supports_stacking
from otfair.estimators._strength_grids import default_strengths
from otfair.estimators.classification import (
    FairClassifier,
    FitQualityWarning,
    FTMMatchingCache,
    ReductionClassifier,
)
from otfair.estimators.postprocessing import (
    WassersteinBarycenterClassifier,
    WassersteinBarycenterRegressor,
)
from otfair.estimators.preprocessing import (
    AdapFairClassifier,
    AdapFairPreprocessor,
    FairPCA,
    OTRepair,
    TorchScorer,
    as_torch_classifier,
    train_base_classifier,
)
from otfair.estimators.regression import (
    BGLRegressor,
    CENet,
    CODRegressor,
    CODRFFRegressor,
    UnfairRegressor,
    WassersteinNet,
)
from otfair.estimators.representation import (
    CFairClassifier,
    DiscreteFairNFClassifier,
    FairNormalizingFlowClassifier,
    LAFTRClassifier,
    SIPMClassifier,
)

__all__ = [
    "AdapFairClassifier",
    "AdapFairPreprocessor",
    "BGLRegressor",
    "CENet",
    "CFairClassifier",
    "CODRFFRegressor",
    "CODRegressor",
    "DiscreteFairNFClassifier",
    "FTMMatchingCache",
    "FairClassifier",
    "FairNormalizingFlowClassifier",
    "FairPCA",
    "FairnessCV",
    "FairnessPath",
    "FitQualityWarning",
    "LAFTRClassifier",
    "OTRepair",
    "ReductionClassifier",
    "SIPMClassifier",
    "TorchScorer",
    "UnfairRegressor",
    "WassersteinBarycenterClassifier",
    "WassersteinBarycenterRegressor",
    "WassersteinNet",
    "as_torch_classifier",
    "default_strengths",
    "default_violation_metric",
    "fairness_path",
    "get_violation_metric",
    "get_violation_metric_names",
    "strength_param",
    "supports_stacking",
    "train_base_classifier",
]

#: Names that moved to :mod:`otfair_lab.experiments.methods` (deprecated first, then
#: removed: estimators never import experiments).
_MOVED_TO_METHODS = ("MethodSpec", "get_method", "list_methods", "paper_settings")


def __getattr__(name: str) -> Any:
    if name in _MOVED_TO_METHODS:
        raise AttributeError(
            f"otfair.estimators.{name} was removed; import {name} from "
            "otfair_lab.experiments.methods."
        )
    raise AttributeError(f"module 'otfair.estimators' has no attribute {name!r}")
