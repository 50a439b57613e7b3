"""Registers the accuracy-parity regression methods (accuracy-disparity paper).

``unfair-reg``, ``cenet``, ``wassersteinnet``, ``bgl`` and ``cod``. The neural methods take
their per-dataset settings (widths, Adadelta learning rate, batch size, epochs, clipping)
from App. B through the ``dataset`` hint (:data:`~otfair_lab.experiments.methods.PAPER_SETTINGS`);
``epochs`` overrides the epoch count.
"""

from __future__ import annotations

from typing import Any

from otfair.estimators import (
    BGLRegressor,
    CENet,
    CODRegressor,
    UnfairRegressor,
    WassersteinNet,
)
from otfair_lab.experiments.methods._extras import group_errors_report
from otfair_lab.experiments.methods._settings import PAPER_SETTINGS, paper_settings
from otfair_lab.experiments.methods._spec import MethodSpec, RunArgs, builder, register_method

__all__: list[str] = []

_PAPER = "Chi et al., understanding and mitigating accuracy disparity in regression, App. B"
#: lambda grid used for CENet and WassersteinNet. The paper's tables vary lambda over five
#: values and its Fig. 4 uses lambda = 50; the exact grid is not given in the text.
_LAMBDA_GRID = (0.1, 1.0, 5.0, 10.0, 50.0)
#: Settings of App. B that a given estimator class does not take.
_NOT_TAKEN: dict[type, tuple[str, ...]] = {
    UnfairRegressor: ("adversary_hidden", "clip"),
    CENet: ("clip",),
    WassersteinNet: (),
}


def _neural(cls: type):
    @builder
    def build(strength: float | None, run: RunArgs, options: dict[str, Any]) -> Any:
        settings = paper_settings(run.dataset)
        for key in ("bgl_eps", *_NOT_TAKEN[cls]):
            del settings[key]
        if run.epochs is not None:
            settings["epochs"] = int(run.epochs)
        settings.update(random_state=run.random_state, device=run.device, **options)
        if cls is UnfairRegressor:
            return cls(**settings)
        return cls(1.0 if strength is None else float(strength), **settings)

    return build


@builder
def _build_bgl(strength: float | None, run: RunArgs, options: dict[str, Any]) -> Any:
    eps = paper_settings(run.dataset)["bgl_eps"] if strength is None else float(strength)
    return BGLRegressor(eps, random_state=run.random_state, **options)


@builder
def _build_cod(strength: float | None, run: RunArgs, options: dict[str, Any]) -> Any:
    eps = 0.1 if strength is None else float(strength)
    return CODRegressor(eps, random_state=run.random_state, **options)


def _spec(name: str, build: Any, estimator: type, description: str, **kw: Any) -> MethodSpec:
    return MethodSpec(
        name=name,
        task="regression",
        build=build,
        description=description,
        paper=_PAPER,
        estimator=estimator,
        extra_report=group_errors_report,
        **kw,
    )


_NEURAL_DEFAULTS = {"settings": "per dataset (App. B: widths, Adadelta lr, batch, epochs)"}
#: What CENet and WassersteinNet share: the lambda of the adversary's gain and App. B.
_ADVERSARIAL: dict[str, Any] = {
    "strength_name": "lambda",
    "default_strengths": _LAMBDA_GRID,
    "default_strength": 1.0,
    "fixed": ("strength", "lam"),
    "defaults": _NEURAL_DEFAULTS,
}
_BGL_EPS = {d: row["bgl_eps"] for d, row in PAPER_SETTINGS["accuracy-disparity"].items()}

for _s in (
    _spec(
        "unfair-reg",
        _neural(UnfairRegressor),
        UnfairRegressor,
        "Sigmoid regression net trained on the MSE only (App. B architecture).",
        strength_name=None,
        defaults=_NEURAL_DEFAULTS,
    ),
    _spec(
        "cenet",
        _neural(CENet),
        CENet,
        "CENet: cross-entropy discriminator on (Z, Y) through gradient reversal.",
        **_ADVERSARIAL,
    ),
    _spec(
        "wassersteinnet",
        _neural(WassersteinNet),
        WassersteinNet,
        "WassersteinNet: weight-clipped critic on (Z, Y) through gradient reversal.",
        **_ADVERSARIAL,
    ),
    _spec(
        "bgl",
        _build_bgl,
        BGLRegressor,
        "Bounded group loss (fairlearn exponentiated gradient), expected prediction.",
        strength_name="eps",
        default_strengths=(0.01, 0.02, 0.03, 0.05, 0.07, 0.1, 0.2, 0.3, 0.5),
        default_strength=_BGL_EPS.pop("*"),
        dataset_strengths=_BGL_EPS,
        fixed=("eps",),
    ),
    _spec(
        "cod",
        _build_cod,
        CODRegressor,
        "Least squares with a bound on the CoD of S from the predictions (cvxpy).",
        strength_name="eps",
        default_strengths=(0.01, 0.1, 0.5, 1.0),
        default_strength=0.1,
        fixed=("eps",),
    ),
):
    register_method(_s)
