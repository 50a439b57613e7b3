"""What AdapFair's helpers take from a user: the base classifier's data and torch state,
the classifiers ``as_torch_classifier`` wraps, and the global generator it leaves alone."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler, StandardScaler

from otfair.estimators import as_torch_classifier, train_base_classifier


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    return X, (X[:, 0] > 0).astype(int)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"y": "one"}, "`y` contains only one class"),
        ({"epochs": 0}, "`epochs` must be a positive integer"),
        ({"batch_size": -5}, "`batch_size` must be a positive integer"),
        ({"lr": -1.0}, "`lr` must be a finite number > 0"),
    ],
)
def test_train_base_classifier_names_a_bad_argument(data, kwargs, match):
    X, y = data
    if kwargs.pop("y", None) == "one":
        y = np.ones_like(y)
    with pytest.raises(ValueError, match=match):
        train_base_classifier(X, y, **{"epochs": 2, **kwargs})


def test_train_base_classifier_takes_string_labels_and_the_users_torch_state(data):
    X, y = data
    reference = train_base_classifier(X, y, epochs=3, random_state=0)
    expected = reference(torch.as_tensor(X, dtype=torch.float32)).detach()
    # the larger label is the positive class, as the estimators' classes_[1]
    named = train_base_classifier(X, np.where(y == 1, "yes", "no"), epochs=3, random_state=0)
    assert torch.equal(named(torch.as_tensor(X, dtype=torch.float32)).detach(), expected)
    dtype = torch.get_default_dtype()
    try:
        torch.set_default_dtype(torch.float64)
        with torch.no_grad():
            inside = train_base_classifier(X, y, epochs=3, random_state=0)
        assert torch.get_default_dtype() == torch.float64  # the user's, restored
    finally:
        torch.set_default_dtype(dtype)
    assert next(inside.parameters()).dtype == torch.float32
    assert torch.equal(inside(torch.as_tensor(X, dtype=torch.float32)).detach(), expected)


def test_train_base_classifier_warns_of_raw_feature_scales(data):
    X, y = data
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        train_base_classifier(X * 1e6, y, epochs=1, random_state=0)
    said = [str(w.message) for w in caught]
    assert any(m.startswith("train_base_classifier: feature column") for m in said), said


@pytest.mark.parametrize(
    "make",
    [
        lambda: LogisticRegression(),
        lambda: MLPClassifier(hidden_layer_sizes=(4,), max_iter=300, random_state=0),
        lambda: make_pipeline(StandardScaler(), LogisticRegression()),
        lambda: make_pipeline(StandardScaler(with_mean=False), LogisticRegression()),
        lambda: make_pipeline(StandardScaler(with_std=False), LogisticRegression()),
    ],
    ids=["logistic", "mlp", "scaled-pipeline", "scaled-not-centred", "centred-not-scaled"],
)
def test_wrapping_a_fitted_model_matches_it_and_leaves_torchs_generator_alone(data, make):
    X, y = data
    X = X * [1.0, 10.0, 100.0] + 5.0  # the pipeline's scaler has work to do
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the MLP's own ConvergenceWarning
        est = make().fit(X, (X[:, 0] > 5.0).astype(int))
    torch.manual_seed(0)
    untouched = torch.rand(4)
    torch.manual_seed(0)
    scorer = as_torch_classifier(est)
    assert torch.equal(torch.rand(4), untouched)  # no draw from the global generator
    p1 = torch.sigmoid(scorer(torch.as_tensor(X, dtype=torch.float32))).detach().numpy()
    np.testing.assert_allclose(p1.ravel(), est.predict_proba(X)[:, 1], atol=1e-5)
    assert scorer.n_features == 3


def test_an_unsupported_fitted_classifier_is_told_why_and_an_unfitted_one_to_fit(data):
    X, y = data
    for fitted in (
        RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y),
        make_pipeline(MinMaxScaler(), LogisticRegression()).fit(X, y),
    ):
        with pytest.raises(TypeError, match="fitted, but AdapFair needs the classifier's grad"):
            as_torch_classifier(fitted)
    with pytest.raises(TypeError, match=r"got LogisticRegression \(is it fitted\?\)"):
        as_torch_classifier(LogisticRegression())


def test_a_float64_module_takes_the_float32_features(data):
    # the scorer casts its input to the module's dtype; the message used to blame the
    # input dimension ("mat1 and mat2 must have the same dtype")
    X, y = data
    net = torch.nn.Linear(3, 1).double()
    scorer = as_torch_classifier(net)
    x = torch.as_tensor(X, dtype=torch.float32)
    with torch.no_grad():
        expected = net(x.double())[:, 0].float()
        assert scorer.dtype == torch.float64
        np.testing.assert_allclose(scorer(x).numpy(), expected.numpy(), rtol=1e-6)
    assert scorer(x).dtype == torch.float32
