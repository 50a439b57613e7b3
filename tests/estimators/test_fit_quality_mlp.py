"""The default MLP matches LogisticRegression: early stopping on held-out rows.

``FairClassifier(model="mlp")`` holds out 10% of the training rows and ends at the epoch
of the best held-out cross-entropy (``early_stopping="auto"``, scikit-learn's
``MLPClassifier(early_stopping=True)``); without it the MLP overfit German and Diabetes
(test AUC 0.740 / 0.540 against LogisticRegression's 0.771 / 0.618,
docs/measurements/training_quality.md). The paper protocols (``tol=None``) and the
penalized fits train as before.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from tests.estimators._classif_data import two_group_data

from otfair.datasets import load_dataset
from otfair.estimators import FairClassifier
from otfair.estimators._early_stopping import StopOnValidation, validation_split
from otfair.utils import draw_seed


@pytest.mark.parametrize("name", ["german", pytest.param("diabetes", marks=pytest.mark.slow)])
def test_default_mlp_matches_logistic_regression(name, data_dir):
    split = load_dataset(name).split(random_state=0)
    mlp = FairClassifier(model="mlp", random_state=0).fit(split.X_train, split.y_train)
    ref = LogisticRegression(max_iter=1000).fit(split.X_train, split.y_train)
    auc = roc_auc_score(split.y_test, mlp.predict_proba(split.X_test)[:, 1])
    ref_auc = roc_auc_score(split.y_test, ref.decision_function(split.X_test))
    assert auc >= ref_auc - 0.01, (auc, ref_auc)
    acc, ref_acc = mlp.score(split.X_test, split.y_test), ref.score(split.X_test, split.y_test)
    assert acc >= ref_acc - 0.005, (acc, ref_acc)
    # it stopped on the held-out rows, at its best epoch, well before the cap
    losses = mlp.validation_loss_
    assert len(losses) == mlp.n_iter_ < mlp.epochs
    assert np.argmin(losses) < len(losses) - 1  # patience epochs after the best one


def test_the_model_ends_at_its_best_held_out_epoch():
    X, y, _ = two_group_data(600)
    X = np.column_stack([X, np.random.default_rng(1).normal(size=(600, 30))])  # noise
    clf = FairClassifier(model="mlp", hidden=(64, 64), lr=1e-2, random_state=0).fit(X, y)
    losses = clf.validation_loss_
    assert len(losses) == clf.n_iter_ and min(losses) < losses[-1]  # it overfit, then
    _, held = validation_split(y, 0.1, seed=draw_seed(0))  # the fit's held-out rows
    p = clf.predict_proba(X[held])[:, 1]
    ce = -np.mean(y[held] * np.log(p) + (1 - y[held]) * np.log(1 - p))
    assert ce == pytest.approx(min(losses), rel=1e-4)  # the best epoch's parameters


def test_stop_on_validation_restores_the_best_parameters():
    torch.manual_seed(0)
    model = torch.nn.Linear(2, 1)
    X = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.0]])
    y = torch.tensor([1.0, 0.0, 1.0, 0.0])
    stop = StopOnValidation(model, X, y, tol=1e-4, n_iter_no_change=2)
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[3.0, -3.0]]))
        model.bias.zero_()
    assert not stop({})  # epoch 1: a good model, the best so far
    best = [p.detach().clone() for p in model.parameters()]
    with torch.no_grad():
        model.weight.neg_()  # a worse one, twice: stop
    assert not stop({})
    assert stop({})
    assert stop.best_epoch == 1 and stop.scores[0] < stop.scores[1]
    stop.restore()
    for p, b in zip(model.parameters(), best, strict=True):
        assert torch.equal(p.detach(), b)


def test_validation_split_is_stratified_and_disjoint():
    y = np.array([0] * 90 + [1] * 10)
    kept, held = validation_split(y, 0.1, seed=0)
    assert len(held) == 10 and np.bincount(y[held]).tolist() == [9, 1]
    assert sorted(np.concatenate([kept, held]).tolist()) == list(range(100))


def test_early_stopping_auto_is_the_plain_mlp_only():
    X, y, s = two_group_data(300)
    plain = FairClassifier(model="mlp", hidden=(8,), epochs=40, random_state=0).fit(X, y)
    assert hasattr(plain, "validation_loss_")
    for clf in (
        FairClassifier(epochs=40, random_state=0),  # logistic (L-BFGS)
        FairClassifier(model="mlp", hidden=(8,), epochs=5, tol=None, random_state=0),
        FairClassifier("gapreg", 1.0, model="mlp", hidden=(8,), epochs=5, random_state=0),
        FairClassifier("gapreg", 0.0, model="mlp", hidden=(8,), epochs=5, random_state=0),
    ):
        clf.fit(X, y, sensitive_features=s)
        assert not hasattr(clf, "validation_loss_"), clf
    # explicit: any unpenalized Adam fit; the others are refused in words
    on = FairClassifier(solver="adam", early_stopping=True, epochs=40, random_state=0)
    assert hasattr(on.fit(X, y), "validation_loss_")
    off = FairClassifier(model="mlp", hidden=(8,), early_stopping=False, epochs=5, tol=None)
    assert not hasattr(off.fit(X, y), "validation_loss_")
    with pytest.raises(ValueError, match="early_stopping=True"):
        FairClassifier("gapreg", 1.0, model="mlp", early_stopping=True).fit(
            X, y, sensitive_features=s
        )
    with pytest.raises(ValueError, match="early_stopping=True"):
        FairClassifier(early_stopping=True).fit(X, y)  # L-BFGS has no epochs to stop


def test_early_stopping_is_reproducible():
    X, y, _ = two_group_data(300)
    a = FairClassifier(model="mlp", hidden=(8,), random_state=3).fit(X, y)
    b = FairClassifier(model="mlp", hidden=(8,), random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    assert a.validation_loss_ == b.validation_loss_


def test_tiny_data_trains_without_a_held_out_set():
    X = np.arange(8, dtype=float).reshape(4, 2)
    y = np.array([0, 0, 0, 1])  # one positive row: nothing to hold out of its class
    clf = FairClassifier(model="mlp", hidden=(4,), epochs=5, random_state=0)
    clf.fit(X, y)
    assert not hasattr(clf, "validation_loss_") and clf.n_iter_ >= 1


@pytest.mark.parametrize(
    ("hidden", "widths"), [("auto", [(7, 100), (100, 1)]), (None, [(7, 7), (7, 7), (7, 1)])]
)
def test_the_mlps_network_is_the_one_hidden_names(hidden, widths):
    """``"auto"`` (the default): one layer of 100, MLPClassifier's; ``None``: the FTM
    paper's two layers of the input's width."""
    X, y, _ = two_group_data(200)
    X = np.column_stack([X, np.random.default_rng(0).normal(size=(200, 7 - X.shape[1]))])
    params = {} if hidden == "auto" else {"hidden": hidden}
    clf = FairClassifier(model="mlp", epochs=2, random_state=0, **params).fit(X, y)
    linears = [m for m in clf.model_.modules() if isinstance(m, torch.nn.Linear)]
    assert [(m.in_features, m.out_features) for m in linears] == widths
