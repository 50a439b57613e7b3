"""Deprecated home of AdapFair's group distance; it lives in ``otfair.penalties``."""

from otfair.penalties._group_wasserstein import (
    DISTANCES,
    NOTIONS,
    GroupWassersteinLoss,
    fairness_loss,
    notion_cells,
    score_distance,
)

__all__ = [
    "DISTANCES",
    "NOTIONS",
    "GroupWassersteinLoss",
    "fairness_loss",
    "notion_cells",
    "score_distance",
]
