"""Registers the fair-representation baselines (laftr, sipm-lfr, cfair, fair-nf).

laftr and sipm-lfr are the FTM paper's Table 5 baselines, cfair and fair-nf the AdapFair
paper's (§IV, App. D).

Strength grids: LAFTR's gamma and CFair's mu as in their papers' sweeps (Madras et al.
2018 §5; Zhao et al. 2020 §5: mu in {0.1, 1, 10, 100, 1000}); sIPM-LFR's lambda spans the
trade-off on Adult (docs/baselines.md); fair-nf's gamma is the KL weight of the convex
combination, in [0, 1). The sensitive attribute is not an input of the representation
methods; fair-nf gets it as the last column (it selects the group's flow and is
dropped), as AdapFair(Aware) does.
"""

from __future__ import annotations

from typing import Any

from otfair.estimators.representation import (
    CFairClassifier,
    FairNormalizingFlowClassifier,
    LAFTRClassifier,
    SIPMClassifier,
)
from otfair.experiments.methods._spec import MethodSpec, RunArgs, builder, register_method

LAFTR_GAMMAS = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0)
SIPM_LAMBDAS = (0.5, 1.0, 2.0, 5.0, 10.0)
CFAIR_MUS = (0.1, 1.0, 10.0, 30.0, 100.0)
FNF_GAMMAS = (0.02, 0.1, 0.5, 0.9)

#: Shared training settings (``otfair methods describe`` shows them).
REPR_DEFAULTS: dict[str, Any] = {"epochs": 20, "lr": 1e-3}
SIPM_DEFAULTS: dict[str, Any] = {**REPR_DEFAULTS, "adversary_steps": 5, "adversary_lr": 1e-2}


def _build(cls: type, default: float, fixed: dict[str, Any] | None = None):
    @builder
    def build(strength: float | None, run: RunArgs, options: dict[str, Any]) -> Any:
        params: dict[str, Any] = dict(fixed or {})
        if run.epochs is not None:
            params["epochs"] = int(run.epochs)
        if cls is LAFTRClassifier:
            params["notion"] = run.notion or "dp"
        params.update(options)
        return cls(
            default if strength is None else float(strength),
            random_state=run.random_state,
            device=run.device,
            **params,
        )

    return build


_SPECS = (
    MethodSpec(
        name="laftr",
        task="classification",
        build=_build(LAFTRClassifier, 0.5),
        strength_name="gamma",
        default_strengths=LAFTR_GAMMAS,
        default_strength=0.5,
        notions=("dp", "eo"),
        description="Encoder + classifier + adversary on z with LAFTR's group-normalized "
        "L1 objective, DP or EO (Madras et al. 2018).",
        paper="Madras et al. 2018, §3-5; FTM paper Table 5",
        estimator=LAFTRClassifier,
        defaults=REPR_DEFAULTS,
    ),
    MethodSpec(
        name="sipm-lfr",
        task="classification",
        build=_build(SIPMClassifier, 2.0),
        strength_name="lambda",
        default_strengths=SIPM_LAMBDAS,
        default_strength=2.0,
        notions=("dp",),
        description="Encoder + classifier, CE + lambda sigmoid IPM between the groups' "
        "representations (Kim et al. 2022).",
        paper="Kim et al. 2022, §3-4; FTM paper Table 5",
        estimator=SIPMClassifier,
        defaults=SIPM_DEFAULTS,
    ),
    MethodSpec(
        name="cfair",
        task="classification",
        build=_build(CFairClassifier, 10.0),
        strength_name="mu",
        default_strengths=CFAIR_MUS,
        default_strength=10.0,
        notions=("eo",),
        description="Balanced error + per-label conditional alignment adversaries "
        "(Zhao et al. 2020).",
        paper="Zhao et al. 2020, §3; AdapFair paper §IV and App. D",
        estimator=CFairClassifier,
        defaults=REPR_DEFAULTS,
    ),
    MethodSpec(
        name="fair-nf",
        task="classification",
        build=_build(FairNormalizingFlowClassifier, 0.9, {"sensitive_column": -1}),
        strength_name="gamma",
        default_strengths=FNF_GAMMAS,
        default_strength=0.9,
        sensitive_as_input=True,
        notions=("dp",),
        description="Group-wise coupling flows to a shared latent, (1-gamma) CE + gamma "
        "symmetric KL under GMM densities (Balunovic et al. 2022, simplified).",
        paper="Balunovic et al. 2022, §4; AdapFair paper §IV and App. D",
        estimator=FairNormalizingFlowClassifier,
        fixed=("sensitive_column",),
        defaults={**REPR_DEFAULTS, "sensitive_column": -1},
    ),
)

for _spec in _SPECS:
    register_method(_spec)
