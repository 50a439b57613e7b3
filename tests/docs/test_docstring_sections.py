"""The numpydoc sections a stranger looks for, read with numpydoc's own parser.

Every public estimator (a scikit-learn estimator in ``otfair.estimators.__all__``) has
Parameters (each constructor argument listed there, not under another heading),
Attributes, See Also and Examples; every other public class and function of
``otfair.estimators`` has See Also and Examples; every public function of
``otfair.metrics`` has an Examples section (run by the docstring tests).
"""

from __future__ import annotations

import inspect
import warnings

import pytest
from sklearn.base import BaseEstimator

from otfair import estimators, metrics

# numpydoc comes with the docs extra: .ci/run runs tests/docs again once it is installed
docscrape = pytest.importorskip("numpydoc.docscrape", reason="the docs extra (numpydoc)")
ClassDoc, FunctionDoc = docscrape.ClassDoc, docscrape.FunctionDoc


def _doc(obj):
    with warnings.catch_warnings():  # numpydoc warns on sections it does not know
        warnings.simplefilter("ignore")
        if inspect.isclass(obj):
            return ClassDoc(obj, config={"show_class_members": False})
        return FunctionDoc(obj)


def _public(module, kind):
    return [
        pytest.param(getattr(module, name), id=name)
        for name in module.__all__
        if kind(getattr(module, name))
    ]


def _is_estimator(obj):
    return inspect.isclass(obj) and issubclass(obj, BaseEstimator)


@pytest.mark.parametrize("cls", _public(estimators, _is_estimator))
def test_estimator_sections(cls):
    doc = _doc(cls)
    missing = [s for s in ("Parameters", "Attributes", "See Also", "Examples") if not doc[s]]
    assert not missing, f"{cls.__name__} lacks {missing}"
    listed = {name.strip() for p in doc["Parameters"] for name in p.name.split(",")}
    params = set(inspect.signature(cls.__init__).parameters) - {"self", "args", "kwargs"}
    assert params <= listed, f"{cls.__name__}: not under Parameters: {sorted(params - listed)}"


@pytest.mark.parametrize(
    "obj",
    _public(estimators, lambda o: (inspect.isclass(o) or inspect.isfunction(o))
            and not _is_estimator(o)),
)  # fmt: skip
def test_other_estimators_names_have_see_also_and_examples(obj):
    doc = _doc(obj)
    missing = [s for s in ("See Also", "Examples") if not doc[s]]
    assert not missing, f"{obj.__name__} lacks {missing}"


@pytest.mark.parametrize("fn", _public(metrics, inspect.isfunction))
def test_metric_functions_have_examples(fn):
    assert _doc(fn)["Examples"], f"{fn.__name__} has no Examples section"


def test_the_parameter_check_catches_a_parameter_under_references():
    class Bad(BaseEstimator):
        """Bad.

        Parameters
        ----------
        a : int

        References
        ----------
        b : int
            Listed under the wrong heading.
        """

        def __init__(self, a=1, b=2):
            self.a, self.b = a, b

    listed = {p.name for p in _doc(Bad)["Parameters"]}
    assert listed == {"a"}
