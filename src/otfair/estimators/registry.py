"""Deprecated: the method registry moved to :mod:`otfair.experiments.methods`.

``MethodSpec`` is re-exported as is; ``get_method``, ``list_methods`` and
``register_method`` forward to the new module with a ``DeprecationWarning``.
"""

from __future__ import annotations

import warnings
from typing import Any

from otfair.experiments.methods import MethodSpec

__all__ = ["MethodSpec", "get_method", "list_methods", "register_method"]

_MESSAGE = (
    "otfair.estimators.registry is deprecated; import {name} from otfair.experiments.methods."
)


def _warn(name: str) -> None:
    warnings.warn(_MESSAGE.format(name=name), DeprecationWarning, stacklevel=3)


def get_method(name: str) -> Any:
    """Forward to :func:`otfair.experiments.methods.get_method` (deprecated alias)."""
    from otfair.experiments import methods

    _warn("get_method")
    return methods.get_method(name)


def list_methods(task: Any = None) -> list[str]:
    """Forward to :func:`otfair.experiments.methods.list_methods` (deprecated alias)."""
    from otfair.experiments import methods

    _warn("list_methods")
    return methods.list_methods(task)


def register_method(spec: MethodSpec) -> MethodSpec:
    """Forward to :func:`otfair.experiments.methods.register_method` (deprecated alias)."""
    from otfair.experiments import methods

    _warn("register_method")
    return methods.register_method(spec)
