r"""A fairness trade-off curve as a path: :func:`fairness_path` and :class:`FairnessPath`.

A penalty method has one strength (``strength`` of
:class:`~otfair.estimators.FairClassifier`, :class:`~otfair.estimators.CENet`,
:class:`~otfair.estimators.WassersteinNet` and
:class:`~otfair.estimators.AdapFairClassifier`); the strength is a number in every
estimator. The curve over several strengths is a *path*, in the sense of
scikit-learn's ``lasso_path``: :func:`fairness_path` fits it and returns one fitted
single-strength estimator per strength.

An estimator that can fit K strengths in one stacked training run declares it with a
method ``__otfair_fit_path__(X, y, sensitive_features, strengths, **fit_params)``
(a protocol hook, like scikit-learn's ``__sklearn_tags__``) returning the K
fitted estimators (FairClassifier: every penalty; the regression nets; AdapFair: one
frozen base classifier shared by the flows of every strength). The K models of a
stacked run share the seed, hence the initialization, the batches and every
data-dependent quantity of the penalty; their parameters are stacked and one optimizer
minimizes :math:`\sum_k L_k`, which is K separate fits (nothing couples the models; Adam
and Adadelta update elementwise). Model k equals the estimator fitted alone at
``strengths[k]`` with the same integer ``random_state`` up to float rounding
(``docs/stacking.md``; tested in ``tests/estimators/test_fairness_path.py``). Any other
estimator is fitted once per strength (``clone`` + ``set_params``).

This is otfair's one curve implementation: ``otfair sweep`` fits the runs of a group
that differ only in strength through :func:`fairness_path` too.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator, Sequence
from numbers import Real
from typing import Any

import numpy as np
from sklearn.base import clone, is_classifier

from otfair.estimators._training import forget_fit
from otfair.utils import HasMethods, validate_params
from otfair.utils._strength import check_strength, check_strengths

__all__ = [
    "FairnessPath",
    "check_strength",
    "check_strengths",
    "fairness_path",
    "forget_fit",
    "strength_param",
    "supports_stacking",
]

#: the strength parameters of otfair's estimators, in the order they are looked for
_STRENGTH_NAMES = ("strength", "lam")


def strength_param(estimator: Any) -> str:
    """Return the name of ``estimator``'s strength parameter.

    Every otfair estimator calls it ``strength``; ``lam`` is still read for a
    third-party estimator that calls it so.

    Parameters
    ----------
    estimator : estimator
        An otfair estimator (or any estimator with ``get_params``).

    Returns
    -------
    str
        The parameter :func:`fairness_path` sets to each strength.

    Raises
    ------
    ValueError
        The estimator has no strength parameter.

    See Also
    --------
    fairness_path : Fits the estimator at several values of this parameter.

    Examples
    --------
    >>> from otfair.estimators import CENet, FairClassifier, strength_param
    >>> strength_param(FairClassifier(penalty="otf")), strength_param(CENet())
    ('strength', 'strength')
    """
    params = estimator.get_params(deep=False)
    for name in _STRENGTH_NAMES:
        if name in params:
            return name
    raise ValueError(
        f"{type(estimator).__name__} has no strength parameter ({' or '.join(_STRENGTH_NAMES)});"
        " fairness_path and FairnessCV need an estimator with one."
    )


def supports_stacking(estimator: Any) -> bool:
    """Whether ``estimator`` fits a whole path in one stacked training run.

    Parameters
    ----------
    estimator : estimator

    Returns
    -------
    bool
        True when the estimator defines the ``__otfair_fit_path__`` hook, so that
        :func:`fairness_path` trains all its strengths at once.

    See Also
    --------
    fairness_path : One stacked run where this is True, one fit per strength otherwise.

    Examples
    --------
    >>> from otfair.estimators import FairClassifier, FairPCA, supports_stacking
    >>> supports_stacking(FairClassifier(penalty="otf")), supports_stacking(FairPCA())
    (True, False)
    """
    return callable(getattr(estimator, "__otfair_fit_path__", None))


@validate_params(
    {
        "estimator": [HasMethods(["fit", "get_params", "set_params"])],
        "strengths": ["array-like", Real],
    }
)
def fairness_path(
    estimator: Any,
    X: Any,
    y: Any,
    *,
    sensitive_features: Any,
    strengths: Sequence[float],
    **fit_params: Any,
) -> FairnessPath:
    r"""Fit ``estimator`` at every strength of ``strengths``: the fairness trade-off curve.

    Wherever the estimator supports it (every penalty of
    :class:`~otfair.estimators.FairClassifier`, :class:`~otfair.estimators.CENet`,
    :class:`~otfair.estimators.WassersteinNet`,
    :class:`~otfair.estimators.AdapFairClassifier`), the K strengths are trained in one
    stacked run: the K models share the seed (initialization, batches, OTF costs, FTM
    matchings), their parameters are stacked and one optimizer minimizes
    :math:`\sum_k L_k`, which is K separate fits since nothing couples the models. Model
    k then equals ``clone(estimator).set_params(strength=strengths[k]).fit(...)`` with
    the same integer ``random_state``, up to float rounding: a logistic model within
    ~1e-7 in probability, an MLP drifts further over a long fit (``docs/stacking.md``).
    Other estimators are fitted once per strength.

    Parameters
    ----------
    estimator : estimator
        The template (not modified): an estimator with a numeric strength parameter
        (``strength``; ``lam`` for a third-party estimator that still calls it so).
    X : array-like of shape (n, d)
    y : array-like of shape (n,)
    sensitive_features : array-like of shape (n,) or (n, k)
    strengths : sequence of float
        Distinct strengths, in the order of the returned estimators.
    **fit_params
        Further keyword arguments of ``estimator.fit`` (AdapFair's ``source_data``).

    Returns
    -------
    FairnessPath
        ``strengths_`` and ``estimators_`` (one fitted estimator per strength, whose
        strength parameter is that strength).

    See Also
    --------
    otfair.estimators.FairnessPath : Its result.
    otfair.estimators.FairnessCV : Picks one strength by cross-validation.
    otfair.estimators.FairClassifier : One model at one strength.

    Examples
    --------
    >>> import numpy as np
    >>> from otfair.estimators import FairClassifier, fairness_path
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); s = (rng.random(200) < 0.5).astype(int)
    >>> y = (X[:, 0] + s > 0.5).astype(int)
    >>> path = fairness_path(FairClassifier("gapreg", epochs=2, random_state=0), X, y,
    ...                      sensitive_features=s, strengths=[0.0, 1.0, 4.0])
    >>> [est.get_params()["strength"] for est in path.estimators_]
    [0.0, 1.0, 4.0]
    """
    param = strength_param(estimator)
    values = check_strengths(strengths)
    penalty = estimator.get_params(deep=False).get("penalty")
    if isinstance(penalty, str) and penalty == "none" and any(v > 0 for v in values):
        raise ValueError(
            "The estimator has penalty='none': every strength fits the same model. Choose "
            "a fairness penalty (FairClassifier('otf'), 'gapreg', ...) for a trade-off curve."
        )
    if supports_stacking(estimator):
        fitted = list(
            estimator.__otfair_fit_path__(X, y, sensitive_features, values, **fit_params)
        )
    else:
        fitted = [
            clone(estimator)
            .set_params(**{param: value})
            .fit(X, y, sensitive_features=sensitive_features, **fit_params)
            for value in values
        ]
    return FairnessPath(values, fitted, param)


class FairnessPath:
    """A fitted fairness trade-off curve: one fitted estimator per strength.

    Returned by :func:`fairness_path`.

    Attributes
    ----------
    strengths_ : ndarray of shape (K,)
        The strengths, in the order of ``estimators_``.
    estimators_ : list of estimators
        ``estimators_[k]`` is fitted at ``strengths_[k]`` (its strength parameter holds
        it); each is usable alone and in a :class:`~sklearn.pipeline.Pipeline`.
    param_ : str
        The name of the strength parameter (``"strength"``; ``"lam"`` for a third-party
        estimator that still calls it so).

    See Also
    --------
    otfair.estimators.fairness_path : Builds it.
    otfair.estimators.FairnessCV : Picks one strength by cross-validation.

    Examples
    --------
    A path holds estimators fitted elsewhere too:

    >>> from sklearn.datasets import make_classification
    >>> from otfair.estimators import FairClassifier, FairnessPath
    >>> X, y = make_classification(n_samples=120, n_features=4, random_state=0)
    >>> s = (X[:, 0] > 0).astype(int)
    >>> fits = [FairClassifier("gapreg", a, tol=None, epochs=5).fit(X, y, sensitive_features=s)
    ...         for a in (0.0, 2.0)]
    >>> path = FairnessPath([0.0, 2.0], fits, "strength")
    >>> len(path), path.param_, path.strengths_.tolist()
    (2, 'strength', [0.0, 2.0])
    """

    def __init__(self, strengths: Sequence[float], estimators: Sequence[Any], param: str):
        self.strengths_ = np.asarray(strengths, dtype=float)
        self.estimators_ = list(estimators)
        self.param_ = param

    def __repr__(self) -> str:
        name = type(self.estimators_[0]).__name__ if self.estimators_ else "?"
        return f"FairnessPath({name}, {self.param_}={self.strengths_.tolist()})"

    def __len__(self) -> int:
        return len(self.estimators_)

    def __getitem__(self, k: int) -> Any:
        """Return the fitted estimator of ``strengths_[k]`` (``estimators_[k]``)."""
        return self.estimators_[k]

    def __iter__(self) -> Iterator[Any]:
        """Iterate over the fitted estimators, in the order of ``strengths_``."""
        return iter(self.estimators_)

    def score_frame(self, X: Any, y: Any, *, sensitive_features: Any) -> Any:
        """Score every model of the path on ``(X, y)``: a DataFrame, one row per strength.

        Columns: ``strength``; for a classifier ``accuracy``, ``auc`` and the fairness
        measures of the estimator's notion (demographic parity: ``dp_gap``,
        ``mean_score_gap``, ``wdp``, ``ksdp``, ``tvdp``, ``pdp_violation``; equal
        opportunity adds ``tpr_gap``; equalized odds adds ``tpr_gap``, ``fpr_gap``,
        ``eo_gap``, ``max_eo_gap``, ``peo_violation``); for a regressor ``r2``,
        ``mse``, ``rmse``, ``mae`` and ``error_gap``, ``wdp``, ``ksdp``,
        ``mean_score_gap``, ``pdp_violation``. The measures are those of
        :func:`otfair.metrics.fairness_report` (see its formulas). Its
        ``DegeneratePredictorWarning`` is not raised for each strength: a model that
        predicts one class shows in its row (accuracy at the base rate, gaps 0).
        """
        import warnings

        import pandas as pd

        from otfair.metrics import DegeneratePredictorWarning, fairness_report

        rows = []
        y_arr = np.asarray(y)
        with warnings.catch_warnings():  # one line of the table per strength says it
            warnings.simplefilter("ignore", DegeneratePredictorWarning)
            for value, est in zip(self.strengths_, self.estimators_, strict=True):
                classifier = is_classifier(est)
                score = _positive_score(est, X, sensitive_features, classifier)
                if classifier:
                    y_true = (y_arr == est.classes_[1]).astype(int)
                    summary = fairness_report(
                        y_true, score, sensitive_features=sensitive_features
                    ).summary
                    keys = ["accuracy", "auc", *_classification_measures(est)]
                    row = {key: summary[key] for key in keys}
                else:
                    y_true = y_arr.astype(float)
                    summary = fairness_report(
                        y_true, score, sensitive_features=sensitive_features, task="regression"
                    ).summary
                    row = {
                        "r2": summary["r2"],
                        "mse": summary["mse"],
                        "rmse": float(np.sqrt(summary["mse"])),
                        "mae": float(np.mean(np.abs(score - y_true))),
                    }
                    row.update({key: summary[key] for key in _REGRESSION_MEASURES})
                rows.append({"strength": float(value), **row})
        return pd.DataFrame(rows)

    def plot(self, X: Any, y: Any, *, sensitive_features: Any, metric: str | None = None,
             score: str | None = None, ax: Any = None) -> Any:  # fmt: skip
        """Plot the trade-off curve: ``score`` against the fairness ``metric``.

        Each point is one strength, labelled with its value. ``metric`` defaults to
        ``dp_gap`` (``eo_gap`` for an equalized-odds estimator) for a classifier and
        ``error_gap`` for a regressor; ``score`` to ``accuracy`` / ``r2``; both are
        columns of :meth:`score_frame`. Returns the matplotlib ``Axes``.
        """
        frame = self.score_frame(X, y, sensitive_features=sensitive_features)
        classifier = is_classifier(self.estimators_[0])
        if metric is None:
            metric = _default_metric(self.estimators_[0]) if classifier else "error_gap"
        if score is None:
            score = "accuracy" if classifier else "r2"
        for name, label in ((metric, "metric"), (score, "score")):
            if name not in frame.columns:
                columns = ", ".join(c for c in frame.columns if c != "strength")
                raise ValueError(f"`{label}`={name!r} is not a column of score_frame: {columns}.")
        if ax is None:
            import matplotlib.pyplot as plt

            _, ax = plt.subplots()
        ax.plot(frame[metric], frame[score], marker="o")
        for _, row in frame.iterrows():
            ax.annotate(
                f"{row['strength']:g}",
                (row[metric], row[score]),
                textcoords="offset points",
                xytext=(4, 4),
                fontsize=8,
            )
        ax.set_xlabel(metric)
        ax.set_ylabel(score)
        ax.set_title(f"{type(self.estimators_[0]).__name__}: {self.param_} path")
        return ax


_DP_MEASURES = ("dp_gap", "mean_score_gap", "wdp", "ksdp", "tvdp", "pdp_violation")
_EOPP_MEASURES = ("tpr_gap",)
_EO_MEASURES = ("tpr_gap", "fpr_gap", "eo_gap", "max_eo_gap", "peo_violation")
_REGRESSION_MEASURES = ("error_gap", "wdp", "ksdp", "mean_score_gap", "pdp_violation")


def _notion_name(est: Any) -> str:
    notion = getattr(est, "notion", "dp")
    return str(getattr(notion, "name", notion))


def _classification_measures(est: Any) -> tuple[str, ...]:
    name = _notion_name(est)
    if name == "eo":
        return _DP_MEASURES + _EO_MEASURES
    if name == "eopp":
        return _DP_MEASURES + _EOPP_MEASURES
    return _DP_MEASURES


def _default_metric(est: Any) -> str:
    return {"eo": "eo_gap", "eopp": "tpr_gap"}.get(_notion_name(est), "dp_gap")


def _positive_score(est: Any, X: Any, sensitive_features: Any, classifier: bool) -> np.ndarray:
    """P(y = classes_[1]) of a classifier, the prediction of a regressor."""
    method = est.predict_proba if classifier else est.predict
    kwargs = {}
    if "sensitive_features" in inspect.signature(method).parameters:
        kwargs["sensitive_features"] = sensitive_features
    out = np.asarray(method(X, **kwargs), dtype=float)
    return out[:, 1] if classifier else out
