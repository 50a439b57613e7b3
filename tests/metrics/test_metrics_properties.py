"""Property tests (hypothesis): invariances, zero gaps and bounds of the group measures."""

from __future__ import annotations

import numpy as np
import pytest
from _metric_families import GROUP_GAPS, LINEAR
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from otfair.metrics import (
    equalized_odds_gap,
    fairness_report,
    ks_demographic_parity,
    max_equalized_odds_gap,
    mean_score_gap,
    wasserstein_demographic_parity,
)

#: hand-computed cases use groups of a few rows: the small-group warning is expected there
#: (tests/metrics/test_small_groups_pos_label.py checks it)
pytestmark = [
    pytest.mark.filterwarnings("ignore:.*group.s. .* have fewer than:UserWarning"),
    # random panels: the report's warnings on chance-level or one-class data are due
    pytest.mark.filterwarnings("ignore::otfair.metrics.DegeneratePredictorWarning"),
    pytest.mark.filterwarnings("ignore::otfair.metrics.UndefinedMetricWarning"),
]

GAPS = [*GROUP_GAPS, *LINEAR]

probs = st.floats(0.0, 1.0, allow_nan=False, width=32)


@st.composite
def panels(draw, min_size=8, max_size=40):
    """(y, score, s) where every group has both labels."""
    n = draw(st.integers(min_size, max_size))
    y = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    s = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    p = np.array(draw(st.lists(probs, min_size=n, max_size=n)), dtype=np.float64)
    for g in (0, 1):
        assume(set(y[s == g].tolist()) == {0, 1})
    return y, p, s


def _all(y, p, s, metrics=GAPS):
    return np.array([f(y, p, sensitive_features=s) for f in metrics])


@settings(max_examples=40, deadline=None)
@given(panels(), st.randoms(use_true_random=False))
def test_row_permutation_invariance(panel, rnd):
    y, p, s = panel
    perm = np.array(rnd.sample(range(y.size), y.size))
    assert np.allclose(_all(y, p, s), _all(y[perm], p[perm], s[perm]), atol=1e-12)
    a = fairness_report(y, p, sensitive_features=s).summary
    b = fairness_report(y[perm], p[perm], sensitive_features=s[perm]).summary
    assert a.keys() == b.keys()
    for k in a:
        assert a[k] == pytest.approx(b[k], abs=1e-12, nan_ok=True)


@settings(max_examples=40, deadline=None)
@given(panels())
def test_group_label_swap_invariance(panel):
    y, p, s = panel
    swapped = np.where(s == 1, "x", "y")  # 1 -> "x" (sorted first), 0 -> "y"
    assert np.allclose(_all(y, p, s), _all(y, p, 1 - s), atol=1e-12)
    # string labels work for the group measures (PDP/PEO need numeric columns)
    assert np.allclose(_all(y, p, s, GROUP_GAPS), _all(y, p, swapped, GROUP_GAPS), atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(panels(min_size=4, max_size=20))
def test_zero_gap_when_groups_have_identical_predictions(panel):
    y, p, _ = panel
    assume(set(y.tolist()) == {0, 1})
    yy, pp = np.r_[y, y], np.r_[p, p]
    s = np.r_[np.zeros(y.size), np.ones(y.size)]
    assert np.allclose(_all(yy, pp, s), 0.0, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(panels())
def test_bounds(panel):
    y, p, s = panel
    values = _all(y, p, s)
    assert np.all(values >= 0.0) and np.all(values <= 1.0 + 1e-12)
    # structural relations between the measures
    eo = equalized_odds_gap(y, p, sensitive_features=s)
    assert eo <= max_equalized_odds_gap(y, p, sensitive_features=s) + 1e-12
    # the mean score gap is a lower bound of W1 (|E f_0 - E f_1| <= W1) ...
    assert mean_score_gap(y, p, sensitive_features=s) <= (
        wasserstein_demographic_parity(y, p, sensitive_features=s) + 1e-12
    )
    # ... and W1 on [0, 1] is at most the KS distance (integral of |F0-F1| over [0, 1])
    assert wasserstein_demographic_parity(y, p, sensitive_features=s) <= (
        ks_demographic_parity(y, p, sensitive_features=s) + 1e-12
    )
