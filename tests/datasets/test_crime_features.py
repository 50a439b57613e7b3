"""Communities and Crime's ``features`` option (AdapFair's "6 selected features")."""

import numpy as np
import pytest

from otfair.datasets import load_dataset
from otfair.datasets._crime import ADAPFAIR_FEATURES


def test_top_k_by_absolute_correlation_recomputed_with_numpy():
    full = load_dataset("communities_crime", task="regression", sensitive="minority")
    X, y = full.data.to_numpy(dtype=np.float64), full.target
    # an independent computation of |Pearson(column, target)| (numpy's corrcoef)
    corr = np.array([abs(np.corrcoef(X[:, j], y)[0, 1]) for j in range(X.shape[1])])
    expected = [full.data.columns[j] for j in np.argsort(-corr, kind="stable")[:6]]
    assert tuple(expected) == ADAPFAIR_FEATURES
    six = load_dataset(
        "communities_crime", task="classification", sensitive="minority", features=6
    )
    assert tuple(six.data.columns) == ADAPFAIR_FEATURES
    assert "6 most correlated" in six.description
    # rows, target and sensitive attribute are those of the full dataset
    ref = load_dataset("communities_crime", task="classification", sensitive="minority")
    np.testing.assert_array_equal(six.target, ref.target)
    np.testing.assert_array_equal(six.sensitive.to_numpy(), ref.sensitive.to_numpy())
    np.testing.assert_array_equal(six.data.to_numpy(), ref.data[list(ADAPFAIR_FEATURES)])
    split = six.split(random_state=0)
    assert split.X_train.shape[1] == 6


def test_named_subset_and_errors():
    named = load_dataset("communities_crime", features=["PctIlleg", "medIncome"])
    assert list(named.data.columns) == ["PctIlleg", "medIncome"]
    with pytest.raises(ValueError, match="`features` must name"):
        load_dataset("communities_crime", features=["PctIlleg", "racePctWhite"])
    with pytest.raises(ValueError, match="`features` must be between 1 and 96"):
        load_dataset("communities_crime", features=0)
    with pytest.raises(TypeError, match="`features`"):
        load_dataset("communities_crime", features="PctIlleg")
