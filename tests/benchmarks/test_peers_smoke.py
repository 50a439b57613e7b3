"""Smoke tests of the peers benchmark (benchmarks/peers) on small synthetic data."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("fairret")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "peers"))
import peers_fits  # noqa: E402
import peers_report  # noqa: E402

from otfair.estimators import FairClassifier  # noqa: E402


def _biased(n: int = 600, seed: int = 0) -> peers_fits.Data:
    rng = np.random.default_rng(seed)
    s = (rng.random(n) < 0.4).astype(np.int64)
    X = rng.normal(size=(n, 4)).astype(np.float32)
    X[:, 1] += 1.5 * s  # a feature that reveals the group
    y = (X[:, 0] + X[:, 1] + 0.5 * rng.normal(size=n) > 0.8).astype(np.int64)
    cut = n * 3 // 4
    return peers_fits.Data(X[:cut], y[:cut], s[:cut], X[cut:], y[cut:], s[cut:])


@pytest.mark.parametrize("model", ["logistic", "mlp"])
def test_fairret_loop_at_strength_zero_is_fairclassifier(model):
    # "same model, optimizer and batches": with no fairret loss the plain loop must
    # reproduce FairClassifier("none") (same init, same stratified batch order).
    d = _biased()
    net = peers_fits.fit_fairret(
        None, 0.0, d.X_train, d.y_train, d.s_train, model=model, epochs=4, batch_size=100,
        random_state=3,
    )  # fmt: skip
    paper = {"solver": "adam", "tol": None, "lr": 1e-3, "init_intercept": False, "l2": 0.0}
    hidden = None if model == "mlp" else "auto"  # the page's MLP: two layers of width d
    clf = FairClassifier("none", 0.0, model=model, hidden=hidden, epochs=4, batch_size=100,
                         random_state=3, **paper)  # fmt: skip
    clf.fit(d.X_train, d.y_train, sensitive_features=d.s_train)
    np.testing.assert_allclose(
        peers_fits.torch_proba(net, d.X_test), clf.predict_proba(d.X_test)[:, 1], atol=1e-5
    )


def test_stratified_batches_keep_group_proportions():
    groups = np.repeat([0, 1], [300, 100])
    parts = peers_fits.stratified_batches(groups, 80, np.random.default_rng(0))
    assert sorted(np.concatenate(parts).tolist()) == list(range(400))
    for p in parts:
        assert abs(groups[p].mean() - 0.25) <= 1 / len(p) + 1e-12


def test_fairret_norm_loss_lowers_the_dp_gap():
    d = _biased(n=800)
    gaps = []
    for strength in (0.0, 5.0):
        net = peers_fits.fit_fairret(
            peers_fits.fairret_loss("fairret-norm"), strength, d.X_train, d.y_train,
            d.s_train, epochs=60, batch_size=200, random_state=0,
        )  # fmt: skip
        p = peers_fits.torch_proba(net, d.X_train)
        gaps.append(abs(p[d.s_train == 1].mean() - p[d.s_train == 0].mean()))
    assert gaps[1] < 0.5 * gaps[0]


def test_runner_rows_for_postprocessors(monkeypatch):
    monkeypatch.setattr(peers_fits, "EPOCHS", 3)
    runner = peers_fits.Runner("toy", "logistic", 0, data=_biased())
    rows = runner.fit("threshold-opt", 0.0)
    assert [r["method"] for r in rows] == ["threshold-opt"]
    r = rows[0]
    assert 0.0 <= r["dp_gap"] <= 1.0 and 0.0 <= r["accuracy"] <= 1.0
    # the post-processor's fit time includes the base model's
    assert r["fit_cpu_s"] >= round(runner.base()[1], 2) - 0.01
    rows = runner.fit("reduction", 0.05)
    assert [r["method"] for r in rows] == ["reduction", "exp-gradient"]
    with pytest.raises(ValueError, match="unknown method"):
        runner.fit("nope", 1.0)


def _agg(points):
    return {
        ("d", "m", meth, st): {"dp_gap": dp, "accuracy": acc, "auc": 0.8, "fit_cpu_s": 1.0,
                               "n_seeds": 1, "accuracy_std": 0.0, "auc_std": 0.0}
        for meth, st, dp, acc in points
    }  # fmt: skip


def test_matched_picks_largest_dp_at_most_the_level():
    agg = _agg([("a", 1.0, 0.10, 0.85), ("a", 2.0, 0.045, 0.83), ("a", 3.0, 0.01, 0.80),
                ("b", 1.0, 0.08, 0.84)])  # fmt: skip
    rows = {(r["method"], r["level"]): r for r in peers_report.matched(agg, (0.05, 0.02))}
    assert rows["a", 0.05]["strength"] == 2.0
    assert rows["a", 0.02]["strength"] == 3.0
    assert math.isnan(rows["b", 0.05]["strength"]) and rows["b", 0.05]["min_dp"] == 0.08
    text = peers_report.markdown(list(rows.values()))
    assert "not reached (min DP 0.080)" in text
