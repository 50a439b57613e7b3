"""Post-processing a fitted model's scores or predictions to a fairness target."""

from otfair.estimators.postprocessing.wb_postprocess import WassersteinBarycenterClassifier
from otfair.estimators.postprocessing.wb_regression import WassersteinBarycenterRegressor

__all__ = ["WassersteinBarycenterClassifier", "WassersteinBarycenterRegressor"]
