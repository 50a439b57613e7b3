r"""Fit a whole trade-off curve of :class:`FairClassifier` in one stacked training run.

``FairClassifier(penalty, strength=[a_1, ..., a_K], ...)`` trains the K models of the
curve together (issue 17): the K models share the seed, hence the initialization, the
batches and every data-dependent quantity of the penalty (constraint slices, OTF costs
and their class reduction, FTM's matchings); their parameters are stacked
(:class:`otfair.models.StackedMLP`) and one optimizer minimizes :math:`\sum_k L_k`,
which is exactly K separate Adam fits (nothing couples the models). After the fit,
``estimators_[k]`` is a fitted single-strength :class:`FairClassifier` equal, up to
float rounding, to ``FairClassifier(penalty, a_k, ...)`` fitted separately with the same
integer ``random_state`` (tested in ``tests/estimators/test_stacked.py``).
"""

from __future__ import annotations

import hashlib
import numbers
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from sklearn.base import clone
from sklearn.utils import check_random_state

from otfair.estimators._stacked_training import train_ftm_stacked, train_plain_stacked
from otfair.models.stacked import StackedMLP
from otfair.utils import resolve_device

if TYPE_CHECKING:
    from otfair.estimators.classification.fair_classifier import FairClassifier


def is_curve(strength: Any) -> bool:
    """Whether ``strength`` is a sequence of strengths (a curve) rather than one number."""
    return not isinstance(strength, (numbers.Real, str)) and hasattr(strength, "__len__")


def check_strengths(strength: Any) -> list[float]:
    """Return a curve's strengths as a list of distinct floats (``ValueError`` otherwise)."""
    values = np.asarray(strength, dtype=float).reshape(-1)
    if values.size == 0:
        raise ValueError("`strength` must hold at least one value.")
    if len(np.unique(values)) != values.size:
        raise ValueError(f"`strength` values must be distinct; got {values.tolist()}.")
    return [float(v) for v in values]


def fit_curve(est: FairClassifier, X: Any, y: Any, sensitive_features: Any) -> FairClassifier:
    """Fit ``est`` (whose ``strength`` is a sequence) as one stacked run; returns ``est``.

    Sets ``estimators_`` (one fitted single-strength FairClassifier per strength, in the
    given order), ``strengths_``, ``history_`` (one loss history per model),
    ``classes_`` and ``n_features_in_``.
    """
    strengths = check_strengths(est.strength)
    singles = [clone(est).set_params(strength=a) for a in strengths]
    for single in singles:
        single._check_params()
    # the most penalized model decides what the data must provide (sensitive features)
    ref = singles[int(np.argmax(strengths))]
    penalty, X, y, s, groups, pairs = ref._prepare(X, y, sensitive_features)
    seed = int(check_random_state(est.random_state).randint(2**31 - 1))
    rng = np.random.default_rng(seed)
    device = resolve_device(est.device)
    with torch.random.fork_rng(devices=[]):
        for single in singles:  # each exactly as its own fit builds it
            torch.manual_seed(seed)
            single.model_ = single._build_model(X.shape[1]).to(device)
            single.penalty_ = single._make_penalty().fit(s, y) if single._active() else None
            if single.penalty_ is not None:
                single.penalty_.to(device)
        model = StackedMLP.from_models([single.model_ for single in singles])
        loop = est._train_loop(model.parameters(), rng)
        Xt = torch.from_numpy(X).to(device)
        yt = torch.from_numpy(y.astype(np.float32)).to(device)
        active = [single.penalty_ for single in singles if single.penalty_ is not None]
        if pairs:
            pool, weights, steps = ref._ftm_setup(X, y, groups)
            histories = train_ftm_stacked(
                model,
                ref._train_data(None, y, None, Xt, yt, None)[0],
                pool,
                loop,
                strengths=strengths,
                group_weights=weights,
                steps_per_epoch=steps,
                penalties=[single._make_penalty() for single in singles],
            )
        else:
            data, group_codes = ref._train_data(s, y, groups, Xt, yt, ref.penalty_)
            adv_opts = None
            if active and active[0].has_adversary:
                adv_opts = [est._adversary_optimizer(p) for p in active]
            histories = train_plain_stacked(
                model,
                data,
                loop,
                penalties=active or None,
                strengths=strengths,
                convex=est._mixing(penalty) == "convex",
                batch_size=est.batch_size,
                adversary_optimizers=adv_opts,
                group_codes=groups,
                fixed_batches=bool(est.fixed_batches),
            )
    for k, single in enumerate(singles):
        model.export(k, single.model_).eval()
        single.history_ = histories[k]
        single.classes_ = ref.classes_
        single.n_features_in_ = ref.n_features_in_
        if hasattr(ref, "feature_names_in_"):
            single.feature_names_in_ = ref.feature_names_in_
        if pairs:
            single.n_pairings_ = ref.n_pairings_
    est.estimators_ = singles
    est.strengths_ = np.asarray(strengths)
    est.history_ = histories
    est.classes_ = ref.classes_
    est.n_features_in_ = ref.n_features_in_
    if hasattr(ref, "feature_names_in_"):
        est.feature_names_in_ = ref.feature_names_in_
    return est


def _copy_fitted(source: Any, target: Any) -> None:
    for name, value in vars(source).items():
        if name.endswith("_") and not name.startswith("_"):
            setattr(target, name, value)


def fit_single_stacked(
    est: FairClassifier, X: Any, y: Any, sensitive_features: Any
) -> FairClassifier:
    """Fit a single-strength ``est`` on the stacked engine (a curve of one model)."""
    curve = clone(est).set_params(strength=[est.strength])
    fit_curve(curve, X, y, sensitive_features)
    _copy_fitted(curve.estimators_[0], est)
    return est


def select(est: FairClassifier, strength: float | None) -> FairClassifier:
    """Return the fitted model of ``strength`` on a curve fit (``ValueError`` if absent)."""
    strengths: Sequence[float] = est.strengths_
    if strength is None:
        raise ValueError(
            f"this FairClassifier was fitted on the curve strength={list(strengths)}; pass "
            "`strength=` to choose a model (or use `estimators_`)."
        )
    hits = np.flatnonzero(np.isclose(strengths, float(strength), rtol=0, atol=1e-12))
    if hits.size == 0:
        raise ValueError(f"`strength`={strength!r} is not on the fitted curve {list(strengths)}.")
    return est.estimators_[int(hits[0])]


# ---------------------------------------------------------------------- shared curves
@dataclass
class _SharedCurve:
    strengths: tuple[float, ...]
    fitted: dict[tuple[str, str], FairClassifier] = field(default_factory=dict)


_SHARED: ContextVar[_SharedCurve | None] = ContextVar("otfair_shared_curve", default=None)


@contextmanager
def shared_curve(strengths: Sequence[float]) -> Iterator[None]:
    """Within the block, single-strength fits on one curve share one stacked run.

    The first ``FairClassifier(strength=a).fit(X, y, ...)`` with ``a`` in ``strengths``
    fits the whole curve (:func:`fit_curve`) and keeps it; a later fit with the same
    other parameters, the same data and another strength of the curve copies its model
    instead of training. Used by ``otfair sweep`` to stack the runs of a group that
    differ only in strength, each still stored as its own row. Fits whose
    ``random_state`` is not an integer (their separate fits would not share a seed) and
    strengths off the curve train as usual.
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


def fit_from_shared(est: FairClassifier, X: Any, y: Any, sensitive_features: Any) -> bool:
    """Fit ``est`` from the active :func:`shared_curve`, if it applies; return whether."""
    ctx = _SHARED.get()
    seed = est.random_state
    if ctx is None or isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        return False
    if not any(np.isclose(est.strength, a, rtol=0, atol=1e-12) for a in ctx.strengths):
        return False
    params = {k: v for k, v in est.get_params().items() if k != "strength"}
    key = (repr(sorted(params.items())), _digest(X, y, sensitive_features))
    curve = ctx.fitted.get(key)
    if curve is None:
        curve = clone(est).set_params(strength=list(ctx.strengths))
        fit_curve(curve, X, y, sensitive_features)
        ctx.fitted[key] = curve
    _copy_fitted(select(curve, est.strength), est)
    return True
