"""AdapFairPreprocessor: frozen classifier, identity start, fairness, interfaces, errors."""

import io

import numpy as np
import pytest
import torch
from fairlearn.metrics import demographic_parity_difference
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPClassifier

from otfair.estimators.preprocessing.adapfair import AdapFairPreprocessor
from otfair.estimators.preprocessing.adapfair_scorer import as_torch_classifier


def _biased_data(n=600, d=4, seed=0):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, d)).astype(np.float32)
    X[:, 0] += 1.5 * s  # group 1 is shifted along the most predictive feature
    y = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(scale=0.7, size=n) > 0.75).astype(int)
    return X, y, s


def _trained_mlp(X, y, seed=0, batchnorm=False):
    torch.manual_seed(seed)
    layers = [torch.nn.Linear(X.shape[1], 16)]
    if batchnorm:
        layers += [torch.nn.BatchNorm1d(16), torch.nn.Dropout(0.2)]
    layers += [torch.nn.ReLU(), torch.nn.Linear(16, 1)]
    net = torch.nn.Sequential(*layers)
    opt = torch.optim.Adam(net.parameters(), lr=0.02)
    Xt, yt = torch.as_tensor(X), torch.as_tensor(y, dtype=torch.float32)
    for _ in range(150):
        opt.zero_grad()
        torch.nn.functional.binary_cross_entropy_with_logits(net(Xt)[:, 0], yt).backward()
        opt.step()
    return net.eval()


@pytest.fixture(scope="module")
def data():
    return _biased_data()


@pytest.fixture(scope="module")
def net(data):
    X, y, _ = data
    return _trained_mlp(X, y)


def _state_bytes(module):
    buf = io.BytesIO()
    torch.save(module.state_dict(), buf)
    return buf.getvalue()


def test_scores_unchanged_before_training(data, net):
    X, y, s = data
    # a step of 1e-12 cannot move the zero-initialized flows measurably: T = identity
    pre = AdapFairPreprocessor(net, epochs=1, lr=1e-12, random_state=0)
    pre.fit(X, y, sensitive_features=s)
    with torch.no_grad():
        expected = torch.sigmoid(net(torch.as_tensor(X))[:, 0]).numpy()
    proba = pre.predict_proba(X, sensitive_features=s)[:, 1]
    np.testing.assert_allclose(proba, expected, atol=1e-6)
    np.testing.assert_allclose(pre.transform(X, sensitive_features=s), X, atol=1e-6)


@pytest.mark.parametrize("mode", ["aware", "blind"])
def test_classifier_bytes_identical_after_fit(data, mode):
    X, y, s = data
    net = _trained_mlp(X, y, batchnorm=True)  # batch-norm stats move if left in train mode
    net.train()
    net.zero_grad(set_to_none=True)
    before = _state_bytes(net)
    flags = [p.requires_grad for p in net.parameters()]
    pre = AdapFairPreprocessor(net, mode=mode, epochs=3, random_state=0)
    pre.fit(X, y, sensitive_features=s)
    pre.predict_proba(X, sensitive_features=s)
    assert _state_bytes(net) == before
    assert [p.requires_grad for p in net.parameters()] == flags  # restored after fit
    assert net.training  # mode restored too
    assert all(p.grad is None for p in net.parameters())


@pytest.mark.parametrize("mode", ["aware", "blind"])
def test_fairness_loss_decreases_and_dp_gap_shrinks(data, net, mode):
    X, y, s = data
    pre = AdapFairPreprocessor(
        net, mode=mode, strength=0.3, epochs=25, lr=3e-3, early_stopping=False, random_state=0
    )
    pre.fit(X, y, sensitive_features=s)  # the optimizer's work: every epoch, every row
    fair = [h["fairness"] for h in pre.history_]
    assert len(fair) == 25
    assert fair[-1] < 0.5 * fair[0]
    with torch.no_grad():
        base = (torch.sigmoid(net(torch.as_tensor(X))[:, 0]).numpy() > 0.5).astype(int)
    after = pre.predict(X, sensitive_features=s)
    gap_base = demographic_parity_difference(y, base, sensitive_features=s)
    gap_after = demographic_parity_difference(y, after, sensitive_features=s)
    assert gap_after < 0.7 * gap_base


def test_eopp_only_uses_positives(data, net):
    X, y, s = data
    pre = AdapFairPreprocessor(
        net, notion="eopp", strength=0.3, epochs=15, lr=3e-3, random_state=0
    )
    pre.fit(X, y, sensitive_features=s)
    assert pre.history_[-1]["fairness"] < pre.history_[0]["fairness"]


def test_aware_and_blind_interfaces(data, net):
    X, y, s = data
    aware = AdapFairPreprocessor(net, mode="aware", epochs=3, lr=1e-2, random_state=0)
    aware.fit(X, y, sensitive_features=s)
    assert len(aware.flows_) == 2
    with pytest.raises(ValueError, match="sensitive_features` is required"):
        aware.transform(X)
    t0 = aware.transform(X, sensitive_features=np.zeros(len(X), int))
    t1 = aware.transform(X, sensitive_features=np.ones(len(X), int))
    assert not np.allclose(t0, t1)  # one flow per group
    mixed = aware.transform(X, sensitive_features=s)
    np.testing.assert_array_equal(mixed[s == 0], t0[s == 0])
    np.testing.assert_array_equal(mixed[s == 1], t1[s == 1])

    blind = AdapFairPreprocessor(net, mode="blind", epochs=3, lr=1e-2, random_state=0)
    blind.fit(X, y, sensitive_features=s)
    assert len(blind.flows_) == 1
    np.testing.assert_array_equal(blind.transform(X), blind.transform(X, sensitive_features=s))
    assert blind.predict_proba(X).shape == (len(X), 2)


def test_inverse_transform_recovers_input(data, net):
    X, y, s = data
    pre = AdapFairPreprocessor(net, epochs=3, lr=1e-2, random_state=0)
    pre.fit(X, y, sensitive_features=s)
    Xt = pre.transform(X, sensitive_features=s)
    assert np.abs(Xt - X).max() > 1e-3
    np.testing.assert_allclose(pre.inverse_transform(Xt, sensitive_features=s), X, atol=1e-5)


def test_reproducible_and_clonable(data, net):
    X, y, s = data
    pre = AdapFairPreprocessor(net, epochs=2, random_state=3)
    p1 = pre.fit(X, y, sensitive_features=s).predict_proba(X, sensitive_features=s)
    p2 = clone(pre).fit(X, y, sensitive_features=s).predict_proba(X, sensitive_features=s)
    np.testing.assert_array_equal(p1, p2)


def test_string_groups_and_probability_output(data, net):
    X, y, s = data
    groups = np.where(s == 1, "b", "a")
    prob_net = torch.nn.Sequential(net, torch.nn.Sigmoid())
    pre = AdapFairPreprocessor(prob_net, output="probability", epochs=2, random_state=0)
    pre.fit(X, y, sensitive_features=groups)
    assert pre.groups_.tolist() == ["a", "b"]
    with pytest.raises(ValueError, match="not seen in fit"):
        pre.predict(X[:3], sensitive_features=["a", "c", "b"])


@pytest.mark.parametrize(
    "model",
    [
        LogisticRegression(),
        MLPClassifier(hidden_layer_sizes=(8,), max_iter=2000, tol=1e-3, random_state=0),
    ],
)
def test_sklearn_classifier_wrapper_matches_predict_proba(data, model):
    X, y, s = data
    model = clone(model).fit(X.astype(np.float64), y)
    scorer = as_torch_classifier(model)
    with torch.no_grad():
        p = torch.sigmoid(scorer(torch.as_tensor(X))).numpy()
    np.testing.assert_allclose(p, model.predict_proba(X.astype(np.float64))[:, 1], atol=1e-5)
    pre = AdapFairPreprocessor(model, epochs=2, random_state=0).fit(X, y, sensitive_features=s)
    assert pre.n_features_in_ == X.shape[1]


def test_otfair_fair_classifier_is_wrapped_without_copy(data):
    from otfair.estimators import FairClassifier

    X, y, s = data
    clf = FairClassifier("none", 0.0, model="mlp", epochs=3, random_state=0)
    clf.fit(X, y, sensitive_features=s)
    scorer = as_torch_classifier(clf)
    with torch.no_grad():
        p = torch.sigmoid(scorer(torch.as_tensor(X))).numpy()
    np.testing.assert_allclose(p, clf.predict_proba(X)[:, 1], atol=1e-5)
    before = _state_bytes(clf.model_)
    pre = AdapFairPreprocessor(clf, epochs=2, random_state=0).fit(X, y, sensitive_features=s)
    assert _state_bytes(clf.model_) == before
    assert pre.predict_proba(X, sensitive_features=s).shape == (len(X), 2)


def test_two_column_heads(data, net):
    X, *_ = data
    head = torch.nn.Linear(X.shape[1], 2)
    with torch.no_grad():
        logits = head(torch.as_tensor(X))
        expected = torch.softmax(logits, dim=1)[:, 1]
        got = torch.sigmoid(as_torch_classifier(head)(torch.as_tensor(X)))
    torch.testing.assert_close(got, expected)


def test_errors(data, net):
    X, y, s = data
    with pytest.raises(ValueError, match="not a probability"):
        AdapFairPreprocessor(net, output="probability", epochs=1).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="features"):
        AdapFairPreprocessor(net, epochs=1).fit(X[:, :3], y, sensitive_features=s)
    with pytest.raises(ValueError, match="features"):  # no Linear to read the width from
        AdapFairPreprocessor(lambda x: x @ torch.ones(4), epochs=1).fit(
            X[:, :3], y, sensitive_features=s
        )
    with pytest.raises(ValueError, match="`y` must contain two classes"):
        AdapFairPreprocessor(net, epochs=1).fit(X, np.arange(len(y)) % 3, sensitive_features=s)
    with pytest.raises(ValueError, match="at least 2 groups"):
        AdapFairPreprocessor(net, epochs=1).fit(X, y, sensitive_features=np.zeros(len(y)))
    with pytest.raises(ValueError, match="must be binary"):
        AdapFairPreprocessor(net, epochs=1).fit(X, y, sensitive_features=np.arange(len(y)) % 3)
    with pytest.raises(ValueError, match="y=1"):
        AdapFairPreprocessor(net, notion="eopp", epochs=1).fit(
            X, y, sensitive_features=np.where(y == 1, 0, s)
        )
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="`X` contains NaN"):
        AdapFairPreprocessor(net, epochs=1).fit(bad, y, sensitive_features=s)
    with pytest.raises(ValueError, match="Inconsistent"):
        AdapFairPreprocessor(net, epochs=1).fit(X, y[:-1], sensitive_features=s)
    with pytest.raises(ValueError, match="'mode' parameter of AdapFairPreprocessor must be"):
        AdapFairPreprocessor(net, mode="x").fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="'notion' parameter .* among"):
        AdapFairPreprocessor(net, notion="x").fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match=r"'strength' .* in the range \[0.0, 1.0\]. Got 2.0"):
        AdapFairPreprocessor(net, strength=2.0).fit(X, y, sensitive_features=s)
    with pytest.raises(TypeError, match="`classifier`"):
        AdapFairPreprocessor(object()).fit(X, y, sensitive_features=s)
    pre = AdapFairPreprocessor(net, epochs=1).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="4 were expected"):
        pre.predict_proba(X[:, :2], sensitive_features=s)
