"""``validate_params``: a public function's arguments checked against constraints, house words."""

from __future__ import annotations

import inspect
import re
from numbers import Real

import numpy as np
import pytest
import sklearn
from sklearn.base import BaseEstimator

from otfair.utils import (
    Interval,
    InvalidParameterError,
    StrOptions,
    check_values,
    fit_context,
    positive_int,
    validate_params,
)


@validate_params(
    {
        "n": [positive_int()],
        "how": [StrOptions({"fast", "exact"})],
        "tol": [Interval(Real, 0, None, closed="left"), None],
    }
)
def toy(data, n, *, how="fast", tol=None, **extra):
    """A toy solver."""
    return n, how, tol, extra


def _house(param: str, caller: str, accepts: str, value: object) -> str:
    return re.escape(
        f"The '{param}' parameter of {caller} must be {accepts}. Got {value!r} instead."
    )


def test_valid_arguments_pass_through_unchanged():
    assert toy([1], 3, how="exact", tol=0.5, other=1) == (3, "exact", 0.5, {"other": 1})
    assert toy(data=None, n=1) == (1, "fast", None, {})


@pytest.mark.parametrize(
    "args, kwargs, param, accepts, value",
    [
        (([], 0), {}, "n", "an int in the range [1, inf)", 0),
        (([],), {"n": 2.0}, "n", "an int in the range [1, inf)", 2.0),
        (([], 1), {"how": "slow"}, "how", "a str among {", "slow"),
        (([], 1), {"tol": -1.0}, "tol", "a float in the range [0.0, inf) or None", -1.0),
    ],
)
def test_a_bad_argument_is_named_in_the_house_words(args, kwargs, param, accepts, value):
    if accepts.endswith("{"):  # a set's order is not fixed: check the start and the end
        pattern = (
            re.escape(f"The '{param}' parameter of toy must be {accepts}")
            + r".*"
            + re.escape(f"Got {value!r} instead.")
        )
    else:
        pattern = _house(param, "toy", accepts, value)
    with pytest.raises(InvalidParameterError, match=pattern):
        toy(*args, **kwargs)


def test_the_message_is_fit_contexts():
    """A function and an estimator word the same refusal alike."""

    class Est(BaseEstimator):
        _parameter_constraints = {"n": [positive_int()]}

        def __init__(self, n=1):
            self.n = n

        @fit_context
        def fit(self, X=None):
            return self

    with pytest.raises(InvalidParameterError) as from_fit:
        Est(n=0).fit()
    with pytest.raises(InvalidParameterError) as from_function:
        toy([], 0)
    assert str(from_fit.value).replace("Est", "toy") == str(from_function.value)


def test_defaults_are_checked_and_a_bad_call_is_pythons_error():
    @validate_params({"k": [positive_int()]})
    def bad_default(k=0):
        return k

    with pytest.raises(InvalidParameterError, match="The 'k' parameter of bad_default"):
        bad_default()
    with pytest.raises(TypeError, match="missing a required argument: 'n'"):
        toy([])


def test_the_signature_docstring_and_constraints_are_kept():
    assert list(inspect.signature(toy).parameters) == ["data", "n", "how", "tol", "extra"]
    assert toy.__doc__ == "A toy solver." and toy.__name__ == "toy"
    assert set(toy.__otfair_parameter_constraints__) == {"n", "how", "tol"}


def test_an_unknown_argument_fails_at_decoration():
    with pytest.raises(TypeError, match=r"has no argument\(s\) \['m'\]"):

        @validate_params({"m": [positive_int()]})
        def f(n):
            return n


def test_skip_parameter_validation_is_honoured():
    with sklearn.config_context(skip_parameter_validation=True):
        assert toy([], 0)[0] == 0


def test_errors_raised_inside_are_not_rewritten():
    """Unlike scikit-learn's decorator: an estimator's refusal keeps the estimator's name."""

    @validate_params({"n": [positive_int()]})
    def wraps_a_fit(n):
        check_values({"n": [positive_int()]}, {"n": -n}, caller="Inner")

    with pytest.raises(InvalidParameterError, match="The 'n' parameter of Inner must be"):
        wraps_a_fit(1)


def test_a_list_for_a_strength_names_fairness_path():
    constraints = {"strength": [Interval(Real, 0, None, closed="left")]}
    with pytest.raises(
        ValueError, match=r"`strength` must be a number; got \[0.0, 1.0\].*fairness_path"
    ):
        check_values(constraints, {"strength": [0.0, 1.0]}, caller="X")
    with pytest.raises(
        InvalidParameterError, match="The 'strength' parameter of X"
    ):  # the CLI's words
        check_values(constraints, {"strength": [0.0, 1.0]}, caller="X", refuse_paths=False)
    accepting = {"strength": [*constraints["strength"], "array-like"]}
    check_values(accepting, {"strength": np.array([0.2, 0.4])}, caller="X")  # one per attribute


# ------------------------------------------------------------ the public functions
def _applied():
    import torch
    from sklearn.linear_model import LogisticRegression

    from otfair.estimators import fairness_path
    from otfair.metrics import (
        accuracy,
        equalized_odds_gap,
        fairness_report,
        subset_fairness,
        tv_demographic_parity,
    )
    from otfair.ot import cost_matrix, match, sharp_sinkhorn, sinkhorn
    from otfair.penalties import make_penalty

    y, p, s = [0, 1, 0, 1], [0.2, 0.7, 0.4, 0.9], [0, 0, 1, 1]
    X = torch.zeros(3, 2)
    M = torch.ones(3, 3)
    return [
        (
            fairness_path,
            ("not an estimator", X, y),
            {"sensitive_features": s, "strengths": [1]},
            "estimator",
            "an object implementing 'fit'",
        ),
        (
            fairness_path,
            (LogisticRegression(), X, y),
            {"sensitive_features": s, "strengths": "1"},
            "strengths",
            "an array-like or",
        ),
        (make_penalty, (5,), {}, "name", "an instance of 'str'"),
        (make_penalty, ("gapreg",), {"notion": 3}, "notion", "an instance of 'str' or"),
        (sinkhorn, (None, None, M, 1.0), {"tol": -1.0}, "tol", "a float in the range [0.0, inf)"),
        (sinkhorn, (None, None, M, 1.0), {"warn": "yes"}, "warn", "an instance of 'bool'"),
        (
            sharp_sinkhorn,
            (None, None, M, 1.0),
            {"max_iter": 0},
            "max_iter",
            "an int in the range [1, inf)",
        ),
        (match, (X, X), {"seed": "a"}, "seed", "an int in the range (-inf, inf) or None"),
        (cost_matrix, (X, X), {"metric": "cosine"}, "metric", "a str among"),
        (accuracy, (y, p), {"threshold": 1.5}, "threshold", "a float in the range [0.0, 1.0]"),
        (
            equalized_odds_gap,
            (y, p),
            {"sensitive_features": s, "agg": "max"},
            "agg",
            "a str among",
        ),
        (
            tv_demographic_parity,
            (y, p),
            {"sensitive_features": s, "bins": 0},
            "bins",
            "an int in the range [1, inf)",
        ),
        (
            fairness_report,
            (y, p),
            {"sensitive_features": s, "task": "ranking"},
            "task",
            "a str among",
        ),
        (
            subset_fairness,
            (X, p),
            {"sensitive_features": s, "n_subsets": 0},
            "n_subsets",
            "an int in the range [1, inf)",
        ),
    ]


@pytest.mark.parametrize("case", range(14))
def test_public_functions_name_the_argument_in_the_house_words(case):
    func, args, kwargs, param, accepts = _applied()[case]
    name = func.__name__
    pattern = (
        re.escape(f"The '{param}' parameter of {name} must be {accepts}") + r".* Got .* instead\."
    )
    with pytest.raises(InvalidParameterError, match=pattern):
        func(*args, **kwargs)
    assert param in func.__otfair_parameter_constraints__


# ------------------------------------------------------------ one trigger per estimator
def test_every_estimator_validates_through_fit_context():
    import otfair.estimators as estimators

    classes = {
        obj
        for name in dir(estimators)
        if isinstance(obj := getattr(estimators, name), type)
        and issubclass(obj, BaseEstimator)
        and "_parameter_constraints" in {k for c in obj.__mro__ for k in vars(c)}
        and callable(getattr(obj, "fit", None))
    }
    assert len(classes) >= 15
    missing = sorted(
        c.__name__ for c in classes if not getattr(c.fit, "__otfair_fit_context__", False)
    )
    assert not missing, f"decorate fit with otfair.utils.fit_context: {missing}"


def test_no_module_calls_validate_params_by_hand():
    import ast
    from pathlib import Path

    src = Path(__file__).resolve().parents[2] / "src"
    calls = [
        f"{path.relative_to(src)}:{node.lineno}"
        for path in sorted(src.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "_validate_params"
    ]
    assert not calls, f"validate through otfair.utils.fit_context / check_values: {calls}"
