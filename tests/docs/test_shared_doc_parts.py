"""Shared docstring parts (``estimators/_docs.py``, ``metrics/_docs.py``) are all filled in.

A class or function names a shared part on a line of its own, ``{name}``; a decorator
replaces the line when the module is imported. A line left as it is (a misspelt name, a
missing decorator) would show as ``{name}`` in help() and on the API pages.
"""

from __future__ import annotations

import inspect
import re

import pytest

import otfair.estimators
import otfair.metrics
from otfair.estimators._docs import DOCS as ESTIMATOR_DOCS

MARKER = re.compile(r"^\s*\{\w+\}\s*$", re.MULTILINE)


def _public(module):
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            yield pytest.param(obj, id=f"{module.__name__}.{name}")


@pytest.mark.parametrize("obj", [*_public(otfair.estimators), *_public(otfair.metrics)])
def test_no_unfilled_part(obj):
    doc = obj.__doc__ or ""
    assert not MARKER.findall(doc), f"{obj.__name__}: unfilled {MARKER.findall(doc)}"


def test_every_estimator_part_is_used():
    docs = [getattr(otfair.estimators, name).__doc__ or "" for name in otfair.estimators.__all__]
    for name, text in ESTIMATOR_DOCS.items():
        first = text.splitlines()[-1].strip()  # the part's last line: its own text
        assert any(first in doc for doc in docs), f"the shared part {name!r} is not used"
