import numpy as np
import ot
import pytest

from otfair.datasets import (
    load_dataset,
    make_synthetic,
    make_synthetic_regression,
    make_synthetic_scm,
)


def test_synthetic_defaults_and_seed():
    ds = make_synthetic()
    assert len(ds) == 4000 and ds.task == "classification"
    assert ds.categorical == ["segment"]
    again = make_synthetic()
    np.testing.assert_array_equal(ds.target, again.target)
    assert not np.array_equal(ds.target, make_synthetic(random_state=1).target)


def test_synthetic_controls_shift_and_bias():
    ds = make_synthetic(20000, covariate_shift=2.0, label_bias=0.0, random_state=0)
    s = ds.sensitive["group"].to_numpy()
    X = ds.data[[f"x{j}" for j in range(5)]].to_numpy()
    gap = X[s == 1].mean(axis=0) - X[s == 0].mean(axis=0)
    assert np.linalg.norm(gap) == pytest.approx(2.0, abs=0.1)
    assert s.mean() == pytest.approx(0.4, abs=0.02)
    none = make_synthetic(20000, covariate_shift=0.0, label_bias=0.0)
    biased = make_synthetic(20000, covariate_shift=0.0, label_bias=2.0)

    def rate_gap(d):
        g = d.sensitive["group"].to_numpy()
        return d.target[g == 1].mean() - d.target[g == 0].mean()

    assert abs(rate_gap(none)) < 0.03
    assert rate_gap(biased) > 0.25


def test_scm_counterfactual_is_gaussian_ot_map():
    scm = make_synthetic_scm(4000, n_features=3, sigma=(1.0, 2.0), random_state=0)
    ds = scm.dataset
    s = ds.sensitive["group"].to_numpy()
    X = ds.data.to_numpy()
    np.testing.assert_allclose(scm.counterfactual_of(X, s), scm.counterfactual, atol=1e-10)
    # independent reference: POT's closed-form OT map between the two group Gaussians
    m0, m1 = scm.B @ scm.mu[0], scm.B @ scm.mu[1]
    A, b = ot.gaussian.bures_wasserstein_mapping(m0, m1, scm.covariance(0), scm.covariance(1))
    np.testing.assert_allclose(X[s == 0] @ A + b, scm.counterfactual[s == 0], atol=1e-8)
    # and the empirical law of group-0 counterfactuals matches group 1
    np.testing.assert_allclose(scm.counterfactual[s == 0].mean(0), X[s == 1].mean(0), atol=0.2)
    assert np.allclose(np.tril(scm.A, 0), scm.A) and np.all(np.diag(scm.A) == 0)


def test_scm_counterfactual_validates():
    scm = make_synthetic_scm(50)
    with pytest.raises(ValueError, match="`X`"):
        scm.counterfactual_of(np.zeros((3, 2)), np.zeros(3))
    with pytest.raises(ValueError, match="`s`"):
        scm.counterfactual_of(np.zeros((3, 4)), np.array([0, 2, 1]))


def test_regression_has_accuracy_disparity():
    ds = make_synthetic_regression(20000, noise=(0.2, 1.0))
    s = ds.sensitive["group"].to_numpy()
    X = np.c_[ds.data.to_numpy(), np.ones(len(ds))]
    beta, *_ = np.linalg.lstsq(X, ds.target, rcond=None)
    res = ds.target - X @ beta
    assert ds.task == "regression"
    assert np.mean(res[s == 1] ** 2) > 2 * np.mean(res[s == 0] ** 2)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_samples": 3}, "n_samples"),
        ({"group_ratio": 1.0}, "group_ratio"),
        ({"n_features": 0}, "n_features"),
    ],
)
def test_generator_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_synthetic(**kwargs)


def test_load_dataset_synthetic_options():
    ds = load_dataset("synthetic_scm", n_samples=100, scaling="standard")
    assert len(ds) == 100 and ds.scaling == "standard"
    with pytest.raises(ValueError, match="Unknown option.*n_samples"):
        load_dataset("synthetic", sensitive="sex")
    with pytest.raises(ValueError, match="scaling"):
        load_dataset("synthetic", scaling="robust")
    with pytest.raises(ValueError, match="Unknown dataset 'nope'.*adult"):
        load_dataset("nope")
