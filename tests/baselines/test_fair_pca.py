"""FairPCA (Kleindessner et al. 2023) against sklearn PCA and hand-built cases."""

from __future__ import annotations

import numpy as np
import pytest
from _bad_inputs import check_bad_fit_inputs
from scipy.linalg import eigh, null_space
from sklearn.decomposition import PCA

from otfair.estimators.preprocessing.fair_pca import FairPCA


def _toy(n: int = 1000, d: int = 6, groups: int = 2, seed: int = 0):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, groups, n)
    A = rng.normal(size=(d, d))
    X = rng.normal(size=(n, d)) @ A + np.outer(s, rng.normal(size=d))
    return X, s


@pytest.mark.parametrize("groups", [2, 3])
def test_projected_group_means_are_equal(groups):
    X, s = _toy(groups=groups)
    Z = FairPCA(n_components=3).fit(X, sensitive_features=s).transform(X)
    means = np.array([Z[s == g].mean(axis=0) for g in range(groups)])
    np.testing.assert_allclose(means - means.mean(axis=0), 0.0, atol=1e-6)


def test_is_pca_of_the_data_projected_on_the_mean_free_subspace():
    X, s = _toy()
    model = FairPCA(n_components=2).fit(X, sensitive_features=s)
    Xs = (X - X.mean(0)) / X.std(0)
    delta = Xs[s == 1].mean(0) - Xs[s == 0].mean(0)
    R = null_space(delta[None, :])
    ref = PCA(n_components=2).fit(Xs @ R)
    U_ref = R @ ref.components_.T
    U = model.components_
    np.testing.assert_allclose(U @ U.T, U_ref @ U_ref.T, atol=1e-8)  # same subspace


def test_covariance_variant_hand_built_case():
    # means differ along e1; the largest variance is along e2 where the groups' variances
    # differ; e3 has equal variances: fair PCA keeps e2, the covariance variant e3.
    rng = np.random.default_rng(0)
    n = 4000
    s = np.repeat([0, 1], n // 2)
    X = np.c_[
        rng.normal(size=n) * 0.3 + 2.0 * s,
        rng.normal(size=n) * np.where(s == 1, 3.0, 1.5),
        rng.normal(size=n),
    ]
    plain = FairPCA(n_components=1, standardize=False).fit(X, sensitive_features=s)
    assert abs(plain.components_[1, 0]) > 0.99
    cov = FairPCA(
        n_components=1, equalize_covariance=True, n_cov_eigenvectors=1, standardize=False
    ).fit(X, sensitive_features=s)
    assert abs(cov.components_[2, 0]) > 0.99


def test_covariance_variant_keeps_the_smallest_covariance_gaps():
    X, s = _toy(d=8)
    model = FairPCA(n_components=2, equalize_covariance=True, n_cov_eigenvectors=2)
    U = model.fit(X, sensitive_features=s).components_
    Xs = (X - X.mean(0)) / X.std(0)
    diff = np.cov(Xs[s == 0].T) - np.cov(Xs[s == 1].T)
    R = null_space((Xs[s == 1].mean(0) - Xs[s == 0].mean(0))[None, :])
    vals = eigh(R.T @ diff @ R, eigvals_only=True)
    smallest = np.sort(vals[np.argsort(np.abs(vals))[:2]])
    np.testing.assert_allclose(np.sort(eigh(U.T @ diff @ U, eigvals_only=True)), smallest)


def test_strength_appends_scaled_pca_block():
    X, s = _toy()
    full = FairPCA(n_components=2).fit(X, sensitive_features=s)
    half = FairPCA(n_components=2, strength=0.5).fit(X, sensitive_features=s)
    Zf, Zh = full.transform(X), half.transform(X)
    assert Zf.shape == (len(X), 2) and Zh.shape == (len(X), 4)
    np.testing.assert_allclose(Zh[:, :2], Zf)
    Xs = (X - X.mean(0)) / X.std(0)
    ref = PCA(n_components=2).fit(Xs).transform(Xs)
    np.testing.assert_allclose(np.abs(Zh[:, 2:]), 0.125 * np.abs(ref), atol=1e-8)


def test_bad_inputs():
    X, s = _toy(200)
    check_bad_fit_inputs(
        lambda X_, s_: FairPCA(n_components=2).fit(X_, sensitive_features=s_), X, s, n_short=5
    )
    with pytest.raises(ValueError, match="n_components"):
        FairPCA(n_components=6).fit(X, sensitive_features=s)
    model = FairPCA(n_components=2).fit(X, sensitive_features=s)
    with pytest.raises(ValueError, match="not seen during fit"):
        model.transform(X[:2], sensitive_features=[0, 4])


def test_eopp_variant_equalizes_the_positive_rows_means():
    X, s = _toy()
    y = (X[:, 0] + np.random.default_rng(1).normal(size=len(X)) > 0).astype(int)
    Z = FairPCA(n_components=2, notion="eopp").fit(X, y, sensitive_features=s).transform(X)
    pos = y == 1
    np.testing.assert_allclose(Z[pos & (s == 0)].mean(0), Z[pos & (s == 1)].mean(0), atol=1e-6)
    with pytest.raises(ValueError, match="`y` is required"):
        FairPCA(n_components=2, notion="eopp").fit(X, sensitive_features=s)


@pytest.mark.parametrize("groups", [2, 3])
def test_default_keeps_every_dimension_left_after_the_group_means(groups):
    """``n_components=None`` (the default): all ``d - (groups - 1)`` fair directions.

    The old default (10) failed on data with fewer than 11 features (COMPAS has 9); the
    default now keeps what is left, as scikit-learn's ``PCA()`` keeps every component,
    and spans the same subspace as the explicit maximum.
    """
    X, s = _toy(d=6, groups=groups)
    left = 6 - (groups - 1)
    default = FairPCA().fit(X, sensitive_features=s)
    explicit = FairPCA(n_components=left).fit(X, sensitive_features=s)
    assert default.components_.shape == (6, left)
    U, V = default.components_, explicit.components_
    np.testing.assert_allclose(U @ U.T, V @ V.T, atol=1e-8)
    Z = default.transform(X)
    means = np.array([Z[s == g].mean(axis=0) for g in range(groups)])
    np.testing.assert_allclose(means - means.mean(axis=0), 0.0, atol=1e-6)
    equalized = FairPCA(equalize_covariance=True, n_cov_eigenvectors=3) if groups == 2 else None
    if equalized is not None:  # k = l under Algorithm 2
        assert equalized.fit(X, sensitive_features=s).components_.shape == (6, 3)


def test_too_many_components_or_no_dimension_left_name_the_limit():
    X, s = _toy(200, d=4)
    with pytest.raises(ValueError, match="pass at most 3, or None"):
        FairPCA(n_components=4).fit(X, sensitive_features=s)
    with pytest.raises(ValueError, match="No dimension of the 1 features is left"):
        FairPCA().fit(X[:, :1], sensitive_features=s)
