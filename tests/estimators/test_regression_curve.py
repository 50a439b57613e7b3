"""fairness_path(CENet / WassersteinNet): one stacked run equals separate fits.

Tolerance: the same integer seed and strength give predictions within 1e-5 of the target range
and per-epoch histories within 1e-5 (relative, plus 1e-7 absolute). Measured (torch 2.13,
MKL, AVX-512): every case below is bitwise equal, predictions and histories (difference
0); the registry's Crime / Law settings too (100 epochs, lambda 0 and the grid), and
WGAN-GP within one float32 ulp. The tolerance is for other BLAS builds and CPUs, whose
kernels may round batched and separate work differently.
"""

import pickle

import numpy as np
import pytest

from otfair.estimators import CENet, WassersteinNet, fairness_path
from otfair_lab.experiments import RunConfig, load_spec, open_store, run_sweep
from otfair_lab.experiments._stacking import configs_of, path_template, stack_groups

TOL = 1e-5


def _data(n=300, seed=0, p1=0.4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    s = (rng.random(n) < p1).astype(int)
    y = 3.0 / (1 + np.exp(-(X[:, 0] + s))) + 0.1 * rng.normal(size=n)  # scaled by the net
    return X, y, s


SMALL = {"encoder_hidden": (8,), "adversary_hidden": (6,), "epochs": 3, "random_state": 0}
CASES = [
    (CENet, [0.0, 0.5, 2.0], {"batch_size": 64}),
    (CENet, [3.0, 0.0], {"batch_size": 64, "encoder_hidden": (8, 4)}),
    (WassersteinNet, [0.0, 0.5, 2.0], {"batch_size": 64}),
    (WassersteinNet, [2.0, 0.0, 0.5], {"batch_size": 64, "n_critic": 3}),
    (WassersteinNet, [0.0, 1.0], {"batch_size": 64, "n_critic": 2, "gradient_penalty": 10.0}),
    # tiny batches: many hold one group only (the critic has no estimate there)
    (WassersteinNet, [0.0, 1.0, 4.0], {"batch_size": 5, "n_critic": 2, "p1": 0.1}),
]


def _case_id(case):
    cls, lams, kw = case
    extra = ",".join(f"{k}={v}" for k, v in kw.items() if k != "batch_size")
    return f"{cls.__name__}-{lams}-{extra}"


@pytest.mark.parametrize("cls,lams,kw", CASES, ids=[_case_id(c) for c in CASES])
def test_curve_equals_separate_fits(cls, lams, kw):
    kw = dict(kw)
    X, y, s = _data(n=120 if kw.get("batch_size") == 5 else 300, p1=kw.pop("p1", 0.4))
    params = {**SMALL, **kw}
    path = fairness_path(cls(**params), X, y, sensitive_features=s, strengths=lams)
    assert list(path.strengths_) == lams and len(path.estimators_) == len(lams)
    span = np.ptp(y)
    for k, lam in enumerate(lams):
        sep = cls(strength=lam, **params).fit(X, y, sensitive_features=s)
        single = path.estimators_[k]
        assert type(single) is cls and single.strength == lam
        assert (single.adversary_ is None) == (lam == 0)
        p_cur = single.predict(X)
        np.testing.assert_allclose(p_cur, sep.predict(X), rtol=0, atol=TOL * span)
        np.testing.assert_allclose(single.transform(X), sep.transform(X), atol=TOL)
        assert len(single.history_) == len(sep.history_) == params["epochs"]
        for h_cur, h_sep in zip(single.history_, sep.history_, strict=True):
            assert h_cur.keys() == h_sep.keys() == {"mse", "adversary_loss"}
            for key in h_sep:
                assert h_cur[key] == pytest.approx(h_sep[key], rel=TOL, abs=1e-7), (k, key)


def test_each_model_is_a_plain_fitted_estimator():
    X, y, s = _data()
    path = fairness_path(
        WassersteinNet(batch_size=64, **SMALL), X, y, sensitive_features=s, strengths=[0.0, 1.0]
    )
    single = pickle.loads(pickle.dumps(path.estimators_[1]))
    np.testing.assert_array_equal(single.predict(X), path.estimators_[1].predict(X))
    assert single.get_params()["strength"] == 1.0 and not hasattr(single, "estimators_")
    assert single.score(X, y, sample_weight=None) == pytest.approx(path.estimators_[1].score(X, y))
    clipped = max(float(p.detach().abs().max()) for p in single.adversary_.parameters())
    assert clipped <= single.clip * (1 + 1e-6)  # the float32 bound


@pytest.mark.parametrize("cls", [CENet, WassersteinNet])
def test_a_list_strength_is_refused_naming_fairness_path(cls):
    X, y, s = _data(50)
    with pytest.raises(ValueError, match=r"`strength` must be a number.*fairness_path"):
        cls(strength=[0.0, 1.0], **SMALL).fit(X, y, sensitive_features=s)


@pytest.mark.parametrize(
    "lams,match",
    [
        ([], "`strengths` must hold at least one"),
        ([1.0, 1.0], "`strengths` values must be distinct"),
        ([0.5, -1.0], "`strength` must be a finite number >= 0"),
        ([0.5, np.nan], "`strengths` must be finite"),
    ],
)
@pytest.mark.parametrize("cls", [CENet, WassersteinNet])
def test_invalid_paths(cls, lams, match):
    X, y, s = _data(50)
    with pytest.raises(ValueError, match=match):
        fairness_path(cls(**SMALL), X, y, sensitive_features=s, strengths=lams)


def test_path_template_accepts_single_strength_nets_that_share_a_path():
    singles = [CENet(strength=lam, **SMALL, batch_size=64) for lam in (4.0, 0.0)]
    assert path_template(singles, "strength") is singles[0]


@pytest.mark.parametrize(
    "singles",
    [
        [CENet(strength=1.0, **SMALL), CENet(strength=2.0, **{**SMALL, "epochs": 4})],  # epochs
        [CENet(strength=1.0, **SMALL), WassersteinNet(strength=2.0, **SMALL)],  # two classes
        [CENet(strength=1.0, **SMALL), CENet(strength=1.0, **SMALL)],  # equal strengths
        [CENet(strength=a, **{**SMALL, "random_state": None}) for a in (1.0, 2.0)],  # no seed
        [CENet(strength=[1.0, 2.0], **SMALL)],  # not a number
        [],
    ],
)
def test_path_template_refuses_what_cannot_share_a_path(singles):
    assert path_template(singles, "strength") is None


# ------------------------------------------------------------------ otfair sweep
_NETS = "batch_size = 64, encoder_hidden = [8], adversary_hidden = [6]"
SPEC = f"""
name = "stack-reg"
seeds = 1
epochs = 2
max_train_rows = 300
datasets = [{{ name = "synthetic_regression" }}]
methods = [
  {{ name = "cenet", strengths = [0.0, 1.0, 5.0], options = {{ {_NETS} }} }},
  {{ name = "wassersteinnet", strengths = [0.5, 2.0], options = {{ {_NETS}, n_critic = 2 }} }},
]
"""


def test_sweep_groups_regression_nets_by_lambda():
    runs = [("cenet", 0.0), ("wassersteinnet", 1.0), ("cenet", 1.0), ("wassersteinnet", 5.0)]
    runs += [("unfair-reg", None), ("bgl", 0.1)]  # not nets with a lambda: never grouped
    base = {"dataset": "synthetic_regression", "seed": 0, "epochs": 1}
    items = stack_groups([RunConfig(method=m, strength=a, **base) for m, a in runs])
    groups = [[(c.method, c.strength) for c in configs_of(item)] for item in items]
    assert groups == [runs[0:3:2], runs[1:4:2], runs[4:5], runs[5:6]]


def _sweep_rows(tmp_path, out: str, **kw) -> dict:
    """Run SPEC into ``tmp_path / out``; return its rows by (method, strength)."""
    (tmp_path / "s.toml").write_text(SPEC)
    summary = run_sweep(load_spec(tmp_path / "s.toml"), tmp_path / out, progress=False, **kw)
    assert (summary.ok, summary.failed) == (5, 0)
    with open_store(tmp_path / out) as store:
        return {(r["method"], r["strength"]): r for r in store.rows()}


def test_stacked_regression_sweep_equals_unstacked(tmp_path):
    a = _sweep_rows(tmp_path, "plain", stack=False)
    b = _sweep_rows(tmp_path, "stacked")
    assert a.keys() == b.keys()
    first = next(iter(a.values()))["metrics"]
    metrics = [k for k, v in first.items() if isinstance(v, float) and not k.endswith("time_s")]
    assert {"r2", "mse", "error_gap", "mse_0", "mse_1", "wdp"} <= set(metrics)
    for key, row in a.items():
        assert b[key]["key"] == row["key"]
        for metric in metrics:
            want, got = row["metrics"][metric], b[key]["metrics"][metric]
            assert got == pytest.approx(want, rel=1e-5, abs=1e-6), (key, metric)
        group = 3 if key[0] == "cenet" else 2
        assert b[key]["metrics"].get("stacked_runs") == group
        assert row["metrics"].get("stacked_runs") is None
