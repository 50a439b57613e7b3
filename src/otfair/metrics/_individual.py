r"""Individual-level audit measures of the FTM paper (§5.4.2 and App. E.3).

- :func:`consistency`: the fraction of predictions that do not change when only the
  sensitive input is flipped (Yurochkin et al.; FTM Table 4). Needs a model that sees
  the sensitive attribute as an input (``sensitive_as_input``).
- :func:`self_fulfilling_prophecy`: how a group-fair model reorders individuals relative
  to a reference (unfair, assumed accurate) model: Spearman rank correlation within each
  group and the counts of undesirable flips (FTM Tables 10 and 11).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import rankdata

from otfair.metrics._checks import (
    check_lengths,
    check_matrix,
    check_threshold,
    encode_two_groups,
)
from otfair.metrics._constraints import THRESHOLD
from otfair.utils import check_finite_1d, check_probabilities, validate_params


def flip_columns(
    x: np.ndarray, columns: Sequence[int], levels: tuple[float, float] | None = None
) -> np.ndarray:
    r"""Return a copy of ``x`` with each binary column swapped: :math:`x' = a + b - x`.

    ``a, b`` are the column's two distinct values (or ``levels`` when given, which also
    allows columns where only one level occurs). Works for 0/1 and standardized coding.
    """
    out = x.copy()
    for j in columns:
        col = x[:, j]
        if levels is not None:
            a, b = (float(v) for v in levels)
            if not np.all(np.isin(col, (a, b))):
                raise ValueError(f"Sensitive column {j} has values outside `levels` {levels}.")
        else:
            vals = np.unique(col)
            if vals.size != 2:
                raise ValueError(
                    f"Sensitive column {j} of `X` must take exactly two values to be flipped; "
                    f"found {vals.size} ({vals[:5].tolist()}). Pass `levels=(a, b)`."
                )
            a, b = float(vals[0]), float(vals[1])
        out[:, j] = a + b - col
    return out


def _labels(out: Any, n: int, threshold: float | None, name: str) -> np.ndarray:
    arr = check_finite_1d(out, name)
    if arr.size != n:
        raise ValueError(f"`predict` returned {arr.size} values for {n} rows of `X`.")
    return (arr >= threshold).astype(np.int64) if threshold is not None else arr


@validate_params({"threshold": [*THRESHOLD, None]})
def consistency(
    predict: Callable[[np.ndarray], Any],
    X: Any,
    *,
    sensitive_columns: int | Sequence[int],
    threshold: float | None = None,
    levels: tuple[float, float] | None = None,
) -> float:
    r"""Consistency: share of predictions unchanged when the sensitive input is flipped.

    .. math::

        \mathrm{Con} = \frac1n \sum_{i=1}^n 1\bigl[\hat y(x_i) = \hat y(x_i')\bigr],

    where :math:`x_i'` equals :math:`x_i` with every sensitive column swapped between its
    two values (FTM §5.4.2, Table 4, after Yurochkin et al. 2020).

    Parameters
    ----------
    predict : callable
        ``predict(X) -> array of shape (n,)``: hard labels, or scores when
        ``threshold`` is given. Receives a float numpy array.
    X : array-like of shape (n, d)
        Inputs, including the sensitive column(s).
    sensitive_columns : int or sequence of int
        Column indices of the sensitive input (several for a one-hot coded binary
        attribute: all are flipped together).
    threshold : float or None, default=None
        When given, outputs are turned into labels :math:`1[\text{out} \ge \tau]` before
        comparing; otherwise outputs are compared as they are.
    levels : (float, float) or None, default=None
        The two values of the sensitive columns; inferred per column when None.

    Returns
    -------
    float
        In [0, 1]; 1 means the sensitive input never changes a prediction.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 1.0], [1.0, -1.0], [0.0, -0.2]])  # column 0: the sensitive one
    >>> consistency(lambda Z: (Z[:, 1] > 0).astype(int), X, sensitive_columns=0)  # ignores it
    1.0
    >>> consistency(lambda Z: (Z.sum(axis=1) > 0).astype(int), X, sensitive_columns=0)
    0.6666666666666666
    """
    if not callable(predict):
        raise TypeError(f"`predict` must be callable; got {type(predict).__name__}.")
    x = check_matrix(X, "X")
    cols: list[int] = (
        [sensitive_columns]  # type: ignore[list-item]
        if np.isscalar(sensitive_columns)
        else list(sensitive_columns)  # type: ignore[arg-type]
    )
    if not cols:
        raise ValueError("`sensitive_columns` is empty.")
    for j in cols:
        if not isinstance(j, (int, np.integer)) or not -x.shape[1] <= j < x.shape[1]:
            raise ValueError(
                f"`sensitive_columns` entries must be column indices in [0, {x.shape[1]}); "
                f"got {j!r}."
            )
    tau = None if threshold is None else check_threshold(threshold)
    before = _labels(predict(x), x.shape[0], tau, "predict(X)")
    after = _labels(predict(flip_columns(x, cols, levels)), x.shape[0], tau, "predict(X')")
    return float(np.mean(before == after))


def spearman(u: np.ndarray, v: np.ndarray) -> float:
    r"""Spearman rank correlation (Pearson correlation of mid-ranks); NaN if constant."""
    ru, rv = rankdata(u), rankdata(v)
    ru -= ru.mean()
    rv -= rv.mean()
    denom = np.sqrt(np.sum(ru**2) * np.sum(rv**2))
    return float(np.sum(ru * rv) / denom) if denom > 0 else float("nan")


@dataclass(frozen=True)
class SelfFulfillingProphecy:
    """Result of :func:`self_fulfilling_prophecy`.

    Attributes
    ----------
    spearman : dict
        Spearman correlation between reference and fair scores within each group
        (NaN when a group's scores are constant). Higher is better.
    undesirable_flips : dict
        Per group, the number of undesirable flips: for the privileged group reference
        0 -> fair 1, for the other group reference 1 -> fair 0.
    n_undesirable : int
        Total number of undesirable flips.
    confusion : dict
        Per group, the 2x2 counts ``[[ref 0 & fair 0, ref 0 & fair 1],
        [ref 1 & fair 0, ref 1 & fair 1]]`` (FTM Table 11).
    """

    spearman: dict[Any, float]
    undesirable_flips: dict[Any, int]
    n_undesirable: int
    confusion: dict[Any, np.ndarray]


@validate_params({"threshold": THRESHOLD})
def self_fulfilling_prophecy(
    reference_score: Any,
    fair_score: Any,
    *,
    sensitive_features: Any,
    privileged: Any = 1,
    threshold: float = 0.5,
) -> SelfFulfillingProphecy:
    r"""Self-fulfilling-prophecy risk of a fair model against a reference model.

    Assuming the reference (unfair) model ranks individuals correctly (FTM App. E.3):

    - Evaluation 1: within each group :math:`s`,
      :math:`\rho_s = \mathrm{Spearman}(f_{\mathrm{ref}}(X), f_{\mathrm{fair}}(X) \mid S=s)`;
    - Evaluation 2: with :math:`\hat Y = 1[f \ge \tau]`, count the undesirable flips

      .. math::

          \#\{S = s_+,\ \hat Y_{\mathrm{ref}} = 0,\ \hat Y_{\mathrm{fair}} = 1\}
          + \#\{S \ne s_+,\ \hat Y_{\mathrm{ref}} = 1,\ \hat Y_{\mathrm{fair}} = 0\},

      where :math:`s_+` is the privileged group.

    Parameters
    ----------
    reference_score : array-like of shape (n,)
        Scores of the reference (unconstrained) model, in [0, 1].
    fair_score : array-like of shape (n,)
        Scores of the group-fair model, in [0, 1].
    sensitive_features : array-like of shape (n,)
        Binary sensitive attribute (exactly two groups).
    privileged : scalar, default=1
        Value of ``sensitive_features`` that marks the privileged group.
    threshold : float, default=0.5
        Decision threshold for both models.

    Returns
    -------
    SelfFulfillingProphecy

    Examples
    --------
    >>> import numpy as np
    >>> s = np.repeat([0, 1], 4)
    >>> ref = np.array([0.2, 0.4, 0.6, 0.8, 0.3, 0.5, 0.7, 0.9])
    >>> res = self_fulfilling_prophecy(ref, ref, sensitive_features=s)  # the model itself
    >>> res.spearman
    {0: 1.0, 1: 1.0}
    """
    check_lengths(
        reference_score=reference_score,
        fair_score=fair_score,
        sensitive_features=sensitive_features,
    )
    ref = check_probabilities(reference_score, "reference_score")
    fair = check_probabilities(fair_score, "fair_score")
    tau = check_threshold(threshold)
    codes, groups = encode_two_groups(sensitive_features)
    matches = [i for i, g in enumerate(groups) if g == privileged]
    if not matches:
        raise ValueError(
            f"`privileged`={privileged!r} is not a value of `sensitive_features` "
            f"({groups.tolist()})."
        )
    rho, flips, confusion = _agreement_by_group(ref, fair, codes, groups, matches[0], tau)
    return SelfFulfillingProphecy(
        spearman=rho,
        undesirable_flips=flips,
        n_undesirable=int(sum(flips.values())),
        confusion=confusion,
    )


def _agreement_by_group(
    ref: np.ndarray,
    fair: np.ndarray,
    codes: np.ndarray,
    groups: np.ndarray,
    priv: int,
    tau: float,
) -> tuple[dict[Any, float], dict[Any, int], dict[Any, np.ndarray]]:
    """Return each group's Spearman correlation, undesirable flips and 2x2 counts.

    A flip is undesirable from 0 to 1 in the privileged group (code ``priv``) and from
    1 to 0 in the other.
    """
    ref_hat = (ref >= tau).astype(np.int64)
    fair_hat = (fair >= tau).astype(np.int64)
    rho: dict[Any, float] = {}
    flips: dict[Any, int] = {}
    confusion: dict[Any, np.ndarray] = {}
    for code, group in enumerate(groups):
        key = group.item() if isinstance(group, np.generic) else group
        mask = codes == code
        rho[key] = spearman(ref[mask], fair[mask]) if mask.sum() > 1 else float("nan")
        table = np.zeros((2, 2), dtype=np.int64)
        np.add.at(table, (ref_hat[mask], fair_hat[mask]), 1)
        confusion[key] = table
        flips[key] = int(table[0, 1] if code == priv else table[1, 0])
    return rho, flips, confusion
