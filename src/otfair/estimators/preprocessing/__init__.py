"""Preprocessing transformers that repair or project the features before any model."""

from otfair.estimators.preprocessing.fair_pca import FairPCA
from otfair.estimators.preprocessing.ot_repair import OTRepair

__all__ = ["FairPCA", "OTRepair"]
