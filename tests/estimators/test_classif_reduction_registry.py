import numpy as np
import pytest
from _classif_data import two_group_data
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

from otfair.estimators import FairClassifier, ReductionClassifier
from otfair.penalties import FairTorchDP
from otfair_lab.experiments.methods import get_method, list_methods

METHODS = ["unfair", "unfair-mlp", "otf", "norm", "barycenter", "ftm", "ftm-joint", "gapreg",
           "adv", "fairtorch-reduction", "reduction"]  # fmt: skip


def test_reduction_reproducible_and_fairer_than_plain_lr():
    X, y, s = two_group_data()
    a = ReductionClassifier(0.01, random_state=0).fit(X, y, sensitive_features=s)
    b = clone(a).fit(X, y, sensitive_features=s)
    pa = a.predict_proba(X)
    np.testing.assert_array_equal(pa, b.predict_proba(X))
    np.testing.assert_allclose(pa.sum(axis=1), 1.0)
    plain = LogisticRegression().fit(X, y).predict(X)
    gap_plain = abs(plain[s == 0].mean() - plain[s == 1].mean())
    gap_red = abs(pa[s == 0, 1].mean() - pa[s == 1, 1].mean())
    assert gap_red < 0.5 * gap_plain
    with pytest.raises(ValueError, match="sensitive_features"):
        ReductionClassifier().fit(X, y, sensitive_features=np.zeros(len(y)))


def test_all_methods_registered_with_paper_defaults():
    assert set(METHODS) <= set(list_methods("classification"))
    otf = get_method("otf").build(None, notion="eo", random_state=0, epochs=None,
                                  device="cpu", dataset="adult")  # fmt: skip
    assert isinstance(otf, FairClassifier)
    p = otf.get_params()
    assert (p["model"], p["lr"], p["batch_size"], p["penalty__eps"], p["epochs"]) == (
        "logistic", 1e-3, 1000, 1e-3, 100)  # fmt: skip
    alphas = get_method("otf").default_strengths
    assert list(alphas) == sorted(alphas) and alphas[0] > 0 and alphas[-1] <= 1  # convex
    for name, m in (("ftm", "marginal"), ("ftm-joint", "joint")):
        spec = get_method(name)
        # Table 7 of the FTM paper, the FTM row (the whole grid, issue 27)
        table7 = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.5, 2.0,
                  3.0, 5.0, 10.0]  # fmt: skip
        assert spec.sensitive_as_input and list(spec.default_strengths) == table7
        est = spec.build(2.0, notion=None, random_state=0, epochs=5, device="cpu",
                         dataset="german")  # fmt: skip
        p = est.get_params()
        assert (p["penalty__matching"], p["penalty__group_batch_size"], p["epochs"],
                p["lr_decay"]) == (m, 200, 5, 0.95)  # fmt: skip
        assert p["model"] == "mlp" and p["hidden"] is None
    assert get_method("ftm").build(None, notion="dp", random_state=0, epochs=None,
                                   device="cpu", dataset="bank").epochs == 200  # fmt: skip
    # The FTM paper's Unfair baseline: the FTM family's MLP and training, no penalty.
    spec = get_method("unfair-mlp")
    assert spec.sensitive_as_input and not spec.default_strengths and not spec.has_strength
    ref = get_method("gapreg").build(1.0, notion="dp", random_state=0, epochs=None,
                                     device="cpu", dataset="adult").get_params()  # fmt: skip
    p = spec.build(None, notion="dp", random_state=0, epochs=None, device="cpu",
                   dataset="adult").get_params()  # fmt: skip
    assert p["penalty"] == "none"
    same = ("model", "hidden", "lr", "lr_decay", "epochs", "batch_size")
    assert {k: p[k] for k in same} == {k: ref[k] for k in same}


@pytest.mark.parametrize("name", METHODS)
def test_every_method_fits_on_small_data(name):
    X, y, s = two_group_data(300)
    opts = {} if name == "reduction" else {"batch_size": 100}
    if name.startswith("ftm"):
        opts["group_batch_size"] = 32
    est = get_method(name).build(
        None, notion="dp", random_state=0, epochs=1, device="cpu", dataset=None, **opts
    )
    est.fit(X, y, sensitive_features=s)
    assert est.predict_proba(X).shape == (300, 2)


def test_fairtorch_reduction_is_the_ftm_papers_reduction():
    """FTM App. D.2 / Table 7: FairTorch's DP loss on the FTM family's MLP, its lambda grid."""
    spec = get_method("fairtorch-reduction")
    table7 = [0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0,
              80.0, 100.0, 150.0, 200.0, 300.0, 500.0]  # fmt: skip
    assert list(spec.default_strengths) == table7 and spec.sensitive_as_input
    assert spec.notions == ("dp",) and "FairTorch" in spec.paper
    p = spec.build(50.0, notion=None, random_state=0, epochs=None, device="cpu",
                   dataset="dutch").get_params()  # fmt: skip
    ref = get_method("gapreg").build(1.0, notion=None, random_state=0, epochs=None,
                                     device="cpu", dataset="dutch").get_params()  # fmt: skip
    assert (p["penalty"], p["strength"]) == (FairTorchDP(), 50.0)
    same = ("model", "hidden", "lr", "lr_decay", "epochs", "batch_size", "mixing")
    assert {k: p[k] for k in same} == {k: ref[k] for k in same}
    # a large lambda lowers the training DP gap of the scores well below lambda = 0's
    X, y, s = two_group_data(600)

    def gap(lam):
        est = spec.build(lam, notion="dp", random_state=0, epochs=30, device="cpu",
                         dataset=None, batch_size=100, lr=1e-2)  # fmt: skip
        proba = est.fit(X, y, sensitive_features=s).predict_proba(X)[:, 1]
        return abs(proba[s == 0].mean() - proba[s == 1].mean())

    free, fair = gap(0.0), gap(500.0)
    assert fair < 0.25 * free, (free, fair)


def test_reduction_proba_is_clipped_mixture():
    # The expected probability of the mixture must stay in [0, 1] (the metrics reject
    # 1 + 1e-16) and equal fairlearn's _pmf_predict up to that rounding.
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 4))
    s = (rng.random(300) < 0.4).astype(int)
    y = (X[:, 0] + 2 * s + 0.3 * rng.normal(size=300) > 0.8).astype(int)
    est = ReductionClassifier(0.01, random_state=0).fit(X, y, sensitive_features=s)
    p = est.predict_proba(X)
    assert p.min() >= 0.0 and p.max() <= 1.0
    np.testing.assert_allclose(p, est.mitigator_._pmf_predict(X), atol=1e-12)


def test_reduction_eps_is_the_allowed_violation():
    # eps must move the trade-off: a loose bound keeps more of the unfair gap than a
    # tight one, and the tight one is (near) fair on the training data.
    rng = np.random.default_rng(4)
    X = rng.normal(size=(600, 3))
    s = (rng.random(600) < 0.4).astype(int)
    X[:, 0] += 1.5 * s
    y = (X[:, 0] + 0.3 * rng.normal(size=600) > 0.7).astype(int)

    def gap(eps):
        est = ReductionClassifier(eps, random_state=0).fit(X, y, sensitive_features=s)
        p = est.predict_proba(X)[:, 1]
        return abs(p[s == 0].mean() - p[s == 1].mean())

    plain = LogisticRegression().fit(X, y).predict(X)
    unfair = abs(plain[s == 0].mean() - plain[s == 1].mean())
    loose, tight = gap(0.2), gap(0.01)
    assert tight < 0.05 < unfair
    assert loose > tight + 0.1, (loose, tight, unfair)
