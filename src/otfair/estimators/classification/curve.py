r"""Fit :class:`FairClassifier`: K strengths in one stacked training run (K = 1: one fit).

Every fit runs here: a single strength is a path of one.
``fairness_path(FairClassifier(penalty, ...), X, y, sensitive_features=s,
strengths=[a_1, ..., a_K])`` trains the K models of the curve together: the K models
share the seed, hence the initialization, the batches and every data-dependent quantity
of the penalty (constraint slices, OTF costs and their class reduction, FTM's
matchings); their parameters are stacked (:class:`otfair.models.StackedMLP`) and one
optimizer minimizes :math:`\sum_k L_k`, which is exactly K separate Adam fits (nothing
couples the models). Classifier k of the path is a fitted single-strength
:class:`FairClassifier` equal, up to float rounding, to ``FairClassifier(penalty, a_k,
...)`` fitted separately with the same integer ``random_state`` (tested in
``tests/estimators/test_classif_curve.py``; the logistic model to ~1e-8, an MLP drifts
over a fit: ``benchmarks/curve_drift.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from sklearn.base import clone

from otfair.estimators._path import check_strengths
from otfair.estimators.classification._train import train_matched, train_penalized
from otfair.models.stacked import StackedMLP
from otfair.utils import draw_seed, resolve_device

if TYPE_CHECKING:
    from otfair.estimators.classification.fair_classifier import FairClassifier


__all__ = ["fit_path", "fit_single"]


def fit_path(
    est: FairClassifier, X: Any, y: Any, sensitive_features: Any, strengths: list[float]
) -> list[FairClassifier]:
    """Fit ``est`` at every strength in one stacked run; return the K fitted classifiers.

    ``est`` is the template (left unfitted); classifier k is ``clone(est)`` with
    ``strength=strengths[k]``, with its ``model_``, ``penalty_``, ``history_`` and the
    data attributes.
    """
    strengths = check_strengths(strengths)
    singles = [clone(est).set_params(strength=a) for a in strengths]
    for single in singles:
        single._check_params()
    _fit_stacked(est, singles, strengths, X, y, sensitive_features)
    return singles


def fit_single(est: FairClassifier, X: Any, y: Any, sensitive_features: Any) -> FairClassifier:
    """Fit a single-strength ``est``: a stacked run of one model (the one training path).

    ``est`` was checked by its ``fit`` (``_check_params``).
    """
    _fit_stacked(est, [est], [float(est.strength)], X, y, sensitive_features)
    return est


def _copy_data_attributes(source: FairClassifier, target: FairClassifier) -> None:
    """Copy what a fit learned of the data (labels, input width and names)."""
    target.classes_ = source.classes_
    target.n_features_in_ = source.n_features_in_
    if hasattr(source, "feature_names_in_"):
        target.feature_names_in_ = source.feature_names_in_


def _fit_stacked(
    est: FairClassifier,
    singles: list[FairClassifier],
    strengths: list[float],
    X: Any,
    y: Any,
    sensitive_features: Any,
) -> FairClassifier:
    """Train ``singles`` (``strengths[k]`` each) as K stacked models; return the reference.

    Each single gets ``model_``, ``penalty_``, ``history_`` and the data attributes; the
    most penalized single (the reference) validates the data, since it decides what the
    data must provide (sensitive features).
    """
    ref = singles[int(np.argmax(strengths))]
    penalty, X, y, s, groups, pairs = ref._prepare(X, y, sensitive_features)
    seed = draw_seed(est.random_state)
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
            histories = train_matched(
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
            adv_opt = None
            if active and active[0].has_adversary:
                adv_opt = est._adversary_optimizer(active)
            histories = train_penalized(
                model,
                data,
                loop,
                penalties=active or None,
                strengths=strengths,
                convex=est._mixing(penalty) == "convex",
                batch_size=est.batch_size,
                adversary_optimizer=adv_opt,
                group_codes=groups,
                fixed_batches=est._fixed_batches(penalty),
            )
    for k, single in enumerate(singles):
        model.export(k, single.model_).eval()
        single.history_ = histories[k]
        if single is not ref:
            _copy_data_attributes(ref, single)
            if pairs:
                single.n_pairings_ = ref.n_pairings_
    return ref
