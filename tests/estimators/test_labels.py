"""Label encoding: any two labels, learned ``classes_``, predictions in the original labels.

For every registered classification method: a fit on the labels ``"<=50K"`` / ``">50K"``
gives exactly the probabilities of the same fit on 0/1 labels (``">50K"`` sorts after
``"<=50K"``, so it is the positive class like 1), ``classes_`` holds the two strings, and
``predict`` returns them (the 0/1 fit's predictions mapped through ``classes_``).
"""

from __future__ import annotations

import numpy as np
import pytest
from _registry_estimators import method_names, tiny, toy_data

from otfair.estimators._torch_base import encode_binary_labels
from otfair_lab.experiments.methods import get_method

CLASSIFIERS = [m for m in method_names() if get_method(m).task == "classification"]


@pytest.mark.parametrize("name", CLASSIFIERS)
def test_string_labels_give_the_01_fit_with_original_labels(name):
    X, y, s = toy_data(name)
    labels = np.where(y == 1, ">50K", "<=50K")
    coded = tiny(name).fit(X, y, sensitive_features=s)
    named = tiny(name).fit(X, labels, sensitive_features=s)
    assert named.classes_.tolist() == ["<=50K", ">50K"]
    assert coded.classes_.tolist() == [0, 1]
    np.testing.assert_array_equal(named.predict_proba(X), coded.predict_proba(X))
    pred = named.predict(X)
    assert set(pred) <= {"<=50K", ">50K"}
    np.testing.assert_array_equal(pred, named.classes_[coded.predict(X).astype(int)])


def test_encode_binary_labels_against_numpy_unique():
    y = np.array([">50K", "<=50K", ">50K", ">50K"])
    classes, codes = encode_binary_labels(y)
    ref_classes, ref_codes = np.unique(y, return_inverse=True)
    np.testing.assert_array_equal(classes, ref_classes)
    np.testing.assert_array_equal(codes, ref_codes)
    assert encode_binary_labels([True, False])[0].tolist() == [False, True]
    with pytest.raises(ValueError, match="`y` contains only one class"):
        encode_binary_labels(np.zeros(5))
    with pytest.raises(ValueError, match="Only binary classification is supported"):
        encode_binary_labels([0, 1, 2])
    with pytest.raises(ValueError, match="Unknown label type"):
        encode_binary_labels([0.1, 0.7, 0.3])
    with pytest.raises(ValueError, match="target y is None"):
        encode_binary_labels(None)
