"""Accuracy-disparity audit of a regressor (accuracy-disparity paper, §3.1).

The audit turns the paper's bounds into numbers estimated from a sample of labels,
predictions and a binary sensitive attribute: the group errors and their gap, the lower
bound on the joint error (Thm 3.1, Cor. 3.1), an upper bound on the error gap (Thm 3.3)
and an exact split of the gap into a *label-distribution* term and a
*conditional-representation* term.

A note on Thm 3.3. Its second term bounds ``E[h^2 | Y=y]`` differences by conditional
*mean* differences, which does not hold in general (a group predicting 0 or 1 at random
and a group predicting 1/2 have equal conditional means but different errors). The audit
therefore reports the paper's expression (``upper_bound_gap_thm33``) and a bound of the
same shape that always holds on the sample (``upper_bound_gap``): the conditional-mean
term is replaced by the conditional *error* difference, which is exactly what the
decomposition of the gap needs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.stats import wasserstein_distance

from otfair.utils import check_consistent_length, check_finite_1d, encode_groups

__all__ = ["accuracy_disparity_audit"]


def accuracy_disparity_audit(
    y_true: Any,
    y_pred: Any,
    *,
    sensitive_features: Any,
    n_bins: int = 10,
    bound: float | None = None,
) -> dict[str, Any]:
    r"""Audit the accuracy disparity of regression predictions between two groups.

    With :math:`\mathrm{Err}_a = E_{D_a}[(Y - \hat Y)^2]` the MSE of group
    :math:`a \in \{0, 1\}`: the error gap :math:`|\mathrm{Err}_0 - \mathrm{Err}_1|`; the
    lower bounds of Thm 3.1 and Cor. 3.1, :math:`\mathrm{Err}_0 + \mathrm{Err}_1 \ge
    \tfrac12 (W_1(D_0(Y), D_1(Y)) - W_1(h_\sharp D_0, h_\sharp D_1))_+^2` (exact 1-D
    :math:`W_1`); with :math:`Y` cut into ``n_bins`` bins :math:`b`, the exact split of
    :math:`\mathrm{Err}_0 - \mathrm{Err}_1` into a label term
    :math:`\sum_b (p_0 - p_1) \tfrac{e_0 + e_1}{2}` and a representation term
    :math:`\sum_b \tfrac{p_0 + p_1}{2} (e_0 - e_1)` (:math:`p_a(b) = D_a(Y \in b)`,
    :math:`e_a(b)` the group's MSE in the bin), the valid upper bound
    :math:`8 M^2 d_{TV}(D_0(Y), D_1(Y)) + \min_a E_{D_a}|e_0 - e_1|` and the paper's
    Thm 3.3 expression (not guaranteed; see the module note). Details:
    ``docs/regression.md``.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        True targets.
    y_pred : array-like of shape (n,)
        Predictions of the regressor.
    sensitive_features : array-like of shape (n,)
        Binary sensitive attribute (the smaller value, in sorted order, is group 0).
    n_bins : int, default=10
        Equal-width bins of ``y_true`` for the TV distance and the conditional terms.
    bound : float or None, default=None
        The constant :math:`M` of Assumption 2.1; ``None`` uses the sample's
        :math:`\max(|Y|, |\hat Y|)`, a given value must not be smaller.

    Returns
    -------
    dict
        JSON-able flat dictionary: ``groups``, ``n_0``, ``n_1``, ``alpha``, ``mse``,
        ``mse_0``, ``mse_1``, ``error_gap``, ``error_gap_signed``, ``joint_error``,
        ``w1_labels``, ``w1_predictions``, ``lower_bound_joint_error``,
        ``lower_bound_mse``, ``M``, ``M_source``, ``n_bins``, ``bin_edges``,
        ``tv_labels``, ``label_term``, ``representation_term``, ``label_term_bound``,
        ``representation_term_bound``, ``upper_bound_gap``, ``conditional_mean_gap``,
        ``upper_bound_gap_thm33``.

    Raises
    ------
    ValueError
        On NaN, inconsistent lengths, not exactly two groups, ``n_bins < 1`` or a
        ``bound`` smaller than the data.

    References
    ----------
    .. [1] Chi, Tian, Gordon, Zhao. "Understanding and Mitigating Accuracy Disparity in
       Regression", ICML 2021, §3.1 (Thm 3.1, Cor. 3.1, Thm 3.3).

    Examples
    --------
    >>> out = accuracy_disparity_audit([0.0, 1.0, 0.0, 1.0], [0.0, 1.0, 0.5, 0.5],
    ...                                sensitive_features=["a", "a", "b", "b"])
    >>> out["mse_0"], out["mse_1"], out["error_gap"]
    (0.0, 0.25, 0.25)
    """
    y, yhat, codes, groups = _check_audit_input(y_true, y_pred, sensitive_features, n_bins)
    m, m_source = _bound(y, yhat, bound)
    in0, in1 = codes == 0, codes == 1
    sq = (y - yhat) ** 2
    return {
        "groups": [_plain(g) for g in groups],
        **_error_terms(y, yhat, sq, in0, in1),
        "M": m,
        "M_source": m_source,
        **_binned_terms(y, yhat, sq, in0, in1, int(n_bins), m),
    }


def _error_terms(
    y: np.ndarray, yhat: np.ndarray, sq: np.ndarray, in0: np.ndarray, in1: np.ndarray
) -> dict[str, Any]:
    """Return the audit's group sizes, errors and the lower bounds of Thm 3.1/Cor. 3.1."""
    mse0, mse1 = float(sq[in0].mean()), float(sq[in1].mean())
    alpha = float(in0.mean())
    w1_y = float(wasserstein_distance(y[in0], y[in1]))
    w1_h = float(wasserstein_distance(yhat[in0], yhat[in1]))
    shortfall = max(w1_y - w1_h, 0.0) ** 2
    return {
        "n_0": int(in0.sum()),
        "n_1": int(in1.sum()),
        "alpha": alpha,
        "mse": float(sq.mean()),
        "mse_0": mse0,
        "mse_1": mse1,
        "error_gap": abs(mse0 - mse1),
        "error_gap_signed": mse0 - mse1,
        "joint_error": mse0 + mse1,
        "w1_labels": w1_y,
        "w1_predictions": w1_h,
        "lower_bound_joint_error": 0.5 * shortfall,
        "lower_bound_mse": 0.5 * min(alpha, 1.0 - alpha) * shortfall,
    }


def _check_audit_input(
    y_true: Any, y_pred: Any, sensitive_features: Any, n_bins: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Return finite targets and predictions, and the codes and values of two groups."""
    y = check_finite_1d(y_true, "y_true")
    yhat = check_finite_1d(y_pred, "y_pred")
    codes, groups = encode_groups(sensitive_features, "sensitive_features")
    check_consistent_length(y_true=y, y_pred=yhat, sensitive_features=codes)
    if len(groups) != 2:
        raise ValueError(
            "`sensitive_features` must be binary for the accuracy-disparity audit; found "
            f"{len(groups)} groups ({groups.tolist()[:5]}...)."
        )
    if not isinstance(n_bins, (int, np.integer)) or isinstance(n_bins, bool) or n_bins < 1:
        raise ValueError(f"`n_bins` must be a positive integer, got {n_bins!r}.")
    return y, yhat, codes, groups


def _bound(y: np.ndarray, yhat: np.ndarray, bound: float | None) -> tuple[float, str]:
    """Return the constant M of Assumption 2.1 and where it comes from."""
    m_data = float(max(np.max(np.abs(y)), np.max(np.abs(yhat))))
    if bound is None:
        return m_data, "sample max(|y_true|, |y_pred|)"
    m = float(bound)
    if not np.isfinite(m) or m < m_data:
        raise ValueError(
            f"`bound` (M of Assumption 2.1) must be >= max(|y_true|, |y_pred|) = "
            f"{m_data:.6g}; got {bound!r}."
        )
    return m, "given"


def _binned_terms(
    y: np.ndarray,
    yhat: np.ndarray,
    sq: np.ndarray,
    in0: np.ndarray,
    in1: np.ndarray,
    n_bins: int,
    m: float,
) -> dict[str, Any]:
    """Return the audit's binned entries: TV, the split of the gap and its bounds."""
    edges, bins = _bin_edges(y, n_bins)
    p0, p1 = _bin_probabilities(bins, in0, in1, n_bins)
    e0, e1 = _conditional_means(sq, bins, in0, in1, n_bins)
    c0, c1 = _conditional_means(yhat, bins, in0, in1, n_bins)
    tv = 0.5 * float(np.abs(p0 - p1).sum())
    label_bound = 8.0 * m**2 * tv
    repr_bound_min = float(min(np.sum(p0 * np.abs(e0 - e1)), np.sum(p1 * np.abs(e0 - e1))))
    cond_mean_gap = float(min(np.sum(p0 * np.abs(c0 - c1)), np.sum(p1 * np.abs(c0 - c1))))
    return {
        "n_bins": n_bins,
        "bin_edges": edges.tolist(),
        "tv_labels": tv,
        "label_term": float(np.sum((p0 - p1) * (e0 + e1) / 2.0)),
        "representation_term": float(np.sum((p0 + p1) / 2.0 * (e0 - e1))),
        "label_term_bound": label_bound,
        "representation_term_bound": float(np.sum((p0 + p1) / 2.0 * np.abs(e0 - e1))),
        "upper_bound_gap": label_bound + repr_bound_min,
        "conditional_mean_gap": cond_mean_gap,
        "upper_bound_gap_thm33": label_bound + 3.0 * m * cond_mean_gap,
    }


#: decimals a label's position in bin widths is rounded to before its bin is taken
BIN_POSITION_DECIMALS = 9


def _bin_edges(y: np.ndarray, n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """Equal-width edges on ``[min y, max y]`` and the bin index of every sample.

    A label on an edge belongs to the bin above it (the last bin is closed). Its
    position in bin widths, ``(y - min y) / width``, is rounded to
    :data:`BIN_POSITION_DECIMALS` decimals first: labels on a grid (grade points in
    steps of 0.1, rates in steps of 0.01) fall on edges, and float rounding would
    otherwise put them on either side depending on the units of ``y`` (the terms
    then changed with the units).
    """
    lo, hi = float(y.min()), float(y.max())
    if hi <= lo:  # constant labels: one effective bin
        hi = lo + 1.0
    edges = np.linspace(lo, hi, n_bins + 1)
    position = np.round((y - lo) / (hi - lo) * n_bins, BIN_POSITION_DECIMALS)
    bins = np.clip(np.floor(position).astype(np.int64), 0, n_bins - 1)
    return edges, bins


def _bin_probabilities(
    bins: np.ndarray, in0: np.ndarray, in1: np.ndarray, n_bins: int
) -> tuple[np.ndarray, np.ndarray]:
    """Histogram of the binned labels within each group (each sums to one)."""
    p0 = np.bincount(bins[in0], minlength=n_bins) / in0.sum()
    p1 = np.bincount(bins[in1], minlength=n_bins) / in1.sum()
    return p0, p1


def _conditional_means(
    v: np.ndarray, bins: np.ndarray, in0: np.ndarray, in1: np.ndarray, n_bins: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per-bin means of ``v`` in each group; a bin empty in one group takes the other's.

    Bins empty in both groups get 0 (they carry no probability in either group).
    """
    means = []
    for mask in (in0, in1):
        total = np.bincount(bins[mask], weights=v[mask], minlength=n_bins)
        count = np.bincount(bins[mask], minlength=n_bins)
        means.append((np.divide(total, count, out=np.zeros(n_bins), where=count > 0), count))
    (m0, n0), (m1, n1) = means
    m0 = np.where(n0 > 0, m0, m1)
    m1 = np.where(n1 > 0, m1, m0)
    return m0, m1


def _plain(value: Any) -> Any:
    """Numpy scalars to python scalars (JSON-able group labels)."""
    return value.item() if isinstance(value, np.generic) else value
