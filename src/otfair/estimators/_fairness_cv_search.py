r"""How :class:`~otfair.estimators.FairnessCV` fits and measures the strengths on its folds.

Two searches fill the same per-fold measurements (:class:`FoldRecorder`):

* ``"grid"``: every strength on every fold, each fold's path in one stacked run
  (:func:`~otfair.estimators.fairness_path`);
* ``"ascending"`` (an estimator with ``warm_start`` whose fits say their warm starts are
  exact, :func:`warm_start_exact`): the strengths in increasing order, each fold's
  estimator fitted at the next strength from its solution at the previous one (a few
  L-BFGS iterations per strength instead of a fit from scratch). The search stops once
  the choice is settled (:func:`is_settled`): after a strength is eligible (its
  violation bound within the budget, not below the constant), at the first later
  strength whose mean held-out score is below the best eligible one. The accuracy falls
  with the strength past the budget, so the strengths left out would not be chosen: the
  choice is the full grid's whenever the mean score of the eligible strengths does not
  rise again after it first falls (``tests/estimators/test_fairness_cv_search.py``
  compares both on Adult). The refit is a fit from scratch, as the grid's. Measured and
  not adopted: carrying each fold's BFGS inverse Hessian (and its preconditioner) from
  one strength's fit to the next. The stale curvature cost more evaluations, not fewer
  (the logistic OTF searches at one thread: German DP 1,216 vs 1,121, German EO 2,922
  vs 1,177 with a different choice, Adult DP 346 vs 257). On German's DP search the
  fold fits at the strength that settles the search (0.3, past the choice 0.1) take
  about half of all evaluations.

After either, FairnessCV's refinement (:mod:`otfair.estimators._fairness_cv_refine`)
fits its midpoints on every fold with :func:`fit_strength`: from each fold's last fit
after the ascent, from scratch after the grid.
"""

from __future__ import annotations

import contextlib
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.metrics import mean_squared_error
from sklearn.utils.validation import check_consistent_length, check_X_y, indexable

from otfair.estimators._budget_rule import (
    FoldMeasures,
    chosen_metric,
    cv_results,
    eligible,
    resolve_metric,
)
from otfair.estimators._path import fairness_path, strength_param
from otfair.estimators._strength_grids import larger_is_fairer
from otfair.estimators._torch_base import FitQualityWarning
from otfair.utils._sklearn_compat import safe_indexing as _safe_indexing

__all__ = [
    "FoldRecorder",
    "WarmFolds",
    "accuracy",
    "ascending_search",
    "check_search_input",
    "constant_predictor",
    "fit_strength",
    "grid_search",
    "is_settled",
    "quiet_fold_fit_quality",
    "resolve_search",
    "warm_start_exact",
]


def training_loss(y: np.ndarray, scores: np.ndarray, task: str) -> float:
    """Loss on the training fold: log-loss of ``P(Y = 1 | x)`` (0/1 labels), or MSE.

    The log-loss of scores clipped to ``[1e-15, 1 - 1e-15]`` (scikit-learn's
    ``log_loss`` of the clipped scores, without its input checks: 5 ms a call on 16,000
    rows, once per fitted model).
    """
    if task == "classification":
        p = np.clip(np.asarray(scores, dtype=np.float64), 1e-15, 1 - 1e-15)
        positive = np.asarray(y) == 1
        return float(-np.mean(np.where(positive, np.log(p), np.log1p(-p))))
    return float(mean_squared_error(y, scores))


def accuracy(est: Any, X: Any, y: Any, sample_weight: Any = None) -> float:
    """Return the (weighted) share of ``est.predict(X)`` equal to ``y`` (``"accuracy"``)."""
    hits = np.asarray(est.predict(X)) == np.asarray(y)
    return float(np.average(hits, weights=sample_weight))


def constant_predictor(task: str) -> Any:
    """Return the unfitted best constant predictor: the training base rate, or mean."""
    if task == "classification":
        return DummyClassifier(strategy="prior")
    return DummyRegressor(strategy="mean")


def violation_scores(est: Any, X: Any, task: str) -> np.ndarray:
    """Return the scores a violation is measured on: P(Y = 1 | x), or the predictions."""
    if task == "classification":
        return np.asarray(est.predict_proba(X))[:, -1]
    return np.asarray(est.predict(X), dtype=float).ravel()


class FoldRecorder:
    """The held-out score and violation and the training loss of each fitted model.

    Parameters
    ----------
    X, y, s : indexable
        The data and the sensitive features.
    splits : list of (train, test) index arrays
    n_strengths : int
        The strengths of the grid (a search may measure only some of them).
    task : {"classification", "regression"}
    scorer : callable
        ``scorer(estimator, X, y)``, higher is better.
    metric : callable
        ``metric(y_true, y_score, *, sensitive_features)``, lower is fairer.
    metric_name : str
    pooled : bool, default=True
        Whether :meth:`table` measures each strength's violation on the pooled held-out
        predictions (``FairnessCV(pooled_violation=...)``).
    """

    def __init__(
        self,
        X: Any,
        y: Any,
        s: Any,
        splits: Sequence[Any],
        n_strengths: int,
        task: str,
        scorer: Callable[..., float],
        metric: Callable[..., float],
        metric_name: str,
        pooled: bool = True,
    ) -> None:
        self.X, self.y, self.s, self.splits = X, y, s, list(splits)
        self.pooled = pooled
        self.task, self.scorer, self.metric = task, scorer, metric
        self.all = FoldMeasures.empty(len(self.splits), n_strengths, metric_name, task)
        self.predictions: dict[int, list[np.ndarray]] = {}  # k -> held-out, by fold
        self.pooled_y: list[np.ndarray] = []
        self.done: set[int] = set()
        self._rows: dict[tuple[int, int], tuple[Any, Any, Any]] = {}  # (fold, part) -> rows
        #: called as ``progress(fold, k, score, violation)`` after each model's measures
        self.progress: Callable[[int, int, float, float], None] | None = None

    def _part(self, f: int, part: int) -> tuple[Any, Any, Any]:
        """Return ``(X, y, s)`` of fold ``f``'s training (0) or held-out (1) rows (kept)."""
        key = (f, part)
        if key not in self._rows:
            index = self.splits[f][part]
            self._rows[key] = tuple(_safe_indexing(a, index) for a in (self.X, self.y, self.s))
        return self._rows[key]

    def _measure_constants(self) -> None:
        """Measure the best constant of each training fold (after a model checked the data)."""
        n_strengths = self.all.scores.shape[1]
        for f in range(len(self.splits)):
            X_tr, y_tr, _ = self.fold(f)
            constant = constant_predictor(self.task).fit(X_tr, y_tr)
            self.pooled_y.append(self.add(f, n_strengths, constant))

    def fold(self, f: int) -> tuple[Any, Any, Any]:
        """Return the training rows ``(X, y, s)`` of fold ``f``."""
        return self._part(f, 0)

    def add(self, f: int, k: int, est: Any) -> np.ndarray:
        """Measure ``est``, fitted on fold ``f`` at strength index ``k`` (past them: the constant).

        Returns the held-out labels as the measures read them.
        """
        if not self.pooled_y and k < self.all.scores.shape[1]:
            self._measure_constants()  # a model's fit has validated the data
        X_tr, y_tr, _ = self._part(f, 0)
        X_te, y_te, s_te = self._part(f, 1)
        y_metric, y_fit = np.asarray(y_te), np.asarray(y_tr)
        if self.task == "classification":  # the measures take 0/1 labels
            y_metric = (y_metric == est.classes_[-1]).astype(int)
            y_fit = (y_fit == est.classes_[-1]).astype(int)
        prediction = violation_scores(est, X_te, self.task)
        score = self.scorer(est, X_te, y_te)
        violation = self.metric(y_metric, prediction, sensitive_features=s_te)
        self.all.record(
            f,
            k,
            score,
            violation,
            training_loss(y_fit, violation_scores(est, X_tr, self.task), self.task),
        )
        if self.progress is not None and k < self.all.scores.shape[1]:  # not the constant
            self.progress(f, k, float(score), float(violation))
        self.predictions.setdefault(k, [np.empty(0)] * len(self.splits))[f] = prediction
        if k < self.all.scores.shape[1] and all(p.size for p in self.predictions[k]):
            self.done.add(k)
        return y_metric

    def measures(self, pooled: bool) -> tuple[np.ndarray, FoldMeasures]:
        """Return the measured strength indices (ascending) and their measurements."""
        done = np.asarray(sorted(self.done), dtype=int)
        out = FoldMeasures(
            self.all.scores[:, done],
            self.all.violations[:, done],
            self.all.losses[:, done],
            dict(self.all.reference),
            self.all.metric_name,
            self.all.fit_time,
        )
        if pooled:
            s_all = _safe_indexing(self.s, np.concatenate([test for _, test in self.splits]))
            y_all = np.concatenate(self.pooled_y)
            n = self.all.scores.shape[1]
            values = [
                self.metric(y_all, np.concatenate(self.predictions[k]), sensitive_features=s_all)
                for k in [*done.tolist(), n]
            ]
            out.pooled = np.asarray(values[:-1], dtype=float)
            out.reference["pooled"] = float(values[-1])
        return done, out

    def table(
        self, strengths: np.ndarray, param: str, max_violation: float, margin: float
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Return the measured strength indices and their ``cv_results_`` table."""
        done, folds = self.measures(self.pooled)
        table = cv_results(
            strengths[done],
            folds.scores,
            folds.violations,
            param,
            max_violation,
            losses=folds.losses,
            reference=folds.reference,
            margin=margin,
            pooled=folds.pooled,
        )
        return done, table


def resolve_search(search: str, estimator: Any) -> str:
    """Resolve FairnessCV's ``search``: ``"auto"`` ascends for an estimator with ``warm_start``."""
    if search == "ascending" and not larger_is_fairer(estimator):
        raise ValueError(
            "search='ascending' stops once a larger strength scores less, which needs the "
            f"larger strengths to be the fairer ones; {type(estimator).__name__}'s smaller "
            "strengths are (its strength weighs the task). Use search='grid'."
        )
    if search != "auto":
        return str(search)
    return "ascending" if "warm_start" in estimator.get_params(deep=False) else "grid"


def check_search_input(
    estimator: Any, X: Any, y: Any, sensitive_features: Any
) -> tuple[Any, Any, Any, str]:
    """Return FairnessCV's ``(X, y, s, param)``: the rows indexable, the strength's name.

    ``X`` and ``y`` are checked (and kept as given); ``sensitive_features`` is required,
    and the estimator's strength must be a number (FairnessCV sets it). An estimator
    that FairnessCV cannot search says why (``_fairness_cv_refusal``: AdapFair's).
    """
    refusal = getattr(estimator, "_fairness_cv_refusal", None)
    if refusal:
        raise ValueError(str(refusal))
    check_X_y(X, y, accept_sparse=False, ensure_min_samples=2)
    if sensitive_features is None:
        raise ValueError("FairnessCV.fit needs `sensitive_features` (one value per row).")
    X, y, s = indexable(X, y, sensitive_features)
    check_consistent_length(X, y, s)
    param = strength_param(estimator)
    template = estimator.get_params(deep=False)[param]
    if not isinstance(template, Real) or isinstance(template, bool):
        raise ValueError(
            f"The estimator's `{param}` must be a number (FairnessCV sets it); got "
            f"{template!r}. Pass the strengths to search as FairnessCV(strengths=...)."
        )
    return X, y, s, param


def make_recorder(
    search: Any,
    X: Any,
    y: Any,
    s: Any,
    strengths: np.ndarray,
    splits: list[Any],
    param: str,
) -> FoldRecorder:
    """Return ``search``'s (a FairnessCV's) fold recorder, with its progress line if verbose.

    The violation measure is ``search.metric`` as :func:`chosen_metric` resolves it for
    these sensitive features (a continuous attribute: the correlation measures).
    """
    from otfair.estimators._fairness_cv_progress import ProgressLine

    task = search._task()
    name, metric = resolve_metric(chosen_metric(search.metric, search.estimator, task, s), task)
    scorer, pooled = search._scorer(), search.pooled_violation
    recorder = FoldRecorder(X, y, s, splits, len(strengths), task, scorer, metric, name, pooled)
    if search.verbose:
        recorder.progress = ProgressLine(strengths, len(splits), param, name)
    return recorder


def grid_search(
    estimator: Any, strengths: np.ndarray, recorder: FoldRecorder, indices: Sequence[int]
) -> None:
    """Fit ``strengths[indices]`` on every fold, one stacked path per fold, and measure them."""
    values = [float(strengths[k]) for k in indices]
    for f in range(len(recorder.splits)):
        X_tr, y_tr, s_tr = recorder.fold(f)
        start = time.perf_counter()
        path = fairness_path(estimator, X_tr, y_tr, sensitive_features=s_tr, strengths=values)
        recorder.all.fit_time += time.perf_counter() - start
        for k, est in zip(indices, path.estimators_, strict=True):
            recorder.add(f, int(k), est)


@contextlib.contextmanager
def quiet_fold_fit_quality() -> Iterator[None]:
    """Silence the fold fits' :class:`FitQualityWarning`; say every other warning once.

    A strength past the useful range ends below the best constant predictor on every
    fold; the search handles that (the ``reference`` row, ``above_reference``,
    ``mean_train_loss``), so one warning per fold and strength would only bury the
    user's screen. Other warnings (a small group, a fit that reached its cap) are
    collected and, when the search ends without an error, each distinct one is shown
    once, with the number of times it was raised, from its own place and module (a
    ``module=`` filter applies); a search that raises shows its error alone. The
    refit's own warnings are shown as they come.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=FitQualityWarning)
        yield
    counts: dict[tuple[type[Warning], str], list[Any]] = {}
    for w in caught:
        counts.setdefault((w.category, str(w.message)), []).append(w)
    for (category, message), found in counts.items():
        if len(found) > 1:
            text = message.rstrip().removesuffix(".")
            message = f"{text} ({len(found)} times in the folds' fits and measures)."
        first = found[0]  # its place and module: a user's `module=` filter still applies
        module = _module_of(first.filename)
        warnings.warn_explicit(message, category, first.filename, first.lineno, module=module)


def _module_of(filename: str) -> str | None:
    """Return the name of the imported module whose file is ``filename`` (None if none).

    A module's ``__file__`` is read defensively: lazy modules (six's moves) import on
    attribute access and may raise.
    """
    for name, module in list(sys.modules.items()):
        try:
            if getattr(module, "__file__", None) == filename:
                return name
        except Exception:  # noqa: BLE001 - a lazy module that cannot load is not the one
            continue
    return None


def warm_start_exact(est: Any) -> bool:
    """Whether the fitted ``est``'s warm starts reach a cold start's solution.

    An estimator says so by a method ``_warm_start_exact()`` (FairClassifier: its last
    fit used L-BFGS and converged); others are not warm-started by the search.
    """
    check = getattr(est, "_warm_start_exact", None)
    return bool(check()) if callable(check) else False


@dataclass
class WarmFolds:
    """The ascending search's warm-started fold estimators and their fits' parameters.

    ``estimators[f]`` is fold ``f``'s estimator (``warm_start=True``), fitted last at the
    last strength measured; ``states[k][f]`` the model parameters of its fit at strength
    index ``k`` (a refinement midpoint starts from the nearest measured strength above it,
    not from the last one).
    """

    estimators: list[Any]
    states: dict[int, list[dict[str, Any]]] = field(default_factory=dict)

    def keep(self, k: int) -> None:
        """Record the folds' current parameters as those of strength index ``k``."""
        self.states[k] = [
            {name: v.detach().clone() for name, v in est.model_.state_dict().items()}
            for est in self.estimators
        ]

    def start_at(self, k: int) -> None:
        """Put the parameters of the nearest kept strength above index ``k`` in each fold."""
        above = [i for i in self.states if i > k]
        if not above:
            return  # from the last fit
        for est, state in zip(self.estimators, self.states[min(above)], strict=True):
            est.model_.load_state_dict(state)


def ascending_search(
    estimator: Any,
    strengths: np.ndarray,
    recorder: FoldRecorder,
    param: str,
    settled: Callable[[], bool],
    indices: Sequence[int],
) -> WarmFolds | None:
    """Fit ``strengths[indices]`` in increasing order until ``settled()`` (module docstring).

    Returns the folds' warm-started estimators and their fits' parameters, or None,
    having measured nothing, when the first fit says its warm starts are not exact
    (:func:`warm_start_exact`: Adam, or a fit that stopped at its iteration cap): the
    caller then runs the grid.
    """
    folds = WarmFolds([clone(estimator).set_params(warm_start=True) for _ in recorder.splits])
    for k in indices:
        for f, est in enumerate(folds.estimators):
            fit_fold(est, recorder, f, param, float(strengths[k]))
            if k == indices[0] and f == 0 and not warm_start_exact(est):
                return None
            recorder.add(f, int(k), est)
        folds.keep(int(k))
        if settled():
            break
    return folds


def fit_fold(est: Any, recorder: FoldRecorder, f: int, param: str, value: float) -> Any:
    """Fit ``est`` at strength ``value`` on fold ``f``'s training rows (timed); return it."""
    X_tr, y_tr, s_tr = recorder.fold(f)
    start = time.perf_counter()
    est.set_params(**{param: value}).fit(X_tr, y_tr, sensitive_features=s_tr)
    recorder.all.fit_time += time.perf_counter() - start
    return est


def fit_strength(
    estimator: Any,
    strengths: np.ndarray,
    recorder: FoldRecorder,
    param: str,
    folds: WarmFolds | None,
    k: int,
) -> None:
    """Fit and measure strength ``strengths[k]`` on every fold (a refinement's midpoint).

    ``folds``: the ascending search's (each fold starts from its fit at the nearest
    measured strength above ``k``, :meth:`WarmFolds.start_at`); None: the grid's, a fit
    from scratch per fold (a stacked path's model is its separate fit: the same model as
    if the strength had been in the fold's path).
    """
    value = float(strengths[k])
    if folds is not None:
        folds.start_at(k)
    for f in range(len(recorder.splits)):
        est = folds.estimators[f] if folds is not None else clone(estimator)
        recorder.add(f, int(k), fit_fold(est, recorder, f, param, value))
    if folds is not None:
        folds.keep(k)


def is_settled(table: dict[str, Any], budget: float) -> bool:
    """Whether an ascending search may stop: a strength past the best eligible scores less.

    A tie does not stop it: stopping on a tie (a later strength would be chosen only if
    it scored more) was tried and cut German's EO search to a few strengths, but changed
    its choice: the held-out accuracy there was flat over three strengths, rose by one
    row, stayed flat again and only then fell.
    """
    ok = eligible(table, budget)
    scores = np.asarray(table["mean_test_score"], dtype=float)
    strengths = np.asarray(table["strength"], dtype=float)
    if not ok.any():
        return False
    best = int(np.flatnonzero(ok)[np.nanargmax(scores[ok])])
    last = int(np.nanargmax(np.where(np.isnan(strengths), -np.inf, strengths)))
    return bool(last > best and scores[last] < scores[best])
