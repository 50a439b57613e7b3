"""Fairness and performance metrics with fairlearn's calling convention.

Every measure of the four papers, numpy-level: ``metric(y_true, y_score, *,
sensitive_features, ...)``. Group gaps (DP, mean score gap, TPR/FPR/EO, WDP, KSDP, TVDP,
error gap) take the largest pairwise gap over groups; several sensitive columns define
intersectional groups. PDP/PEO violations (OTF paper) take numeric one-hot and continuous
columns. The FTM audit measures (matched demographic parity, fair matching function and
its transport cost, subset fairness, consistency, self-fulfilling prophecy) and
:func:`fairness_report`, the standard panel stored by the experiment runner, complete the
package. Formulas: ``docs/metrics.md``.
"""

from otfair.metrics._accuracy_disparity import accuracy_disparity_audit
from otfair.metrics._degenerate import (
    DegeneratePredictorWarning,
    UndefinedMetricWarning,
    is_constant_prediction,
)
from otfair.metrics._distribution import (
    ks_demographic_parity,
    tv_demographic_parity,
    wasserstein_demographic_parity,
)
from otfair.metrics._individual import (
    SelfFulfillingProphecy,
    consistency,
    self_fulfilling_prophecy,
)
from otfair.metrics._linear import pdp_violation, peo_violation
from otfair.metrics._matching import (
    FairMatchingCost,
    fair_matching_cost,
    fair_matching_function,
    matched_demographic_parity,
)
from otfair.metrics._parity import (
    demographic_parity_gap,
    equal_opportunity_gap,
    equalized_odds_gap,
    error_gap,
    false_positive_rate_gap,
    max_equalized_odds_gap,
    mean_score_gap,
    true_positive_rate_gap,
)
from otfair.metrics._performance import (
    accuracy,
    log_loss,
    mean_squared_error,
    r2_score,
    roc_auc,
)
from otfair.metrics._report import (
    CLASSIFICATION_KEYS,
    REGRESSION_KEYS,
    FairnessReport,
    fairness_report,
)
from otfair.metrics._sensitive import SensitiveColumns, split_sensitive
from otfair.metrics._subset import (
    SubsetFairness,
    median_split,
    subset_fairness,
    subset_fairness_by_variable,
)

__all__ = [
    "CLASSIFICATION_KEYS",
    "REGRESSION_KEYS",
    "DegeneratePredictorWarning",
    "FairMatchingCost",
    "FairnessReport",
    "SelfFulfillingProphecy",
    "SensitiveColumns",
    "SubsetFairness",
    "UndefinedMetricWarning",
    "accuracy",
    "accuracy_disparity_audit",
    "consistency",
    "demographic_parity_gap",
    "equal_opportunity_gap",
    "equalized_odds_gap",
    "error_gap",
    "fair_matching_cost",
    "fair_matching_function",
    "fairness_report",
    "false_positive_rate_gap",
    "is_constant_prediction",
    "ks_demographic_parity",
    "log_loss",
    "matched_demographic_parity",
    "median_split",
    "max_equalized_odds_gap",
    "mean_score_gap",
    "mean_squared_error",
    "pdp_violation",
    "peo_violation",
    "r2_score",
    "roc_auc",
    "self_fulfilling_prophecy",
    "split_sensitive",
    "subset_fairness",
    "subset_fairness_by_variable",
    "true_positive_rate_gap",
    "tv_demographic_parity",
    "wasserstein_demographic_parity",
]
