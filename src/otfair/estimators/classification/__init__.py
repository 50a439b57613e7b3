"""Fair classifiers trained in-process: a model plus a fairness penalty, and reductions.

:class:`FairClassifier` (OTF and FTM papers; any penalty of :mod:`otfair.penalties`),
:class:`FTMMatchingCache` (FTM's cached matched batch pairings) and
:class:`ReductionClassifier` (fairlearn's exponentiated gradient).
"""

from otfair.estimators._torch_base import FitQualityWarning
from otfair.estimators.classification.fair_classifier import FairClassifier
from otfair.estimators.classification.reduction import ReductionClassifier
from otfair.penalties._ftm import FTMMatchingCache

__all__ = ["FTMMatchingCache", "FairClassifier", "FitQualityWarning", "ReductionClassifier"]
