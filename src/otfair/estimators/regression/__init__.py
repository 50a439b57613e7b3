"""Fair regression: CENet and WassersteinNet (accuracy parity) and their baselines."""

from otfair.estimators.regression.baselines import BGLRegressor, CODRegressor, UnfairRegressor
from otfair.estimators.regression.nets import CENet, WassersteinNet

__all__ = ["BGLRegressor", "CENet", "CODRegressor", "UnfairRegressor", "WassersteinNet"]
