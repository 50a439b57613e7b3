"""Warnings that point at the user's line: the stack level of the first frame outside otfair.

A warning raised deep inside ``fit`` (a fit below the best constant, a cap reached, raw
feature scales) goes through scikit-learn's ``_fit_context`` wrapper, otfair's input
checks and training-state decorators: a fixed ``stacklevel`` names one of those frames
(``otfair/utils/_torch.py: return method(*args, **kwargs)``) instead of the line that
called ``fit``. :func:`user_stacklevel` counts the frames up to the first one outside
otfair, scikit-learn and :mod:`contextlib` (Python 3.12's ``skip_file_prefixes``, for
3.11).
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path

__all__ = ["quiet_fairlearn_deprecations", "user_stacklevel"]


def _internal_prefixes() -> tuple[str, ...]:
    import sklearn

    here = Path(__file__).resolve().parent.parent  # the otfair package
    return (
        str(here) + "/",
        str(Path(sklearn.__file__).resolve().parent) + "/",
        str(Path(contextlib.__file__).resolve()),
    )


_PREFIXES: tuple[str, ...] | None = None


def user_stacklevel() -> int:
    """Return the ``stacklevel`` that names the first caller outside otfair.

    To be called by the function that calls ``warnings.warn``, and passed to it: level 1
    is that function, each frame up one more.

    Examples
    --------
    A function outside otfair is its own caller's level 1 (inside otfair, the levels of
    otfair's frames are added):

    >>> from otfair.utils._warnings import user_stacklevel
    >>> def check():
    ...     return user_stacklevel()
    >>> check()
    1
    """
    global _PREFIXES
    if _PREFIXES is None:
        _PREFIXES = _internal_prefixes()
    frame = sys._getframe(1)  # the function that warns: stacklevel 1
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PREFIXES):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


@contextlib.contextmanager
def quiet_fairlearn_deprecations() -> Iterator[None]:
    """Silence the deprecation warnings that fairlearn's own code raises, for one fit.

    fairlearn 0.15's reductions set missing Series keys with ``.at``, which pandas 3
    deprecates (``Pandas4Warning``, a ``DeprecationWarning``): every
    ``ReductionClassifier`` / ``BGLRegressor`` fit printed a screenful of warnings about
    lines the user cannot change. Only warnings attributed to fairlearn's modules
    (``module=fairlearn...``) of the deprecation kinds are hidden; the user's own and
    otfair's warnings pass.
    """
    with warnings.catch_warnings():
        for category in (DeprecationWarning, FutureWarning):
            warnings.filterwarnings("ignore", category=category, module=r"fairlearn(\.|$)")
        yield
