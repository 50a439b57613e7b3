"""The user cache directory of otfair's data files (the last place a file is looked for)."""

from __future__ import annotations

import os
from pathlib import Path


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/otfair``, or ``~/.cache/otfair`` when XDG is unset."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "otfair"
