"""FTM's matched batch pairings and their cache (kept in :mod:`otfair.penalties`).

The pairings are the :class:`~otfair.penalties.FTM` penalty object's batching
(:meth:`otfair.penalties.FTM.matched_batches`); this module keeps the public names where
they were.
"""

from otfair.penalties._ftm import (
    DEFAULT_CACHE,
    FTMMatchingCache,
    draw_pairings,
    get_cache,
)

__all__ = ["DEFAULT_CACHE", "FTMMatchingCache", "draw_pairings", "get_cache"]
