"""The constraints of the metric functions' options, declared once for ``validate_params``.

Each public metric declares the options it takes with
:func:`otfair.utils.validate_params` and these lists, so a bad option is refused in the
house words before any array is read::

    The 'threshold' parameter of accuracy must be a float in the range [0.0, 1.0]. Got
    1.5 instead.

The arrays (``y_true``, ``y_score``, ``sensitive_features``) are checked by the metrics'
own prologue (:mod:`otfair.metrics._checks`): shapes, lengths and values are not
constraints.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

from otfair.utils import Interval, StrOptions, positive_int

__all__ = ["AGG", "BINS", "GROUP_SIZE", "THRESHOLD"]

#: ``threshold``: the score above which a prediction is positive, in [0, 1].
THRESHOLD: list[Any] = [Interval(Real, 0, 1, closed="both")]
#: ``min_group_size``: the fewest rows of a group whose rate is reported without warning.
GROUP_SIZE: list[Any] = [Interval(Integral, 0, None, closed="left")]
#: ``agg``: how the TPR and FPR gaps of equalized odds combine.
AGG: list[Any] = [StrOptions({"mean", "worst_case"})]
#: ``bins``: the number of equal-width bins of a histogram.
BINS: list[Any] = [positive_int()]
