"""Deprecated home of :class:`LinearConstraints`; it lives in :mod:`otfair.notions`."""

from otfair.notions import LinearConstraints

__all__ = ["LinearConstraints"]
