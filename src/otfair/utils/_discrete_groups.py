"""Refuse a continuous sensitive attribute where a method needs discrete groups."""

from __future__ import annotations

import numpy as np

from otfair.utils._sensitive import MAX_CATEGORIES
from otfair.utils._validation import small_groups

__all__ = ["refuse_continuous_groups"]


def refuse_continuous_groups(codes: np.ndarray, groups: np.ndarray, *, why: str) -> None:
    """Raise ValueError when the encoded groups look like a continuous attribute.

    A numeric attribute with more than :data:`~otfair.utils._sensitive.MAX_CATEGORIES`
    distinct values, some of them on a single row or not whole numbers, is a measurement
    rather than a set of groups: a method that treats each value as a group (one
    quantile map, one group-mean direction per value) degenerates without an error.

    Parameters
    ----------
    codes : ndarray of int
        Each row's group index into ``groups``.
    groups : ndarray
        The distinct values of the attribute.
    why : str
        What the method does with groups, for the message (``"OTRepair repairs between
        discrete groups"``).

    Examples
    --------
    >>> import numpy as np
    >>> values = np.linspace(0.0, 1.0, 300)
    >>> try:
    ...     refuse_continuous_groups(np.arange(300), values, why="X needs groups")
    ... except ValueError as exc:
    ...     print(str(exc)[:52])
    `sensitive_features` looks continuous (300 distinct
    >>> refuse_continuous_groups(np.arange(300) % 2, np.array([0, 1]), why="X needs groups")
    """
    numeric = groups.dtype.kind in "iuf" or all(
        isinstance(g, (int, float, np.number)) and not isinstance(g, (bool, np.bool_))
        for g in groups
    )
    if not numeric or len(groups) <= MAX_CATEGORIES:
        return
    single = small_groups(codes, groups, 2)
    fractional = bool(np.any(np.mod(np.asarray(groups, dtype=np.float64), 1.0) != 0.0))
    if single or fractional:
        raise ValueError(
            f"`sensitive_features` looks continuous ({len(groups)} distinct values, "
            f"{len(single)} of them on a single row): {why}; bin the attribute into a few "
            "groups first (e.g. numpy.digitize or pandas.cut)."
        )
