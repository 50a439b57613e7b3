"""Edges of the sensitive attribute answered in otfair's words (issue 48, item 7).

A continuous attribute given to OTRepair, a one-row group in the barycenter
post-processors' stratified calibration split, and group values that mix text with
numbers (``[1, "1"]``) each raise one ``ValueError`` that names ``sensitive_features``
and the fix, instead of collapsing the features silently or surfacing scikit-learn's
"classes in y" and numpy's ``'<' not supported`` messages.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression, LogisticRegression

from otfair.estimators import (
    FairClassifier,
    FairPCA,
    OTRepair,
    WassersteinBarycenterClassifier,
    WassersteinBarycenterRegressor,
)
from otfair.metrics import demographic_parity_gap
from otfair.utils import encode_groups

N = 200


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N, 3))
    y = (X[:, 0] + rng.normal(size=N) > 0).astype(int)
    return X, y, rng


def test_ot_repair_refuses_a_continuous_attribute(data):
    X, _, rng = data
    with pytest.raises(ValueError, match="`sensitive_features` looks continuous") as info:
        OTRepair().fit(X, sensitive_features=rng.normal(size=N))
    assert f"{N} distinct values" in str(info.value) and "bin" in str(info.value)


def test_fair_pca_refuses_a_continuous_attribute_and_keeps_integer_codes():
    # one group-mean direction per value: 300 "groups" used to fit without a word
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 40))
    with pytest.raises(ValueError, match="`sensitive_features` looks continuous") as info:
        FairPCA(n_components=5).fit(X, sensitive_features=rng.normal(size=300))
    assert "300 distinct values" in str(info.value) and "FairPCA" in str(info.value)
    # integer group codes, every value on several rows, stay groups (here 3 of them)
    fitted = FairPCA(n_components=5).fit(X, sensitive_features=np.arange(300) % 3)
    assert len(fitted.groups_) == 3 and fitted.transform(X).shape == (300, 5)


def test_ot_repair_names_a_one_row_group(data):
    X, _, _ = data
    s = np.r_[np.zeros(N // 2), np.ones(N // 2 - 1), 2]
    with pytest.raises(ValueError, match=r"group\(s\) 2.0 \(n=1\) have fewer than 2 rows"):
        OTRepair().fit(X, sensitive_features=s)


def test_ot_repair_still_takes_many_discrete_groups(data):
    X, _, _ = data
    s = np.arange(N) % 20  # 20 integer-coded groups of 10 rows: discrete, not refused
    repaired = OTRepair().fit_transform(X, sensitive_features=s)
    assert repaired.shape == X.shape
    means = [repaired[s == g, 0].mean() for g in range(20)]
    assert np.ptp(means) < np.ptp([X[s == g, 0].mean() for g in range(20)])


@pytest.mark.parametrize(
    ("make", "y_of"),
    [
        (lambda: WassersteinBarycenterClassifier(LogisticRegression(), random_state=0), int),
        (lambda: WassersteinBarycenterRegressor(LinearRegression(), random_state=0), float),
    ],
)
def test_barycenter_post_processors_speak_of_groups(data, make, y_of):
    X, y, _ = data
    s = np.array(["a"] * (N // 2) + ["b"] * (N // 2), dtype=object)
    s[0] = "c"
    with pytest.raises(ValueError) as info:
        make().fit(X, y.astype(y_of), sensitive_features=s)
    message = str(info.value)
    assert "`sensitive_features` group(s) c (n=1) have fewer than 2 rows" in message
    assert "class" not in message


@pytest.mark.parametrize(
    "s",
    [
        [1, "1"] * (N // 2),  # numpy would make both the string '1': one group
        pd.Series([1, "1"] * (N // 2)),  # an object column: numpy's sort raises TypeError
        np.array([1, "1", 2.5, "x"] * (N // 4), dtype=object),
    ],
    ids=["list", "series", "object-array"],
)
def test_mixed_value_types_are_one_error_naming_the_argument(data, s):
    X, y, _ = data
    calls = [
        lambda: encode_groups(s),
        lambda: demographic_parity_gap(y, y * 0.5, sensitive_features=s),
        lambda: OTRepair().fit(X, sensitive_features=s),
        lambda: FairClassifier(penalty="otf", strength=0.1, epochs=1).fit(
            X, y, sensitive_features=s
        ),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=r"`sensitive_features` mixes value types \("):
            call()


def test_columns_of_different_types_are_not_mixed(data):
    # two attributes, one numeric and one text: each column has one type
    _, y, _ = data
    s = np.array([[i % 2, "xy"[(i // 2) % 2]] for i in range(N)], dtype=object)
    codes, groups = encode_groups(s)
    assert len(groups) == 4 and np.bincount(codes).tolist() == [N // 4] * 4
    assert np.isfinite(demographic_parity_gap(y, y * 0.5, sensitive_features=s))
