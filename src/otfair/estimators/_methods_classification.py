"""Registers the fair-classification methods (OTF and FTM papers) for ``otfair fit``.

Defaults follow the papers: the OTF family (unfair, otf, norm, barycenter) is a logistic
regression trained with Adam (lr 1e-3, batch 1000, 100 epochs; OTF paper App. C.3) and
the sensitive attribute is *not* an input; the FTM family (unfair-mlp, ftm, ftm-joint,
gapreg, adv, reduction) is an MLP with two hidden layers of width = input dimension, Adam lr 1e-3
decayed x0.95 per epoch, 200 epochs, per-dataset batch sizes, the sensitive attribute
*as an input* (FTM paper §5.1, App. D).
"""

from __future__ import annotations

from typing import Any

from otfair.estimators._baselines import ReductionClassifier
from otfair.estimators._classifier import FairClassifier
from otfair.estimators.registry import MethodSpec, register_method

#: FTM paper App. D.1 batch sizes (group batch m for FTM, loss batch for the baselines).
FTM_BATCH_SIZES = {"adult": 1024, "german": 200, "dutch": 1024, "bank": 512}
_FTM_DEFAULT_BATCH = 1024

OTF_ALPHAS = (0.1, 0.3, 0.5, 0.7, 0.9)
#: OTF's own alpha grid. The converged OTF0 gradient is large (at alpha = 0.1 the PDP on
#: Adult is already ~3% of the unfair model's at an AUC cost of ~0.06), so the grid spans
#: the trade-off on a log scale (docs/classifiers.md).
OTF_STRENGTHS = (0.001, 0.002, 0.005, 0.01, 0.02)
#: FTM paper App. D, Table 7, up to 1.3. On our Adult (sex) the larger values of the
#: table leave the trade-off: lambda = 2 costs ~6 accuracy points, lambda >= 3 collapses
#: to the constant (all-negative) predictor, whose MDP is 0 and whose CE (~0.56) is below
#: CE + lambda MDP of any accurate model (docs/classifiers.md, trade-off table).
FTM_LAMBDAS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3)
REG_LAMBDAS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.2, 1.5, 1.8, 2.0, 3.0,
               5.0, 10.0, 20.0, 50.0, 100.0)  # fmt: skip
ADV_LAMBDAS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.5, 2.0, 3.0,
               5.0, 10.0, 15.0, 20.0, 30.0, 50.0, 100.0)  # fmt: skip
#: fairlearn's allowed violation eps (the FTM paper's torch Reduction used a lambda grid).
REDUCTION_EPS = (0.1, 0.05, 0.02, 0.01, 0.005, 0.002)


def _otf_family(penalty: str, default: float):
    def build(
        strength: float | None,
        *,
        notion: str | None = "dp",
        random_state: int | None = None,
        epochs: int | None = None,
        device: str = "cpu",
        dataset: str | None = None,
        **options: Any,
    ) -> FairClassifier:
        params: dict[str, Any] = {
            "model": "logistic",
            "epochs": 100 if epochs is None else int(epochs),
            "batch_size": 1000,
            "lr": 1e-3,
            "eps": 1e-3,
            "notion": notion or "dp",
        }
        params.update(options)
        return FairClassifier(
            penalty,
            default if strength is None else float(strength),
            random_state=random_state,
            device=device,
            **params,
        )

    return build


def _ftm_family(penalty: str, default: float, **fixed: Any):
    def build(
        strength: float | None,
        *,
        notion: str | None = "dp",
        random_state: int | None = None,
        epochs: int | None = None,
        device: str = "cpu",
        dataset: str | None = None,
        **options: Any,
    ) -> FairClassifier:
        batch = FTM_BATCH_SIZES.get((dataset or "").lower(), _FTM_DEFAULT_BATCH)
        params: dict[str, Any] = {
            "model": "mlp",
            "epochs": 200 if epochs is None else int(epochs),
            "batch_size": batch,
            "group_batch_size": batch,
            "lr": 1e-3,
            "lr_decay": 0.95,
            "notion": notion or "dp",
            **fixed,
        }
        params.update(options)
        return FairClassifier(
            penalty,
            default if strength is None else float(strength),
            random_state=random_state,
            device=device,
            **params,
        )

    return build


def _build_reduction(
    strength: float | None,
    *,
    notion: str | None = "dp",
    random_state: int | None = None,
    epochs: int | None = None,
    device: str = "cpu",
    dataset: str | None = None,
    **options: Any,
) -> ReductionClassifier:
    eps = 0.01 if strength is None else float(strength)
    return ReductionClassifier(eps, notion=notion or "dp", random_state=random_state, **options)


_SPECS = (
    MethodSpec(
        name="unfair",
        task="classification",
        build=_otf_family("none", 0.0),
        strength_name="none",
        description="Logistic regression, cross-entropy only (OTF paper's Unfair).",
    ),
    MethodSpec(
        name="unfair-mlp",
        task="classification",
        build=_ftm_family("none", 0.0),
        strength_name="none",
        sensitive_as_input=True,
        description="MLP with the sensitive attribute as input, cross-entropy only "
        "(FTM paper's Unfair baseline: same network and training as ftm/gapreg/adv).",
    ),
    MethodSpec(
        name="otf",
        task="classification",
        build=_otf_family("otf", 0.01),
        strength_name="alpha",
        default_strengths=OTF_STRENGTHS,
        notions=("dp", "eo"),
        description="(1-alpha) CE + alpha OTF0_eps, adjusted OT to fairness (Buyl & De Bie).",
    ),
    MethodSpec(
        name="norm",
        task="classification",
        build=_otf_family("norm", 0.5),
        strength_name="alpha",
        default_strengths=OTF_ALPHAS,
        notions=("dp", "eo"),
        description="(1-alpha) CE + alpha |G h|_1 / n, L1 of the linear constraints.",
    ),
    MethodSpec(
        name="barycenter",
        task="classification",
        build=_otf_family("barycenter", 0.5),
        strength_name="alpha",
        default_strengths=OTF_ALPHAS,
        description="(1-alpha) CE + alpha W1 to the groups' barycenter (Jiang et al.).",
    ),
    MethodSpec(
        name="ftm",
        task="classification",
        build=_ftm_family("ftm", 1.0, matching="marginal"),
        strength_name="lambda",
        default_strengths=FTM_LAMBDAS,
        sensitive_as_input=True,
        description="CE + lambda MDP with the marginal OT map (fairness through matching).",
    ),
    MethodSpec(
        name="ftm-joint",
        task="classification",
        build=_ftm_family("ftm", 1.0, matching="joint", label_weight=100.0),
        strength_name="lambda",
        default_strengths=FTM_LAMBDAS,
        sensitive_as_input=True,
        description="CE + lambda MDP with the joint (X, Y) OT map, a = 100.",
    ),
    MethodSpec(
        name="gapreg",
        task="classification",
        build=_ftm_family("gapreg", 1.0),
        strength_name="lambda",
        default_strengths=REG_LAMBDAS,
        sensitive_as_input=True,
        description="CE + lambda (mean score gap)^2 (Gap Reg, FTM paper baseline).",
    ),
    MethodSpec(
        name="adv",
        task="classification",
        build=_ftm_family("adv", 1.0),
        strength_name="lambda",
        default_strengths=ADV_LAMBDAS,
        sensitive_as_input=True,
        notions=("dp", "eo"),
        description="CE + lambda adversary gain (Zhang et al. adversarial debiasing).",
    ),
    MethodSpec(
        name="reduction",
        task="classification",
        build=_build_reduction,
        strength_name="eps",
        default_strengths=REDUCTION_EPS,
        sensitive_as_input=True,
        notions=("dp", "eo"),
        description="fairlearn ExponentiatedGradient around LogisticRegression (eps bound).",
    ),
)

for _spec in _SPECS:
    register_method(_spec)
