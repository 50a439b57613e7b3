"""The fairness-accuracy trade-off of one method: fit its strengths, tabulate, plot.

:func:`fairness_tradeoff` fits an estimator at several fairness strengths (one stacked
training run through :func:`otfair.estimators.fairness_path` when the estimator fits
stacked paths; one fit per strength otherwise), evaluates each model on held-out data and
returns the front as a :class:`pandas.DataFrame` and a matplotlib figure (violation on the x axis,
accuracy on the y axis, the Pareto-optimal models joined).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, cast

import numpy as np
import pandas as pd
from sklearn.base import clone

from otfair.metrics import accuracy, demographic_parity_gap, pdp_violation, roc_auc
from otfair.utils import check_strengths

#: violation column name -> metric(y, p, sensitive_features=s)
VIOLATIONS = {"dp": demographic_parity_gap, "pdp": pdp_violation}


def pareto_mask(violation: np.ndarray, score: np.ndarray) -> np.ndarray:
    """Return which points no other point dominates.

    A point is dominated when another has a lower-or-equal violation and a
    higher-or-equal score, one of them strictly.
    """
    v = np.asarray(violation, dtype=float)
    a = np.asarray(score, dtype=float)
    better = (v[None, :] <= v[:, None]) & (a[None, :] >= a[:, None])
    strict = (v[None, :] < v[:, None]) | (a[None, :] > a[:, None])
    return cast(np.ndarray, ~(better & strict).any(axis=1))


def _fit_models(
    estimator: Any, strengths: list[float], param: str, X: Any, y: Any, s: Any
) -> tuple[list[Any], float]:
    t0 = time.perf_counter()
    from otfair.estimators import fairness_path, strength_param, supports_stacking

    if supports_stacking(estimator) and param == strength_param(estimator):
        path = fairness_path(estimator, X, y, sensitive_features=s, strengths=strengths)
        return list(path.estimators_), time.perf_counter() - t0
    models = [
        clone(estimator).set_params(**{param: a}).fit(X, y, sensitive_features=s)
        for a in strengths
    ]
    return models, time.perf_counter() - t0


def fairness_tradeoff(
    estimator: Any,
    strengths: Sequence[float],
    X_train: Any,
    y_train: Any,
    s_train: Any,
    X_test: Any,
    y_test: Any,
    s_test: Any,
    *,
    violation: str = "dp",
    param: str = "strength",
    ax: Any = None,
) -> tuple[pd.DataFrame, Any]:
    r"""Fit ``estimator`` at each strength and return its trade-off table and plot.

    Parameters
    ----------
    estimator : estimator with a strength parameter (``param``)
        E.g. ``FairClassifier("gapreg", model="mlp", random_state=0)``. A
        FairClassifier fits all strengths in one stacked run (each model equals its
        separate fit up to float rounding); any other estimator is cloned and fitted
        once per strength.
    strengths : sequence of float
        The strengths (distinct), in the order of the rows.
    X_train, y_train, s_train : array-like
        Training data and sensitive attributes.
    X_test, y_test, s_test : array-like
        Held-out data the metrics are computed on.
    violation : {"dp", "pdp"}, default="dp"
        The x axis: demographic-parity gap of the hard predictions
        (:func:`otfair.metrics.demographic_parity_gap`) or of the mean scores
        (:func:`otfair.metrics.pdp_violation`).
    param : str, default="strength"
        The estimator's strength parameter (``"eps"`` for
        :class:`otfair.estimators.ReductionClassifier`).
    ax : matplotlib Axes, optional
        Where to draw (a new figure otherwise).

    Returns
    -------
    table : pandas.DataFrame
        One row per strength: ``strength``, ``accuracy``, ``auc``, ``dp``, ``pdp`` and
        ``pareto`` (no other row has a lower-or-equal ``violation`` and a higher-or-equal
        accuracy, one strictly); ``table.attrs["fit_s"]`` is the total fit time.
    figure : matplotlib.figure.Figure
        Accuracy against the violation, each point labeled by its strength.

    Examples
    --------
    >>> import numpy as np
    >>> from otfair.estimators import FairClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 3)); s = (rng.random(300) < 0.5).astype(int)
    >>> y = (X[:, 0] + s > 0.5).astype(int)
    >>> est = FairClassifier("gapreg", epochs=2, batch_size=100, random_state=0)
    >>> table, fig = fairness_tradeoff(est, [0.0, 1.0, 5.0], X, y, s, X, y, s)
    >>> list(table.columns)
    ['strength', 'accuracy', 'auc', 'dp', 'pdp', 'pareto']
    """
    if violation not in VIOLATIONS:
        raise ValueError(f"`violation` must be one of {sorted(VIOLATIONS)}; got {violation!r}.")
    values = check_strengths(strengths)
    if param not in estimator.get_params():
        raise ValueError(f"`param`={param!r} is not a parameter of {type(estimator).__name__}.")
    models, fit_s = _fit_models(estimator, values, param, X_train, y_train, s_train)
    rows = []
    for a, model in zip(values, models, strict=True):
        p = model.predict_proba(X_test)[:, 1]
        row = {"strength": a, "accuracy": accuracy(y_test, p), "auc": roc_auc(y_test, p)}
        row.update({k: f(y_test, p, sensitive_features=s_test) for k, f in VIOLATIONS.items()})
        rows.append(row)
    table = pd.DataFrame(rows)
    table["pareto"] = pareto_mask(table[violation].to_numpy(), table["accuracy"].to_numpy())
    table.attrs["fit_s"] = fit_s
    return table, _plot(table, violation, ax)


def _plot(table: pd.DataFrame, violation: str, ax: Any) -> Any:
    if ax is None:  # a Figure without pyplot: no backend or global state touched
        from matplotlib.figure import Figure

        fig = Figure(figsize=(5, 4))
        ax = fig.subplots()
    else:
        fig = ax.figure
    ax.scatter(table[violation], table["accuracy"], color="tab:gray", zorder=2)
    front = table[table["pareto"]].sort_values(violation)
    ax.plot(front[violation], front["accuracy"], "o-", color="tab:blue", label="Pareto front")
    for _, row in table.iterrows():
        ax.annotate(f"{row['strength']:g}", (row[violation], row["accuracy"]), fontsize=7)
    ax.set_xlabel(f"{violation} violation (test)")
    ax.set_ylabel("accuracy (test)")
    ax.legend(loc="lower right")
    return fig
