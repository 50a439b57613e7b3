"""Fair regression: CENet and WassersteinNet (accuracy parity), their baselines and COD-RFF."""

from otfair.estimators.regression.baselines import BGLRegressor, CODRegressor, UnfairRegressor
from otfair.estimators.regression.cod_rff import CODRFFRegressor
from otfair.estimators.regression.nets import CENet, WassersteinNet

__all__ = [
    "BGLRegressor",
    "CENet",
    "CODRFFRegressor",
    "CODRegressor",
    "UnfairRegressor",
    "WassersteinNet",
]
