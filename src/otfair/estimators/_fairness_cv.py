r"""FairnessCV: the most accurate strength within a fairness-violation budget, by CV."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, is_classifier
from sklearn.metrics import check_scoring, get_scorer_names
from sklearn.utils import get_tags
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from otfair.estimators._budget_rule import (
    METRIC_NAMES,
    folds_with_every_group,
    make_splits,
    rank_first,
    select_strength,
)
from otfair.estimators._fairness_cv_progress import announce_refit
from otfair.estimators._fairness_cv_refine import refine, refinement_grid
from otfair.estimators._fairness_cv_refit import checked_refit
from otfair.estimators._fairness_cv_search import (
    FoldRecorder,
    accuracy,
    ascending_search,
    check_search_input,
    fit_strength,
    grid_search,
    is_settled,
    make_recorder,
    quiet_fold_fit_quality,
    resolve_search,
)
from otfair.estimators._lbfgs import one_blas_thread_if_small
from otfair.estimators._strength_grids import default_strengths, larger_is_fairer
from otfair.utils import HasMethods, Interval, StrOptions, check_strengths, fit_context

__all__ = ["FairnessCV"]


def _estimator_has(attr: str) -> Callable[[Any], bool]:
    def check(self: FairnessCV) -> bool:
        if hasattr(self, "best_estimator_"):
            return hasattr(self.best_estimator_, attr)
        return hasattr(self.estimator, attr)

    return check


class FairnessCV(MetaEstimatorMixin, BaseEstimator):
    r"""The most accurate fairness strength whose cross-validated violation is in budget.

    A practitioner asks for "the most accurate model whose demographic-parity gap stays
    under 0.02", not for a strength. ``FairnessCV`` turns the budget into a strength in
    scikit-learn's ``*CV`` style (as ``LassoCV`` chooses ``alpha``): on each of the
    ``cv`` folds it fits the trade-off path over ``strengths`` (in one stacked training
    run, :func:`~otfair.estimators.fairness_path`, or strength by strength from the
    previous fit until the choice is settled: ``search``), scores
    every model on the held-out fold (``scoring``) and measures its violation
    (``metric``), then picks

    .. math::

        s^\star = s_{k^\star},\qquad
        k^\star = \operatorname*{arg\,max}_{k:\ u_k \le b,\ k \succeq \mathrm{const}}
        \ \bar a_k,
        \qquad
        u_k = v_k + m\,\frac{\sigma_k}{\sqrt F},\quad
        \bar a_k = \frac1F \sum_{f=1}^F a_{k,f},

    with :math:`a_{k,f}` and :math:`v_{k,f}` the score and the violation of strength
    :math:`s_k` on held-out fold :math:`f`, :math:`v_k` the violation of the held-out
    predictions of all folds pooled (as ``cross_val_predict`` pools them;
    ``pooled_violation=False``: the fold mean :math:`\bar v_k = \frac1F\sum_f v_{k,f}`),
    :math:`\sigma_k` the standard deviation (``ddof=1``) of :math:`v_{k,1..F}`,
    :math:`m` = ``margin`` and :math:`b` = ``max_violation``; among equal scores the
    smaller strength wins. With ``refit=True`` one estimator at :math:`s^\star` is then
    fitted on all the data (``best_estimator_``).

    **Why pooled.** The DP gap is an absolute difference of group rates: on a small
    held-out fold its noise only adds to it (a model with no gap shows about 0.03 on
    COMPAS's 860-row folds). Pooling the held-out predictions measures it on all the
    rows at once, with :math:`\sqrt F` times less of that bias.

    **Never below a constant.** On each fold the best constant predictor of the training
    fold (the class prior; the mean target for a regressor) is scored like the models:
    the last row of ``cv_results_`` (``reference``; its DP and EO gaps are 0). A strength
    whose mean held-out score is below the constant's, or whose mean training-fold loss
    (log-loss of ``P(Y=1|x)``, squared error) is above it, has stopped learning from the
    labels and is excluded (:math:`k \succeq \mathrm{const}`; ``above_reference``
    False). When every strength within the budget is excluded, ``fit`` raises a
    ``ValueError`` that gives both scores (``below_constant``: a warning, and the
    choice among them, or the constant itself).

    **The budget on new data.** On new data the violation of a strength whose held-out
    violation sits at the edge of the budget exceeds it about half the time, by about
    the noise of the measurement. ``margin`` asks instead for the upper bound
    :math:`u_k` (plus ``margin`` standard errors of the fold mean) to be within the
    budget: 1.0 is a one-sided ~84% bound, 1.645 ~95%; the default 0 chooses on the
    estimate (the choice at margins 0.5 and 1 on each benchmarked case:
    ``docs/measurements/fairness_cv_vs_fairlearn.md``, ``docs/budget.md``). A finer
    ``strengths`` grid near the budget keeps a margin's cost in accuracy small. The refit
    on all the rows may also end fairer or less fair than the folds' models
    (``check_refit``): it is kept only if its violation on its own training rows is
    within the budget.

    Parameters
    ----------
    estimator : estimator
        An unfitted :class:`~otfair.estimators.FairClassifier` (any penalty but
        ``"none"``), ``CENet``, ``WassersteinNet``, LAFTR, CFair, sIPM-LFR, or with the
        group in ``sensitive_column`` a fair flow or AdapFair (blind too; its smaller
        strengths are the fairer ones, docs/budget.md); its ``strength`` is set by
        ``FairnessCV``. Use an integer ``random_state`` for reproducible choices.
    strengths : array-like of float, optional
        The strengths searched (distinct, non-negative; sorted ascending). ``None``: the
        method's default grid, 0 then a log grid (``default_strengths``, docs/budget.md).
    max_violation : float
        The budget :math:`b \ge 0` on the mean held-out ``metric``.
    metric : str or callable, default="auto"
        The violation measure, lower is fairer. Classifiers (on ``P(Y=1|x)``, hard
        decisions at 0.5): ``"dp_gap"``, ``"eo_gap"``, ``"max_eo_gap"``, ``"tpr_gap"``,
        ``"fpr_gap"``, ``"mean_score_gap"``, ``"wdp"``, ``"ksdp"``, ``"tvdp"``,
        ``"pdp_violation"``, ``"peo_violation"``; regressors: ``"error_gap"``, ``"wdp"``,
        ``"ksdp"``, ``"mean_score_gap"``, ``"pdp_violation"`` (:mod:`otfair.metrics`). A
        callable ``metric(y_true, y_score, *, sensitive_features) -> float``.
        ``"auto"``: the measure of the estimator's ``notion`` (``"dp_gap"``;
        ``"max_eo_gap"`` under ``notion="eo"``, the worst of the two label cells' gaps as
        in fairlearn's ``EqualizedOdds``; ``"tpr_gap"`` under ``"eopp"``; a continuous
        attribute: ``"pdp_violation"`` or ``"peo_violation"``, the only measures it takes),
        ``"error_gap"`` for a regressor; ``metric_`` names the one used.
    scoring : str or callable, optional
        What "most accurate" means: a scikit-learn scorer name (``"roc_auc"``,
        ``"balanced_accuracy"``, ``"neg_mean_squared_error"``...) or a scorer
        ``scoring(estimator, X, y)``, higher is better. ``None``: accuracy for
        classifiers, :math:`R^2` for regressors.
    cv : int, cross-validation generator or iterable, default=5
        An integer: the folds of a ``StratifiedKFold`` on label x sensitive group (a
        regression target cut at its quartiles; a coarser key when a combination has
        fewer rows than folds), the rows shuffled with seed 0 (Bank's are stored in time
        order). A splitter or an iterable of ``(train, test)`` indices: as given.
    refit : bool, default=True
        Fit ``best_estimator_`` at the chosen strength on the whole data.
    check_refit : bool, default=True
        Measure the refit's ``metric`` on its own training rows
        (``otfair/estimators/_fairness_cv_refit.py``) and, while it is over
        ``max_violation`` (a model over the budget on the rows it was trained on is likely
        over it on new data), refit at the next larger eligible strength measured; the
        attributes then describe the strength kept. None within it: the least violating
        refit and a ``UserWarning``. False: the first refit as it is.
    margin : float, default=0.0
        How many standard errors of the fold mean (``std(ddof=1) / sqrt(F)`` over the
        folds) are added to a strength's mean held-out violation before it is compared
        with ``max_violation``: 0 compares the estimate itself, 1.0 a one-sided ~84% upper
        bound, 1.645 ~95%. A larger margin never chooses a strength whose upper bound
        at the smaller margin exceeds the budget.
    below_constant : {"raise", "warn", "constant"}, default="raise"
        When no strength is worth returning (none within the budget, or all those within
        it below the best constant predictor): ``"raise"`` a ``ValueError`` that says so;
        ``"warn"`` that as a ``UserWarning``, choosing among those within the budget as if
        there were no reference (none: raise); ``"constant"`` warns and chooses the
        constant (the ``reference`` row; ``strength_`` NaN, ``best_estimator_`` a fitted
        ``DummyClassifier(strategy="prior")`` or ``DummyRegressor()``), within any budget
        of a classifier (it treats every group alike), a regressor's only where measured.
    pooled_violation : bool, default=True
        Measure a strength's violation on the pooled held-out predictions of all folds
        (``cv_results_["pooled_test_violation"]``); ``False``: the mean of the per-fold
        violations (``mean_test_violation``, the rule before this option). Pooled, the
        folds' signed gaps average out: folds of +0.04, -0.05 and +0.06 pool near 0.02,
        below each fold's gap. The refit is one model, and its gap is estimated by that
        mean (the mean of the folds' absolute gaps is biased up by their noise); where
        the folds' gaps disagree in sign, ``margin`` or ``pooled_violation=False`` is
        the cautious choice.
    search : {"auto", "grid", "ascending"}, default="auto"
        How the strengths are fitted (``otfair/estimators/_fairness_cv_search.py``).
        ``"grid"``: every strength on every fold, each fold's path in one stacked run.
        ``"ascending"``: in increasing order, each fold's fit warm-started from the
        previous strength's, stopping at the first strength past the best eligible one
        that scores less (later ones are not fitted, nor in ``cv_results_``); only where
        the first fit used L-BFGS and converged, else the grid runs. ``"auto"``:
        ``"ascending"`` for an estimator with ``warm_start``, else ``"grid"``.
    refine : int, default=0
        Bisection rounds after the grid's choice
        (``otfair/estimators/_fairness_cv_refine.py``): while the largest smaller
        strength measured is over the budget, the midpoint between it and the chosen one
        (in :math:`\log\frac{s}{1-s}` below 1, :math:`\log s` above) is fitted on every
        fold and the choice made again; its rows join ``cv_results_``. Two rounds narrow
        a 3x grid step to ~1.32x: more accurate, with the violation on new data nearer
        ``max_violation`` (pair it with a ``margin``).
    verbose : int, default=0
        1 or more: one line on standard error per fold fit measured (the fold, the
        strength, its held-out score and violation, the seconds since the start) and one
        for the refit (``GridSearchCV``'s ``verbose``); 0: silent.

    Attributes
    ----------
    strength_ : float
        The chosen strength :math:`s^\star` (NaN: the constant, ``below_constant``).
    best_params_ : dict
        ``{strength_param_: strength_}`` (the constant's ``params``): ``best_estimator_``'s.
    best_index_ : int
        Its index in ``cv_results_``.
    best_score_ : float
        Its mean held-out score :math:`\bar a_{k^\star}`.
    best_violation_ : float
        Its held-out violation :math:`v_{k^\star}` (``cv_results_["test_violation"]``;
        its upper bound :math:`u_{k^\star}`, ``upper_test_violation``, is at most
        ``max_violation``).
    best_estimator_ : estimator
        ``refit=True`` only: the estimator fitted at ``strength_`` on all the data.
    refit_history_ : list of dict
        ``refit=True`` only: ``{"strength", "train_violation"}`` of each refit, in order
        (more than one where ``check_refit`` moved the strength up).
    refit_time_ : float
        ``refit=True`` only: wall seconds of the refits (``GridSearchCV``'s name).
    cv_results_ : dict of numpy arrays
        One entry per strength measured (the grid's, and any ``refine`` midpoints),
        ascending, then one for the best constant predictor
        (``GridSearchCV``'s layout): ``strength`` (NaN for the constant), ``params``
        (``{"constant": "prior"}`` or ``{"constant": "mean"}`` for the constant),
        ``split{f}_test_score``, ``split{f}_test_violation``, ``mean_test_score``,
        ``std_test_score``, ``mean_test_violation``, ``std_test_violation`` (``ddof=0``),
        ``pooled_test_violation`` (``pooled_violation=True``), ``test_violation``
        (:math:`v_k`), ``upper_test_violation`` (:math:`u_k`), ``mean_train_loss``,
        ``reference`` (True on the constant's row), ``above_reference`` (not below it),
        ``feasible`` (:math:`u_k` within the budget) and ``rank_test_score`` (the
        eligible strengths first, each part by score then strength; rank 1 is the chosen
        one, ``best_index_``, also where the refit check or ``below_constant`` chose it).
    strength_param_ : str
        The estimator's strength parameter (``"strength"`` or ``"lam"``).
    metric_ : str
        The name of the violation measure.
    n_splits_ : int
        Number of folds.
    path_fit_time_ : float
        Wall seconds of the fold fits (the paths), refit excluded.
    classes_ : ndarray
        Classifiers: the labels, from ``best_estimator_``.

    Notes
    -----
    ``sensitive_features`` is requested by ``fit`` by default, so inside a
    :class:`~sklearn.pipeline.Pipeline` with ``sklearn.set_config(
    enable_metadata_routing=True)`` a call ``pipe.fit(X, y, sensitive_features=s)``
    reaches it (scikit-learn's metadata routing; ``set_fit_request`` changes it).
    Without routing, pass ``pipe.fit(X, y, fairnesscv__sensitive_features=s)``.

    See Also
    --------
    sklearn.linear_model.LassoCV : the same pattern for the lasso's ``alpha``.
    fairlearn.reductions.ExponentiatedGradient : a reduction that takes the bound itself.

    Examples
    --------
    >>> import numpy as np
    >>> from otfair.estimators import FairClassifier, FairnessCV
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3)); s = rng.integers(0, 2, 300)
    >>> y = (X[:, 0] + s + rng.normal(size=300) > 0.5).astype(int)
    >>> base = FairClassifier("gapreg", epochs=5, batch_size=50, lr=0.05, random_state=0)
    >>> search = FairnessCV(base, strengths=[0.0, 1.0, 10.0], max_violation=0.3, cv=3)
    >>> search.fit(X, y, sensitive_features=s).strength_ in search.cv_results_["strength"]
    True
    >>> bool(search.best_violation_ <= 0.3)
    True
    >>> search.predict(X[:4]).shape
    (4,)
    """

    _parameter_constraints: dict = {  # noqa: RUF012 (scikit-learn's convention)
        "estimator": [HasMethods(["fit"])],
        "strengths": ["array-like", None],
        "max_violation": [Interval(Real, 0, None, closed="left")],
        "metric": [StrOptions(METRIC_NAMES), callable],
        "scoring": [StrOptions(set(get_scorer_names())), callable, None],
        "cv": [Interval(Integral, 2, None, closed="left"), "cv_object"],
        "refit": ["boolean"],
        "check_refit": ["boolean"],
        "margin": [Interval(Real, 0, None, closed="left")],
        "below_constant": [StrOptions({"raise", "warn", "constant"})],
        "pooled_violation": ["boolean"],
        "search": [StrOptions({"auto", "grid", "ascending"})],
        "refine": [Interval(Integral, 0, None, closed="left")],
        "verbose": ["verbose"],
    }
    # `fit` consumes sensitive_features: requested by default (metadata routing)
    __metadata_request__fit = {"sensitive_features": True}  # noqa: RUF012

    def __init__(
        self,
        estimator: Any,
        *,
        strengths: Sequence[float] | np.ndarray | None = None,
        max_violation: float,
        metric: str | Callable[..., float] = "auto",
        scoring: str | Callable[..., float] | None = None,
        cv: Any = 5,
        refit: bool = True,
        check_refit: bool = True,
        margin: float = 0.0,
        below_constant: str = "raise",
        pooled_violation: bool = True,
        search: str = "auto",
        refine: int = 0,
        verbose: int = 0,
    ) -> None:
        self.estimator = estimator
        self.strengths = strengths
        self.max_violation = max_violation
        self.metric = metric
        self.scoring = scoring
        self.cv = cv
        self.refit = refit
        self.check_refit = check_refit
        self.margin = margin
        self.below_constant = below_constant
        self.pooled_violation = pooled_violation
        self.search = search
        self.refine = refine
        self.verbose = verbose

    # ------------------------------------------------------------------ helpers
    def _task(self) -> str:
        return "classification" if is_classifier(self.estimator) else "regression"

    def _strength_grid(self) -> np.ndarray:
        if self.strengths is None:
            return default_strengths(self.estimator)
        return np.sort(check_strengths(self.strengths, minimum=0.0))

    def _scorer(self) -> Callable[..., float]:
        if self.scoring is None and self._task() == "classification":
            return accuracy  # scikit-learn's "accuracy" scorer without its checks
        default = "accuracy" if self._task() == "classification" else "r2"
        return check_scoring(self.estimator, scoring=self.scoring or default)

    # ---------------------------------------------------------------------- fit
    @fit_context(validate_nested=True)
    def fit(self, X: Any, y: Any, *, sensitive_features: Any = None) -> FairnessCV:
        """Cross-validate the path over ``strengths``, choose a strength, refit.

        Parameters
        ----------
        X : array-like of shape (n, d)
        y : array-like of shape (n,)
            Binary labels (classifier) or real targets (regressor).
        sensitive_features : array-like of shape (n,) or (n, k)
            The sensitive attribute(s), given to the estimator's ``fit`` and to
            ``metric``; used in the fold key.

        Returns
        -------
        self : FairnessCV

        Raises
        ------
        ValueError
            When no strength's violation bound is within ``max_violation`` (the message
            names the lowest one reached and its strength), or when every strength within
            it is below the best constant predictor (the message gives both scores);
            ``below_constant="constant"`` returns the constant instead (and warns).

        Warns
        -----
        FitQualityWarning
            From the refit only. The fold fits' are silenced: a strength past the useful
            range ends below the best constant on every fold, which the table records (the
            ``reference`` row, ``above_reference``, ``mean_train_loss``) and excludes.
        UserWarning
            ``check_refit``: no refit allowed by the table is within the budget on its
            training rows (the least violating is kept).
        """
        X, y, s, param = check_search_input(self.estimator, X, y, sensitive_features)
        with one_blas_thread_if_small(X, torch_threads=True):  # small data: one thread
            self._search_and_refit(X, y, s, param)
        return self

    def _search_and_refit(self, X: Any, y: Any, s: Any, param: str) -> None:
        """Search the strengths on the folds, choose one, refit it (``fit``'s work)."""
        strengths, grid = refinement_grid(self._strength_grid(), self.refine)
        splits = folds_with_every_group(make_splits(self.cv, X, y, s, self._task()), s)
        recorder = make_recorder(self, X, y, s, strengths, splits, param)

        def table() -> tuple[np.ndarray, dict[str, Any]]:
            return recorder.table(strengths, param, self.max_violation, self.margin)

        with quiet_fold_fit_quality():
            folds = None
            if resolve_search(self.search, self.estimator) == "ascending":
                folds = ascending_search(
                    self.estimator,
                    strengths,
                    recorder,
                    param,
                    lambda: is_settled(table()[1], self.max_violation),
                    grid.tolist(),
                )
            if folds is None:  # the grid, or warm starts that would not be exact
                grid_search(self.estimator, strengths, recorder, grid.tolist())
            refine(
                self.refine,
                table,
                lambda k: fit_strength(self.estimator, strengths, recorder, param, folds, k),
                self.max_violation,
                self.below_constant,
                larger_is_fairer(self.estimator),
            )
        _, self.cv_results_ = table()
        self.strength_param_ = param
        self.metric_ = recorder.all.metric_name
        self.n_splits_ = len(splits)
        self.path_fit_time_ = recorder.all.fit_time
        rule = {"below_constant": self.below_constant}
        self._choose(select_strength(self.cv_results_, self.max_violation, **rule))
        if self.refit:
            self._refit(X, y, s, param, recorder)

    def _refit(self, X: Any, y: Any, s: Any, param: str, recorder: FoldRecorder) -> None:
        """Fit ``best_estimator_`` (``check_refit``: within the budget on ``X``)."""
        done = checked_refit(
            self.estimator,
            X,
            y,
            s,
            results=self.cv_results_,
            index=self.best_index_,
            param=param,
            max_violation=self.max_violation if self.check_refit else np.inf,
            metric=recorder.metric,
            task=self._task(),
            below_constant=self.below_constant,
            announce=lambda value: announce_refit(param, value, recorder.progress),
            larger_is_fairer=larger_is_fairer(self.estimator),
        )
        self.best_estimator_, self.refit_history_ = done.estimator, done.history
        self.refit_time_ = done.seconds
        self._choose(done.index)

    def _choose(self, k: int) -> None:
        """Set the attributes of the chosen row ``k`` of ``cv_results_``; rank it first."""
        self.best_index_, rows = k, self.cv_results_
        rank_first(rows["rank_test_score"], k)
        self.strength_ = float(rows["strength"][k])  # NaN: the constant (below_constant)
        self.best_params_ = dict(rows["params"][k])
        self.best_score_ = float(rows["mean_test_score"][k])
        self.best_violation_ = float(rows["test_violation"][k])

    # ------------------------------------------------------------------ predict
    def _best(self) -> Any:
        check_is_fitted(self, "strength_")
        if not self.refit:
            raise AttributeError(
                "This FairnessCV was fitted with refit=False: there is no best_estimator_ "
                "to predict with; refit it at `strength_` or set refit=True."
            )
        return self.best_estimator_

    def predict(self, X: Any) -> np.ndarray:
        """Predict with ``best_estimator_``."""
        return self._best().predict(X)

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities of ``best_estimator_`` (classifiers)."""
        return self._best().predict_proba(X)

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Return the ``scoring`` score of ``best_estimator_`` on ``(X, y)`` (weighted)."""
        weights = {} if sample_weight is None else {"sample_weight": sample_weight}
        return float(self._scorer()(self._best(), X, y, **weights))

    @property
    def classes_(self) -> np.ndarray:
        """The labels of ``best_estimator_`` (classifiers)."""
        return self._best().classes_

    @property
    def n_features_in_(self) -> int:
        """Number of input features seen by ``best_estimator_``."""
        return self._best().n_features_in_

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        inner = get_tags(self.estimator)
        tags.estimator_type = inner.estimator_type
        tags.classifier_tags = copy.deepcopy(inner.classifier_tags)
        tags.regressor_tags = copy.deepcopy(inner.regressor_tags)
        return tags
