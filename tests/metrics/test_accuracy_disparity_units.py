"""The accuracy-disparity audit does not depend on the units of ``y``.

Labels on a grid (rates in steps of 0.01) fall on the equal-width bin edges; float
rounding put them on either side depending on the units, and the label and
representation terms moved with them. Scaling ``y`` and the predictions by ``k`` must
scale every squared-error term by ``k**2`` and leave the label distances unchanged.
"""

from __future__ import annotations

import numpy as np
import pytest

from otfair.metrics import accuracy_disparity_audit


@pytest.mark.parametrize("k", [100.0, 1e-6, 1e6, 3.0])
def test_the_audit_scales_with_the_units_of_y(k):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 101, 400) / 100  # a grid: many labels on the edges of 10 bins
    s = rng.integers(0, 2, 400)
    pred = y + rng.normal(0, 0.1, 400) * (1 + s)
    base = accuracy_disparity_audit(y, pred, sensitive_features=s)
    scaled = accuracy_disparity_audit(y * k, pred * k, sensitive_features=s)
    for term in ("label_term", "representation_term", "error_gap"):
        assert scaled[term] / k**2 == pytest.approx(base[term], rel=1e-9, abs=1e-15)
    assert scaled["tv_labels"] == pytest.approx(base["tv_labels"], rel=1e-12)


def test_a_label_on_an_edge_falls_in_the_bin_above_it():
    y = np.array([0.0, 0.1, 0.2, 0.3, 1.0, 0.7, 0.6, 0.4])
    s = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    audit = accuracy_disparity_audit(y, y, sensitive_features=s)  # 10 bins of width 0.1
    # by hand: group 0 has one label in each of bins 0-3, group 1 in bins 4, 6, 7 and 9
    # (1.0, the maximum, in the last, closed bin): no shared bin, total variation 1
    assert audit["tv_labels"] == pytest.approx(1.0)
