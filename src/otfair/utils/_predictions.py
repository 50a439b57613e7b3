"""Scores or predicted labels: the one rule of every metric's ``y_score``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from otfair.utils._validation import (
    _column,
    _is_numeric_array,
    _to_numpy,
    check_finite_1d,
    check_probabilities,
)

__all__ = ["check_predictions"]


def check_predictions(
    y_pred: Any,
    name: str = "y_score",
    *,
    y_true: Any = None,
    pos_label: Any = None,
    probabilities: bool = True,
) -> np.ndarray:
    """Return scores as a float array; predicted labels are mapped with ``pos_label``.

    A metric's ``y_score`` is a score of the positive class, or predicted labels (what
    ``pipe.predict`` returns, e.g. ``"<=50K"``/``">50K"``). Predicted labels are mapped
    as :func:`check_binary_labels` maps ``y_true``: 1 where ``y_pred == pos_label``, else
    0. They are recognised when ``pos_label`` is given and every value of ``y_pred`` is a
    label of ``y_true`` (or ``pos_label``), and ``y_pred`` is not numeric (strings), has
    a value outside [0, 1] (labels ``1``/``2``), or is an integer or boolean array of 0s
    and 1s while the positive label is not 1 (``predict``'s labels under
    ``pos_label=0``); other numbers in [0, 1], floats 0.0/1.0 included, are scores of the
    positive class.

    Parameters
    ----------
    y_pred : array-like of shape (n,)
        Scores, or predicted labels.
    name : str, default="y_score"
        Argument name used in error messages.
    y_true : array-like of shape (n,), optional
        The true labels, whose values the predicted labels must take.
    pos_label : int, float, bool or str, optional
        The positive class; without it, non-numeric predictions raise.
    probabilities : bool, default=True
        Whether scores must lie in [0, 1].

    Returns
    -------
    numpy.ndarray of float64, shape (n,)

    Raises
    ------
    ValueError
        Non-numeric predictions without ``pos_label``, or with a value that is not a
        label of ``y_true``; scores that :func:`check_finite_1d` (and
        :func:`check_probabilities`) reject.

    Examples
    --------
    >>> check_predictions(["yes", "no", "no"], y_true=["no", "yes", "no"], pos_label="yes")
    array([1., 0., 0.])
    >>> check_predictions([0.2, 0.9], pos_label="yes")
    array([0.2, 0.9])
    """
    arr = _column(_to_numpy(y_pred, name))
    if _holds_predicted_labels(arr, name, pos_label):
        mapped = _map_predicted_labels(arr, name, y_true, pos_label)
        if mapped is not None:
            return mapped
    if probabilities:
        return check_probabilities(arr, name)
    return check_finite_1d(arr, name)


def _holds_predicted_labels(arr: np.ndarray, name: str, pos_label: Any) -> bool:
    """Whether ``arr`` holds predicted labels rather than scores (:func:`check_predictions`).

    Non-numeric values are labels with ``pos_label``; without it they raise, unless
    they are numbers written as text (``"0.25"``), which stay scores. Numbers are labels
    only with ``pos_label`` and a finite value outside [0, 1] (labels ``1``/``2``).
    """
    if arr.ndim != 1 or arr.size == 0:
        return False
    if not _is_numeric_array(arr):
        if pos_label is not None:
            return True
        try:  # numbers written as text ("0.25") stay scores, as before
            arr.astype(np.float64)
        except (TypeError, ValueError):
            shown = pd.unique(arr)[:5].tolist()
            raise ValueError(
                f"`{name}` holds non-numeric values {shown} (predicted labels?): pass "
                "`pos_label` (the value of the positive class) to map them to 0/1 as "
                "`y_true` is mapped."
            ) from None
        return False
    if pos_label is None:
        return False
    values = arr.astype(np.float64)
    if not np.all(np.isfinite(values)):
        return False
    # integer or boolean 0/1 under another positive label (0, 2, False): ``predict``'s
    # labels, which as scores would flip (1 read as positive); float 0.0/1.0 stays a
    # score (a saturated ``predict_proba`` column)
    integral = arr.dtype.kind in "biu"
    hard = integral and bool(np.all((values == 0) | (values == 1))) and not _is_one(pos_label)
    return hard or values.min() < 0 or values.max() > 1


def _is_one(value: Any) -> bool:
    """Whether a ``pos_label`` is the number 1 (``1``, ``1.0``, ``True``)."""
    try:
        return float(value) == 1.0
    except (TypeError, ValueError):
        return False


def _map_predicted_labels(
    arr: np.ndarray, name: str, y_true: Any, pos_label: Any
) -> np.ndarray | None:
    """0/1 floats, 1 where ``arr == pos_label``; ``None`` for numbers that are not labels.

    Every value must be ``pos_label`` or a label of ``y_true``; text that is not raises.
    """
    if bool(np.any(pd.isna(arr))):
        raise ValueError(f"`{name}` contains missing values (None/NaN).")
    known = [pos_label]
    if y_true is not None:
        known += pd.unique(_to_numpy(y_true, "y_true").ravel()).tolist()
    stray = [v for v in pd.unique(arr).tolist() if v not in known]
    if not stray:
        return np.asarray(arr == pos_label, dtype=np.float64)
    if not _is_numeric_array(arr):
        raise ValueError(
            f"`{name}` holds predicted labels {stray[:5]} that are not labels of "
            f"`y_true` ({pd.unique(np.asarray(known, dtype=object)).tolist()})."
        )
    return None
