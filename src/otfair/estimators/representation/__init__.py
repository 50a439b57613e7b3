"""Fair-representation classifiers: an encoder, a classifier on it, a fairness adversary.

LAFTR (Madras et al. 2018), sIPM-LFR (Kim et al. 2022), CFair (Zhao et al. 2020) and
Fair Normalizing Flows (Balunović et al. 2022; coupling flows for continuous features,
the exact encoder of a finite space for categorical ones); docs/baselines.md.
"""

from otfair.estimators.representation.cfair import CFairClassifier
from otfair.estimators.representation.fair_nf import FairNormalizingFlowClassifier
from otfair.estimators.representation.fair_nf_discrete import DiscreteFairNFClassifier
from otfair.estimators.representation.laftr import LAFTRClassifier
from otfair.estimators.representation.sipm_lfr import SIPMClassifier

__all__ = [
    "CFairClassifier",
    "DiscreteFairNFClassifier",
    "FairNormalizingFlowClassifier",
    "LAFTRClassifier",
    "SIPMClassifier",
]
