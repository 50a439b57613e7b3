"""Registers the second-round OT baselines (docs/baselines.md).

``ot-repair`` (Gordaliza et al. 2019) and ``fair-pca`` (Kleindessner et al. 2023): the
fair transformer, then a LogisticRegression (max_iter=1000); ``wb-postprocess`` (Xian et
al. 2023): barycenter post-processing of a LogisticRegression; ``wb-regression`` (Chzhen
et al. 2020): of a LinearRegression; ``cod-rff`` (Komiyama et al. 2018, kernel version).

``otfair fit`` predicts without the sensitive attribute, so the methods that need it at
predict time (``ot-repair``, ``wb-postprocess``, ``wb-regression``) get it as the last
column (``sensitive_as_input=True``), which the adapters of
:mod:`otfair.estimators.preprocessing.sensitive_column` read and drop, as fair-nf does.
``fair-pca`` and ``cod-rff`` are group-blind at predict time.

Strength grids: none of these papers gives one for its trade-off parameter except COD's
eps (the accuracy-parity paper's {0.01, 0.1, 0.5, 1.0}); the others are otfair's choices
spanning [0, 1] (0: no repair / the base model, 1: full repair / exact parity), with
wb-postprocess's grid dense near 1 where its DP gap moves (docs/baselines.md's tables).
The ``-o`` options go to the fair estimator (OTRepair, FairPCA, the barycenter
post-processors, CODRFFRegressor), the base models being fixed. The four wrapped methods
register no ``estimator`` class (the built object is an adapter, not the fair estimator),
so their options are checked by the fair estimator's constructor, not up front.
"""

from __future__ import annotations

from typing import Any

from sklearn.linear_model import LinearRegression, LogisticRegression

from otfair.estimators.postprocessing.wb_postprocess import WassersteinBarycenterClassifier
from otfair.estimators.postprocessing.wb_regression import WassersteinBarycenterRegressor
from otfair.estimators.preprocessing.fair_pca import FairPCA
from otfair.estimators.preprocessing.ot_repair import OTRepair
from otfair.estimators.preprocessing.sensitive_column import (
    RepairedClassifier,
    SensitiveColumnEstimator,
)
from otfair.estimators.regression.cod_rff import CODRFFRegressor
from otfair.experiments.methods._extras import group_errors_report
from otfair.experiments.methods._spec import MethodSpec, RunArgs, builder, register_method

__all__: list[str] = []

UNIT_GRID = (0.0, 0.25, 0.5, 0.75, 1.0)
WB_CLASSIFIER_GRID = (0.0, 0.5, 0.75, 0.9, 1.0)
COD_RFF_EPS = (0.01, 0.1, 0.5, 1.0)
_OTFAIR_GRID = "strength grid: otfair's choice (the paper gives none)"


def _logistic() -> LogisticRegression:
    return LogisticRegression(max_iter=1000)


def _strength(strength: float | None, default: float = 1.0) -> float:
    return default if strength is None else float(strength)


@builder
def _build_ot_repair(strength: float | None, run: RunArgs, options: dict[str, Any]) -> Any:
    repair = OTRepair(_strength(strength), random_state=run.random_state, **options)
    return RepairedClassifier(repair, _logistic(), sensitive_column=-1)


@builder
def _build_fair_pca(strength: float | None, run: RunArgs, options: dict[str, Any]) -> Any:
    params: dict[str, Any] = {"n_components": 10, **options}
    pca = FairPCA(strength=_strength(strength), notion=run.notion or "dp", **params)
    return RepairedClassifier(pca, _logistic(), sensitive_column=None)


@builder
def _build_wb_classifier(strength: float | None, run: RunArgs, options: dict[str, Any]) -> Any:
    wb = WassersteinBarycenterClassifier(
        _logistic(), strength=_strength(strength), random_state=run.random_state, **options
    )
    return SensitiveColumnEstimator(wb, sensitive_column=-1)


@builder
def _build_wb_regressor(strength: float | None, run: RunArgs, options: dict[str, Any]) -> Any:
    wb = WassersteinBarycenterRegressor(
        LinearRegression(),
        strength=_strength(strength),
        random_state=run.random_state,
        **options,
    )
    return SensitiveColumnEstimator(wb, sensitive_column=-1)


@builder
def _build_cod_rff(strength: float | None, run: RunArgs, options: dict[str, Any]) -> Any:
    return CODRFFRegressor(_strength(strength, 0.1), random_state=run.random_state, **options)


_SPECS = (
    MethodSpec(
        name="ot-repair",
        task="classification",
        build=_build_ot_repair,
        strength_name="lambda",
        default_strengths=UNIT_GRID,
        default_strength=1.0,
        sensitive_as_input=True,
        notions=("dp",),
        description="OT repair of the features to the groups' barycenter (partial: "
        "lambda), then LogisticRegression; " + _OTFAIR_GRID + ".",
        paper="Gordaliza et al. 2019, §3-5; Feldman et al. 2015, §5",
        defaults={"base": "LogisticRegression(max_iter=1000)", "sensitive_column": -1},
        estimator=OTRepair,
    ),
    MethodSpec(
        name="fair-pca",
        task="classification",
        build=_build_fair_pca,
        strength_name="lambda",
        default_strengths=UNIT_GRID,
        default_strength=1.0,
        notions=("dp", "eopp"),
        description="Fair PCA (equal projected group means, k = 10), then "
        "LogisticRegression; " + _OTFAIR_GRID + ".",
        paper="Kleindessner et al. 2023, Algorithms 1-2",
        defaults={"n_components": 10, "base": "LogisticRegression(max_iter=1000)"},
        estimator=FairPCA,
    ),
    MethodSpec(
        name="wb-postprocess",
        task="classification",
        build=_build_wb_classifier,
        strength_name="lambda",
        default_strengths=WB_CLASSIFIER_GRID,
        default_strength=1.0,
        sensitive_as_input=True,
        notions=("dp",),
        description="Barycenter post-processing of LogisticRegression scores to "
        "(relaxed) DP, group-aware and randomized; " + _OTFAIR_GRID + ".",
        paper="Xian, Yin, Zhao 2023, §3-4",
        defaults={"base": "LogisticRegression(max_iter=1000)", "sensitive_column": -1},
        estimator=WassersteinBarycenterClassifier,
        fixed=("estimator", "prefit"),
    ),
    MethodSpec(
        name="wb-regression",
        task="regression",
        build=_build_wb_regressor,
        strength_name="lambda",
        default_strengths=UNIT_GRID,
        default_strength=1.0,
        sensitive_as_input=True,
        notions=("dp",),
        description="Wasserstein-barycenter post-processing of LinearRegression "
        "(relaxed: lambda); " + _OTFAIR_GRID + ".",
        paper="Chzhen et al. 2020, eq. (6), Algorithm 1",
        defaults={"base": "LinearRegression()", "sensitive_column": -1},
        extra_report=group_errors_report,
        estimator=WassersteinBarycenterRegressor,
        fixed=("estimator", "prefit"),
    ),
    MethodSpec(
        name="cod-rff",
        task="regression",
        build=_build_cod_rff,
        strength_name="eps",
        default_strengths=COD_RFF_EPS,
        default_strength=0.1,
        description="COD least squares on random Fourier features (kernel COD); eps "
        "grid from the accuracy-parity paper.",
        paper="Komiyama et al. 2018, §3-5",
        estimator=CODRFFRegressor,
        fixed=("eps",),
        extra_report=group_errors_report,
    ),
)

for _spec in _SPECS:
    register_method(_spec)
