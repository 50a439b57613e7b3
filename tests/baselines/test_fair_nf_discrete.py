"""Fair NF's exact encoder of a finite space: the coding, the matching, the certificate."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from otfair.estimators.representation import DiscreteFairNFClassifier
from otfair.estimators.representation._discrete_coding import DiscreteCoding
from otfair.estimators.representation.fair_nf_discrete import encoded_distance, rank_matching

FAST = {"epochs": 2, "density_epochs": 2, "batch_size": 64, "random_state": 0}


def _mixed(n: int = 400, seed: int = 0) -> np.ndarray:
    """A numeric column, a 3-level one-hot block, a lone 0/1 column, a 25-level block."""
    rng = np.random.default_rng(seed)
    num = rng.normal(size=n)
    small = np.eye(3)[rng.integers(0, 3, n)]
    lone = rng.integers(0, 2, n)
    big = np.eye(25)[rng.integers(0, 25, n)]
    return np.column_stack([num, small, lone, big])


def test_coding_finds_blocks_bins_and_drops_wide_blocks():
    X = _mixed()
    coding = DiscreteCoding(n_bins=4, max_levels=20).fit(X)
    # one-hot block (3), then the numeric column's 4 quantile bins and the lone 0/1
    assert coding.cardinalities_ == [3, 4, 2]
    assert coding.n_cells_ == 24
    codes = coding.codes(X)
    np.testing.assert_array_equal(codes[:, 0], X[:, 1:4].argmax(axis=1))
    edges = np.quantile(X[:, 0], [0.25, 0.5, 0.75])
    np.testing.assert_array_equal(codes[:, 1], np.digitize(X[:, 0], edges, right=True))
    np.testing.assert_array_equal(codes[:, 2], X[:, 4].astype(int))
    index = coding.cell_index(codes)
    np.testing.assert_array_equal(index, np.ravel_multi_index(codes.T, (3, 4, 2)))
    np.testing.assert_array_equal(coding.cells(index), codes)
    onehot = coding.one_hot(codes)
    assert onehot.shape == (len(X), 9) and np.all(onehot.sum(axis=1) == 3)
    # an unseen category (all zeros in its block) takes the block's most frequent level
    row = X[:1].copy()
    row[0, 1:4] = 0
    assert coding.codes(row)[0, 0] == np.argmax(X[:, 1:4].sum(axis=0))


def test_coding_without_bins_keeps_the_categorical_blocks_only():
    coding = DiscreteCoding(n_bins=None, max_levels=30).fit(_mixed())
    assert coding.cardinalities_ == [3, 25]
    with pytest.raises(ValueError, match="max_levels"):
        DiscreteCoding(n_bins=None, max_levels=2).fit(_mixed())


def test_rank_matching_is_the_bijection_of_least_statistical_distance():
    rng = np.random.default_rng(0)
    for _ in range(5):
        p_src, p_tgt = rng.dirichlet(np.ones(6)), rng.dirichlet(np.ones(6))
        perm = rank_matching(np.log(p_src), np.log(p_tgt))
        assert sorted(perm) == list(range(6))

        def l1(t, p_src=p_src, p_tgt=p_tgt):
            pushed = np.zeros(6)
            pushed[list(t)] = p_src
            return np.abs(p_tgt - pushed).sum()

        best = min(l1(t) for t in itertools.permutations(range(6)))
        assert l1(perm) == pytest.approx(best, abs=1e-12)


def test_encoded_distance_matches_a_loop():
    rng = np.random.default_rng(1)
    p_b, p_a = rng.dirichlet(np.ones(8)), rng.dirichlet(np.ones(8))
    t_label, t_all = rng.permutation(8), rng.permutation(8)
    gamma = 0.3
    pushed = np.zeros(8)
    for c in range(8):
        pushed[t_label[c]] += (1 - gamma) * p_a[c]
        pushed[t_all[c]] += gamma * p_a[c]
    expected = 0.5 * sum(abs(p_b[c] - pushed[c]) for c in range(8))
    assert encoded_distance(p_b, p_a, t_label, t_all, gamma) == pytest.approx(expected)


def _toy(n: int = 1200, seed: int = 0):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 3)) + 1.2 * s[:, None] * np.array([1.0, 0.5, 0.0])
    y = (X[:, 0] + X[:, 2] + 0.3 * rng.normal(size=n) > 0.6).astype(int)
    return X, y, s


def test_the_maps_are_bijections_and_the_certificate_bounds_the_model_dp_gap():
    X, y, s = _toy()
    fits = {
        g: DiscreteFairNFClassifier(g, **FAST).fit(X, y, sensitive_features=s)
        for g in (0.0, 0.5, 1.0)
    }
    est = fits[0.5]
    n = est.coding_.n_cells_
    assert sorted(est.map_all_) == list(range(n)) and sorted(est.map_label_) == list(range(n))
    # T_label keeps the label predictor's class of every cell
    space = est.coding_.one_hot(est.coding_.all_cells())
    klass = est.label_predictor_.predict(space)
    np.testing.assert_array_equal(klass[est.map_label_], klass)
    # T_all is the best bijection, so gamma = 1 certifies at most what gamma = 0 does,
    # and Delta is convex in gamma
    sd = {g: f.statistical_distance_ for g, f in fits.items()}
    assert sd[1.0] <= sd[0.0] + 1e-12
    assert sd[0.5] <= 0.5 * (sd[0.0] + sd[1.0]) + 1e-12
    # the certificate bounds the DP gap of the fitted classifier under the densities
    with torch.no_grad():
        p = [
            est.densities_[g].log_prob(torch.as_tensor(space)).exp().double().numpy()
            for g in (0, 1)
        ]
    h = (est._proba(space) >= 0.5).astype(float)
    a, b = est.mapped_group_, est.reference_group_
    pushed = 0.5 * np.bincount(est.map_label_, weights=p[a], minlength=n)
    pushed += 0.5 * np.bincount(est.map_all_, weights=p[a], minlength=n)
    assert abs(h @ p[b] - h @ pushed) <= est.statistical_distance_ + 1e-9
    assert est.statistical_distance_ == pytest.approx(0.5 * np.abs(p[b] - pushed).sum(), rel=1e-5)


def test_the_larger_group_is_mapped_and_the_expected_prediction_is_returned():
    X, y, s = _toy()
    s = np.where(np.arange(len(s)) < 300, 1, 0)  # group 1 is the smaller
    est = DiscreteFairNFClassifier(0.25, **FAST).fit(X, y, sensitive_features=s)
    assert (est.mapped_group_, est.reference_group_) == (0, 1)
    coding = est.coding_
    cells = coding.cell_index(coding.codes(X))
    expected = 0.75 * est._proba(coding.one_hot(coding.cells(est.map_label_[cells])))
    expected += 0.25 * est._proba(coding.one_hot(coding.cells(est.map_all_[cells])))
    own = est._proba(coding.one_hot(coding.cells(cells)))
    expected = np.where(s == 0, expected, own)
    proba = est.predict_proba(X, sensitive_features=s)[:, 1]
    np.testing.assert_allclose(proba, expected, rtol=1e-6)


def test_bad_parameters_raise_naming_them():
    X, y, s = _toy(200)
    with pytest.raises(ValueError, match="strength"):
        DiscreteFairNFClassifier(1.5).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="max_cells"):
        DiscreteFairNFClassifier(0.5, max_cells=10).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="n_bins"):
        DiscreteFairNFClassifier(0.5, n_bins=0).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match="max_levels"):
        DiscreteFairNFClassifier(0.5, n_bins=None).fit(X, y, sensitive_features=s)


def test_adult_dp_gap_halves_with_gamma():
    # The authors' setting: Adult (here 6,000 training rows), categorical blocks and
    # quartile bins; the label-blind map removes most of the DP gap.
    from otfair.datasets import load_dataset
    from otfair.metrics import demographic_parity_gap

    split = load_dataset("adult").split(random_state=0)
    rows = np.random.default_rng(0).choice(len(split.y_train), 6000, replace=False)
    X, y = np.asarray(split.X_train)[rows], np.asarray(split.y_train).astype(int)[rows]
    s = np.asarray(split.s_train).astype(int).ravel()[rows]
    Xt, st = np.asarray(split.X_test), np.asarray(split.s_test).astype(int).ravel()
    dp = {}
    for gamma in (0.0, 1.0):
        est = DiscreteFairNFClassifier(gamma, density_epochs=10, random_state=0)
        est.fit(X, y, sensitive_features=s)
        dp[gamma] = demographic_parity_gap(
            np.asarray(split.y_test), est.predict(Xt, sensitive_features=st), sensitive_features=st
        )
    assert dp[1.0] < 0.5 * dp[0.0]


def test_too_many_cells_says_whether_n_bins_can_fix_it():
    """The refusal names the fix that works: ``n_bins=None`` when the one-hot blocks
    alone fit in ``max_cells``; otherwise ``max_levels`` (German's blocks alone have
    8.6 million cells, above the default 2 million)."""
    rng = np.random.default_rng(0)
    n = 300
    blocks = [np.eye(k)[rng.integers(0, k, n)] for k in (4, 5)]  # 20 cells
    numeric = rng.normal(size=(n, 3))  # 4 bins each: 64
    X = np.hstack([*blocks, numeric])
    y, s = rng.integers(0, 2, n), rng.integers(0, 2, n)
    with pytest.raises(ValueError, match=r"1,280 cells .*n_bins.*blocks alone have 20 cells"):
        DiscreteFairNFClassifier(0.5, max_cells=100).fit(X, y, sensitive_features=s)
    with pytest.raises(ValueError, match=r"blocks alone have 20 cells, so `n_bins` cannot"):
        DiscreteFairNFClassifier(0.5, max_cells=10).fit(X, y, sensitive_features=s)
