"""Docstring parts shared by the metrics, written once and filled in by :func:`fill_doc`.

A metric docstring names a shared part on a line of its own, ``{pos_label}``; the
decorator replaces that line by the part, indented as the line is (the pattern of MNE's
``fill_doc``). The complete text is the function's ``__doc__``, which help(), Sphinx,
numpydoc and the doctests read.
"""

from __future__ import annotations

from otfair.utils._docstrings import fill_doc as fill_shared_doc

DOCS: dict[str, str] = {
    "pos_label": """\
pos_label : int, float, bool or str, optional
    The positive class of ``y_true`` (e.g. ``"yes"``), and of predicted labels passed
    as ``y_score`` (``pipe.predict``'s strings are mapped to 1 where equal to it);
    without it labels must be 0/1.""",
    "min_group_size": """\
min_group_size : int, default=30
    A group with fewer rows is left out of the gap when at least two groups reach
    the size, as in :func:`~otfair.metrics.fairness_report` (a ``UserWarning``
    names it); 0 keeps every group. Default ``otfair.utils.MIN_GROUP_SIZE``.""",
    "examples_scores": """\
Examples
--------
>>> import numpy as np
>>> y = np.repeat([1, 0, 1, 0, 1, 0, 1, 0], 10)  # each row ten times: groups of 40
>>> p = np.repeat([0.9, 0.6, 0.8, 0.3, 0.7, 0.2, 0.4, 0.1], 10)
>>> s = np.repeat([0, 0, 0, 0, 1, 1, 1, 1], 10)""",
    "examples_regression": """\
Examples
--------
>>> import numpy as np
>>> y = np.repeat([1.0, 2.0, 3.0, 4.0], 15)
>>> pred = np.repeat([1.5, 2.0, 3.0, 3.0], 15)
>>> s = np.repeat([0, 0, 1, 1], 15)""",
}


#: Replace each docstring line ``{name}`` of a metric by ``DOCS[name]``, indented.
fill_doc = fill_shared_doc(required=False, **DOCS)
