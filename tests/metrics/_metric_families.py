"""The metric families that several metric tests run over, listed once."""

from __future__ import annotations

from otfair.metrics import (
    demographic_parity_gap,
    equalized_odds_gap,
    false_positive_rate_gap,
    ks_demographic_parity,
    max_equalized_odds_gap,
    mean_score_gap,
    pdp_violation,
    peo_violation,
    true_positive_rate_gap,
    tv_demographic_parity,
    wasserstein_demographic_parity,
)

#: Group gaps: the largest pairwise gap over the groups of ``sensitive_features``.
GROUP_GAPS = [
    demographic_parity_gap,
    mean_score_gap,
    wasserstein_demographic_parity,
    ks_demographic_parity,
    tv_demographic_parity,
    true_positive_rate_gap,
    false_positive_rate_gap,
    equalized_odds_gap,
    max_equalized_odds_gap,
]
#: The OTF paper's violations of linear constraints (numeric sensitive columns).
LINEAR = [pdp_violation, peo_violation]
