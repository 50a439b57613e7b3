"""Method-specific report extras (``MethodSpec.extra_report``): extra panels of one run.

They are evaluated by :func:`otfair_lab.experiments.run_single` after the main test panel and
merged into the result; they are the experiment layer's business, so the estimators never
import :mod:`otfair.metrics`.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

__all__ = ["baseline_report", "group_errors_report"]


def group_errors_report(estimator: Any, split: Any) -> dict[str, Any]:
    """Test-split group MSEs and the gap split of the accuracy-disparity audit (§3.1).

    Returns ``mse_0``, ``mse_1`` (groups in sorted order of ``split.s_test``),
    ``label_term`` and ``representation_term`` (their sum is ``mse_0 - mse_1``), from
    :func:`otfair.metrics.accuracy_disparity_audit`.
    """
    from otfair.metrics import accuracy_disparity_audit

    pred = np.asarray(estimator.predict(split.X_test), dtype=np.float64)
    audit = accuracy_disparity_audit(split.y_test, pred, sensitive_features=split.s_test)
    keys = ("mse_0", "mse_1", "label_term", "representation_term")
    return {k: audit[k] for k in keys}


def baseline_report(estimator: Any, split: Any) -> dict[str, Any]:
    """``{"baseline": panel}``: the test panel of AdapFair's untouched base classifier.

    The same :func:`otfair.metrics.fairness_report` summary as the main result, computed
    on the scores of the frozen classifier without the flows
    (``AdapFairClassifier.baseline_proba``).
    """
    from otfair.metrics import DegeneratePredictorWarning, fairness_report

    scores = estimator.baseline_proba(split.X_test)
    with warnings.catch_warnings():  # a baseline's quality is the main result's business
        warnings.simplefilter("ignore", DegeneratePredictorWarning)
        panel = fairness_report(split.y_test, scores, sensitive_features=split.s_test)
    return {"baseline": panel.summary}
