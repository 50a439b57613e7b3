"""Fair regressors."""

from otfair.estimators.regression.cod_rff import CODRFFRegressor

__all__ = ["CODRFFRegressor"]
