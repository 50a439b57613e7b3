"""Violations of the linear fairness notions PDP and PEO (OTF paper §5.2).

The OTF paper writes probabilistic demographic parity (PDP) and probabilistic equalized
odds (PEO) as zero-covariance constraints between the score :math:`h(X)` and each
sensitive column :math:`S_k`; the violation is reported as the largest absolute *Pearson
correlation*, so that it lies in [0, 1] and cannot be lowered by shrinking the score
variance. One-hot (categorical) and continuous sensitive columns are both allowed.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from otfair.metrics._checks import validate_metric_input
from otfair.metrics._degenerate import UndefinedMetricWarning
from otfair.metrics._docs import fill_doc

_RTOL = 1e-12  # relative spread below which a column counts as constant


def abs_pearson_columns(score: np.ndarray, sens: np.ndarray) -> np.ndarray:
    r"""Absolute Pearson correlation between ``score`` and every column of ``sens``.

    A column (or a score vector) with zero variance has zero covariance with anything, so
    its constraint is satisfied exactly: its correlation is reported as 0, not NaN.
    """
    sc = score - score.mean()
    sv = sens - sens.mean(axis=0)
    out = np.zeros(sens.shape[1])
    if np.std(sc) <= _RTOL * max(1.0, float(np.abs(score).max())):
        return out
    scale = np.maximum(1.0, np.abs(sens).max(axis=0))
    defined = np.std(sv, axis=0) > _RTOL * scale
    cov = sc @ sv[:, defined]
    norm = np.sqrt(np.sum(sc**2) * np.sum(sv[:, defined] ** 2, axis=0))
    out[defined] = np.abs(cov) / norm
    return np.minimum(out, 1.0)


@fill_doc
def pdp_violation(
    y_true: Any, y_score: Any, *, sensitive_features: Any, pos_label: Any = None
) -> float:
    r"""Violation of probabilistic demographic parity (PDP), OTF paper eq. (1) and §5.2.

    .. math::

        \mathrm{PDP} = \max_k \bigl|\rho\bigl(h(X), S_k\bigr)\bigr|,

    the largest absolute Pearson correlation between the scores and each sensitive
    column. Constant columns contribute 0.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Targets (only the length is checked).
    y_score : array-like of shape (n,)
        Scores or predictions (any real values).
    sensitive_features : array-like of shape (n,) or (n, k)
        Sensitive columns, read as :func:`fairness_report` reads them
        (:func:`otfair.metrics.split_sensitive`): a categorical column (strings, or codes
        of at most 10 values) one-hot encoded, a continuous one as it is; they may be
        mixed.
    {pos_label}

    Returns
    -------
    float
        The largest absolute correlation with a sensitive column, in [0, 1].

    {examples_scores}
    >>> round(pdp_violation(y, p, sensitive_features=s), 4)  # |Pearson(p, s)|
    0.5477
    """
    _, score, _, _, sens = validate_metric_input(
        y_true, y_score, sensitive_features, pos_label, labels="length", groups="columns"
    )
    return float(abs_pearson_columns(score, sens).max())


@fill_doc
def peo_violation(
    y_true: Any, y_score: Any, *, sensitive_features: Any, pos_label: Any = None
) -> float:
    r"""Violation of probabilistic equalized odds (PEO), OTF paper eq. (2) and §5.2.

    .. math::

        \mathrm{PEO} = \max_{l \in \{0, 1\}} \max_k
        \bigl|\rho\bigl(h(X), S_k \mid Y = l\bigr)\bigr|,

    the PDP violation computed separately among the samples of each label.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary labels in {0, 1}.
    y_score : array-like of shape (n,)
        Scores.
    sensitive_features : array-like of shape (n,) or (n, k)
        Sensitive columns (see :func:`pdp_violation`).
    {pos_label}

    Returns
    -------
    float
        The largest label-conditional absolute correlation, in [0, 1].

    {examples_scores}
    >>> round(peo_violation(y, p, sensitive_features=s), 4)  # the larger of the two label cells
    0.8018
    """
    y, score, _, _, sens = validate_metric_input(
        y_true, y_score, sensitive_features, pos_label, groups="columns"
    )
    value = peo_columns(y, score, sens)
    if np.isnan(value):
        raise ValueError("`y_true` needs at least two samples of some label for PEO.")
    thin = [label for label in (0, 1) if np.sum(y == label) < 2]
    if thin:  # the max runs over the other label's cell only
        warnings.warn(
            f"peo_violation: the label cell y_true = {thin[0]} has "
            f"{int(np.sum(y == thin[0]))} sample(s), too few for a correlation; the value "
            "is that of the other cell alone.",
            UndefinedMetricWarning,
            stacklevel=2,
        )
    return value


def peo_columns(y: np.ndarray, score: np.ndarray, sens: np.ndarray) -> float:
    """Return the PEO of validated arrays (NaN when no label has two samples)."""
    values = [
        abs_pearson_columns(score[y == label], sens[y == label]).max()
        for label in (0, 1)
        if np.sum(y == label) > 1
    ]
    return float(max(values)) if values else float("nan")
