"""The methods ``otfair fit`` and ``otfair sweep`` run: registry, paper settings, extras.

:class:`MethodSpec` describes one method (builder, task, paper, notions, strength and its
grid, defaults, accepted options, report extras); :func:`register_method` adds one (also
from outside the package), :func:`get_method` and :func:`list_methods` look them up. The
built-in families register themselves on first lookup. :data:`PAPER_SETTINGS` is the one
table of per-dataset paper settings.
"""

from otfair_lab.experiments.methods._options import (
    RUN_ARGUMENTS,
    check_options,
    check_run_values,
    describe_option,
)
from otfair_lab.experiments.methods._settings import PAPER_SETTINGS, paper_settings
from otfair_lab.experiments.methods._spec import (
    MethodSpec,
    RunArgs,
    builder,
    get_method,
    list_methods,
    register_method,
)

__all__ = [
    "PAPER_SETTINGS",
    "RUN_ARGUMENTS",
    "MethodSpec",
    "RunArgs",
    "builder",
    "check_options",
    "check_run_values",
    "describe_option",
    "get_method",
    "list_methods",
    "paper_settings",
    "register_method",
]
