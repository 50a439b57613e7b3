"""scikit-learn's own estimator checks over every registered method's estimator.

Each method of the registry (``otfair methods``) is built with a tiny training budget
(``_registry_estimators.tiny``) and wrapped so that a method called without
``sensitive_features`` gets one derived row by row from ``X`` (scikit-learn's checks never
pass it). What still fails is listed below, per method, with the reason: a property of the
fairness method (randomized predictions, batch-dependent repairs), of float32 torch
arithmetic, or of the tiny budget this test affords.
"""

from __future__ import annotations

import pytest
from _registry_estimators import method_names, tiny, with_default_sensitive
from sklearn.utils.estimator_checks import parametrize_with_checks

_TINY_TRAIN = (
    "tiny budget of this test (a few epochs) with the fairness term at the registry's "
    "default strength: training accuracy stays under the check's 0.83"
)
_TINY_REGRESSION = (
    "sigmoid net on min-max scaled targets, 5 Adadelta epochs, adversary at the registry's "
    "default strength: R^2 stays under the check's 0.5"
)
_FLOAT32_ROWS = (
    "float32 torch matmul: a row's output depends on the batch's size at ~1e-7 relative "
    "(BLAS blocking), above the check's rtol=1e-7"
)
_ROW_ORDER_DRAWS = (
    "randomized fair method: its seeded per-row draws follow the row order of each call, "
    "so a row's output depends on the other rows given"
)
_NO_N_ITER = "fairlearn's exponentiated gradient exposes no n_iter_ (max_iter bounds it)"

EXPECTED: dict[str, dict[str, str]] = {
    "adapfair": {"check_classifiers_train": _TINY_TRAIN},
    "adapfair-blind": {"check_classifiers_train": _TINY_TRAIN},
    "bgl": {"check_non_transformer_estimators_n_iter": _NO_N_ITER},
    "cenet": {"check_regressors_train": _TINY_REGRESSION},
    "fair-nf": {"check_classifiers_train": _TINY_TRAIN},
    "fair-nf-discrete": {"check_classifiers_train": _TINY_TRAIN},
    "fair-pca": {
        "check_classifiers_train": (
            "Fair PCA keeps n_components=1 direction orthogonal to the group means: the "
            "check's labels are not separable on it"
        ),
        "check_fit2d_1feature": (
            "one feature minus the group-mean direction leaves no dimension: FairPCA's "
            "error names n_components"
        ),
    },
    "ot-repair": {
        "check_methods_sample_order_invariance": _ROW_ORDER_DRAWS,
        "check_methods_subset_invariance": _ROW_ORDER_DRAWS,
    },
    "reduction": {
        "check_classifiers_train": (
            "randomized predictions (Agarwal et al. 2018, §3): predict draws y=1 with "
            "probability p(x), so it differs from predict_proba's argmax by design"
        ),
        "check_non_transformer_estimators_n_iter": _NO_N_ITER,
    },
    "unfair-reg": {"check_regressors_train": _TINY_REGRESSION},
    "wassersteinnet": {"check_regressors_train": _TINY_REGRESSION},
    "wb-regression": {
        "check_methods_sample_order_invariance": _ROW_ORDER_DRAWS,
        "check_methods_subset_invariance": _ROW_ORDER_DRAWS,
    },
}

#: Checks whose outcome depends on the CPU's float32 arithmetic (passed on one 2-core AVX2
#: machine, failed on another): a non-strict expected failure, run in the test below.
ARITHMETIC_DEPENDENT: dict[tuple[str, str], str] = {
    ("sipm-lfr", "check_methods_subset_invariance"): _FLOAT32_ROWS,
    ("unfair-reg", "check_methods_subset_invariance"): _FLOAT32_ROWS,
    # a score exactly at its group's threshold is accepted with a probability, drawn in
    # row order; whether any row lands on the threshold depends on the rounding
    ("wb-postprocess", "check_methods_subset_invariance"): _ROW_ORDER_DRAWS,
    ("wb-postprocess", "check_methods_sample_order_invariance"): _ROW_ORDER_DRAWS,
}

_ESTIMATORS = {
    name: with_default_sensitive(tiny(name, sensitive_column=False)) for name in method_names()
}
_METHOD_OF = {id(est): name for name, est in _ESTIMATORS.items()}


def test_expected_failures_are_few_and_named():
    assert set(EXPECTED) <= set(_ESTIMATORS)
    assert {method for method, _ in ARITHMETIC_DEPENDENT} <= set(_ESTIMATORS)
    for name, checks in EXPECTED.items():
        assert len(checks) <= 3, name
        assert all(reason.strip() for reason in checks.values()), name


@parametrize_with_checks(
    list(_ESTIMATORS.values()),
    expected_failed_checks=lambda est: EXPECTED.get(_METHOD_OF[id(est)], {}),
    xfail_strict=True,
)
def test_sklearn_checks(estimator, check):
    name = getattr(check, "func", check).__name__
    reason = ARITHMETIC_DEPENDENT.get((_METHOD_OF[id(estimator)], name))
    if reason is None:
        check(estimator)
        return
    try:
        check(estimator)
    except AssertionError:
        pytest.xfail(reason)  # not strict: passing is fine too


@pytest.mark.parametrize("name", ["unfair", "gapreg", "laftr"])
def test_fit_on_one_class_is_a_value_error_naming_y(name):
    import numpy as np

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    with pytest.raises(ValueError, match="`y` contains only one class"):
        with_default_sensitive(tiny(name, sensitive_column=False)).fit(X, np.ones(30))
