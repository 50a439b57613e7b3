"""CUDA checks (issue 26): ``pytest -m cuda`` on a GPU machine; skipped without a device.

Device placement of estimators' outputs, equality with the CPU fit within float
tolerance, and no host synchronization inside the OTF solve of a training step
(``torch.cuda.set_sync_debug_mode("error")`` raises on any synchronizing call).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from otfair.estimators import FairClassifier
from otfair.ot import OTFProblem, euclidean_cost

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]


def _data(n=1200, d=6, seed=0):
    rng = np.random.default_rng(seed)
    s = (rng.uniform(size=n) < 0.35).astype(int)
    X = rng.normal(size=(n, d)).astype(np.float32)
    X[:, 0] += s
    y = (X[:, 0] + rng.normal(size=n) > 0.5).astype(int)
    return X, y, s


@pytest.mark.parametrize("method", ["otf", "gapreg", "norm", "ftm"])
def test_fits_on_cuda_match_the_cpu_fit(method):
    X, y, s = _data()
    kw = {"epochs": 3, "batch_size": 400, "random_state": 0}
    strength = 0.5 if method in ("gapreg", "ftm") else 0.05
    cpu = FairClassifier(method, strength, device="cpu", **kw).fit(X, y, sensitive_features=s)
    gpu = FairClassifier(method, strength, device="cuda", **kw).fit(X, y, sensitive_features=s)
    assert next(gpu.model_.parameters()).device.type == "cuda"
    p_cpu, p_gpu = cpu.predict_proba(X)[:, 1], gpu.predict_proba(X)[:, 1]
    assert isinstance(p_gpu, np.ndarray)  # scikit-learn outputs come back to the host
    np.testing.assert_allclose(p_gpu, p_cpu, atol=2e-3)


def test_stacked_otf_curve_on_cuda_matches_cpu():
    X, y, s = _data()
    kw = {"epochs": 2, "batch_size": 400, "random_state": 0}
    strengths = [0.01, 0.1, 0.5]
    cpu = FairClassifier("otf", strengths, device="cpu", **kw).fit(X, y, sensitive_features=s)
    gpu = FairClassifier("otf", strengths, device="cuda", **kw).fit(X, y, sensitive_features=s)
    for a, b in zip(cpu.estimators_, gpu.estimators_, strict=True):
        np.testing.assert_allclose(b.predict_proba(X), a.predict_proba(X), atol=2e-3)


def _otf_batch(K=8, n=1000, device="cuda"):
    g = torch.Generator().manual_seed(0)
    X = torch.randn(n, 20, generator=g)
    s = (torch.rand(n, generator=g) < 0.35).float()
    H = torch.sigmoid(torch.randn(K, n, generator=g) + s)
    G = torch.stack([s / s.mean() - 1, (1 - s) / (1 - s).mean() - 1])
    order = OTFProblem.class_order(G)
    X, G, H = X[order].to(device), G[:, order].to(device), H[:, order].to(device)
    C = euclidean_cost(X, X, exact=False)
    problem = OTFProblem(C, G).compact(1e-2)  # a fixed batch's cached problem
    return problem, H.requires_grad_(True)


def test_otf_training_step_on_a_cached_batch_has_no_host_sync():
    """A fixed-batches OTF step (cached class-reduced problem): solve + backward, no sync."""
    problem, H = _otf_batch()
    problem.otf0(H.detach(), 1e-2)  # first call: the row basis etc. are built here
    warm = problem.otf0(H.detach(), 1e-2, return_details=True)[1]
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        value, _ = problem.otf0(
            H, 1e-2, warm_start=warm, max_iter=2, check=False, trusted=True,
            return_details=True,
        )  # fmt: skip
        value.sum().backward()
    finally:
        torch.cuda.set_sync_debug_mode(0)
    assert H.grad.device.type == "cuda"


def test_otf_default_step_syncs_once_per_solve():
    """With the default convergence check: one host read per solve (counted as warnings)."""
    problem, H = _otf_batch()
    warm = problem.otf0(H.detach(), 1e-2, return_details=True)[1]
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("warn")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = problem.otf0(H, 1e-2, warm_start=warm, trusted=True)
            value.sum().backward()
    finally:
        torch.cuda.set_sync_debug_mode(0)
    syncs = [w for w in caught if "synchroniz" in str(w.message).lower()]
    assert len(syncs) <= 2, [str(w.message) for w in syncs]


def test_otf_values_on_cuda_equal_cpu():
    problem_gpu, H_gpu = _otf_batch(device="cuda")
    problem_cpu, H_cpu = _otf_batch(device="cpu")
    v_gpu = problem_gpu.otf0(H_gpu.detach().double(), 1e-2, tol=1e-10, max_iter=50)
    v_cpu = problem_cpu.otf0(H_cpu.detach().double(), 1e-2, tol=1e-10, max_iter=50)
    torch.testing.assert_close(v_gpu.cpu(), v_cpu, rtol=1e-6, atol=1e-8)
