import numpy as np
import pandas as pd
import pytest

from otfair import utils


def test_finite_1d_flattens_column_and_rejects_nan():
    assert utils.check_finite_1d([[1.0], [2.0]], "x").shape == (2,)
    with pytest.raises(ValueError, match="`x` contains 1 NaN"):
        utils.check_finite_1d([1.0, np.nan], "x")
    with pytest.raises(ValueError, match="`x` must be 1-D"):
        utils.check_finite_1d(np.zeros((2, 2)), "x")
    with pytest.raises(ValueError, match="`x` is empty"):
        utils.check_finite_1d([], "x")


def test_binary_labels():
    np.testing.assert_array_equal(utils.check_binary_labels([True, False, 1.0]), [1, 0, 1])
    with pytest.raises(ValueError, match=r"`y_true` must contain binary labels.*\[2\.0\]"):
        utils.check_binary_labels([0, 1, 2])


def test_probabilities_range():
    with pytest.raises(ValueError, match="`y_score` must be probabilities"):
        utils.check_probabilities([0.2, 1.5])


def test_consistent_length():
    with pytest.raises(ValueError, match="`a` has 2, `b` has 3"):
        utils.check_consistent_length(a=[1, 2], b=[1, 2, 3])


def test_encode_groups_single_and_intersectional():
    codes, groups = utils.encode_groups(["m", "f", "m"])
    assert groups.tolist() == ["f", "m"]
    np.testing.assert_array_equal(codes, [1, 0, 1])
    df = pd.DataFrame({"sex": [0, 0, 1, 1], "race": [0, 1, 0, 1]})
    codes, groups = utils.encode_groups(df)
    assert len(groups) == 4 and len(set(codes)) == 4
    with pytest.raises(ValueError, match="at least 2 groups"):
        utils.encode_groups([1, 1, 1])
    with pytest.raises(ValueError, match="missing values"):
        utils.encode_groups(np.array(["a", None], dtype=object))


@pytest.mark.parametrize(
    "values",
    [
        pd.Series(["m", "f", np.nan, "m"]),  # a text column with a missing value
        pd.Series(["m", "f", pd.NA, "m"], dtype="string"),
        np.array(["m", "f", None, "m"], dtype=object),
        pd.DataFrame({"sex": ["m", "f", np.nan, "m"], "race": ["a", "b", "a", "b"]}),
    ],
)
def test_a_missing_text_group_is_called_missing_not_mixed_types(values):
    with pytest.raises(ValueError, match="contains missing values"):
        utils.encode_groups(values, "sensitive_features")


def test_sensitive_features_numeric_2d():
    assert utils.check_sensitive_features([0, 1, 1]).shape == (3, 1)
    with pytest.raises(ValueError, match="one-hot encode"):
        utils.check_sensitive_features(["a", "b"])
    with pytest.raises(ValueError, match="3 samples expected"):
        utils.check_sensitive_features([0, 1], n_samples=3)
