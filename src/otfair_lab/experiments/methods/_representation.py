"""Registers the fair-representation baselines (laftr, sipm-lfr, cfair, fair-nf, fair-nf-discrete).

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

from collections.abc import Callable
from typing import Any

from otfair.estimators.representation import (
    CFairClassifier,
    DiscreteFairNFClassifier,
    FairNormalizingFlowClassifier,
    LAFTRClassifier,
    SIPMClassifier,
)
from otfair_lab.experiments.methods._spec import (
    MethodSpec,
    RunArgs,
    Strength,
    register_method,
    strength_spec,
)

LAFTR_GAMMAS = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0)
SIPM_LAMBDAS = (0.5, 1.0, 2.0, 5.0, 10.0)
CFAIR_MUS = (0.1, 1.0, 10.0, 30.0, 100.0)
FNF_GAMMAS = (0.02, 0.1, 0.5, 0.9)
#: The authors' Adult grid (0.02, 0.1, 0.2, 0.9) with 0.3-0.5 added: there the mapped
#: rows' expected prediction crosses the threshold (docs/baselines.md, Adult).
FNF_DISCRETE_GAMMAS = (0.02, 0.1, 0.2, 0.3, 0.35, 0.4, 0.5, 0.9)

#: Shared training settings (``otfair methods describe`` shows them).
REPR_DEFAULTS: dict[str, Any] = {"epochs": 20, "lr": 1e-3}
SIPM_DEFAULTS: dict[str, Any] = {**REPR_DEFAULTS, "adversary_steps": 5, "adversary_lr": 1e-2}


def _build(cls: type, fixed: dict[str, Any]) -> Callable[[float, RunArgs, dict], Any]:
    def build(strength: float, run: RunArgs, options: dict[str, Any]) -> Any:
        params: dict[str, Any] = dict(fixed)
        if run.epochs is not None:
            params["epochs"] = int(run.epochs)
        if cls is LAFTRClassifier:
            params["notion"] = run.notion or "dp"
        params.update(options)
        return cls(strength, random_state=run.random_state, device=run.device, **params)

    return build


def _representation(
    name: str,
    cls: type,
    strength: Strength,
    description: str,
    paper: str,
    *,
    notions: tuple[str, ...],
    defaults: dict[str, Any] = REPR_DEFAULTS,
    fixed: dict[str, Any] | None = None,
) -> MethodSpec:
    """Describe the method of the representation classifier ``cls``.

    ``fixed`` are constructor arguments the builder sets (shown with the ``defaults``);
    a fixed ``sensitive_column`` makes the method ``sensitive_as_input``.
    """
    fixed = dict(fixed or {})
    return strength_spec(
        name,
        "classification",
        _build(cls, fixed),
        strength,
        estimator=cls,
        notions=notions,
        description=description,
        paper=paper,
        defaults={**defaults, **fixed},
        fixed=tuple(fixed),
        sensitive_as_input="sensitive_column" in fixed,
    )


_FTM_BASELINE = "FTM paper Table 5"
_ADAPFAIR_BASELINE = "AdapFair paper §IV and App. D"

_SPECS = (
    _representation(
        "laftr",
        LAFTRClassifier,
        ("gamma", LAFTR_GAMMAS, 0.5),
        "Encoder + classifier + adversary on z with LAFTR's group-normalized L1 objective, "
        "DP or EO (Madras et al. 2018).",
        f"Madras et al. 2018, §3-5; {_FTM_BASELINE}",
        notions=("dp", "eo"),
    ),
    _representation(
        "sipm-lfr",
        SIPMClassifier,
        ("lambda", SIPM_LAMBDAS, 2.0),
        "Encoder + classifier, CE + lambda sigmoid IPM between the groups' "
        "representations (Kim et al. 2022).",
        f"Kim et al. 2022, §3-4; {_FTM_BASELINE}",
        notions=("dp",),
        defaults=SIPM_DEFAULTS,
    ),
    _representation(
        "cfair",
        CFairClassifier,
        ("mu", CFAIR_MUS, 10.0),
        "Balanced error + per-label conditional alignment adversaries (Zhao et al. 2020).",
        f"Zhao et al. 2020, §3; {_ADAPFAIR_BASELINE}",
        notions=("eo",),
    ),
    _representation(
        "fair-nf",
        FairNormalizingFlowClassifier,
        ("gamma", FNF_GAMMAS, 0.9),
        "Group-wise coupling flows to a shared latent, (1-gamma) CE + gamma symmetric KL "
        "under GMM densities (Balunovic et al. 2022, simplified).",
        f"Balunovic et al. 2022, §4; {_ADAPFAIR_BASELINE}",
        notions=("dp",),
        fixed={"sensitive_column": -1},
    ),
    _representation(
        "fair-nf-discrete",
        DiscreteFairNFClassifier,
        ("gamma", FNF_DISCRETE_GAMMAS, 0.35),
        "Fair NF's exact encoder of a finite input space (one-hot blocks, quantile bins): "
        "per-group MADE densities, the mapped group's cells rank-matched onto the "
        "other's, label-preserving with prob 1-gamma (Balunovic et al. 2022, §5).",
        f"Balunovic et al. 2022, §5 (categorical data); {_ADAPFAIR_BASELINE}",
        notions=("dp",),
        fixed={"sensitive_column": -1},
    ),
)

for _spec in _SPECS:
    register_method(_spec)
