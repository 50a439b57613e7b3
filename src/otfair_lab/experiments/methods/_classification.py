"""Registers the fair-classification methods (OTF and FTM papers).

Defaults follow the papers: the OTF family (unfair, otf, norm, barycenter) is a logistic
regression trained with Adam (lr 1e-3, batch 1000, 100 epochs; OTF paper App. C.3) and
the sensitive attribute is *not* an input; the FTM family (unfair-mlp, ftm, ftm-joint,
gapreg, adv, fairtorch-reduction) is an MLP with two hidden layers of width = input
dimension, Adam lr 1e-3 decayed x0.95 per epoch, 200 epochs, per-dataset batch sizes
(:data:`~otfair_lab.experiments.methods.PAPER_SETTINGS`), the sensitive attribute *as an
input* (FTM paper §5.1, App. D). ``reduction`` is fairlearn's exponentiated gradient
around a logistic regression, a separate baseline (not the FTM paper's "Reduction").
"""

from __future__ import annotations

from typing import Any

from otfair.estimators import FairClassifier, ReductionClassifier
from otfair.penalties import (
    FTM,
    OTF,
    Adversary,
    FairTorchDP,
    GapReg,
    Norm,
    as_penalty_object,
    penalty_notions,
)
from otfair_lab.experiments.methods._options import split_penalty_settings
from otfair_lab.experiments.methods._settings import paper_settings
from otfair_lab.experiments.methods._spec import (
    MethodSpec,
    RunArgs,
    builder,
    register_method,
    strength_spec,
)

#: The strengths each penalty's paper sweeps: held by the penalty objects (their
#: ``paper_strengths``, with the papers' tables), read here.
OTF_ALPHAS = Norm.paper_strengths  # the OTF paper's baselines (Norm, Barycenter)
OTF_STRENGTHS = OTF.paper_strengths
FTM_LAMBDAS = FTM.paper_strengths  # FTM paper App. D, Table 7 (the whole grid)
REG_LAMBDAS = GapReg.paper_strengths
ADV_LAMBDAS = Adversary.paper_strengths
FAIRTORCH_LAMBDAS = FairTorchDP.paper_strengths  # FTM paper App. D.2, Table 7
#: fairlearn's allowed violation eps of ``reduction`` (exponentiated gradient; not the FTM
#: paper's "Reduction", which is ``fairtorch-reduction``).
REDUCTION_EPS = (0.1, 0.05, 0.02, 0.01, 0.005, 0.002)

_OTF_PAPER = "Buyl & De Bie, optimal transport to fairness (OTF paper), App. C.3"
_FTM_PAPER = "Kim et al., fairness through matching (FTM paper), §5.1 and App. D"
_FAIRTORCH_PAPER = (
    f"{_FTM_PAPER}.2 and Table 7 (its 'Reduction': Agarwal et al. 2018 as implemented "
    "for the MLP by FairTorch, github.com/wbawakate/fairtorch, DemographicParityLoss)"
)
#: Training settings of the two families (``otfair methods describe`` shows them).
#: The papers' optimizer, stated whole: Adam for exactly ``epochs`` (no convergence
#: stop), torch's initialization, no L2 term. FairClassifier's own defaults (L-BFGS for
#: the logistic model, convergence, a base-rate intercept, l2=1) are not the protocols'.
PAPER_TRAINING: dict[str, Any] = {
    "solver": "adam",
    "tol": None,
    "init_intercept": False,
    "l2": 0.0,
}
OTF_DEFAULTS: dict[str, Any] = {
    "model": "logistic",
    "epochs": 100,
    "batch_size": 1000,
    "lr": 1e-3,
    **PAPER_TRAINING,
    # FairClassifier's own fixed_batches="auto": fixed batches for OTF (~3x cheaper,
    # docs/measurements/otf_fixed_batches.md); the reproduction config (configs/otf.toml)
    # states the paper's protocol, new batches every epoch (-o fixed_batches=false)
}
FTM_DEFAULTS: dict[str, Any] = {
    "model": "mlp",
    "hidden": None,  # two layers of the input's width (FTM App. D.1), not FairClassifier's
    "epochs": 200,
    "batch_size": "per dataset (FTM App. D.1)",
    "lr": 1e-3,
    "lr_decay": 0.95,
    **PAPER_TRAINING,
}


def _family(penalty: str, default: float, ftm: bool, settings: dict[str, Any], **fixed: Any):
    """Return the builder of a FairClassifier method (its penalty object gets its settings)."""
    penalty_class = None if penalty == "none" else type(as_penalty_object(penalty))

    @builder
    def build(strength: float | None, run: RunArgs, options: dict[str, Any]) -> FairClassifier:
        params = dict(FTM_DEFAULTS if ftm else OTF_DEFAULTS)
        if ftm:
            batch = paper_settings(run.dataset, paper="ftm")["batch_size"]
            params["batch_size"] = batch
            if penalty_class is FTM:  # FTM's group batches: the dataset's batch size
                params["group_batch_size"] = batch
        if run.epochs is not None:
            params["epochs"] = int(run.epochs)
        params.update(notion=run.notion or "dp", **settings, **fixed)
        params.update(options)
        params, own = split_penalty_settings(FairClassifier, penalty_class, params)
        return FairClassifier(
            "none" if penalty_class is None else penalty_class(**own),
            default if strength is None else float(strength),
            random_state=run.random_state,
            device=run.device,
            **params,
        )

    return build


def _build_reduction(
    strength: float, run: RunArgs, options: dict[str, Any]
) -> ReductionClassifier:
    notion = run.notion or "dp"
    return ReductionClassifier(strength, notion=notion, random_state=run.random_state, **options)


def _fair(
    name: str, penalty: str, default: float, grid: tuple[float, ...], **kw: Any
) -> MethodSpec:
    """Describe a FairClassifier method: the OTF family, or the FTM family with ``ftm=True``.

    ``fixed`` are FairClassifier parameters the method sets (not ``-o`` options);
    ``settings`` are parameters it sets by default that ``-o`` may change (ftm-joint's
    ``label_weight``, FTM Fig. 6's alpha).
    """
    ftm = kw.pop("ftm", False)
    paper = kw.pop("paper", _FTM_PAPER if ftm else _OTF_PAPER)
    fixed = kw.pop("fixed", {})
    settings = kw.pop("settings", {})
    no_strength = penalty == "none"
    # one source of truth: the notions are those the penalty builds for (FairClassifier
    # hands `notion` to make_penalty), never a list written here
    notions = () if no_strength else penalty_notions(penalty)
    declared = kw.pop("notions", None)
    if declared is not None and tuple(declared) != notions:
        raise ValueError(
            f"method {name!r} declares notions {tuple(declared)} but penalty {penalty!r} "
            f"supports {notions}; drop `notions=` (it is read from the penalty)."
        )
    return MethodSpec(
        name=name,
        task="classification",
        build=_family(penalty, default, ftm, settings, **fixed),
        strength_name=None if no_strength else kw.pop("strength_name"),
        default_strengths=grid,
        default_strength=None if no_strength else default,
        sensitive_as_input=ftm,
        paper=paper,
        estimator=FairClassifier,
        penalty=None if no_strength else type(as_penalty_object(penalty)),
        fixed=("penalty", *fixed),
        defaults={**(FTM_DEFAULTS if ftm else OTF_DEFAULTS), **settings, **fixed},
        notions=notions,
        **kw,
    )


#: What ftm and ftm-joint share (they differ in the OT map they match with).
_MATCHING: dict[str, Any] = {"ftm": True, "strength_name": "lambda"}

_SPECS = (
    _fair(
        "unfair",
        "none",
        0.0,
        (),
        description="Logistic regression, cross-entropy only (OTF paper's Unfair).",
    ),  # fmt: skip
    _fair(
        "unfair-mlp",
        "none",
        0.0,
        (),
        ftm=True,
        description="MLP with the sensitive attribute as input, cross-entropy only "
        "(FTM paper's Unfair baseline: same network and training as ftm/gapreg/adv).",
    ),  # fmt: skip
    _fair(
        "otf",
        "otf",
        0.01,
        OTF_STRENGTHS,
        strength_name="alpha",
        description="(1-alpha) CE + alpha OTF0_eps, adjusted OT to fairness (Buyl & De Bie).",
    ),  # fmt: skip
    _fair(
        "norm",
        "norm",
        0.5,
        OTF_ALPHAS,
        strength_name="alpha",
        description="(1-alpha) CE + alpha |G h|_1 / n, L1 of the linear constraints.",
    ),
    _fair(
        "barycenter",
        "barycenter",
        0.5,
        OTF_ALPHAS,
        strength_name="alpha",
        description="(1-alpha) CE + alpha W1 to the groups' barycenter (Jiang et al.).",
    ),
    _fair(
        "ftm",
        "ftm",
        1.0,
        FTM_LAMBDAS,
        fixed={"matching": "marginal"},
        **_MATCHING,
        description="CE + lambda MDP with the marginal OT map (fairness through matching).",
    ),
    _fair(
        "ftm-joint",
        "ftm",
        1.0,
        FTM_LAMBDAS,
        fixed={"matching": "joint"},
        settings={"label_weight": 100.0},
        **_MATCHING,
        description="CE + lambda MDP with the joint (X, Y) OT map, label weight a = 100 "
        "(-o label_weight=...).",
    ),
    _fair(
        "gapreg",
        "gapreg",
        1.0,
        REG_LAMBDAS,
        ftm=True,
        strength_name="lambda",
        description="CE + lambda (mean score gap)^2 (Gap Reg, FTM paper baseline).",
    ),
    _fair(
        "adv",
        "adv",
        1.0,
        ADV_LAMBDAS,
        ftm=True,
        strength_name="lambda",
        description="CE + lambda adversary gain (Zhang et al. adversarial debiasing).",
    ),
    _fair(
        "fairtorch-reduction",
        "fairtorch-dp",
        10.0,
        FAIRTORCH_LAMBDAS,
        ftm=True,
        strength_name="lambda",
        paper=_FAIRTORCH_PAPER,
        description="CE + lambda FairTorch DemographicParityLoss on the MLP (the FTM "
        "paper's 'Reduction'; a fixed-multiplier penalty, not exponentiated gradient).",
    ),
    strength_spec(
        "reduction",
        "classification",
        _build_reduction,
        ("eps", REDUCTION_EPS, 0.01),
        sensitive_as_input=True,
        notions=("dp", "eo"),
        description="fairlearn ExponentiatedGradient around LogisticRegression (eps bound); "
        "not the FTM paper's 'Reduction' (that is fairtorch-reduction).",
        paper=f"Agarwal et al. 2018 (baseline of the {_FTM_PAPER})",
        estimator=ReductionClassifier,
        fixed=("eps",),
    ),
)

for _spec in _SPECS:
    register_method(_spec)
