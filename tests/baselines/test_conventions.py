"""scikit-learn conventions shared by the second-round baselines."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LinearRegression, LogisticRegression

from otfair.estimators.postprocessing.wb_postprocess import WassersteinBarycenterClassifier
from otfair.estimators.postprocessing.wb_regression import WassersteinBarycenterRegressor
from otfair.estimators.preprocessing.fair_pca import FairPCA
from otfair.estimators.preprocessing.ot_repair import OTRepair
from otfair.estimators.regression.cod_rff import CODRFFRegressor

ESTIMATORS = [
    OTRepair(0.5, random_state=0),
    FairPCA(n_components=2),
    WassersteinBarycenterClassifier(LogisticRegression(), random_state=0),
    WassersteinBarycenterRegressor(LinearRegression(), random_state=0),
    CODRFFRegressor(0.1, n_components=10, random_state=0),
]


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_clone_params_and_unfitted(est):
    twin = clone(est)
    assert twin.get_params(deep=False).keys() == est.get_params(deep=False).keys()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    s = np.arange(20) % 2
    method = twin.predict if hasattr(twin, "predict") else twin.transform
    with pytest.raises(NotFittedError):
        method(X, sensitive_features=s)


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_sensitive_features_required(est):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises((ValueError, TypeError)):
        clone(est).fit(X, y, sensitive_features=None)
