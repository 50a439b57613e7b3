"""scikit-learn's estimator checks on the standalone OT baselines.

``OTRepair``, ``FairPCA``, ``WassersteinBarycenterClassifier`` and
``WassersteinBarycenterRegressor`` used directly (not through the method registry's
adapters), each wrapped so that a call without ``sensitive_features`` gets one derived
row by row from ``X`` (as ``_registry_estimators.with_default_sensitive`` does;
scikit-learn's checks never pass it). The exhaustive run is marked ``slow``; a
representative subset (parameter validation, the feature-count and one-sample errors,
object dtype, pickling, fit idempotence) runs by default. What still fails is listed
below with the reason.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from _registry_estimators import fit_groups, row_groups
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.utils import estimator_checks
from sklearn.utils.estimator_checks import parametrize_with_checks

from otfair.estimators.postprocessing.wb_postprocess import WassersteinBarycenterClassifier
from otfair.estimators.postprocessing.wb_regression import WassersteinBarycenterRegressor
from otfair.estimators.preprocessing.fair_pca import FairPCA
from otfair.estimators.preprocessing.ot_repair import OTRepair


def _checked(estimator):
    """``estimator`` as a subclass supplying ``sensitive_features`` when a call omits it.

    As ``_registry_estimators.with_default_sensitive``: at fit the groups of
    ``fit_groups`` (a function of each row), elsewhere ``row_groups``; when ``X`` is not
    numeric (``check_dtype_object`` puts a dict in it) fit takes groups by row position,
    so that the estimator fails on ``X`` itself (a ``TypeError``), not on missing groups.
    """
    cls = type(estimator)
    name = f"Checked{cls.__name__}"
    module = sys.modules[__name__]
    if not hasattr(module, name):

        def fit(self, X, y=None, sensitive_features=None, **kwargs):
            if sensitive_features is None:
                sensitive_features = fit_groups(X, y)
            if sensitive_features is None and hasattr(X, "__len__"):
                sensitive_features = np.arange(len(X)) % 2
            return cls.fit(self, X, y, sensitive_features=sensitive_features, **kwargs)

        def fit_transform(self, X, y=None, **kwargs):
            return self.fit(X, y, **kwargs).transform(X)

        namespace = {"fit": fit, "__module__": __name__, "__qualname__": name}
        for method in ("predict", "predict_acceptance", "transform"):
            if hasattr(cls, method):

                def call(self, X, sensitive_features=None, _method=method):
                    if sensitive_features is None:
                        sensitive_features = row_groups(X)
                    return getattr(cls, _method)(self, X, sensitive_features=sensitive_features)

                call.__name__ = method
                namespace[method] = call
        if hasattr(cls, "transform"):
            namespace["fit_transform"] = fit_transform
        setattr(module, name, type(name, (cls,), namespace))
    return getattr(module, name)(**estimator.get_params(deep=False))


_ESTIMATORS = {
    "ot-repair": _checked(OTRepair(random_state=0)),
    "fair-pca": _checked(FairPCA(n_components=1)),
    "wb-classifier": _checked(
        WassersteinBarycenterClassifier(LogisticRegression(), random_state=0)
    ),
    "wb-regressor": _checked(WassersteinBarycenterRegressor(LinearRegression(), random_state=0)),
}
_NAME_OF = {id(est): name for name, est in _ESTIMATORS.items()}

_ROW_ORDER_DRAWS = (
    "randomized by design: the seeded draws (tie-breaking uniforms, jitter) follow the "
    "row order of each call, so a row's output depends on the other rows given"
)
EXPECTED: dict[str, dict[str, str]] = {
    "ot-repair": {
        "check_methods_sample_order_invariance": _ROW_ORDER_DRAWS,
        "check_methods_subset_invariance": _ROW_ORDER_DRAWS,
    },
    "fair-pca": {
        "check_fit2d_1feature": (
            "one feature minus the group-mean direction leaves no dimension: FairPCA's "
            "error names n_components"
        ),
    },
    "wb-regressor": {
        "check_methods_sample_order_invariance": _ROW_ORDER_DRAWS,
        "check_methods_subset_invariance": _ROW_ORDER_DRAWS,
    },
}

#: Run by default (the rest is ``slow``): one check per convention these estimators
#: once broke, plus pickling and idempotence.
SUBSET = [
    "check_param_validation",
    "check_n_features_in_after_fitting",
    "check_fit2d_1sample",
    "check_dtype_object",
    "check_estimators_pickle",
    "check_fit_idempotent",
]


def test_expected_failures_are_few_and_named():
    assert set(EXPECTED) <= set(_ESTIMATORS)
    for checks in EXPECTED.values():
        assert len(checks) <= 2
        assert all(reason.strip() for reason in checks.values())


@pytest.mark.parametrize("check_name", SUBSET)
@pytest.mark.parametrize("name", list(_ESTIMATORS))
def test_representative_checks(name, check_name):
    assert check_name not in EXPECTED.get(name, {})
    estimator = _ESTIMATORS[name]
    getattr(estimator_checks, check_name)(type(estimator).__name__, estimator)


@pytest.mark.slow
@parametrize_with_checks(
    list(_ESTIMATORS.values()),
    expected_failed_checks=lambda est: EXPECTED.get(_NAME_OF[id(est)], {}),
    xfail_strict=False,
)
def test_sklearn_checks_standalone(estimator, check):
    check(estimator)
