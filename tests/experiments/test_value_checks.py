"""The CLI's torch-free value checks say what the registry's own checks say.

:func:`otfair_lab.experiments._names.values_problem` checks a run's strength, ``epochs`` and
``-o`` values against the constraints the static name table describes, before torch is
imported; the registry then checks them against the estimators' ``_parameter_constraints``
with scikit-learn (:func:`~otfair_lab.experiments.methods.check_run_values`,
:func:`~otfair_lab.experiments.methods.check_options`). For every described constraint of
every built-in method, values on both sides of its bounds, of the wrong type and not
among its options must get the same verdict and the same words from both.
"""

from __future__ import annotations

import math
import re

import pytest

from otfair_lab.experiments import _names
from otfair_lab.experiments._value_checks import value_problem
from otfair_lab.experiments.methods import check_options, check_run_values, get_method


def _candidates(entry: dict) -> list[object]:
    values: list[object] = ["abc", None, [1], math.nan, True]
    for c in entry["constraints"]:
        if c["kind"] == "interval":
            for bound in (c["left"], c["right"]):
                if bound is not None:
                    values += [bound, bound - 1, bound + 1, float(bound) - 0.5, float(bound) + 0.5]
        elif c["kind"] == "str_options":
            values += [c["options"][0], "not-an-option"]
    return values


def _registry_says(method: str, key: str, value: object) -> str | None:
    spec = get_method(method)
    try:
        if key in ("strength", "epochs"):
            check_run_values(spec, **{key: value})
        else:
            check_options(spec, {key: value})
    except ValueError as exc:
        return str(exc)
    return None


def _same_words(text: str | None) -> str | None:
    """Sort the options inside ``{...}``: scikit-learn lists a set in its own order."""
    if text is None:
        return None
    return re.sub(r"\{([^}]*)\}", lambda m: "{" + ", ".join(sorted(m[1].split(", "))) + "}", text)


CASES = [(m, k) for m, row in sorted(_names.VALUES.items()) for k in sorted(row)]


def test_the_table_describes_values_of_every_kind():
    kinds = {
        c["kind"] for row in _names.VALUES.values() for e in row.values() for c in e["constraints"]
    }
    assert kinds == {"interval", "str_options", "none", "type"}
    assert len(CASES) > 100


@pytest.mark.parametrize(("method", "key"), CASES, ids=[f"{m}-{k}" for m, k in CASES])
def test_torch_free_check_matches_the_registry(method, key):
    entry = _names.VALUES[method][key]
    for value in _candidates(entry):
        mine = value_problem(entry, value)
        if key in ("strength", "epochs") and value is None:
            continue  # not given: nothing to check on either side
        theirs = _registry_says(method, key, value)
        assert _same_words(mine) == _same_words(theirs), (method, key, value)


def test_values_problem_checks_in_the_registry_order():
    assert _names.values_problem("otf", strength=0.5, epochs=3, options={"lr": 0.1}) is None
    epochs = _names.values_problem("otf", epochs=0, options={"lr": -1})
    assert epochs is not None and epochs.startswith("The 'epochs' parameter of FairClassifier")
    assert _names.values_problem("otf", options={"nonsense": -1}) is None  # names: elsewhere
    assert _names.values_problem("nosuch", epochs=0) is None  # a plug-in: the registry checks


def test_the_stored_words_are_the_engines():
    """The table's messages come from the constraint engine, options in sorted order."""
    from numbers import Integral

    from otfair.utils import Interval, InvalidParameterError, StrOptions, check_values
    from otfair_lab.experiments._value_checks import VALUE, message

    constraints = [Interval(Integral, 1, None, closed="left"), StrOptions({"b", "a", "c"}), None]
    words = message("k", "Owner", constraints)
    assert words == (
        "The 'k' parameter of Owner must be an int in the range [1, inf), a str among "
        f"{{'a', 'b', 'c'}} or None. Got {VALUE} instead."
    )
    with pytest.raises(InvalidParameterError) as engine:
        check_values({"k": constraints}, {"k": 0.5}, caller="Owner")
    assert _same_words(str(engine.value)) == words.replace(VALUE, "0.5")
    assert value_problem({"constraints": [{"kind": "none"}], "message": words}, 0.5) == (
        words.replace(VALUE, "0.5")
    )
    assert all(VALUE in e["message"] for row in _names.VALUES.values() for e in row.values())
