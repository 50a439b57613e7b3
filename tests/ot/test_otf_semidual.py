"""The OTF semi-dual written once over numpy and torch (issue 46).

Three checks: the semi-dual's objective and gradient against an independent dense
autograd evaluation; the numpy and torch namespaces against each other; and the
refactored solves against the implementation they replace (two copies, torch and numpy,
read from the git history; skipped where that history is not at hand).
"""

import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest
import torch

from otfair.ot._otf_backends import _solve_batch
from otfair.ot._otf_namespace import NUMPY, TORCH
from otfair.ot._otf_semidual import SemiDual

EPS = 0.05
#: the last commit with the two copies of the semi-dual (torch and numpy)
BEFORE = "3c7d14898791bc1ce07d75defb7b1526b69cb8dc"


def _problem(seed, n=40, m=40, d=2, B=3):
    rng = np.random.default_rng(seed)
    C = torch.tensor(rng.uniform(size=(n, m)))
    G = torch.tensor(rng.normal(size=(d, m)))
    H = torch.tensor(rng.uniform(0.1, 1.0, size=(B, n)))
    gamma = torch.tensor(rng.uniform(0.0, 0.5, size=(B, d)))
    gamma[0] = 0.0  # an OTF problem among OTFR ones
    y = torch.tensor(rng.normal(size=(B, d)))
    return C, G, H, gamma, y


def _dense_objective(C, G, H, gamma, y, eps):
    r"""``F(y)`` of the module docstring of ``_otf_semidual``, by dense torch operations."""
    lam = eps * (H.log() - torch.logsumexp(-C / eps + (y @ G)[:, None, :], dim=-1))
    return (lam * H).sum(1) - eps * H.sum(1) - eps * (gamma * y.abs()).sum(1)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_objective_and_gradient_match_a_dense_autograd_reference(seed):
    C, G, H, gamma, y = _problem(seed)
    y = y.requires_grad_(True)
    ref = _dense_objective(C, G, H, gamma, y, EPS)
    (grad,) = torch.autograd.grad(ref.sum(), y)
    sd = SemiDual(H, C, G, EPS, gamma, chunk_rows=7)  # several chunks
    w = (y.detach() @ G).to(C.dtype)
    value = sd.value(sd.lam(w), y.detach())
    torch.testing.assert_close(value, ref.detach(), rtol=1e-12, atol=1e-12)
    # dF/dy_c = -eps (D_c + gamma_c sign y_c)
    D = sd.constraint_values(w)
    torch.testing.assert_close(
        -EPS * (D + gamma * y.detach().sign()), grad, rtol=1e-10, atol=1e-12
    )
    for c in range(G.shape[0]):
        d0, slope = sd.moments(w, c)
        torch.testing.assert_close(d0, D[:, c], rtol=1e-12, atol=1e-12)
        # dD_c/dy_c by autograd of D_c (the plan's column masses in closed form)
        yc = y.detach().clone().requires_grad_(True)
        pi = torch.softmax(-C / EPS + (yc @ G)[:, None, :], dim=-1)
        Dc = (H[:, :, None] * pi).sum(1) @ G[c]
        (dD,) = torch.autograd.grad(Dc.sum(), yc)
        torch.testing.assert_close(slope, dD[:, c], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_numpy_and_torch_namespaces_give_the_same_semidual(seed):
    C, G, H, gamma, y = _problem(seed, m=5)
    w = y @ G
    a = SemiDual(H, C, G, EPS, gamma, xp=TORCH, chunk_rows=9)
    b = SemiDual(H.numpy(), C.numpy(), G.numpy(), EPS, gamma.numpy(), xp=NUMPY, chunk_rows=9)
    pairs = [
        (a.column_masses(w), b.column_masses(w.numpy())),
        (a.lam(w), b.lam(w.numpy())),
        (a.value(a.lam(w), y), b.value(b.lam(w.numpy()), y.numpy())),
        (a.violation(a.constraint_values(w)), b.violation(b.constraint_values(w.numpy()))),
        *[(a.moments(w, c)[k], b.moments(w.numpy(), c)[k]) for c in range(2) for k in range(2)],
    ]
    for got_torch, got_numpy in pairs:
        np.testing.assert_allclose(got_torch.numpy(), got_numpy, rtol=1e-12, atol=1e-13)
    for b_ in range(H.shape[0]):  # a problem alone (the host driver's view) is the same
        one = b.problem(b_)
        np.testing.assert_allclose(one.lam(w[b_].numpy()), b.lam(w.numpy())[b_], rtol=1e-13)
    Bm = np.linalg.svd(G.numpy(), full_matrices=False)[2]
    za = (y @ G) @ torch.tensor(Bm).T
    sa, sb = a.joint_state(za, torch.tensor(Bm)), b.joint_state(za.numpy(), Bm)
    for got_torch, got_numpy in zip(sa[:1] + sa[3:], sb[:1] + sb[3:], strict=True):
        np.testing.assert_allclose(got_torch.numpy(), got_numpy, rtol=1e-12, atol=1e-13)
    Ma, Mb = a.joint_system(*sa[1:], torch.tensor(Bm))[1], b.joint_system(*sb[1:], Bm)[1]
    np.testing.assert_allclose(Ma.numpy(), Mb, rtol=1e-10, atol=1e-12)


# -- against the implementation before issue 46 ------------------------------------------
def _load_before() -> types.ModuleType:
    """The pre-refactor ``_otf_backends`` with its two semi-duals, from the git history."""
    root = Path(__file__).resolve().parents[2]
    names = ("_otf_semidual", "_otf_semidual_host", "_otf_backends")
    modules = {}
    for name in names:
        try:
            source = subprocess.run(
                ["git", "-C", str(root), "show", f"{BEFORE}:src/otfair/ot/{name}.py"],
                capture_output=True, text=True, check=True, timeout=30,
            ).stdout  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            pytest.skip(f"the pre-refactor sources (git commit {BEFORE[:7]}) are not at hand")
        for other in names:
            source = source.replace(f"otfair.ot.{other} ", f"_before{other} ")
        module = types.ModuleType(f"_before{name}")
        sys.modules[module.__name__] = module
        exec(compile(source, f"{BEFORE[:7]}:{name}.py", "exec"), module.__dict__)
        modules[name] = module
    return modules["_otf_backends"]


@pytest.fixture(scope="module")
def before():
    return _load_before()


@pytest.mark.parametrize("backend", ["host", "batched"])
@pytest.mark.parametrize("m", [3, 40])  # class-reduced (numpy on the host), dense
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_solves_equal_the_implementation_before_the_refactor(before, backend, m, seed):
    C, G, H, gamma, _ = _problem(seed, n=40, m=m, d=2 if m == 3 else 1, B=4)
    G = G - G.mean(dim=1, keepdim=True)  # rows with both signs: a feasible problem
    relaxed = [False, True, False, True]
    kw = {"tol": 1e-9, "max_iter": 200, "backend": backend}
    for y0 in (None, torch.full((4, G.shape[0]), 0.3, dtype=torch.float64)):
        new = _solve_batch(H, C, G, EPS, gamma, relaxed, y0=y0, **kw)
        old = before._solve_batch(H, C, G, EPS, gamma, relaxed, y0=y0, **kw)
        assert new["n_iter"] == old["n_iter"]
        for key in ("value", "lam", "mu", "mass"):
            torch.testing.assert_close(new[key], old[key], rtol=1e-10, atol=1e-10)
        assert bool((new["err"] <= 1e-9).all())


def test_a_newton_step_that_overflows_is_halved_not_taken(data_dir):
    """EO's joint Newton on a nearly collapsed model: no overflow, a finite fit.

    At strength 0.97 the German model's scores nearly collapse; the near-singular joint
    system's Newton step overflowed the semi-dual objective (numpy's overflow warnings,
    and a step taken at an infinite objective). The line search now rejects a step
    whose objective is not finite.
    """
    import warnings

    from sklearn.preprocessing import StandardScaler

    from otfair.datasets import load_dataset
    from otfair.estimators import FairClassifier, FitQualityWarning
    from otfair.estimators._budget_rule import make_splits

    split = load_dataset("german").split(test_size=0.3, random_state=0)
    X = StandardScaler().fit_transform(split.X_train)
    y, s = np.asarray(split.y_train).astype(int), np.asarray(split.s_train)
    train, _ = next(iter(make_splits(5, X, y, s, "classification")))
    est = FairClassifier("otf", notion="eo", strength=0.97, random_state=0, epochs=43, tol=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        warnings.simplefilter("ignore", FitQualityWarning)  # it ends near the constant
        est.fit(X[train], y[train], sensitive_features=s[train])
    assert np.isfinite(est.predict_proba(X)).all()
