"""The guide's formulas, computed by hand with numpy / scipy, equal the functions they describe.

docs/guide/otf.md: OTF_eps(h) = min <C, P> - eps H(P) over P >= 0, P 1 = h, G P^T 1 = 0,
with H(P) = -sum P (log P - 1) (the paper's Eq. 7, not a KL to h x h~); OTFR_eps relaxes
the constraint to |G P^T 1| <= |G h|, and otf0 = OTF_eps - OTFR_eps (Def. 5). Each
primal is solved here directly by scipy's SLSQP over the n x n entries of P, an
independent route from the library's dual coordinate ascent.

docs/guide/metrics.md: PDP / PEO are the largest absolute Pearson correlation between
the scores and a sensitive column (overall / within each label), not a norm of G h; the
DP gap thresholds the scores at 0.5; WDP is the 1-Wasserstein distance of the groups'
scores (scipy's ``wasserstein_distance``).

The other guide pages' computable formulas too: docs/guide/ot.md's quantile form of
W_p^p (integrated exactly by hand) and entropic OT with its KL term (POT's plan),
docs/guide/ftm.md's matched demographic parity, docs/guide/accuracy_parity.md's error
gap. (The training objectives of the FTM, AdapFair, accuracy-parity and sweeps pages are
losses, not quantities a function returns.)
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy.optimize import minimize
from scipy.stats import wasserstein_distance

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _entropy(P: np.ndarray) -> float:
    return float(-np.sum(P * (np.log(P) - 1.0)))


def _primal(h, C, G, eps, *, relaxed):
    """Solve min <C, P> - eps H(P) s.t. P 1 = h, G P^T 1 = 0 (or |G P^T 1| <= |G h|).

    The optimal plan is P = exp((-C + lam_i + (nu G)_j) / eps) for the maximizer of the
    concave dual; it is found here with scipy's L-BFGS-B (nu = phi - psi, phi, psi <= 0
    for the relaxed problem), independently of otfair's solver. The returned value is the
    page's formula evaluated at that P, after checking that P is admissible and that it
    closes the duality gap (a feasible plan whose cost equals a dual lower bound is
    optimal).
    """
    n, d = len(h), G.shape[0]
    gamma = np.abs(G @ h)

    def plan(x):
        lam = x[:n]
        nu = x[n : n + d] - x[n + d :] if relaxed else x[n:]
        return np.exp((-C + lam[:, None] + (nu @ G)[None, :]) / eps)

    def neg_dual(x):
        P = plan(x)
        value = x[:n] @ h - eps * P.sum()
        grad = np.concatenate([h - P.sum(axis=1), np.zeros(len(x) - n)])
        Gf = G @ P.sum(axis=0)
        if relaxed:  # + gamma (phi + psi), d/dphi: gamma - G f, d/dpsi: gamma + G f
            value += gamma @ (x[n : n + d] + x[n + d :])
            grad[n : n + d], grad[n + d :] = gamma - Gf, gamma + Gf
        else:
            grad[n:] = -Gf
        return -value, -grad

    size = n + (2 * d if relaxed else d)
    bounds = [(None, None)] * n + [(None, 0.0) if relaxed else (None, None)] * (size - n)
    res = minimize(
        neg_dual,
        np.zeros(size),
        jac=True,
        method="L-BFGS-B",
        bounds=bounds,
        options={"ftol": 1e-15, "gtol": 1e-11, "maxiter": 10_000},
    )
    P = plan(res.x)
    f = P.sum(axis=0)
    assert np.allclose(P.sum(axis=1), h, atol=1e-6)  # rows: the scores
    if relaxed:
        assert np.all(np.abs(G @ f) <= gamma + 1e-6)
    else:
        assert np.abs(G @ f).max() < 1e-6  # columns: a fair score vector
    value = float(np.sum(C * P)) - eps * _entropy(P)  # the page's formula
    assert value == pytest.approx(-res.fun, abs=1e-6)  # no duality gap: P is optimal
    return value, P


def _problem(seed=0, n=6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    s = np.array([0, 0, 0, 1, 1, 1], dtype=float)[:n]
    h = np.array([0.9, 0.7, 0.8, 0.2, 0.35, 0.3])[:n]  # unfair: group 0 scores higher
    C = np.linalg.norm(X[:, None, :] - X[None, :, :], axis=-1)
    G = np.stack([s / s.mean() - 1.0, (1 - s) / (1 - s).mean() - 1.0])  # DP rows
    return h, C, G


def test_otf_page_states_the_entropy_and_the_adjusted_cost():
    text = (DOCS / "guide" / "otf.md").read_text(encoding="utf-8")
    assert r"\varepsilon H(P)" in text and r"\mathrm{KL}" not in text
    assert r"\mathrm{OTF}^0_\varepsilon(h) = \mathrm{OTF}_\varepsilon(h) - \mathrm{OTFR}" in text


@pytest.mark.parametrize("eps", [0.5, 0.1])
def test_otf_formula_equals_otf_dual_and_otf0(eps):
    from otfair.ot import otf0, otf_dual, otfr_dual

    h, C, G = _problem()
    otf_hand, P = _primal(h, C, G, eps, relaxed=False)
    otfr_hand, _ = _primal(h, C, G, eps, relaxed=True)
    # the hand solution is admissible: its columns are a fair score vector
    assert np.abs(G @ P.sum(axis=0)).max() < 1e-6
    ht, Ct, Gt = (torch.tensor(a, dtype=torch.float64) for a in (h, C, G))
    kw = {"tol": 1e-10, "max_iter": 1000}
    otf_lib = float(otf_dual(ht, Ct, Gt, eps, **kw).value)
    otfr_lib = float(otfr_dual(ht, Ct, Gt, eps, **kw).value)
    assert otf_lib == pytest.approx(otf_hand, rel=1e-5, abs=1e-7)
    assert otfr_lib == pytest.approx(otfr_hand, rel=1e-5, abs=1e-7)
    adjusted = float(otf0(ht, Ct, Gt, eps, **kw))
    assert adjusted == pytest.approx(otf_hand - otfr_hand, rel=1e-4, abs=1e-7)
    assert adjusted > 1e-3  # h is unfair: the adjusted cost is positive
    # and a KL to the product h x h~ is a different number (what the page wrote before)
    f = P.sum(axis=0)
    kl = float(np.sum(P * np.log(P / np.outer(h, f))) - P.sum() + np.outer(h, f).sum())
    assert abs((np.sum(C * P) + eps * kl) - otf_hand) > 1e-3


def test_otf0_is_zero_on_fair_scores():
    from otfair.ot import otf0

    h, C, G = _problem()
    fair = np.array([0.6, 0.5, 0.4, 0.45, 0.55, 0.5])  # equal group means: G h = 0
    assert np.abs(G @ fair).max() < 1e-12
    otf_hand, _ = _primal(fair, C, G, 0.5, relaxed=False)
    otfr_hand, _ = _primal(fair, C, G, 0.5, relaxed=True)
    assert otf_hand - otfr_hand == pytest.approx(0.0, abs=1e-6)
    value = otf0(torch.tensor(fair), torch.tensor(C), torch.tensor(G), 0.5, tol=1e-10)
    assert float(value) == pytest.approx(0.0, abs=1e-6)


def _pearson(a, b):
    return float(np.corrcoef(a, b)[0, 1])


def test_metrics_page_states_the_correlation_not_a_norm():
    text = (DOCS / "guide" / "metrics.md").read_text(encoding="utf-8")
    assert r"\|G h\|" not in text
    assert re.search(r"\\mathrm\{PDP\} = \\max_k \\bigl\|\\rho", text)


def test_pdp_peo_formulas_equal_the_metrics():
    from otfair.metrics import pdp_violation, peo_violation

    rng = np.random.default_rng(3)
    n = 400
    y = rng.integers(0, 2, n)
    S = np.column_stack([rng.integers(0, 2, n), rng.normal(size=n)])  # binary + continuous
    score = 1 / (1 + np.exp(-(0.8 * S[:, 0] - 0.3 * S[:, 1] + y + rng.normal(size=n))))
    pdp = max(abs(_pearson(score, S[:, k])) for k in range(2))
    peo = max(abs(_pearson(score[y == v], S[y == v, k])) for v in (0, 1) for k in range(2))
    assert pdp_violation(y, score, sensitive_features=S) == pytest.approx(pdp, rel=1e-10)
    assert peo_violation(y, score, sensitive_features=S) == pytest.approx(peo, rel=1e-10)
    # not a norm of G h: shrinking every score toward 0.5 leaves the correlation unchanged
    G = (S - S.mean(axis=0)).T / n  # the covariance rows
    shrunk = 0.5 + 0.1 * (score - 0.5)
    assert np.linalg.norm(G @ shrunk) == pytest.approx(0.1 * np.linalg.norm(G @ score))
    assert pdp_violation(y, shrunk, sensitive_features=S) == pytest.approx(pdp, rel=1e-10)


def test_dp_gap_and_wdp_formulas_equal_the_metrics():
    from otfair.metrics import demographic_parity_gap, wasserstein_demographic_parity

    rng = np.random.default_rng(4)
    n = 300
    s = rng.integers(0, 2, n)
    y = rng.integers(0, 2, n)
    score = np.clip(rng.normal(0.45 + 0.15 * s, 0.2), 0, 1)
    rate = [np.mean(score[s == g] >= 0.5) for g in (0, 1)]
    assert demographic_parity_gap(y, score, sensitive_features=s) == pytest.approx(
        abs(rate[0] - rate[1]), abs=1e-12
    )
    w1 = wasserstein_distance(score[s == 0], score[s == 1])
    assert wasserstein_demographic_parity(y, score, sensitive_features=s) == pytest.approx(
        w1, rel=1e-9
    )


# --- the other guide pages' computable formulas --------------------------------------


def _page_has(page: str, *snippets: str) -> None:
    text = (DOCS / "guide" / page).read_text(encoding="utf-8")
    for snippet in snippets:
        assert snippet in text, f"{page} no longer states {snippet!r}"


@pytest.mark.parametrize("p", [1, 2])
def test_ot_page_quantile_formula_equals_wasserstein_1d_power(p):
    """W_p^p = int_0^1 |F_mu^{-1}(q) - F_nu^{-1}(q)|^p dq, integrated exactly by hand."""
    from otfair.ot import wasserstein_1d_power

    _page_has("ot.md", r"W_p^p(\mu, \nu) = \int_0^1 \bigl|F_\mu^{-1}(q) - F_\nu^{-1}(q)\bigr|^p")
    rng = np.random.default_rng(5)
    u, v = rng.normal(size=7), rng.exponential(size=11)  # unequal sizes
    a, b = rng.uniform(0.5, 1.5, 7), rng.uniform(0.5, 1.5, 11)
    a, b = a / a.sum(), b / b.sum()

    def quantile(x, w, q):  # left-continuous inverse of the weighted empirical cdf
        order = np.argsort(x)
        cdf = np.cumsum(w[order])
        return x[order][np.minimum(np.searchsorted(cdf, q), len(x) - 1)]

    knots = np.unique(
        np.concatenate([[0.0], np.cumsum(a[np.argsort(u)]), np.cumsum(b[np.argsort(v)])])
    )
    knots = knots[knots <= 1.0]
    mid = (knots[:-1] + knots[1:]) / 2  # both quantile functions are constant in between
    by_hand = float(
        np.sum(np.diff(knots) * np.abs(quantile(u, a, mid) - quantile(v, b, mid)) ** p)
    )
    got = wasserstein_1d_power(
        torch.tensor(u), torch.tensor(v), torch.tensor(a), torch.tensor(b), p=p
    )
    assert float(got) == pytest.approx(by_hand, rel=1e-10)


def test_ot_page_entropic_formula_equals_sinkhorn():
    """OT_eps = <P, M> + eps KL(P || a x b) at the optimal plan, which POT finds too."""
    import ot as pot

    from otfair.ot import sinkhorn

    _page_has("ot.md", r"\langle P, M\rangle + \varepsilon\,\mathrm{KL}(P \,\|\, a\otimes b)")
    rng = np.random.default_rng(6)
    a, b = rng.uniform(0.5, 1.5, 5), rng.uniform(0.5, 1.5, 4)
    a, b = a / a.sum(), b / b.sum()
    M = rng.uniform(size=(5, 4))
    eps = 0.2
    res = sinkhorn(torch.tensor(a), torch.tensor(b), torch.tensor(M), eps, tol=1e-12)
    P = res.plan.numpy()
    # the optimal plan: POT's (its entropy form has the same minimizer on the feasible set)
    assert np.allclose(P, pot.sinkhorn(a, b, M, eps, stopThr=1e-14, numItermax=100_000), atol=1e-9)
    kl = float(np.sum(P * np.log(P / np.outer(a, b))) - P.sum() + 1.0)
    assert float(res.value) == pytest.approx(float(np.sum(P * M)) + eps * kl, rel=1e-8)
    assert float(res.sharp_value) == pytest.approx(float(np.sum(P * M)), rel=1e-10)


def test_ftm_page_mdp_formula_equals_matched_demographic_parity():
    """MDP(f, T) = E_{X ~ P_0} |f(X, 0) - f(T(X), 1)|, for a map and for a coupling."""
    from otfair.metrics import matched_demographic_parity

    _page_has(
        "ftm.md", r"\mathrm{MDP}(f, T) = \mathbb E_{X\sim P_0}\,\bigl|f(X, 0) - f(T(X), 1)\bigr|"
    )
    rng = np.random.default_rng(7)
    f0, f1 = rng.uniform(size=6), rng.uniform(size=9)
    T = rng.integers(0, 9, size=6)
    assert matched_demographic_parity(f0, f1, matching=T) == pytest.approx(
        np.mean(np.abs(f0 - f1[T])), rel=1e-12
    )
    Q = rng.uniform(size=(6, 9))
    Q /= Q.sum()  # a stochastic map: E over the coupling
    by_hand = sum(Q[i, j] * abs(f0[i] - f1[j]) for i in range(6) for j in range(9))
    assert matched_demographic_parity(f0, f1, matching=Q) == pytest.approx(by_hand, rel=1e-12)


def test_accuracy_parity_page_error_gap_equals_error_gap():
    """Delta_err(h) = |E_0[(Y - h(X))^2] - E_1[(Y - h(X))^2]|."""
    from otfair.metrics import error_gap

    _page_has(
        "accuracy_parity.md",
        r"\Delta_{\mathrm{err}}(h) = \bigl|\,\mathbb E_0[(Y - h(X))^2]",
        r"- \mathbb E_1[(Y - h(X))^2]\,\bigr|",
    )
    rng = np.random.default_rng(8)
    s = rng.integers(0, 2, 200)
    y = rng.normal(size=200)
    pred = y + rng.normal(scale=0.3 + 0.4 * s)  # group 1 predicted worse
    mse = [np.mean((y[s == g] - pred[s == g]) ** 2) for g in (0, 1)]
    assert error_gap(y, pred, sensitive_features=s) == pytest.approx(
        abs(mse[0] - mse[1]), rel=1e-12
    )
