"""How a report interprets its sensitive columns: the rule of :mod:`otfair.utils._sensitive`.

The rule lives in ``otfair.utils`` so that estimators, penalties, metrics and the CLI
share it; this module keeps the metrics' import path.
"""

from otfair.utils._sensitive import (
    MAX_CATEGORIES,
    SENSITIVE_TYPES,
    SensitiveColumns,
    as_frame,
    split_sensitive,
)

__all__ = ["MAX_CATEGORIES", "SENSITIVE_TYPES", "SensitiveColumns", "as_frame", "split_sensitive"]
