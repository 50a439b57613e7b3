"""Fair classifiers trained in-process: a model plus a fairness penalty, and reductions.

:class:`FairClassifier` (OTF and FTM papers; any penalty of :mod:`otfair.penalties`),
:class:`FTMMatchingCache` (FTM's cached matched batch pairings) and
:class:`ReductionClassifier` (fairlearn's exponentiated gradient; its module is
``otfair.estimators._baselines``).
"""

from otfair.estimators._baselines import ReductionClassifier
from otfair.estimators.classification.fair_classifier import FairClassifier
from otfair.estimators.classification.ftm_matching import FTMMatchingCache

__all__ = ["FTMMatchingCache", "FairClassifier", "ReductionClassifier"]
