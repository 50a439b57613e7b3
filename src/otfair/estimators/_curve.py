r"""What every trade-off curve fit shares (issue 17): strength lists, selection, sweeps.

An estimator fits a *curve* when its strength parameter (``strength`` of
:class:`~otfair.estimators.FairClassifier`, ``lam`` of
:class:`~otfair.estimators.CENet` and :class:`~otfair.estimators.WassersteinNet`) is a
list: one stacked training run fits the K models, ``estimators_[k]`` is the fitted
single-strength estimator and ``<param>s_`` (``strengths_``, ``lams_``) the values.
This module holds the conventions they share: the list check, choosing a model of a
fitted curve (``predict(X, <param>=a)``) and :func:`shared_curve`, through which
``otfair sweep`` lets single-strength fits of one group share one stacked run.
"""

from __future__ import annotations

import hashlib
import numbers
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
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


# ---------------------------------------------------------------------- shared curves
@dataclass
class _SharedCurve:
    strengths: tuple[float, ...]
    fitted: dict[tuple[str, str, str], Any] = field(default_factory=dict)


_SHARED: ContextVar[_SharedCurve | None] = ContextVar("otfair_shared_curve", default=None)


@contextmanager
def shared_curve(strengths: Sequence[float]) -> Iterator[None]:
    """Within the block, single-strength fits on one curve share one stacked run.

    The first fit of a curve-capable estimator (``FairClassifier(strength=a)``,
    ``CENet(lam=a)``...) with ``a`` in ``strengths`` fits the whole curve and keeps it;
    a later fit of the same class with the same other parameters, the same data and
    another strength of the curve copies its model instead of training. Used by
    ``otfair sweep`` to stack the runs of a group that differ only in strength, each
    still stored as its own row. Fits whose ``random_state`` is not an integer (their
    separate fits would not share a seed) and strengths off the curve train as usual.
    """
    token = _SHARED.set(_SharedCurve(tuple(check_strengths(strengths))))
    try:
        yield
    finally:
        _SHARED.reset(token)


def _digest(*arrays: Any) -> str:
    h = hashlib.blake2b(digest_size=16)
    for a in arrays:
        a = np.ascontiguousarray(np.asarray(a))
        h.update(repr((a.shape, a.dtype.str)).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def fit_from_shared(
    est: Any,
    X: Any,
    y: Any,
    sensitive_features: Any,
    *,
    param: str,
    fit_curve: Callable[[Any, Any, Any, Any], Any],
    extra: Sequence[Any] | None = None,
) -> bool:
    """Fit ``est`` from the active :func:`shared_curve`, if it applies; return whether.

    ``param`` names the strength parameter, ``fit_curve(curve, X, y, s)`` fits a clone
    whose ``param`` is the curve's list. ``extra``: more arrays the fit depends on
    (AdapFair's ``source_data``), part of the key that decides which fits share.
    """
    ctx = _SHARED.get()
    seed = est.random_state
    if ctx is None or isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        return False
    value = getattr(est, param, None)
    if not isinstance(value, numbers.Real):
        return False
    if not any(np.isclose(value, a, rtol=0, atol=_ATOL) for a in ctx.strengths):
        return False
    params = {k: v for k, v in est.get_params().items() if k != param}
    data = (X, y, sensitive_features, *(extra or ()))
    key = (type(est).__name__, repr(sorted(params.items())), _digest(*data))
    curve = ctx.fitted.get(key)
    if curve is None:
        curve = clone(est).set_params(**{param: list(ctx.strengths)})
        fit_curve(curve, X, y, sensitive_features)
        ctx.fitted[key] = curve
    copy_fitted(select_model(curve, value, param), est)
    return True
