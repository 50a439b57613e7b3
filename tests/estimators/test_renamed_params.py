"""The renamed parameters of 0.2: the old names still work for one release (FutureWarning).

``lam`` of CENet, WassersteinNet, AdapFairPreprocessor and AdapFairClassifier is
``strength``; AdapFair's base penalty ``"gap"`` is ``"gapreg"``; ``penalty_notion`` and
``penalty_strength`` of ``train_base_classifier`` are ``notion`` and ``strength``. An old
name fits the model of the new one, bitwise.
"""

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.utils._param_validation import InvalidParameterError

from otfair.estimators import (
    AdapFairClassifier,
    AdapFairPreprocessor,
    CENet,
    WassersteinNet,
    train_base_classifier,
)

NET = {"encoder_hidden": (6,), "adversary_hidden": (4,), "epochs": 2, "random_state": 0}
FLOW = {"epochs": 2, "base_epochs": 2, "n_blocks": 1, "hidden": (4,), "random_state": 0}


def _data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3)).astype(np.float32)
    s = rng.integers(0, 2, n)
    y_cls = (X[:, 0] + s + rng.normal(size=n) > 0.5).astype(int)
    y_reg = 1 / (1 + np.exp(-X[:, 0] - 0.5 * s))
    return X, y_cls, y_reg, s


@pytest.mark.parametrize("cls", [CENet, WassersteinNet])
def test_lam_of_the_regression_nets_warns_and_fits_the_strength_model(cls):
    X, _, y, s = _data()
    new = cls(strength=3.0, **NET).fit(X, y, sensitive_features=s)
    with pytest.warns(FutureWarning, match=r"`lam` was renamed `strength` in 0\.2"):
        old = cls(lam=3.0, **NET).fit(X, y, sensitive_features=s)
    np.testing.assert_array_equal(old.predict(X), new.predict(X))
    assert old.adversary_ is not None  # the old value was used, not the default
    with pytest.warns(FutureWarning):  # lam=0: the plain net, as strength=0
        plain = cls(lam=0.0, **NET).fit(X, y, sensitive_features=s)
    assert plain.adversary_ is None


def test_lam_is_a_parameter_get_params_and_clone_keep():
    assert CENet().get_params()["lam"] == "deprecated"
    est = clone(CENet(lam=2.0))
    assert est.get_params()["lam"] == 2.0 and est.get_params()["strength"] == 1.0
    assert "lam" in AdapFairClassifier().get_params()


@pytest.mark.parametrize(
    "make",
    [
        lambda: CENet(strength=2.0, lam=3.0, **NET),
        lambda: AdapFairClassifier(strength=0.2, lam=0.3, **FLOW),
    ],
)
def test_both_names_set_to_different_values_is_an_error(make):
    X, y_cls, y_reg, s = _data()
    y = y_reg if isinstance(make(), CENet) else y_cls
    with pytest.raises(ValueError, match="`lam` is the deprecated name of `strength`"):
        make().fit(X, y, sensitive_features=s)


def test_lam_out_of_range_names_lam():
    X, _, y, s = _data()
    with pytest.raises(InvalidParameterError, match="'lam' parameter of CENet"):
        CENet(lam=-1.0, **NET).fit(X, y, sensitive_features=s)


def test_lam_of_adapfair_warns_and_fits_the_strength_model():
    X, y, _, s = _data()
    new = AdapFairClassifier(strength=0.3, **FLOW).fit(X, y, sensitive_features=s)
    with pytest.warns(FutureWarning, match="AdapFairClassifier: `lam` was renamed"):
        old = AdapFairClassifier(lam=0.3, **FLOW).fit(X, y, sensitive_features=s)
    np.testing.assert_array_equal(
        old.predict_proba(X, sensitive_features=s), new.predict_proba(X, sensitive_features=s)
    )
    assert old.preprocessor_.strength == 0.3  # the flows got the old value


def test_lam_of_the_preprocessor_warns_and_fits_the_strength_model():
    X, y, _, s = _data()
    net = torch.nn.Linear(3, 1)
    kw = {"epochs": 2, "n_blocks": 1, "hidden": (4,), "random_state": 0}
    new = AdapFairPreprocessor(net, strength=0.2, **kw).fit(X, y, sensitive_features=s)
    with pytest.warns(FutureWarning, match="AdapFairPreprocessor: `lam` was renamed"):
        old = AdapFairPreprocessor(net, lam=0.2, **kw).fit(X, y, sensitive_features=s)
    np.testing.assert_array_equal(
        old.transform(X, sensitive_features=s), new.transform(X, sensitive_features=s)
    )


def test_the_gap_base_penalty_warns_and_is_gapreg():
    X, y, _, s = _data()
    kw = {**FLOW, "base_notion": "eo", "base_strength": 5.0}
    new = AdapFairClassifier(base_penalty="gapreg", **kw).fit(X, y, sensitive_features=s)
    with pytest.warns(FutureWarning, match="base_penalty='gap' was renamed 'gapreg'"):
        old = AdapFairClassifier(base_penalty="gap", **kw).fit(X, y, sensitive_features=s)
    np.testing.assert_array_equal(old.baseline_proba(X), new.baseline_proba(X))
    plain = AdapFairClassifier(**kw).fit(X, y, sensitive_features=s)  # base_penalty="none"
    assert not np.array_equal(plain.baseline_proba(X), new.baseline_proba(X))


def test_train_base_classifier_old_keywords_warn_and_train_the_same_model():
    X, y, _, s = _data()
    kw = {"sensitive_features": s, "hidden": (4,), "epochs": 2, "random_state": 0}
    new = train_base_classifier(X, y, penalty="gapreg", notion="eo", strength=5.0, **kw)
    with pytest.warns(FutureWarning) as record:
        old = train_base_classifier(
            X, y, penalty="gap", penalty_notion="eo", penalty_strength=5.0, **kw
        )
    assert {str(w.message).split(" was")[0] for w in record} == {
        "train_base_classifier: `penalty_notion`",
        "train_base_classifier: `penalty_strength`",
        "penalty='gap'",
    }
    with torch.no_grad():
        torch.testing.assert_close(
            old(torch.as_tensor(X)), new(torch.as_tensor(X)), rtol=0, atol=0
        )
    with pytest.raises(ValueError, match="deprecated name of `strength`"):
        train_base_classifier(X, y, strength=2.0, penalty_strength=5.0, **kw)
