r"""What every trade-off curve fit shares (issue 17): strength lists, selection, sweeps.

An estimator fits a *curve* when its strength parameter (``strength`` of
:class:`~otfair.estimators.FairClassifier`, ``lam`` of
:class:`~otfair.estimators.CENet` and :class:`~otfair.estimators.WassersteinNet`) is a
list: one stacked training run fits the K models, ``estimators_[k]`` is the fitted
single-strength estimator and ``<param>s_`` (``strengths_``, ``lams_``) the values.
This module holds the conventions they share: the list check, choosing a model of a
fitted curve (``predict(X, <param>=a)``) and :func:`stack_estimators`, with which
``otfair sweep`` turns the single-strength estimators of one group into one curve
estimator, fitted once (the path is explicit: ``fit`` itself never looks around).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.base import clone

#: tolerance when matching a requested strength against a fitted curve
_ATOL = 1e-12


def is_curve(strength: Any) -> bool:
    """Whether ``strength`` is a sequence of strengths (a curve) rather than one number."""
    return not isinstance(strength, (numbers.Real, str)) and hasattr(strength, "__len__")


def check_strengths(strength: Any, name: str = "strength") -> list[float]:
    """Return a curve's values as a list of distinct floats (``ValueError`` naming ``name``)."""
    values = np.asarray(strength, dtype=float).reshape(-1)
    if values.size == 0:
        raise ValueError(f"`{name}` must hold at least one value.")
    if len(np.unique(values)) != values.size:
        raise ValueError(f"`{name}` values must be distinct; got {values.tolist()}.")
    return [float(v) for v in values]


def copy_fitted(source: Any, target: Any) -> None:
    """Copy the fitted attributes (``name_``) of ``source`` onto ``target``."""
    for name, value in vars(source).items():
        if name.endswith("_") and not name.startswith("_"):
            setattr(target, name, value)


def forget_fit(est: Any) -> None:
    """Remove the fitted attributes (``name_``) of an earlier fit from ``est``.

    A refit replaces the earlier fit whole: a curve fit refitted at one strength must
    not keep the earlier ``estimators_`` (prediction would read them), and the reverse.
    """
    for name in [n for n in vars(est) if n.endswith("_") and not n.startswith("_")]:
        delattr(est, name)


def select_model(est: Any, value: float | None, param: str) -> Any:
    """Return the model of a curve fit whose ``param`` is ``value`` (``ValueError`` if absent).

    The curve's values are ``getattr(est, param + "s_")``, its models ``est.estimators_``.
    """
    values: Sequence[float] = getattr(est, f"{param}s_")
    if value is None:
        raise ValueError(
            f"this {type(est).__name__} was fitted on the curve {param}={_plain(values)}; pass "
            f"`{param}=` to choose a model (or use `estimators_`)."
        )
    hits = np.flatnonzero(np.isclose(values, float(value), rtol=0, atol=_ATOL))
    if hits.size == 0:
        raise ValueError(f"`{param}`={_plain(value)} is not on the fitted curve {_plain(values)}.")
    return est.estimators_[int(hits[0])]


def check_fitted_value(est: Any, value: float | None, param: str) -> None:
    """On a single-strength fit, ``value`` must be None or the fitted value of ``param``."""
    fitted = getattr(est, param, None)  # None: the estimator has no such parameter
    if value is not None and (fitted is None or not np.isclose(value, fitted, rtol=0, atol=_ATOL)):
        raise ValueError(f"`{param}`={_plain(value)}: this model was fitted at {_plain(fitted)}.")


def _plain(value: Any) -> Any:
    """Numbers as plain Python floats for messages (``0.5``, not ``np.float64(0.5)``)."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_plain(v) for v in value]
    return value


# ---------------------------------------------------------------------- explicit curves
def stack_estimators(estimators: Sequence[Any], param: str) -> Any | None:
    """Return one curve estimator that fits the single-strength ``estimators`` at once.

    ``otfair sweep`` builds the runs of a group that differ only in strength one by one
    (the method registry may map a strength to another value) and fits them as one curve
    when they can share it: all of one class, an integer ``random_state`` (separate fits
    with another seed would not share the initialization), a real, distinct ``param``
    each, and every other parameter equal (``get_params()``, compared by ``repr``). The
    curve is ``clone(estimators[0])`` with ``param`` set to the list of their values, in
    their order: after ``curve.fit(...)``, ``curve.estimators_[k]`` is the model of
    ``estimators[k]`` (:func:`copy_fitted` puts it on that estimator).

    Returns ``None`` when they cannot share a curve (each is then fitted on its own).
    """
    if not estimators or len({type(est) for est in estimators}) != 1:
        return None
    values = [getattr(est, param, None) for est in estimators]
    if not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in values):
        return None
    if len(set(values)) != len(values):
        return None
    seed = estimators[0].get_params().get("random_state")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        return None
    others = [
        repr(sorted((k, v) for k, v in est.get_params().items() if k != param))
        for est in estimators
    ]
    if any(other != others[0] for other in others[1:]):
        return None
    return clone(estimators[0]).set_params(**{param: [float(v) for v in values]})
