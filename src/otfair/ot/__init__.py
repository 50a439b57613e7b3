"""Optimal-transport primitives in torch. Knows nothing about fairness.

Exact where exactness is cheap, stable where it is not: exact 1-D Wasserstein by
sorting (:func:`wasserstein_1d`), exact matchings (:func:`match`), log-domain Sinkhorn
with a sharp-value gradient (:func:`sinkhorn`, :func:`sharp_sinkhorn`) and the OTF /
OTFR dual solvers (:func:`otf0`, :class:`OTFProblem` for many solves on one cost).
Inputs are positive masses, cost matrices and linear constraint matrices; what they
mean (scores, groups, fairness notions) is the callers' business. Torch tensors in,
torch tensors out, on any device.
See ``docs/ot.md`` (the math and the papers behind each solver).
"""

from otfair.ot._costs import cost_matrix, euclidean_cost, joint_cost, l1_cost, sqeuclidean_cost
from otfair.ot._matching import match
from otfair.ot._otf import OTF0Details, OTFProblem, OTFResult, otf0, otf_dual, otfr_dual
from otfair.ot._sharp import sharp_gradient, sharp_sinkhorn
from otfair.ot._sinkhorn import ConvergenceWarning, SinkhornResult, sinkhorn
from otfair.ot._wasserstein1d import wasserstein_1d, wasserstein_1d_power

__all__ = [
    "OTF0Details",
    "OTFProblem",
    "OTFResult",
    "ConvergenceWarning",
    "SinkhornResult",
    "cost_matrix",
    "euclidean_cost",
    "joint_cost",
    "l1_cost",
    "match",
    "otf0",
    "otf_dual",
    "otfr_dual",
    "sharp_gradient",
    "sharp_sinkhorn",
    "sinkhorn",
    "sqeuclidean_cost",
    "wasserstein_1d",
    "wasserstein_1d_power",
]
