"""OTF under L-BFGS: the fixed-batch objective, its solver choice, warm starts."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from tests.estimators._classif_data import two_group_data

from otfair.estimators import FairClassifier
from otfair.estimators._lbfgs import minimize_lbfgs
from otfair.estimators._training import stratified_batches
from otfair.estimators.classification._logistic import LogisticObjective
from otfair.notions import as_notion
from otfair.penalties import OTF


def _penalized_objective(n: int = 400, strength: float = 0.3, seed: int = 0):
    X, y, s = two_group_data(n=n, seed=seed, d=4)
    penalty = OTF().make(as_notion("dp")).fit(s[:, None].astype(float), y)
    G = penalty.constraints.matrix(s[:, None].astype(float), y)
    parts = stratified_batches(s * 2 + y, 100, np.random.default_rng(0), n=n)
    batched = penalty.fixed_batch_objective(torch.from_numpy(X.astype(np.float32)), G, parts)
    assert batched is not None  # two groups under DP
    objective = LogisticObjective(
        X.astype(np.float32), y, batched, strength=strength, convex=True, l2=1.0
    )
    return objective, X


def test_objective_gradient_matches_finite_differences():
    objective, X = _penalized_objective()
    theta = np.random.default_rng(1).normal(scale=0.5, size=X.shape[1] + 1)
    _, grad = objective(theta)
    for j in range(len(theta)):
        step = np.zeros_like(theta)
        step[j] = 1e-5
        numeric = (objective(theta + step)[0] - objective(theta - step)[0]) / 2e-5
        assert numeric == pytest.approx(grad[j], rel=2e-3, abs=2e-5)


def test_the_torch_objective_on_fixed_batches_is_the_logistic_objective():
    """The MLP's L-BFGS objective (autograd through the fixed-batch solver), checked on
    the logistic model against the NumPy objective of the logistic fits."""
    from otfair.estimators._training import TrainData
    from otfair.estimators.classification._train import FullBatchObjective
    from otfair.models import MLP

    objective, X = _penalized_objective()
    theta = np.random.default_rng(1).normal(scale=0.5, size=X.shape[1] + 1)
    expected, expected_grad = objective(theta)
    model = MLP(X.shape[1], hidden=()).double()
    (layer,) = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
    with torch.no_grad():
        layer.weight.copy_(torch.from_numpy(theta[:-1])[None, :])
        layer.bias.copy_(torch.from_numpy(theta[-1:]))
    data = TrainData(torch.from_numpy(X.astype(np.float64)), torch.from_numpy(objective.y))
    torch_objective = FullBatchObjective(
        model, data, None, strength=0.3, convex=True, l2=1.0 / (2 * len(X)),
        batched=objective.penalty,
    )  # fmt: skip
    value = torch_objective()
    value.backward()
    assert float(value.detach()) == pytest.approx(expected, rel=1e-7)
    grad = np.r_[layer.weight.grad.numpy().ravel(), layer.bias.grad.numpy()]
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("notion", ["dp", "eo"])
def test_the_mlp_fits_otf_of_two_groups_with_lbfgs(notion):
    """solver='lbfgs' with the MLP minimizes the fixed-batch objective (it raised a
    shape error inside the logistic model's objective)."""
    X, y, s = two_group_data(n=400, seed=0)
    fits = [
        FairClassifier(
            "otf", strength, notion=notion, model="mlp", solver="lbfgs", epochs=60,
            random_state=0,
        ).fit(X, y, sensitive_features=s)
        for strength in (0.0, 0.9)
    ]  # fmt: skip
    assert all(f.solver_ == "lbfgs" and 0 < f.n_iter_ <= 60 for f in fits)
    gaps = [_score_gap(f.predict_proba(X)[:, 1], y, s, notion) for f in fits]
    assert gaps[1] < 0.5 * gaps[0]


def test_preconditioned_lbfgs_finds_the_same_minimum():
    objective, X = _penalized_objective(strength=0.05)
    theta0 = np.zeros(X.shape[1] + 1)
    plain = scipy.optimize.minimize(
        objective, theta0, jac=True, method="L-BFGS-B", options={"gtol": 1e-9, "ftol": 1e-15}
    )
    x, result = minimize_lbfgs(
        objective, theta0, max_iter=500, tol=1e-4, factor=objective.factor(theta0)
    )
    assert result.converged and result.message == "gradient below tol"
    assert np.abs(objective(x)[1]).max() <= 1e-4  # tol is checked on the gradient in x
    assert objective(x)[0] == pytest.approx(plain.fun, rel=1e-6)


def test_the_unpenalized_fit_is_logistic_regression():
    X, y, s = two_group_data(n=800, seed=2, d=4)
    ours = FairClassifier("otf", 0.0, random_state=0).fit(X, y, sensitive_features=s)
    assert ours.solver_ == "lbfgs"  # the OTF family's solver, at strength 0 too
    ref = LogisticRegression().fit(X, y)  # C = 1 is l2 = 1
    np.testing.assert_allclose(ours.predict_proba(X)[:, 1], ref.predict_proba(X)[:, 1], atol=2e-3)


@pytest.mark.parametrize(
    ("params", "solver"),
    [
        ({}, "lbfgs"),  # two groups, DP: the batches are solved at once
        ({"notion": "eo"}, "lbfgs"),  # EO: one dual per label cell, solved at once
        ({"model": "mlp", "epochs": 2}, "adam"),
        ({"fixed_batches": False, "epochs": 2}, "adam"),  # new batches every epoch
        ({"solver": "adam", "epochs": 2}, "adam"),
    ],
)
def test_solver_choice(params, solver):
    X, y, s = two_group_data(n=300, seed=0)
    est = FairClassifier("otf", 0.1, random_state=0, **params)
    with np.errstate(all="ignore"):
        assert est.fit(X, y, sensitive_features=s).solver_ == solver


def test_several_attributes_take_adam():
    """Two sensitive columns: no vectorized fixed-batch solver, Adam on the batches."""
    X, y, s = two_group_data(n=300, seed=0)
    both = np.column_stack([s, np.arange(len(s)) % 2])
    est = FairClassifier("otf", 0.1, random_state=0, epochs=2)
    with np.errstate(all="ignore"):
        assert est.fit(X, y, sensitive_features=both).solver_ == "adam"


def _score_gap(p, y, s, notion):
    """The groups' mean-score gap: overall (DP) or the larger of the label cells' (EO)."""
    cells = [np.ones(len(y), bool)] if notion == "dp" else [y == 0, y == 1]
    return max(abs(p[c & (s == 0)].mean() - p[c & (s == 1)].mean()) for c in cells)


@pytest.mark.parametrize(("notion", "unfair"), [("dp", 0.18), ("eo", 0.09)])
def test_lbfgs_and_adam_train_the_same_penalty_alike(data_dir, notion, unfair):
    """On Adult, L-BFGS on the fixed batches and Adam on them reach the same trade-off."""
    from sklearn.preprocessing import StandardScaler

    from otfair.datasets import load_dataset

    split = load_dataset("adult").split(test_size=0.3, random_state=0)
    rows = np.random.default_rng(0).choice(len(split.y_train), 6000, replace=False)
    scaler = StandardScaler().fit(split.X_train[rows])
    X, Xt = scaler.transform(split.X_train[rows]), scaler.transform(split.X_test)
    y, s = np.asarray(split.y_train)[rows], np.asarray(split.s_train)[rows]
    yt, st = np.asarray(split.y_test), np.asarray(split.s_test)
    plain = FairClassifier(random_state=0).fit(X, y).predict_proba(Xt)[:, 1]
    plain_gap = _score_gap(plain, yt, st, notion)
    assert plain_gap > unfair  # what the penalty removes (DP ~0.19, EO ~0.10)
    out = {}
    for solver in ("auto", "adam"):
        est = FairClassifier("otf", 0.03, notion=notion, solver=solver, random_state=0)
        est.fit(X, y, sensitive_features=s)
        p = est.predict_proba(Xt)[:, 1]
        out[est.solver_] = (roc_auc_score(yt, p), _score_gap(p, yt, st, notion))
    (auc_l, gap_l), (auc_a, gap_a) = out["lbfgs"], out["adam"]
    assert abs(auc_l - auc_a) < 0.01
    assert abs(gap_l - gap_a) < unfair / 8
    assert gap_l < plain_gap / 2


def _adult_rows(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from sklearn.preprocessing import StandardScaler

    from otfair.datasets import load_dataset

    split = load_dataset("adult").split(test_size=0.3, random_state=0)
    rows = np.random.default_rng(0).choice(len(split.y_train), n, replace=False)
    X = StandardScaler().fit_transform(split.X_train[rows])
    return X, np.asarray(split.y_train)[rows], np.asarray(split.s_train)[rows]


@pytest.mark.parametrize("strength", [0.01, 0.1])
def test_the_fit_does_not_depend_on_the_rounding_of_the_costs(data_dir, strength):
    """Adult (blind, one-hot): inputs one float32 ulp apart round the costs differently.

    The penalty's value jumped under such rounding where OTFR's bound binds at s = 0
    (twin rows across the groups), so L-BFGS stopped wherever the rounding led it: with
    1 and 2 torch threads (which rounded the costs differently before fits ran on one
    thread) the objectives differed by 5e-4 (relative 1e-3) and the probabilities by
    0.006-0.008 on average (fails on that code). Now both runs reach the minimum to the
    tolerance: the objectives agree to ~1e-6 and the probabilities by ~2e-4 on average
    (measured; the runs' paths part, and rare one-hot columns are weakly determined on
    3,000 rows, so a single row may differ by ~0.02 within the gradient tolerance).
    """
    X, y, s = _adult_rows(3000)
    X32 = X.astype(np.float32)
    fits = []
    for inputs in (X32, np.nextafter(X32, np.float32(np.inf))):
        est = FairClassifier("otf", strength, random_state=0).fit(inputs, y, sensitive_features=s)
        fits.append((est.predict_proba(X32)[:, 1], est.history_[-1]))
    (p1, loss1), (p2, loss2) = fits
    assert not np.array_equal(p1, p2)  # the rounding moved the fit's path
    assert loss1 == pytest.approx(loss2, rel=5e-5)
    assert np.abs(p1 - p2).mean() < 2e-3


def test_a_logistic_fit_is_the_same_on_any_torch_thread_count(data_dir):
    """Small data train on one torch thread (and one BLAS thread), the caller's count restored.

    Every torch fit on small data runs torch's work (the fixed batches' transport costs,
    an MLP's steps) on one thread, so the fit is bit-identical whatever the machine's
    cores; large inputs keep the caller's threads.
    """
    from otfair.utils._threads import ONE_BLAS_THREAD_MAX_ENTRIES
    from otfair.utils._torch import fits_in_training_state

    X, y, s = _adult_rows(3000)
    seen: dict[str, int] = {}
    original_fit = FairClassifier._fit_models

    def spy(self, *args, **kwargs):
        seen[self.model] = torch.get_num_threads()
        return original_fit(self, *args, **kwargs)

    fits = []
    before = torch.get_num_threads()
    try:
        FairClassifier._fit_models = spy  # type: ignore[method-assign]
        for threads in (1, 2):
            torch.set_num_threads(threads)
            est = FairClassifier("otf", 0.1, random_state=0).fit(X, y, sensitive_features=s)
            assert torch.get_num_threads() == threads  # restored
            fits.append((est.predict_proba(X)[:, 1], est.history_))
            assert seen["logistic"] == 1
        torch.set_num_threads(2)
        FairClassifier(model="mlp", epochs=1, random_state=0).fit(X[:200], y[:200])
        assert seen["mlp"] == 1 and torch.get_num_threads() == 2
        large = np.broadcast_to(np.float32(0), (ONE_BLAS_THREAD_MAX_ENTRIES // 100 + 1, 100))
        counted = fits_in_training_state(lambda self, X: torch.get_num_threads())
        assert counted(None, X) == 1 and counted(None, X=large) == 2  # the caller's
    finally:
        FairClassifier._fit_models = original_fit  # type: ignore[method-assign]
        torch.set_num_threads(before)
    (p1, history1), (p2, history2) = fits
    assert np.array_equal(p1, p2)
    assert history1 == history2


def test_a_float64_objective_below_one_is_minimized_to_tol():
    """``FLOAT64_FTOL`` runs L-BFGS to ``tol`` where ``LBFGS_FTOL`` stops it early.

    SciPy's relative decrease divides by ``max(|f|, 1)``: on an objective below 1 the
    float32 path's 1e-7 is an absolute 1e-7, and an ill-conditioned objective whose
    iterations each gain less stops there with a gradient far above ``tol`` (what OTF at
    strength 0.9 did: on 3,000 Adult rows one iteration, 0.013 above its minimum). The
    minimizer is known in closed form (a quadratic: ``np.linalg.solve``).
    """
    from otfair.estimators._lbfgs import FLOAT64_FTOL, LBFGS_FTOL

    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.normal(size=(20, 20)))
    H = 1e-6 * (Q * np.logspace(0, 3, 20)) @ Q.T  # condition number 1e3, f(0) - f* ~ 1e-5
    b = H @ rng.normal(size=20)
    minimizer = np.linalg.solve(H, b)

    def quadratic(x):
        return 0.5 + 0.5 * x @ H @ x - b @ x, H @ x - b  # values near 0.5: below 1

    tol = 1e-4 * np.abs(b).max()
    x, result = minimize_lbfgs(quadratic, np.zeros(20), max_iter=1000, tol=tol, ftol=FLOAT64_FTOL)
    assert result.converged and np.abs(quadratic(x)[1]).max() <= tol
    np.testing.assert_allclose(x, minimizer, atol=1e-2 * np.abs(minimizer).max())
    early, stopped = minimize_lbfgs(
        quadratic, np.zeros(20), max_iter=1000, tol=tol, ftol=LBFGS_FTOL
    )
    assert np.abs(quadratic(early)[1]).max() > 10 * tol  # the float32 rule stopped early
    assert stopped.n_iter < result.n_iter


def test_warm_start_starts_at_the_previous_fit_and_keeps_the_costs():
    X, y, s = two_group_data(n=600, seed=3, d=4)
    est = FairClassifier("otf", 0.05, warm_start=True, random_state=0)
    est.fit(X, y, sensitive_features=s)
    kept = est._kept_fixed_batches
    first = est.predict_proba(X)
    est.fit(X, y, sensitive_features=s)  # from its own solution: at once
    assert est.n_iter_ <= 2
    assert est._kept_fixed_batches is kept  # the batches' costs were not recomputed
    np.testing.assert_allclose(est.predict_proba(X), first, atol=5e-3)  # a few more steps
    est.fit(X[:500], y[:500], sensitive_features=s[:500])  # other data: other costs
    assert est._kept_fixed_batches is not kept
    cold = FairClassifier("otf", 0.05, random_state=0).fit(
        X[:500], y[:500], sensitive_features=s[:500]
    )
    # the same objective from another start: the same model to the solver's tolerance
    np.testing.assert_allclose(est.predict_proba(X), cold.predict_proba(X), atol=0.02)


def test_a_warm_start_keeps_the_seed_of_random_state_none():
    """With random_state=None a warm start continues the previous objective (its seed and
    its batches' costs); cold fits draw new seeds."""
    X, y, s = two_group_data(n=600, seed=4, d=4)
    est = FairClassifier("otf", 0.03, warm_start=True).fit(X, y, sensitive_features=s)
    seed, kept = est._fit_seed, est._kept_fixed_batches
    est.set_params(strength=0.1).fit(X, y, sensitive_features=s)
    assert est._fit_seed == seed and est._kept_fixed_batches is kept
    seeds = {FairClassifier("otf", 0.1).fit(X, y, sensitive_features=s)._fit_seed for _ in "ab"}
    assert len(seeds) == 2  # a cold fit's draw (equal with probability 2**-31)


def test_the_logistic_lbfgs_runs_on_one_blas_thread_and_restores_it():
    from threadpoolctl import threadpool_info

    from otfair.estimators._lbfgs import one_blas_thread

    def blas_threads() -> list[int]:
        return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]

    before = blas_threads()
    seen: list[list[int]] = []
    objective, X = _penalized_objective()

    def spy(theta):
        seen.append(blas_threads())
        return objective(theta)

    with one_blas_thread():
        minimize_lbfgs(spy, np.zeros(X.shape[1] + 1), max_iter=3, tol=None)
    with one_blas_thread(False):
        assert blas_threads() == before
    assert seen and all(threads == [1] * len(before) for threads in seen)
    assert blas_threads() == before


def _blas_threads() -> list[int]:
    from threadpoolctl import threadpool_info

    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


def test_small_inputs_take_one_blas_thread_and_large_or_shapeless_ones_keep_theirs():
    from otfair.estimators._lbfgs import ONE_BLAS_THREAD_MAX_ENTRIES, one_blas_thread_if_small

    before = _blas_threads()
    one = [1] * len(before)
    with one_blas_thread_if_small(np.zeros((100, 10))):
        assert _blas_threads() == one
    with one_blas_thread_if_small(ONE_BLAS_THREAD_MAX_ENTRIES):
        assert _blas_threads() == one
    with one_blas_thread_if_small(ONE_BLAS_THREAD_MAX_ENTRIES + 1):
        assert _blas_threads() == before
    with one_blas_thread_if_small([[0.0, 1.0]]):  # no shape: no limit
        assert _blas_threads() == before
    assert _blas_threads() == before


def test_a_search_on_small_data_measures_its_folds_on_one_blas_thread():
    """FairnessCV holds the limit over its whole search (the held-out measures too), not
    only over each fit's L-BFGS loop: a BLAS thread woken between two limited stretches
    spins through the next one."""
    from otfair.estimators import FairnessCV

    before = _blas_threads()
    seen: list[list[int]] = []

    def spy_accuracy(est, X, y):
        seen.append(_blas_threads())
        return float(np.mean(est.predict(X) == y))

    X, y, s = two_group_data(n=400, seed=5, d=4)
    search = FairnessCV(
        FairClassifier("otf", random_state=0),
        strengths=[0.0, 0.1],
        max_violation=1.0,
        scoring=spy_accuracy,
        cv=2,
    ).fit(X, y, sensitive_features=s)
    assert search.strength_ in (0.0, 0.1)
    assert len(seen) >= 4 and all(threads == [1] * len(before) for threads in seen)
    assert _blas_threads() == before


@pytest.mark.filterwarnings("ignore:Every strength within")
def test_a_search_runs_torch_on_one_thread_and_restores_the_callers_count():
    from otfair.estimators import FairnessCV

    seen: list[int] = []

    def spy_accuracy(est, X, y):
        seen.append(torch.get_num_threads())
        return float(np.mean(est.predict(X) == y))

    X, y, s = two_group_data(n=400, seed=5, d=4)
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        FairnessCV(
            FairClassifier("gapreg", model="mlp", epochs=2, random_state=0),
            strengths=[0.0, 1.0],
            max_violation=1.0,
            scoring=spy_accuracy,
            cv=2,
            below_constant="warn",  # two epochs: near the constant, which is not asked
        ).fit(X, y, sensitive_features=s)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
    assert len(seen) >= 4 and set(seen) == {1}


@pytest.mark.parametrize("notion", ["dp", "eo"])
def test_a_strong_otf_fit_on_german_keeps_the_labels(data_dir, notion):
    """At strength 0.9 the objective's minimum sits on its batches' kinks (OTF0 ~ c|Gh|).

    L-BFGS stopped far above it there and reported convergence: under DP at a model
    predicting one class for every row (test AUC 0.51), under EO at the constant's
    training accuracy (AUC 0.57). Full-memory BFGS keeps descending
    (``docs/measurements/lbfgs_vs_bfgs.md``): capped at 300 iterations or not, its fit
    stays above the best constant (+0.069 / +0.038 in training accuracy) and keeps
    ranking the rows (test AUC 0.79 / 0.73, LogisticRegression's 0.77).
    """
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.preprocessing import StandardScaler

    from otfair.datasets import load_dataset

    split = load_dataset("german").split(random_state=0)
    scaler = StandardScaler().fit(split.X_train)
    X, Xt = scaler.transform(split.X_train), scaler.transform(split.X_test)
    y, yt = np.asarray(split.y_train), np.asarray(split.y_test)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # the cap may come first
        est = FairClassifier("otf", 0.9, notion=notion, random_state=0)
        est.fit(X, y, sensitive_features=split.s_train)
    predicted = est.predict(X)
    constant = max(y.mean(), 1 - y.mean())
    assert len(np.unique(predicted)) == 2
    assert (predicted == y).mean() > constant + 0.02
    assert roc_auc_score(yt, est.predict_proba(Xt)[:, 1]) > 0.68


def test_ridged_cholesky_widens_the_ridge_only_when_it_must():
    from otfair.estimators.classification._logistic import ridged_cholesky

    rng = np.random.default_rng(0)
    A = rng.normal(size=(6, 6))
    spd = A @ A.T + np.eye(6)
    first = 1e-8 * (1.0 + np.trace(spd) / 6)
    # a definite matrix: exactly numpy's factor of H + the first ridge
    np.testing.assert_array_equal(
        ridged_cholesky(spd.copy()), np.linalg.cholesky(spd + first * np.eye(6))
    )
    # an eigenvalue at -1e-6 (collinear columns, float32 rounding): a wider ridge works
    w, V = np.linalg.eigh(spd)
    w[0] = -1e-6
    H = (V * w) @ V.T
    with pytest.raises(np.linalg.LinAlgError):
        np.linalg.cholesky(H + 1e-8 * (1.0 + np.trace(H) / 6) * np.eye(6))
    L = ridged_cholesky(H.copy())
    ridge = np.mean(np.diag(L @ L.T - H))
    np.testing.assert_allclose(L @ L.T, H + ridge * np.eye(6), atol=1e-9)
    assert 1e-6 < ridge < 1e-3  # the smallest of 1e-8 x 100^k that makes H + r I definite


def test_spread_cholesky_rescales_only_a_diagonal_that_spans_orders():
    """A Hessian of features at 1e20 beside the intercept (diagonal 1e40 .. 0.25): the
    plain ridge, 1e-8 of the mean diagonal, would be ~1e31 on the intercept's 0.25."""
    from otfair.estimators.classification._logistic import ridged_cholesky, spread_cholesky

    rng = np.random.default_rng(1)
    A = rng.normal(size=(5, 5))
    unit = A @ A.T + np.eye(5)
    np.testing.assert_array_equal(spread_cholesky(unit.copy()), ridged_cholesky(unit.copy()))
    scale = np.array([1e20, 1e20, 1e20, 1e20, 1.0])  # four weights and the intercept
    H = unit * scale[:, None] * scale[None, :]
    L = spread_cholesky(H.copy())
    assert np.allclose(np.tril(L), L)
    # L L^T is H to ~1e-8 of each entry's own scale (the unit matrix's ridge, rescaled)
    np.testing.assert_allclose((L @ L.T) / np.outer(scale, scale), unit, rtol=0, atol=1e-6)
    plain = ridged_cholesky(H.copy())
    assert abs((plain @ plain.T)[-1, -1] - H[-1, -1]) > 1e20  # the ridge it avoids


def test_otf_without_l2_fits_german_despite_collinear_one_hot_columns(data_dir):
    """German's one-hot groups and the intercept are collinear: no l2, a singular Hessian."""
    from otfair.datasets import load_dataset

    split = load_dataset("german").split(random_state=0)
    clf = FairClassifier("otf", 0.01, l2=0.0, random_state=0)
    clf.fit(split.X_train, split.y_train, sensitive_features=split.s_train)
    assert np.all(np.isfinite(clf.predict_proba(split.X_test)))
    assert clf.score(split.X_train, split.y_train) > 0.7  # above the constant's 0.70
