"""Preprocessing in front of a (frozen) model: AdapFair's normalizing flows."""

from otfair.estimators.preprocessing.adapfair import AdapFairPreprocessor
from otfair.estimators.preprocessing.adapfair_classifier import (
    AdapFairClassifier,
    train_base_classifier,
)
from otfair.estimators.preprocessing.adapfair_scorer import TorchScorer, as_torch_classifier

__all__ = [
    "AdapFairClassifier",
    "AdapFairPreprocessor",
    "TorchScorer",
    "as_torch_classifier",
    "train_base_classifier",
]
