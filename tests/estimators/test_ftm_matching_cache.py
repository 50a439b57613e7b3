import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist

from otfair.penalties._ftm import FTMMatchingCache, draw_pairings


def _data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    g = (rng.random(n) < 0.35).astype(int)
    y = (rng.random(n) < 0.5).astype(float)
    return X, g, y


def test_pairings_cover_every_point_and_respect_groups():
    _, g, _ = _data()
    pool = draw_pairings(g, m=16, seed=0, n_rounds=1)
    assert pool.shape[1:] == (2, 16)
    assert set(pool[:, 0].ravel()) == set(np.flatnonzero(g == 0))
    assert set(pool[:, 1].ravel()) == set(np.flatnonzero(g == 1))
    # m larger than the smaller group is clipped to it
    assert draw_pairings(g, m=10_000, seed=0, n_rounds=1).shape[2] == int((g == 1).sum())


@pytest.mark.parametrize("joint", [False, True])
def test_matching_is_optimal_against_scipy(joint):
    X, g, y = _data()
    pool = FTMMatchingCache().get(
        X, g, y, m=16, label_weight=100.0 if joint else None, seed=1, n_rounds=1
    )
    raw = draw_pairings(g, m=16, seed=1, n_rounds=1)
    for p in range(pool.shape[0]):
        i0, i1 = raw[p]
        np.testing.assert_array_equal(pool[p, 0], i0)
        assert sorted(pool[p, 1]) == sorted(i1)  # a permutation of the same batch
        C = cdist(X[i0], X[i1], "sqeuclidean")
        if joint:
            C = C + 100.0 * np.abs(y[i0][:, None] - y[i1][None, :])
        r, c = linear_sum_assignment(C)
        ours = cdist(X[pool[p, 0]], X[pool[p, 1]], "sqeuclidean").diagonal()
        if joint:
            ours = ours + 100.0 * np.abs(y[pool[p, 0]] - y[pool[p, 1]])
        assert ours.sum() == pytest.approx(C[r, c].sum())


def test_joint_map_matches_labels_when_counts_allow():
    X, g, _ = _data(200, seed=2)
    y = np.zeros(200)
    y[np.flatnonzero(g == 0)[::2]] = 1
    y[np.flatnonzero(g == 1)[::2]] = 1
    pool = FTMMatchingCache().get(X, g, y, m=20, label_weight=100.0, seed=0, n_rounds=1)
    mismatch = [np.abs(y[p[0]] - y[p[1]]).sum() for p in pool]
    expected = [abs(y[p[0]].sum() - y[p[1]].sum()) for p in pool]
    np.testing.assert_array_equal(mismatch, expected)  # only the unavoidable ones


def test_memory_and_disk_cache_reuse(tmp_path):
    X, g, y = _data()
    cache = FTMMatchingCache(tmp_path)
    a = cache.get(X, g, y, m=16, label_weight=None, seed=0, n_rounds=1)
    b = cache.get(X, g, y, m=16, label_weight=None, seed=0, n_rounds=1)
    assert a is b and cache.misses == 1
    fresh = FTMMatchingCache(tmp_path)  # another process: reads the .npz
    np.testing.assert_array_equal(fresh.get(X, g, y, m=16, label_weight=None, seed=0,
                                            n_rounds=1), a)  # fmt: skip
    assert fresh.misses == 0 and len(list(tmp_path.glob("*.npz"))) == 1
    X2 = X.copy()
    X2[0, 0] += 1.0  # different data -> different key
    cache.get(X2, g, y, m=16, label_weight=None, seed=0, n_rounds=1)
    assert cache.misses == 2


def test_ftm_estimator_reuses_cache_across_strengths():
    from otfair.estimators.classification.fair_classifier import FairClassifier
    from otfair.penalties import FTM
    from otfair.penalties._ftm import DEFAULT_CACHE

    X, g, y = _data(300, seed=5)
    before = DEFAULT_CACHE.misses
    for lam in (0.0, 1.0, 3.0):
        FairClassifier(FTM(group_batch_size=32), lam, model="mlp", epochs=1,
                       random_state=int(lam)).fit(X, y, sensitive_features=g)  # fmt: skip
    assert DEFAULT_CACHE.misses == before + 1
