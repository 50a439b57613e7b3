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
post-processors, CODRFFRegressor), the base models being fixed. Each registers the fair
estimator as its ``estimator`` (the built object of the four wrapped methods is an
adapter around it), whose constructor parameters are the accepted options.
"""

from __future__ import annotations

from collections.abc import Callable
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
from otfair_lab.experiments.methods._extras import group_errors_report
from otfair_lab.experiments.methods._spec import (
    MethodSpec,
    RunArgs,
    Strength,
    Task,
    register_method,
    strength_spec,
)

__all__: list[str] = []

UNIT_GRID = (0.0, 0.25, 0.5, 0.75, 1.0)
WB_CLASSIFIER_GRID = (0.0, 0.5, 0.75, 0.9, 1.0)
COD_RFF_EPS = (0.01, 0.1, 0.5, 1.0)
_OTFAIR_GRID = "strength grid: otfair's choice (the paper gives none)"


_LOGISTIC = "LogisticRegression(max_iter=1000)"


def _logistic() -> LogisticRegression:
    return LogisticRegression(max_iter=1000)


def _build_ot_repair(strength: float, run: RunArgs, options: dict[str, Any]) -> Any:
    repair = OTRepair(strength, random_state=run.random_state, **options)
    return RepairedClassifier(repair, _logistic(), sensitive_column=-1)


def _build_fair_pca(strength: float, run: RunArgs, options: dict[str, Any]) -> Any:
    params: dict[str, Any] = {"n_components": 10, **options}
    pca = FairPCA(strength=strength, notion=run.notion or "dp", **params)
    return RepairedClassifier(pca, _logistic(), sensitive_column=None)


def _build_wb_classifier(strength: float, run: RunArgs, options: dict[str, Any]) -> Any:
    wb = WassersteinBarycenterClassifier(
        _logistic(), strength=strength, random_state=run.random_state, **options
    )
    return SensitiveColumnEstimator(wb, sensitive_column=-1)


def _build_wb_regressor(strength: float, run: RunArgs, options: dict[str, Any]) -> Any:
    wb = WassersteinBarycenterRegressor(
        LinearRegression(), strength=strength, random_state=run.random_state, **options
    )
    return SensitiveColumnEstimator(wb, sensitive_column=-1)


def _build_cod_rff(strength: float, run: RunArgs, options: dict[str, Any]) -> Any:
    return CODRFFRegressor(strength, random_state=run.random_state, **options)


def _baseline(
    name: str,
    make: Callable[[float, RunArgs, dict[str, Any]], Any],
    strength: Strength,
    estimator: type,
    description: str,
    *,
    grid_note: str = _OTFAIR_GRID,
    task: Task = "classification",
    base: str | None = None,
    sensitive_column: int | None = None,
    defaults: dict[str, Any] | None = None,
    **fields: Any,
) -> MethodSpec:
    """Describe one baseline; ``base`` and ``sensitive_column`` join its ``defaults``.

    ``description`` is completed with ``grid_note`` (where the strength grid comes
    from). ``base`` is the fixed base model; ``sensitive_column=-1`` says that the built
    estimator reads the sensitive attribute from the last input column (the method is
    then ``sensitive_as_input``).
    """
    shown = dict(defaults or {})
    if base is not None:
        shown["base"] = base
    if sensitive_column is not None:
        shown["sensitive_column"] = sensitive_column
    return strength_spec(
        name,
        task,
        make,
        strength,
        estimator=estimator,
        description=f"{description}; {grid_note}.",
        sensitive_as_input=sensitive_column is not None,
        defaults=shown,
        **fields,
    )


#: What the group-aware baselines share: the sensitive attribute as the last input
#: column, demographic parity only.
_AWARE: dict[str, Any] = {"sensitive_column": -1, "notions": ("dp",)}
#: What the barycenter post-processors share: their base model is built, not an option.
_POSTPROCESS: dict[str, Any] = {**_AWARE, "fixed": ("estimator", "prefit")}
#: What the regression baselines share: the group errors in their report.
_REGRESSION: dict[str, Any] = {"task": "regression", "extra_report": group_errors_report}

_SPECS = (
    _baseline(
        "ot-repair",
        _build_ot_repair,
        ("lambda", UNIT_GRID, 1.0),
        OTRepair,
        "OT repair of the features to the groups' barycenter (partial: lambda), then "
        "LogisticRegression",
        paper="Gordaliza et al. 2019, §3-5; Feldman et al. 2015, §5",
        base=_LOGISTIC,
        **_AWARE,
    ),
    _baseline(
        "fair-pca",
        _build_fair_pca,
        ("lambda", UNIT_GRID, 1.0),
        FairPCA,
        "Fair PCA (equal projected group means, k = 10), then LogisticRegression",
        paper="Kleindessner et al. 2023, Algorithms 1-2",
        defaults={"n_components": 10},
        base=_LOGISTIC,
        notions=("dp", "eopp"),
    ),
    _baseline(
        "wb-postprocess",
        _build_wb_classifier,
        ("lambda", WB_CLASSIFIER_GRID, 1.0),
        WassersteinBarycenterClassifier,
        "Barycenter post-processing of LogisticRegression scores to (relaxed) DP, "
        "group-aware and randomized",
        paper="Xian, Yin, Zhao 2023, §3-4",
        base=_LOGISTIC,
        **_POSTPROCESS,
    ),
    _baseline(
        "wb-regression",
        _build_wb_regressor,
        ("lambda", UNIT_GRID, 1.0),
        WassersteinBarycenterRegressor,
        "Wasserstein-barycenter post-processing of LinearRegression (relaxed: lambda)",
        paper="Chzhen et al. 2020, eq. (6), Algorithm 1",
        base="LinearRegression()",
        **_REGRESSION,
        **_POSTPROCESS,
    ),
    _baseline(
        "cod-rff",
        _build_cod_rff,
        ("eps", COD_RFF_EPS, 0.1),
        CODRFFRegressor,
        "COD least squares on random Fourier features (kernel COD)",
        grid_note="eps grid from the accuracy-parity paper",
        paper="Komiyama et al. 2018, §3-5",
        fixed=("eps",),
        **_REGRESSION,
    ),
)

for _spec in _SPECS:
    register_method(_spec)
