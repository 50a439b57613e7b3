"""The shared parameter checks: type errors vs range errors, messages name the argument."""

import numpy as np
import pytest

from otfair.utils import check_features, check_positive_int, check_scalar


def test_check_positive_int():
    assert check_positive_int(np.int64(3), "epochs") == 3
    with pytest.raises(ValueError, match="`epochs` must be a positive integer"):
        check_positive_int(0, "epochs")
    for bad in (True, 2.5, "3"):
        with pytest.raises(TypeError, match="`epochs`"):
            check_positive_int(bad, "epochs")
    with pytest.raises(ValueError, match="integer >= 2"):
        check_positive_int(1, "n", minimum=2)


def test_check_scalar_bounds():
    assert check_scalar(0, "lam", minimum=0.0) == 0.0
    with pytest.raises(ValueError, match="`lr` must be a finite number > 0"):
        check_scalar(0.0, "lr", minimum=0.0, strict=True)
    with pytest.raises(ValueError, match="<= 1"):
        check_scalar(1.5, "lam", minimum=0.0, maximum=1.0)
    with pytest.raises(ValueError, match="`x`"):
        check_scalar(float("nan"), "x")
    with pytest.raises(TypeError, match="`x` must be a number"):
        check_scalar(None, "x")


def test_check_features():
    X = check_features([[1, 2], [3, 4]])
    assert X.dtype == np.float32 and X.shape == (2, 2)
    with pytest.raises(ValueError, match="2-D"):
        check_features([1, 2])
    with pytest.raises(ValueError, match="NaN"):
        check_features([[np.nan, 1.0]])
    with pytest.raises(ValueError, match="3 were expected"):
        check_features([[1.0, 2.0]], n_features=3)
