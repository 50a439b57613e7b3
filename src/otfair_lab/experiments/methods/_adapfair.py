"""Registers AdapFair's methods (``adapfair``, ``adapfair-blind``).

The aware method reads the sensitive attribute from the last column of ``X``
(``sensitive_as_input=True``; the column selects the group's flow and is dropped before
the flows and the classifier), so that it predicts from the test features alone, as the
experiment runner requires. The blind method never sees it at prediction time.
``--epochs`` sets the flow epochs; the frozen base classifier trains first for
``base_epochs`` epochs (``-o base_epochs=N``), which ``otfair fit`` announces. The
flows train exactly ``--epochs`` on every row, as the paper does (``early_stopping=False``;
``-o early_stopping=True`` holds out rows and stops early, the library's default).
"""

from __future__ import annotations

from typing import Any

from otfair.estimators import AdapFairClassifier
from otfair_lab.experiments.methods._extras import baseline_report
from otfair_lab.experiments.methods._spec import MethodSpec, RunArgs, builder, register_method

#: Default lambda (weight of the cross-entropy in eq. (1)).
DEFAULT_LAMBDA = 0.5
#: The trade-off grid swept by ``otfair sweep`` (lambda in [0, 1]).
LAMBDA_GRID = (0.9, 0.7, 0.5, 0.3, 0.1)
DEFAULT_EPOCHS = 50
#: Flow batch size: large batches give stable W2 estimates and fast epochs on 2 cores.
DEFAULT_BATCH_SIZE = 1024


def _builder(mode: str):
    @builder
    def build(strength: float | None, run: RunArgs, options: dict[str, Any]) -> Any:
        options.setdefault("sensitive_column", -1 if mode == "aware" else None)
        options.setdefault("batch_size", DEFAULT_BATCH_SIZE)
        # the paper's protocol: every epoch on every row (the library stops early)
        options.setdefault("early_stopping", False)
        if options.get("base_penalty") == "gap":  # the archived runs' word for "gapreg"
            options["base_penalty"] = "gapreg"
        return AdapFairClassifier(
            mode=mode,
            notion=run.notion or "dp",
            strength=DEFAULT_LAMBDA if strength is None else float(strength),
            epochs=DEFAULT_EPOCHS if run.epochs is None else int(run.epochs),
            random_state=run.random_state,
            device=run.device,
            **options,
        )

    return build


for _mode, _name in (("aware", "adapfair"), ("blind", "adapfair-blind")):
    register_method(
        MethodSpec(
            name=_name,
            task="classification",
            build=_builder(_mode),
            strength_name="lambda",
            default_strengths=LAMBDA_GRID,
            default_strength=DEFAULT_LAMBDA,
            sensitive_as_input=_mode == "aware",
            takes_domains=True,
            notions=("dp", "eopp", "eo"),
            description=(
                f"AdapFair ({_mode}): normalizing-flow preprocessors in front of a frozen "
                "2x20 MLP, lambda*CE + (1-lambda)*W2 between group score distributions."
            ),
            paper="AdapFair (Huang et al., 2024), §III-IV and App. A-D2",
            estimator=AdapFairClassifier,
            fixed=("base_classifier", "mode", "strength", "lam"),
            defaults={
                "epochs": DEFAULT_EPOCHS,
                "batch_size": DEFAULT_BATCH_SIZE,
                "early_stopping": False,
            },
            announce={
                "epochs": "flow epochs, --epochs",
                "base_epochs": "frozen base classifier, trained first; -o base_epochs=N",
            },
            extra_report=baseline_report,
        )
    )
