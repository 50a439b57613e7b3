"""One conversion of results to JSON types, for reports, run stores and the CLI."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["to_jsonable"]


def to_jsonable(obj: Any) -> Any:
    """Return ``obj`` in JSON types: ``json.dumps(..., allow_nan=False)`` takes the result.

    Mappings become dicts with ``str`` keys, lists and tuples lists, numpy arrays nested
    lists and numpy scalars Python numbers; a NaN or an infinity becomes ``None`` (an
    undefined value); any other object its ``str``.

    Examples
    --------
    >>> import numpy as np
    >>> to_jsonable({"gap": np.float64("nan"), "n": np.int64(3), 1: (0.5, np.inf)})
    {'gap': None, 'n': 3, '1': [0.5, None]}
    """
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    return str(obj)
