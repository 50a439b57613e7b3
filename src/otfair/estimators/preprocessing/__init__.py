"""Preprocessing before or in front of a model.

AdapFair's normalizing flows (in front of a frozen classifier), OT repair of the features
(Gordaliza et al. 2019) and fair PCA (Kleindessner et al. 2023).
"""

from otfair.estimators.preprocessing.adapfair import AdapFairPreprocessor
from otfair.estimators.preprocessing.adapfair_base import train_base_classifier
from otfair.estimators.preprocessing.adapfair_classifier import AdapFairClassifier
from otfair.estimators.preprocessing.adapfair_scorer import TorchScorer, as_torch_classifier
from otfair.estimators.preprocessing.fair_pca import FairPCA
from otfair.estimators.preprocessing.ot_repair import OTRepair
from otfair.estimators.preprocessing.sensitive_column import (
    RepairedClassifier,
    SensitiveColumnEstimator,
)

__all__ = [
    "AdapFairClassifier",
    "AdapFairPreprocessor",
    "FairPCA",
    "OTRepair",
    "RepairedClassifier",
    "SensitiveColumnEstimator",
    "TorchScorer",
    "as_torch_classifier",
    "train_base_classifier",
]
