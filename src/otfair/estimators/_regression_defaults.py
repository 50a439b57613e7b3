"""Deprecated: the paper settings moved to :mod:`otfair.experiments.methods`."""

from __future__ import annotations

import warnings
from typing import Any

__all__ = ["paper_settings"]


def paper_settings(dataset: str | None) -> dict[str, Any]:
    """Return ``otfair.experiments.methods.paper_settings(dataset)`` (deprecated alias).

    Returns the App. B settings of the accuracy-disparity paper without ``bgl_eps``, as
    before the move.
    """
    from otfair.experiments.methods import paper_settings as settings

    warnings.warn(
        "otfair.estimators.paper_settings is deprecated; import paper_settings from "
        "otfair.experiments.methods.",
        DeprecationWarning,
        stacklevel=2,
    )
    out = settings(dataset)
    del out["bgl_eps"]
    return out
