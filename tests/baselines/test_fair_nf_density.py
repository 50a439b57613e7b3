"""Fair NF's group density estimates (``density="gmm"`` / ``"kde"``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.special import logsumexp
from scipy.stats import norm

from otfair.estimators.representation import FairNormalizingFlowClassifier
from otfair.estimators.representation.fair_nf import fit_density


def _rows(n=60, d=3, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d)).astype(np.float32)


def test_kde_is_a_kernel_estimate_on_sampled_rows():
    X = _rows()
    dens = fit_density(X, density="kde", n_components=10, reg_covar=0.01, bandwidth=0.4, seed=1)
    centers = dens.means.numpy()
    assert centers.shape == (10, 3)
    # every center is a training row, drawn without replacement
    assert len({tuple(c) for c in centers}) == 10
    assert all(np.any(np.all(c == X, axis=1)) for c in centers)
    x = _rows(5, seed=2)
    # log p(x) = logsumexp_j [log N(x; x_j, h^2 I)] - log m (scipy)
    per_center = norm.logpdf(x[:, None, :], centers[None], 0.4).sum(-1)
    expected = logsumexp(per_center, axis=1) - np.log(10)
    got = dens(torch.as_tensor(x)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-4)


def test_kde_uses_all_rows_when_fewer_than_centers():
    X = _rows(7)
    dens = fit_density(X, density="kde", n_components=50, reg_covar=0.01, bandwidth=0.3, seed=0)
    assert dens.means.shape[0] == 7


def test_gmm_matches_sklearn_score_samples():
    from sklearn.mixture import GaussianMixture

    X = _rows(200)
    dens = fit_density(X, density="gmm", n_components=3, reg_covar=1e-3, bandwidth=0.3, seed=0)
    ref = GaussianMixture(3, covariance_type="diag", reg_covar=1e-3, random_state=0).fit(X)
    x = _rows(20, seed=3)
    np.testing.assert_allclose(
        dens(torch.as_tensor(x)).numpy(), ref.score_samples(x), rtol=1e-4, atol=1e-4
    )


@pytest.mark.parametrize(
    ("param", "value", "match"),
    [("density", "parzen", "density"), ("bandwidth", 0.0, "bandwidth")],
)
def test_bad_density_settings_name_the_argument(param, value, match):
    X, y = _rows(40), np.tile([0, 1], 20)
    s = np.repeat([0, 1], 20)
    est = FairNormalizingFlowClassifier(epochs=1, **{param: value})
    with pytest.raises(ValueError, match=match):
        est.fit(X, y, sensitive_features=s)


def test_kde_fit_is_seeded():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4)).astype(np.float32)
    y = (X[:, 0] > 0).astype(int)
    s = (rng.random(120) < 0.5).astype(int)
    kw = {"density": "kde", "n_components": 16, "epochs": 2, "strength": 0.5}
    p1 = FairNormalizingFlowClassifier(random_state=3, **kw).fit(X, y, sensitive_features=s)
    p2 = FairNormalizingFlowClassifier(random_state=3, **kw).fit(X, y, sensitive_features=s)
    np.testing.assert_array_equal(
        p1.predict_proba(X, sensitive_features=s), p2.predict_proba(X, sensitive_features=s)
    )
