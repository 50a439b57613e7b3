"""The sweep audits' FTM additions: variable-defined subsets, subset std, 2x2 SFP tables.

Hand-built cases first (known subsets and predictions), then real German / Dutch runs
through ``run_single`` checked against independent computations (the raw data files,
fairlearn, scipy).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from fairlearn.metrics import demographic_parity_difference
from scipy.stats import wasserstein_distance
from sklearn.linear_model import LogisticRegression

from otfair.datasets import load_dataset
from otfair_lab.experiments import run_single
from otfair_lab.experiments._audits import (
    AUDIT_KEYS,
    SUBSET_VARIABLES,
    sfp_audit,
    variable_subset_audit,
)


def test_variable_subset_gaps_on_a_hand_built_case():
    # high half: rows 0-3; low half: rows 4-6 (group 1 only: no gap defined)
    high = np.array([True, True, True, True, False, False, False])
    s = np.array([0, 0, 1, 1, 1, 1, 1])
    y = np.array([1, 0, 1, 0, 1, 0, 1])
    p = np.array([0.9, 0.2, 0.6, 0.7, 0.1, 0.8, 0.4])
    out = variable_subset_audit(high, y, p, s)
    # hard predictions on the high half: S=0 -> 1, 0 (rate 0.5); S=1 -> 1, 1 (rate 1)
    assert out["subset_var_high_dp_gap"] == pytest.approx(0.5)
    fl = demographic_parity_difference(y[high], (p[high] >= 0.5), sensitive_features=s[high])
    assert out["subset_var_high_dp_gap"] == pytest.approx(fl)
    # scores: |(0.9 + 0.2) / 2 - (0.6 + 0.7) / 2| = 0.1
    assert out["subset_var_high_mean_score_gap"] == pytest.approx(0.1)
    # W1({0.2, 0.9}, {0.6, 0.7}): quantiles matched 0.2-0.6, 0.9-0.7 -> (0.4 + 0.2) / 2
    assert out["subset_var_high_wdp"] == pytest.approx(0.3)
    assert (out["subset_var_high_n"], out["subset_var_low_n"]) == (4, 3)
    for m in ("dp_gap", "mean_score_gap", "wdp"):
        assert np.isnan(out[f"subset_var_low_{m}"])


def test_subset_tables_split_the_raw_variables():
    german = SUBSET_VARIABLES["german"]
    ages = pd.DataFrame({"age": [20, 30, 33, 40, 50, 33, 61]})  # median 33
    np.testing.assert_array_equal(german.high_mask(ages), [0, 0, 0, 1, 1, 0, 1])
    dutch = SUBSET_VARIABLES["dutch"]
    # code "2" = married: the high half, whether married is the majority (indicator
    # median 1) or the minority (median 0)
    most = pd.DataFrame({"marital_status": ["1", "2", "2", "4", "2"]})
    np.testing.assert_array_equal(dutch.high_mask(most), [0, 1, 1, 0, 1])
    few = pd.DataFrame({"marital_status": ["1", "2", "1", "3"]})
    np.testing.assert_array_equal(dutch.high_mask(few), [0, 1, 0, 0])
    assert (german.high, german.low, dutch.high, dutch.low) == (
        "high age",
        "low age",
        "married",
        "not married",
    )


def test_sfp_cells_on_a_hand_built_case():
    # S=0: (ref, fair) = (1,1) (1,0) (1,0) (0,0); S=1: (0,1) (0,1) (1,1) (0,0) (1,0)
    ref = np.array([0.9, 0.8, 0.7, 0.1, 0.2, 0.3, 0.6, 0.4, 0.9])
    fair = np.array([0.6, 0.2, 0.4, 0.3, 0.7, 0.5, 0.8, 0.1, 0.3])
    s = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1])
    out = sfp_audit(ref, fair, SimpleNamespace(s_test=s))
    expected = {
        (0, 0, 0): 1,
        (0, 0, 1): 0,
        (0, 1, 0): 2,
        (0, 1, 1): 1,
        (1, 0, 0): 1,
        (1, 0, 1): 2,
        (1, 1, 0): 1,
        (1, 1, 1): 1,
    }
    for (g, a, b), count in expected.items():
        assert out[f"sfp_s{g}_unfair{a}_fair{b}"] == count, (g, a, b)
        assert out[f"sfp_s{g}_unfair{a}_fair{b}_share"] == pytest.approx(count / (4 + g))
    # undesirable flips: S=0 unfair 1 -> fair 0 (2) and S=1 unfair 0 -> fair 1 (2)
    assert out["sfp_flip_rate"] == pytest.approx(4 / 9)
    assert set(out) == set(AUDIT_KEYS["sfp"])


def _raw_german(data_dir):
    """German credit read straight from the UCI file (column 13 is age in years)."""
    return pd.read_csv(data_dir / "german" / "german.data", sep=" ", header=None)


def test_german_run_matches_independent_computation(plugin_path, data_dir):
    from otfair_lab.experiments.methods import get_method

    seed = 1
    res = run_single("german", "dummy-lr", seed=seed, epochs=2, audits=["ftm", "sfp"])
    split = load_dataset("german").split(test_size=0.2, random_state=seed)
    p = LogisticRegression(max_iter=500).fit(split.X_train, split.y_train)
    p = p.predict_proba(split.X_test)[:, 1]
    y, s = split.y_test, split.s_test
    # subsets: the raw ages of the test rows, split above their median
    age = _raw_german(data_dir)[12].to_numpy()[split.test_index]
    high = age > np.median(age)
    assert 0.3 < high.mean() < 0.6
    for side, mask in (("high", high), ("low", ~high)):
        assert res[f"subset_var_{side}_n"] == mask.sum()
        dp = demographic_parity_difference(y[mask], p[mask] >= 0.5, sensitive_features=s[mask])
        assert res[f"subset_var_{side}_dp_gap"] == pytest.approx(dp)
        # two lbfgs fits of the same problem (the run's and this one) agree to lbfgs's
        # tolerance, not to the last bit: with scikit-learn 1.9.1 this gap (a difference
        # of two group means of ~0.3) differed by 4.7e-8, so compare at abs=1e-6
        gap = abs(p[mask & (s == 0)].mean() - p[mask & (s == 1)].mean())
        assert res[f"subset_var_{side}_mean_score_gap"] == pytest.approx(gap, abs=1e-6)
        w1 = wasserstein_distance(p[mask & (s == 0)], p[mask & (s == 1)])
        assert res[f"subset_var_{side}_wdp"] == pytest.approx(w1, abs=1e-6)
    # random subsets: the std of the same 200 subsets as mean / max / q95
    from otfair.metrics import subset_fairness

    sub = subset_fairness(
        split.X_test.astype(np.float64), p, sensitive_features=s, n_subsets=200, random_state=seed
    )
    assert res["subset_dp_std"] == pytest.approx(np.std(sub.values)) and sub.values.size > 100
    assert res["subset_dp_mean"] == pytest.approx(sub.mean)
    # 2x2 tables against an independently fitted unfair reference (dummy-lr does not
    # take the sensitive input: the reference is the logistic regression `unfair`)
    ref = get_method("unfair").build(
        None, notion=None, random_state=seed, epochs=2, device="cpu", dataset="german"
    )
    r = ref.fit(split.X_train, split.y_train, sensitive_features=split.s_train)
    r = r.predict_proba(split.X_test)[:, 1] >= 0.5
    for g in (0, 1):
        for a in (0, 1):
            for b in (0, 1):
                count = int(np.sum((s == g) & (r == a) & ((p >= 0.5) == b)))
                assert res[f"sfp_s{g}_unfair{a}_fair{b}"] == count, (g, a, b)
                share = res[f"sfp_s{g}_unfair{a}_fair{b}_share"]
                assert share == pytest.approx(count / np.sum(s == g))


def test_german_ftm_two_epochs_adds_every_audit_key():
    res = run_single("german", "ftm", strength=0.5, seed=0, epochs=2, audits=["ftm", "sfp"])
    declared = {k for keys in AUDIT_KEYS.values() for k in keys}
    added = {k for k in res if k.startswith(("subset_", "sfp_")) or k in declared}
    assert added == declared  # ftm takes the sensitive input: consistency too
    assert all(np.isfinite(res[k]) for k in declared), {k: res[k] for k in declared}
    split = load_dataset("german").split(test_size=0.2, random_state=0)
    sizes = np.bincount(split.s_test)
    assert res["subset_var_high_n"] + res["subset_var_low_n"] == res["n_test"] == 200
    for g in (0, 1):
        cells = [f"sfp_s{g}_unfair{a}_fair{b}" for a in (0, 1) for b in (0, 1)]
        assert sum(res[c] for c in cells) == sizes[g]
        assert sum(res[f"{c}_share"] for c in cells) == pytest.approx(1.0)
    flips = res["sfp_s1_unfair0_fair1"] + res["sfp_s0_unfair1_fair0"]
    assert res["sfp_flip_rate"] == pytest.approx(flips / 200)
    assert 0 <= res["subset_dp_std"] <= res["subset_dp_max"]


def test_no_variable_subsets_where_the_variable_is_not_an_input(plugin_path):
    # German with sensitive="age" drops the age column; synthetic has no table entry
    res = run_single(
        "german", "dummy-lr", seed=0, audits=["ftm"], dataset_options={"sensitive": "age"}
    )
    assert not any(k.startswith("subset_var_") for k in res) and "subset_dp_std" in res
    res = run_single("synthetic", "dummy-lr", seed=0, audits=["ftm"])
    assert not any(k.startswith("subset_var_") for k in res)


def test_dutch_married_half_counts_the_married_test_rows(plugin_path, data_dir):
    res = run_single("dutch", "dummy-lr", seed=0, max_train_rows=2000, audits=["ftm"])
    split = load_dataset("dutch").split(test_size=0.2, random_state=0)
    raw = pd.read_csv(data_dir / "dutch" / "dutch.csv")
    married = raw["marital_status"].to_numpy()[split.test_index] == 2
    assert res["subset_var_high_n"] == married.sum() and 0.5 < married.mean() < 0.7
    assert res["subset_var_low_n"] == len(split.y_test) - married.sum()
    assert np.isfinite(res["subset_var_high_dp_gap"]) and np.isfinite(res["subset_var_low_wdp"])
