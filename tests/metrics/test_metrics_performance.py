"""Performance metrics against scikit-learn."""

from __future__ import annotations

import numpy as np
import pytest
import sklearn.metrics as skm

from otfair.metrics import accuracy, log_loss, mean_squared_error, r2_score, roc_auc


def test_classification_metrics_match_sklearn(adult_panel):
    y, p = adult_panel.y, adult_panel.score
    assert accuracy(y, p) == pytest.approx(skm.accuracy_score(y, p >= 0.5))
    assert accuracy(y, p, threshold=0.3) == pytest.approx(skm.accuracy_score(y, p >= 0.3))
    assert roc_auc(y, p) == pytest.approx(skm.roc_auc_score(y, p))
    assert log_loss(y, p) == pytest.approx(skm.log_loss(y, p))


def test_auc_with_ties_and_hard_scores():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    p = np.round(rng.random(300), 1)
    assert roc_auc(y, p) == pytest.approx(skm.roc_auc_score(y, p))
    hard = rng.integers(0, 2, 300)
    assert roc_auc(y, hard) == pytest.approx(skm.roc_auc_score(y, hard))
    assert roc_auc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]) == pytest.approx(0.75)


def test_regression_metrics_match_sklearn():
    rng = np.random.default_rng(1)
    y = rng.normal(size=200)
    pred = y + rng.normal(scale=0.5, size=200)
    assert mean_squared_error(y, pred) == pytest.approx(skm.mean_squared_error(y, pred))
    assert r2_score(y, pred) == pytest.approx(skm.r2_score(y, pred))


def test_undefined_cases_raise():
    with pytest.raises(ValueError, match="only one class"):
        roc_auc([1, 1, 1], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="constant"):
        r2_score([1.0, 1.0], [0.0, 2.0])
    with pytest.raises(ValueError, match="y_score.*probabilities"):
        log_loss([0, 1], [0.5, 1.2])


def test_wrappers_keep_the_documented_formulas():
    # independent of scikit-learn: the docstrings' formulas computed by hand
    from scipy.stats import rankdata

    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 250)
    p = np.round(rng.random(250), 2)
    p[:3] = [0.0, 1.0, 0.5]  # exact 0/1 are clipped to [eps, 1 - eps]; 0.5 >= 0.5 is 1
    n_pos = y.sum()
    ranks = rankdata(p)
    mann_whitney = (ranks[y == 1].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * (y.size - n_pos))
    assert roc_auc(y, p) == pytest.approx(mann_whitney, abs=1e-12)
    eps = np.finfo(np.float64).eps
    q = np.clip(p, eps, 1 - eps)
    ce = -np.mean(y * np.log(q) + (1 - y) * np.log1p(-q))
    assert log_loss(y, p) == pytest.approx(ce, rel=1e-12)
    assert accuracy(y, p) == np.mean((p >= 0.5) == y)
    assert accuracy([1, 0], [0.5, 0.4999]) == 1.0
    # one class present: defined (labels are {0, 1} by convention), unlike bare sklearn
    assert log_loss([1, 1], [0.5, 0.25]) == pytest.approx(-np.mean(np.log([0.5, 0.25])))
    d = rng.normal(size=40)
    e = d + rng.normal(size=40)
    assert mean_squared_error(d, e) == pytest.approx(np.mean((d - e) ** 2), rel=1e-12)
    r2 = 1 - np.sum((d - e) ** 2) / np.sum((d - d.mean()) ** 2)
    assert r2_score(d, e) == pytest.approx(r2, rel=1e-12)
