"""WDP, KSDP and TVDP against scipy and hand-computed cases."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from scipy.stats import ks_2samp, wasserstein_distance

from otfair.metrics import (
    ks_demographic_parity,
    tv_demographic_parity,
    wasserstein_demographic_parity,
)

#: hand-computed cases use groups of a few rows: the small-group warning is expected there
#: (tests/metrics/test_small_groups_pos_label.py checks it)
pytestmark = pytest.mark.filterwarnings("ignore:.*group.s. .* have fewer than:UserWarning")


@pytest.mark.parametrize("sizes", [(50, 50), (37, 91), (1, 5)])
def test_wdp_and_ksdp_match_scipy_two_groups(sizes):
    rng = np.random.default_rng(sum(sizes))
    u = rng.beta(2, 5, sizes[0])
    v = rng.beta(3, 3, sizes[1])
    p = np.concatenate([u, v])
    s = np.r_[np.zeros(sizes[0]), np.ones(sizes[1])]
    y = np.zeros_like(p)
    assert wasserstein_demographic_parity(y, p, sensitive_features=s) == pytest.approx(
        wasserstein_distance(u, v), rel=1e-12, abs=1e-14
    )
    assert ks_demographic_parity(y, p, sensitive_features=s) == pytest.approx(
        ks_2samp(u, v).statistic
    )


def test_ties_and_rounded_scores_match_scipy():
    rng = np.random.default_rng(3)
    p = np.round(rng.random(400), 1)  # many ties
    s = rng.integers(0, 2, 400)
    y = np.zeros(400)
    assert wasserstein_demographic_parity(y, p, sensitive_features=s) == pytest.approx(
        wasserstein_distance(p[s == 0], p[s == 1])
    )
    assert ks_demographic_parity(y, p, sensitive_features=s) == pytest.approx(
        ks_2samp(p[s == 0], p[s == 1]).statistic
    )


def test_multigroup_is_max_over_pairs(random_panel):
    p, race = random_panel.score, random_panel.sensitive["race"].to_numpy()
    pairs = list(combinations(np.unique(race), 2))
    w = max(wasserstein_distance(p[race == a], p[race == b]) for a, b in pairs)
    k = max(ks_2samp(p[race == a], p[race == b]).statistic for a, b in pairs)
    y = random_panel.y
    assert wasserstein_demographic_parity(y, p, sensitive_features=race) == pytest.approx(w)
    assert ks_demographic_parity(y, p, sensitive_features=race) == pytest.approx(k)


def test_adult_wdp_matches_scipy(adult_panel):
    p, s = adult_panel.score, adult_panel.sensitive["sex"].to_numpy()
    got = wasserstein_demographic_parity(adult_panel.y, p, sensitive_features=s)
    assert got == pytest.approx(wasserstein_distance(p[s == 0], p[s == 1]))


def test_hand_computed_cases():
    # point masses at 0.2 and 0.7: W1 = 0.5, KS = 1, TV = 1
    p = [0.2, 0.2, 0.7, 0.7]
    s = [0, 0, 1, 1]
    y = [0, 1, 0, 1]
    assert wasserstein_demographic_parity(y, p, sensitive_features=s) == pytest.approx(0.5)
    assert ks_demographic_parity(y, p, sensitive_features=s) == pytest.approx(1.0)
    assert tv_demographic_parity(y, p, sensitive_features=s) == pytest.approx(1.0)
    # g0 = {0.05, 0.55}, g1 = {0.06, 0.95}; 2 bins [0, .5), [.5, 1]:
    # g0 -> (1/2, 1/2), g1 -> (1/2, 1/2): TV 0 on 2 bins; on 100 bins
    # 0.05 and 0.06 fall in different bins, 0.55 and 0.95 too -> TV = 1
    p = [0.05, 0.55, 0.06, 0.95]
    assert tv_demographic_parity(y, p, sensitive_features=s, bins=2) == pytest.approx(0.0)
    assert tv_demographic_parity(y, p, sensitive_features=s) == pytest.approx(1.0)
    # score 1.0 goes into the last (closed) bin
    p = [1.0, 0.0, 1.0, 0.0]
    assert tv_demographic_parity(y, p, sensitive_features=s) == pytest.approx(0.0)


def test_tvdp_matches_histogram_formula(random_panel):
    p, s = random_panel.score, random_panel.sensitive["sex"].to_numpy()
    edges = np.linspace(0, 1, 21)
    h0 = np.histogram(p[s == 0], edges)[0] / np.sum(s == 0)
    h1 = np.histogram(p[s == 1], edges)[0] / np.sum(s == 1)
    got = tv_demographic_parity(random_panel.y, p, sensitive_features=s, bins=20)
    assert got == pytest.approx(0.5 * np.abs(h0 - h1).sum())


def test_tvdp_range_and_bins_errors():
    with pytest.raises(ValueError, match="score_range"):
        tv_demographic_parity([0, 1], [0.5, 1.5], sensitive_features=[0, 1])
    with pytest.raises(ValueError, match="bins"):
        tv_demographic_parity([0, 1], [0.5, 0.5], sensitive_features=[0, 1], bins=0)
    got = tv_demographic_parity(
        [0, 1], [0.5, 1.5], sensitive_features=[0, 1], score_range=(0.0, 2.0)
    )
    assert got == pytest.approx(1.0)
