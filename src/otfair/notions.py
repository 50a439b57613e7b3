r"""Fairness notions as objects: which label cells they compare, and their linear rows.

A group fairness notion asks the score distribution of every sensitive group to be equal
*within each label cell* it conditions on (in the spirit of fairlearn's ``Moment`` and
fairret's ``Statistic``):

==========================  ========  ========================  =============================
notion                      name      label cells               equal across groups
==========================  ========  ========================  =============================
:class:`DemographicParity`  ``dp``    all samples               :math:`P(\hat Y=1 \mid S)`
:class:`EqualOpportunity`   ``eopp``  :math:`Y=1`               :math:`P(\hat Y=1\mid S,Y=1)`
:class:`EqualizedOdds`      ``eo``    :math:`Y=0`, :math:`Y=1`  :math:`P(\hat Y=1\mid S,Y)`
==========================  ========  ========================  =============================

Penalties and estimators take :class:`Notion` objects; strings are converted once at the
edges by :func:`as_notion`. The probabilistic linear versions (PDP, PEO of the OTF paper,
Buyl & De Bie, NeurIPS 2022, §2.1, Def. 1 and Table 1) are built by
:class:`LinearConstraints`, whose rows are one block per label cell of the notion.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from otfair.utils import check_binary_labels, check_sensitive_features

__all__ = [
    "NOTIONS",
    "DemographicParity",
    "EqualOpportunity",
    "EqualizedOdds",
    "LinearConstraints",
    "Notion",
    "as_notion",
    "stratum_codes",
]


def stratum_codes(groups: Any, labels: Any | None = None) -> np.ndarray:
    r"""Return the one stratum code of otfair: :math:`2\,g + y` (group ``g``, label ``y``).

    Parameters
    ----------
    groups : array-like of int, shape (n,)
        Group codes ``0, 1, ...`` (intersectional codes of several attributes included).
    labels : array-like of shape (n,) with values in {0, 1}, optional
        Label codes; ``None`` gives the groups themselves.

    Returns
    -------
    ndarray of int64, shape (n,)
        Codes whose order is the lexicographic order of ``(g, y)``: one code per (group,
        label) cell, so a batcher that visits the codes in sorted order visits the
        cells as ``np.unique`` of the ``(g, y)`` rows does.
    """
    groups = np.asarray(groups, dtype=np.int64)
    if labels is None:
        return groups
    return 2 * groups + np.asarray(labels, dtype=np.int64)


@dataclass(frozen=True)
class Notion:
    """A group fairness notion: equal group score distributions within label cells.

    Attributes
    ----------
    name : str
        Short name used on the command line (``"dp"``, ``"eopp"``, ``"eo"``).
    label_cells : tuple of int or None
        Labels of the cells the notion compares groups in; ``(None,)`` = all samples.
    """

    name: str
    label_cells: tuple[int | None, ...]

    @property
    def requires_labels(self) -> bool:
        """Whether evaluating the notion needs the labels."""
        return self.label_cells != (None,)

    def cell_masks(self, labels: Any | None, n: int) -> list[Any]:
        """Boolean masks (numpy or torch, like ``labels``) of the notion's label cells."""
        if not self.requires_labels:
            return [slice(None)]
        if labels is None:
            raise ValueError(f"`labels` are required for notion={self.name!r}.")
        return [labels == lab for lab in self.label_cells]

    def strata(self, groups: np.ndarray, labels: np.ndarray | None) -> np.ndarray:
        """Codes of the (group x label cell) strata, for stratified batches.

        :func:`stratum_codes` of the groups and, for a notion conditioned on the label,
        the labels (the groups alone for demographic parity).
        """
        return stratum_codes(groups, labels if self.requires_labels else None)

    def __str__(self) -> str:
        return self.name


class DemographicParity(Notion):
    """Demographic parity (``"dp"``): equal score distributions across groups."""

    def __init__(self) -> None:
        super().__init__("dp", (None,))


class EqualOpportunity(Notion):
    """Equal opportunity (``"eopp"``): equal score distributions among positives."""

    def __init__(self) -> None:
        super().__init__("eopp", (1,))


class EqualizedOdds(Notion):
    """Equalized odds (``"eo"``): equal score distributions within each label."""

    def __init__(self) -> None:
        super().__init__("eo", (0, 1))


NOTIONS: dict[str, Callable[[], Notion]] = {
    "dp": DemographicParity,
    "eopp": EqualOpportunity,
    "eo": EqualizedOdds,
}


def as_notion(notion: str | Notion, *, allowed: tuple[str, ...] | None = None) -> Notion:
    """Return ``notion`` as a :class:`Notion` (strings are looked up in :data:`NOTIONS`).

    Parameters
    ----------
    notion : str or Notion
        ``"dp"``, ``"eopp"``, ``"eo"`` or a notion object.
    allowed : tuple of str, optional
        Names accepted by the caller (e.g. a penalty that knows only DP and EO).

    Raises
    ------
    ValueError
        Naming the valid notions when ``notion`` is unknown or not in ``allowed``.
    """
    valid = tuple(NOTIONS) if allowed is None else tuple(allowed)
    if isinstance(notion, Notion):
        out = notion
    elif isinstance(notion, str) and notion in NOTIONS:
        out = NOTIONS[notion]()
    else:
        out = None
    if out is None or out.name not in valid:
        raise ValueError(f"`notion` must be one of {', '.join(valid)}; got {notion!r}.")
    return out


class LinearConstraints:
    r"""Rows :math:`g_c(z)` of a linear fairness notion, with expectations from training data.

    A score vector :math:`\mathbf h` over a batch is fair when :math:`G\mathbf h = 0`, with
    :math:`G_{cj} = g_c(z_j)` (Buyl & De Bie, NeurIPS 2022, §2.1, Def. 1, §3.1).
    Each column of ``sensitive`` is binary (0/1, one-hot encoded into its two groups)
    or continuous (more than two distinct values):

    .. math::

        \text{PDP, group } k:\quad g_k(z) = \frac{S_k}{E[S_k]} - 1, \qquad
        \text{continuous}:\quad g(z) = \frac{S - E[S]}{\mathrm{sd}(S)}

        \text{PEO, group } k,\ \text{label } l:\quad
        g_{kl}(z) = Y_l \Big(\frac{S_k}{E[S_k Y_l]} - \frac{1}{E[Y_l]}\Big), \qquad
        \text{continuous}:\quad Y_l\,\frac{S - E[S \mid Y=l]}{\mathrm{sd}(S \mid Y=l)}

    One block of rows per label cell of the notion (PDP: all samples; PEO: ``Y=0`` and
    ``Y=1``; equal opportunity: ``Y=1``). The PEO row is the one that encodes
    :math:`P(\hat Y=1 \mid S_k, Y_l) = P(\hat Y=1 \mid Y_l)`; Table 1 of the paper writes
    ``- 1`` instead of ``- 1 / E[Y_l]``, which is not zero for a constant score. Several
    attributes concatenate their rows. The continuous row is a standardized covariance
    (not ``S / E[S] - 1`` as the reference code, which blows up for centred attributes).
    All expectations are fitted once on the training set (:meth:`fit`).

    Parameters
    ----------
    notion : {"dp", "eo", "eopp"} or Notion, default="dp"
        Probabilistic demographic parity, equalized odds or equal opportunity.

    Examples
    --------
    One binary attribute, a quarter of the training rows in group 1; the rows of
    :math:`G` are the group coded 1, then the group coded 0, evaluated at a member of
    each group:

    >>> import numpy as np
    >>> c = LinearConstraints("dp").fit(np.array([0, 0, 0, 1]))
    >>> c.matrix(np.array([0, 1])).numpy().round(3)
    array([[-1.   ,  3.   ],
           [ 0.333, -1.   ]], dtype=float32)
    """

    def __init__(self, notion: str | Notion = "dp") -> None:
        self.notion_ = as_notion(notion)
        self.notion = self.notion_.name

    @property
    def requires_labels(self) -> bool:
        """Whether :meth:`matrix` needs the labels."""
        return self.notion_.requires_labels

    def _labels(self, labels: Any, n: int) -> np.ndarray | None:
        if not self.requires_labels:
            return None
        if labels is None:
            raise ValueError(f"`labels` are required for notion={self.notion!r}.")
        y = check_binary_labels(labels, "labels").astype(np.float64)
        if y.shape[0] != n:
            raise ValueError(f"`labels` has {y.shape[0]} rows, `sensitive` has {n}.")
        return y

    def fit(self, sensitive: Any, labels: Any = None) -> LinearConstraints:
        """Compute the expectations defining each row from training data.

        Parameters
        ----------
        sensitive : array-like of shape (n,) or (n, k)
            Numeric sensitive attributes (binary 0/1 or continuous columns).
        labels : array-like of shape (n,), optional
            Binary labels; required for notions conditioned on the label.

        Raises
        ------
        ValueError
            If a binary group (or group x label cell) is empty, or a continuous
            attribute is constant.
        """
        s = check_sensitive_features(sensitive, name="sensitive")
        n = s.shape[0]
        y = self._labels(labels, n)
        rows: list[tuple[int, str, int, float, float]] = []  # (col, kind, label, a, b)
        # binary: a = E[S_k Y_l], b = E[Y_l]; continuous: a = E[S | Y_l], b = sd(S | Y_l)
        label_values = [-1 if lab is None else lab for lab in self.notion_.label_cells]
        for col in range(s.shape[1]):
            values = np.unique(s[:, col])
            binary = bool(np.all(np.isin(values, (0.0, 1.0))))
            if len(values) < 2:
                raise ValueError(f"`sensitive` column {col} is constant ({values.tolist()}).")
            for lab in label_values:
                ylab = np.ones(n) if lab < 0 else (np.asarray(y) == lab).astype(np.float64)
                if ylab.sum() == 0:
                    raise ValueError(f"`labels` has no sample with label {lab}.")
                p_label = float(np.mean(ylab))
                if binary:
                    for group in (1.0, 0.0):
                        member = (s[:, col] == group).astype(np.float64)
                        expect = float(np.mean(member * ylab))
                        if expect == 0:
                            raise ValueError(
                                f"`sensitive` column {col}: group {int(group)} is empty"
                                + (f" among label {lab}." if lab >= 0 else ".")
                            )
                        rows.append((col, "binary" if group else "binary0", lab, expect, p_label))
                else:
                    sel = s[ylab > 0, col]
                    sd = float(np.std(sel))
                    if sd == 0:
                        raise ValueError(f"`sensitive` column {col} is constant.")
                    rows.append((col, "continuous", lab, float(np.mean(sel)), sd))
        self.rows_ = rows
        self.n_features_ = s.shape[1]
        return self

    @property
    def n_constraints(self) -> int:
        """Number of rows of G (``d_F``)."""
        self._check_fitted()
        return len(self.rows_)

    def _check_fitted(self) -> None:
        if not hasattr(self, "rows_"):
            raise RuntimeError("LinearConstraints is not fitted; call fit(sensitive, labels).")

    def matrix(
        self,
        sensitive: Any,
        labels: Any = None,
        *,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.float32,
    ) -> torch.Tensor:
        """Return G of shape (d_F, n) for a batch (no gradient: G depends on data only)."""
        self._check_fitted()
        s = torch.as_tensor(
            check_sensitive_features(sensitive, name="sensitive"), dtype=torch.float64
        )
        if s.shape[1] != self.n_features_:
            raise ValueError(
                f"`sensitive` has {s.shape[1]} columns; the constraints were fitted on "
                f"{self.n_features_}."
            )
        y_np = self._labels(labels, s.shape[0])
        y = None if y_np is None else torch.as_tensor(y_np, dtype=torch.float64)
        out = []
        for col, kind, lab, a, b in self.rows_:
            x = s[:, col]
            ylab = torch.ones_like(x) if lab < 0 or y is None else (y == lab).to(x)
            if kind == "binary":
                row = ylab * (x / a - 1.0 / b)
            elif kind == "binary0":
                row = ylab * ((1.0 - x) / a - 1.0 / b)
            else:
                row = ylab * (x - a) / b
            out.append(row)
        return torch.stack(out).to(device=device, dtype=dtype)
