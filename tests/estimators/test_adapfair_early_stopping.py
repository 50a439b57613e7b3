"""AdapFair's early stopping: held-out objective, best epoch kept, cap warned, opt-out exact."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from tests.estimators._classif_data import drift_data

from otfair.estimators import AdapFairClassifier, AdapFairPreprocessor, FairClassifier


@pytest.fixture(scope="module")
def wide():
    """Few rows, many features: flows with lr 1e-2 overfit them within a few epochs."""
    X, y, s = drift_data(400, d=12, seed=0)
    return X, y, s, FairClassifier(random_state=0).fit(X, y)


def _flows(base, **kw):
    settings = {"epochs": 80, "lr": 1e-2, "batch_size": 64, "random_state": 0, **kw}
    return AdapFairPreprocessor(base, **settings)


def test_stops_when_the_held_out_objective_stops_improving(wide):
    X, y, s, base = wide
    pre = _flows(base, n_iter_no_change=4).fit(X, y, sensitive_features=s)
    losses = np.asarray(pre.validation_loss_)
    assert pre.n_iter_ < 80 and len(losses) == len(pre.history_) == pre.n_iter_
    best = int(np.argmin(losses)) + 1
    assert pre.n_iter_ - best == 4  # four epochs in a row no better than the best
    assert (losses[best:] > losses[best - 1] - pre.tol).all()


def test_the_flows_are_those_of_the_best_epoch(wide):
    X, y, s, base = wide
    pre = _flows(base, n_iter_no_change=4).fit(X, y, sensitive_features=s)
    best = int(np.argmin(pre.validation_loss_)) + 1
    # the same split and batches, capped at the best epoch: its flows end there
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        capped = _flows(base, n_iter_no_change=4, epochs=best).fit(X, y, sensitive_features=s)
    np.testing.assert_array_equal(
        pre.transform(X, sensitive_features=s), capped.transform(X, sensitive_features=s)
    )
    assert pre.n_iter_ > best  # it trained past it, then went back


def test_without_early_stopping_every_epoch_trains_on_every_row(wide):
    X, y, s, base = wide
    pre = _flows(base, epochs=12, early_stopping=False).fit(X, y, sensitive_features=s)
    assert pre.n_iter_ == 12 and pre.validation_loss_ == []
    held = _flows(base, epochs=12).fit(X, y, sensitive_features=s)
    assert held.n_iter_ <= 12
    assert not np.array_equal(  # 10% of the rows held out: other batches, other flows
        pre.transform(X, sensitive_features=s), held.transform(X, sensitive_features=s)
    )


def test_the_cap_coming_first_warns(wide):
    X, y, s, base = wide
    with pytest.warns(ConvergenceWarning, match=r"epochs=2 .*held-out objective"):
        _flows(base, epochs=2).fit(X, y, sensitive_features=s)


def test_data_too_small_to_hold_out_every_cell_train_on_every_row():
    X, y, s = drift_data(60, seed=1)
    s[:] = 0
    s[np.flatnonzero(y == 1)[0]] = 1  # group 1 has a single row: nothing to hold out
    s[np.flatnonzero(y == 0)[:5]] = 1
    base = FairClassifier(random_state=0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        pre = _flows(base, epochs=3).fit(X, y, sensitive_features=s)
    assert pre.n_iter_ == 3 and pre.validation_loss_ == []


def test_the_classifier_passes_the_settings_to_its_flows(wide):
    X, y, s, _ = wide
    clf = AdapFairClassifier(epochs=40, base_epochs=5, n_iter_no_change=2, random_state=0)
    clf.fit(X, y, sensitive_features=s)
    assert clf.n_iter_ == clf.preprocessor_.n_iter_ < 40
    assert clf.preprocessor_.n_iter_no_change == 2
    off = AdapFairClassifier(epochs=3, base_epochs=5, early_stopping=False, random_state=0)
    assert off.fit(X, y, sensitive_features=s).n_iter_ == 3


@pytest.mark.parametrize(
    "param, value",
    [("validation_fraction", 1.0), ("validation_fraction", 0.0), ("n_iter_no_change", 0)],
)
def test_bad_settings_name_the_parameter(wide, param, value):
    X, y, s, base = wide
    with pytest.raises(ValueError, match=param):
        _flows(base, **{param: value}).fit(X, y, sensitive_features=s)


def test_a_large_held_out_set_is_measured_in_chunks_with_every_cell(monkeypatch, wide):
    """Above HELD_OUT_CHUNK rows the held-out objective is the size-weighted mean over
    fixed stratified chunks, each holding every cell: for a per-row mean it is the whole
    held-out set's mean, as the one-chunk measure is."""
    import torch

    from otfair.estimators.preprocessing import _adapfair_training as training

    X, y, s, _ = wide
    cells = (2 * s + y).astype(int)
    value = torch.as_tensor(np.random.default_rng(1).normal(size=len(cells)))
    seen: list[list[int]] = []

    def objective(idx):
        seen.append(sorted(np.unique(cells[idx.numpy()]).tolist()))
        return value[idx].mean()

    class Settings:
        early_stopping, validation_fraction, tol, n_iter_no_change = True, 0.5, 1e-4, 3

    def score_with(chunk):
        monkeypatch.setattr(training, "HELD_OUT_CHUNK", chunk)
        seen.clear()
        rows, stop = training.held_out_stop(
            torch.nn.Linear(1, 1), objective, cells, Settings, np.random.default_rng(0), "cpu"
        )
        return rows, stop.score(), len(seen)

    rows, whole, calls = score_with(10_000)
    held = np.setdiff1d(np.arange(len(cells)), rows)
    assert calls == 1 and len(held) == 200
    assert whole == pytest.approx(float(value[held].mean()))
    rows_chunked, chunked, calls = score_with(40)
    np.testing.assert_array_equal(rows_chunked, rows)  # the same split
    assert calls >= 4 and all(cell == [0, 1, 2, 3] for cell in seen)
    assert chunked == pytest.approx(whole)
