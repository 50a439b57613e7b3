"""Docstring parts shared by the estimators, written once, filled in by a decorator.

An estimator's docstring names a shared part on a line of its own, ``{examples_binary}``;
the decorator replaces that line by the part, indented as the line is (as
:mod:`otfair.metrics._docs` does for the metrics). The complete text is the class's
``__doc__``, which help(), Sphinx, numpydoc and the doctests read. The parts: the toy data
of the examples (binary labels or a regression target, two groups), the reference
entries that several estimators cite, and fitted attributes that several declare.
"""

from __future__ import annotations

from otfair.utils._docstrings import fill_doc as fill_shared_doc

__all__ = ["DOCS", "fill_estimator_doc"]

_TOY_FEATURES = """\
Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(200, 3)); s = rng.integers(0, 2, 200)"""

DOCS: dict[str, str] = {
    "examples_binary": _TOY_FEATURES
    + """
>>> y = (X[:, 0] + s + rng.normal(size=200) > 0.5).astype(int)""",
    "examples_regression": _TOY_FEATURES
    + """
>>> y = X[:, 0] + 0.5 * s + rng.normal(scale=0.1 + 0.3 * s, size=200)""",
    "device_attribute": """\
device_ : torch.device
    Device the modules live on.""",
    "model_attribute": """\
model_ : torch.nn.Module
    Fitted encoder and classification head.""",
    "references_accuracy_disparity": """\
References
----------
.. [1] Chi, J., Tian, Y., Gordon, G. J. and Zhao, H. *Understanding and Mitigating
   Accuracy Disparity in Regression*. ICML 2021, arXiv:2102.12013.""",
    "references_adapfair": """\
References
----------
.. [1] Huang, Y., Tang, Z. and Chang, X. *AdapFair: Ensuring Adaptive Fairness for
   Machine Learning Operations*. 2024.""",
    "references_cod": """\
References
----------
.. [1] Komiyama, J., Takeda, A., Honda, J. and Shimao, H. *Nonconvex Optimization for
   Regression with Fairness Constraints*. ICML 2018.""",
    "references_fnf": """\
References
----------
.. [1] Balunović, M., Ruoss, A. and Vechev, M. *Fair Normalizing Flows*. ICLR 2022.""",
}

#: Replace each docstring line ``{name}`` of an estimator by ``DOCS[name]``, indented.
fill_estimator_doc = fill_shared_doc(required=False, **DOCS)
