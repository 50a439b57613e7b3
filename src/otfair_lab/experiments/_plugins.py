"""The code a spec runs: its plugins, imported, and its dataset factories, resolved.

Trust: a spec runs code like a script. Its ``plugins`` are imported (their import runs
whatever they contain), and a dataset named ``module:function`` calls that function with
the dataset's options; such a factory is loaded only from a module listed in
``plugins`` (or inside one), so a spec names every module it runs code from in one
place. Run only specs you would run as a Python script.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from otfair_lab.experiments._grid import ConfigError


def _resolve_factory(path: str, key: str, plugins: Sequence[str] = ()) -> Any:
    """Import ``package.module:function`` (a user dataset factory) from a listed plugin.

    The module must be one of the spec's ``plugins`` (or inside one of them): a spec
    runs code like a script, and a factory named from any module (``os:system``) would
    run whatever that module offers with the dataset's options as its arguments.
    """
    module, _, attr = path.partition(":")
    if not any(module == p or module.startswith(f"{p}.") for p in plugins):
        listed = f"plugins = {list(plugins)!r}" if plugins else "no plugins"
        raise ConfigError(
            key,
            f"dataset factory {path!r} is not in a module of the spec's plugins ({listed}); "
            f"add {module!r} to `plugins` if you trust it (a spec runs code like a script).",
        )
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(key, f"cannot import dataset factory {path!r}: {exc}.") from None


def import_plugins(plugins: Sequence[str]) -> None:
    """Import modules that register extra methods (run in the parent and every worker)."""
    for module in plugins:
        importlib.import_module(module)
