"""Every registered method takes features in any memory layout numpy and pandas give.

``torch.as_tensor`` shares a numpy array's memory, so features that reach it must be C
ordered (torch refuses negative strides: ``X[::-1]``, ``frame.iloc[::-1]``) and
writable (torch warns on a read-only array, and pandas 3 hands out read-only arrays for
every frame). ``TORCH_READY`` (``otfair/utils/_torch.py``) has the input checks copy
where an array is neither; these fits must equal the fits on a plain copy.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from _registry_estimators import method_names, tiny, toy_data


def _fitted(name, X, y, s):
    return tiny(name, random_state=0).fit(X, y, sensitive_features=s)


def _score(est, X):
    method = "predict_proba" if hasattr(est, "predict_proba") else "predict"
    return np.asarray(getattr(est, method)(X), dtype=float)


@pytest.mark.parametrize("name", method_names())
def test_reversed_and_read_only_features_fit_as_a_copy(name):
    X, y, s = toy_data(name)
    X = np.asarray(X, dtype=np.float32)  # the loaders' dtype: no conversion copies it
    flipped = X[::-1]
    assert flipped.strides[0] < 0
    read_only = X.copy()
    read_only.setflags(write=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reference = _fitted(name, flipped.copy(), y[::-1], s[::-1])
        reversed_fit = _fitted(name, flipped, y[::-1], s[::-1])
        read_only_fit = _fitted(name, read_only, y, s)
        scores = [_score(reversed_fit, X), _score(reversed_fit, flipped)]
        read_only_scores = _score(read_only_fit, read_only)
    not_writable = [str(w.message) for w in caught if "not writable" in str(w.message)]
    assert not not_writable, not_writable[0]
    np.testing.assert_array_equal(scores[0], _score(reference, X))
    np.testing.assert_array_equal(scores[1], _score(reversed_fit, flipped.copy()))
    np.testing.assert_array_equal(read_only_scores, _score(_fitted(name, X, y, s), X))


def test_a_frames_rows_in_reverse_order_predict_like_the_array():
    from otfair.estimators import FairClassifier

    X, y, s = toy_data("otf")
    frame = pd.DataFrame(
        np.asarray(X, dtype=np.float32), columns=[f"x{j}" for j in range(X.shape[1])]
    )
    est = FairClassifier("otf", 0.3, random_state=0).fit(frame, y, sensitive_features=s)
    np.testing.assert_array_equal(
        est.predict_proba(frame.iloc[::-1]), est.predict_proba(frame)[::-1]
    )


@pytest.mark.parametrize("name", method_names())
def test_a_frames_columns_are_checked_by_name(name):
    """scikit-learn's rule: a frame fitted with names predicts only on those columns in
    that order (six estimators took reordered columns and predicted garbage)."""
    X, y, s = toy_data(name)
    columns = [f"x{j}" for j in range(X.shape[1])]
    frame = pd.DataFrame(np.asarray(X, dtype=np.float32), columns=columns)
    est = _fitted(name, frame, y, s)
    assert list(est.feature_names_in_) == columns
    reordered = frame[columns[::-1]]
    with pytest.raises(ValueError, match="feature names should match"):
        _score(est, reordered)
