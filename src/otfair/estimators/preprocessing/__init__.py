"""Preprocessing transformers that repair the features before any model."""

from otfair.estimators.preprocessing.ot_repair import OTRepair

__all__ = ["OTRepair"]
