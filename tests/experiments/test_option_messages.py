"""One message per bad option value: Python, ``otfair fit`` and a sweep spec say the same.

Parameters are declared once, in each estimator's ``_parameter_constraints``: the
registry (``run_single``), the CLI (``otfair fit``) and a TOML sweep spec (``load_spec``
then the request check that starts every sweep, ``check_request``) validate a run's
strength, ``epochs`` and ``-o`` options against them. The reference message of each
case is what the estimator class's own ``fit`` raises for that value, so the test
compares four independent entry points to the estimator itself. A notion the method
does not take is the registry's message (the estimator's ``notion`` accepts any name and
its penalty refuses it later, in other words); there the reference is ``run_single``.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from otfair.datasets import load_dataset
from otfair.estimators import CENet, FairClassifier, ReductionClassifier
from otfair_lab.cli import app
from otfair_lab.experiments import run_single
from otfair_lab.experiments._preflight import RequestError, check_request
from otfair_lab.experiments._spec import ConfigError, load_spec


def _fit_error(estimator: Any, task: str = "classification") -> str:
    """The message ``estimator.fit`` raises (the reference of a case)."""
    name = "synthetic" if task == "classification" else "synthetic_regression"
    split = load_dataset(name, n_samples=60).split(test_size=0.5, random_state=0)
    with pytest.raises(ValueError) as info:
        estimator.fit(split.X_train, split.y_train, sensitive_features=split.s_train)
    return str(info.value).splitlines()[0]


#: id -> (method, dataset, run_single keywords, `otfair fit` arguments, the method's
#: TOML lines, the estimator whose fit gives the reference message, or None: run_single's)
CASES: dict[str, tuple[str, str, dict[str, Any], list[str], str, Any]] = {
    "epochs=0": (
        "otf", "synthetic", {"epochs": 0}, ["--epochs", "0"], "epochs = 0",
        lambda: FairClassifier("otf", 0.01, epochs=0),
    ),
    "lr=-1": (
        "otf", "synthetic", {"method_options": {"lr": -1}}, ["-o", "lr=-1"],
        "options = { lr = -1 }", lambda: FairClassifier("otf", 0.01, lr=-1),
    ),
    "batch_size=0": (
        "gapreg", "synthetic", {"method_options": {"batch_size": 0}}, ["-o", "batch_size=0"],
        "options = { batch_size = 0 }", lambda: FairClassifier("gapreg", 1.0, batch_size=0),
    ),
    "lr='abc'": (
        "ftm", "synthetic", {"method_options": {"lr": "abc"}}, ["-o", 'lr="abc"'],
        'options = { lr = "abc" }', lambda: FairClassifier("ftm", 1.0, lr="abc"),
    ),
    "strength=-0.5": (
        "otf", "synthetic", {"strength": -0.5}, ["--strength", "-0.5"], "strengths = [-0.5]",
        lambda: FairClassifier("otf", -0.5),
    ),
    # the strength reaches CENet's `strength` and ReductionClassifier's `eps`
    "cenet lam=-1": (
        "cenet", "synthetic_regression", {"strength": -1.0}, ["--strength", "-1"],
        "strengths = [-1.0]", lambda: CENet(-1.0),
    ),
    "reduction eps=-0.1": (
        "reduction", "synthetic", {"strength": -0.1}, ["--strength", "-0.1"],
        "strengths = [-0.1]", lambda: ReductionClassifier(-0.1),
    ),
    "cenet encoder_hidden": (
        "cenet", "synthetic_regression", {"method_options": {"encoder_hidden": [8, 0]}},
        ["-o", "encoder_hidden=[8, 0]"], "options = { encoder_hidden = [8, 0] }",
        lambda: CENet(1.0, encoder_hidden=[8, 0]),
    ),
    "notion": (
        "barycenter", "synthetic", {"notion": "eo"}, ["--notion", "eo"], 'notions = ["eo"]',
        None,
    ),
}  # fmt: skip


def _reference(case: str) -> str:
    method, dataset, kwargs, _, _, make = CASES[case]
    if make is not None:
        return _fit_error(make(), "regression" if "regression" in dataset else "classification")
    with pytest.raises(ValueError) as info:
        run_single(dataset, method, **kwargs)
    return str(info.value)


def _spec(tmp_path: Path, case: str) -> Path:
    method, dataset, _, _, lines, _ = CASES[case]
    path = tmp_path / "spec.toml"
    path.write_text(
        f'[[datasets]]\nname = "{dataset}"\n[[methods]]\nname = "{method}"\n{lines}\n',
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("case", list(CASES))
def test_python_cli_and_spec_give_the_estimators_message(tmp_path, case):
    method, dataset, kwargs, args, _, make = CASES[case]
    expected = _reference(case)
    if make is not None:  # the parameter's constraint, naming it and the estimator
        assert expected.startswith("The '") and " parameter of " in expected, expected
    # (a) Python: the registry's run
    with pytest.raises(ValueError) as info:
        run_single(dataset, method, **kwargs)
    assert str(info.value).splitlines()[0] == expected
    # (b) the CLI: one line, exit 2, the same words
    res = CliRunner().invoke(app, ["fit", "--dataset", dataset, "--method", method, *args])
    assert res.exit_code == 2, res.output
    assert res.stderr.strip() == f"error: {expected}", res.stderr
    # (c) a TOML sweep spec: parsed (names) then checked as every sweep starts
    try:
        check_request(load_spec(_spec(tmp_path, case)).runs(), probe=False)
    except (ConfigError, RequestError) as exc:
        message = str(exc)
    else:
        pytest.fail("the spec was accepted")
    assert expected in message and "\n" not in message, message


def test_the_spec_checks_every_epochs_key_against_the_estimator():
    """``epochs`` of the spec, of a method and of a profile: the estimator's range."""
    expected = _reference("epochs=0")
    base = {"datasets": [{"name": "synthetic"}], "methods": [{"name": "otf"}]}
    from otfair_lab.experiments._spec import parse_spec

    for raw in (
        {**base, "epochs": 0},
        {**base, "methods": [{"name": "otf", "epochs": 0}]},  # refused as it is read
        {**base, "profiles": {"quick": {"epochs": 0}}},
    ):
        profile = "quick" if "profiles" in raw else "full"
        with pytest.raises((RequestError, ConfigError)) as info:
            check_request(parse_spec(raw).runs(profile), probe=False)
        assert expected in str(info.value)
    # a method's own epochs wins over the spec's, 0 included (not read as "unset")
    spec = parse_spec({**base, "epochs": 5, "methods": [{"name": "otf", "epochs": 3}]})
    method = replace(spec.methods[0], epochs=0)
    assert {c.epochs for c in replace(spec, methods=(method,)).runs()} == {0}


def test_a_method_without_epochs_names_itself():
    """bgl has no `epochs`: a bad one is refused with the same interval, naming the method."""
    with pytest.raises(ValueError, match=r"The 'epochs' parameter of method 'bgl' must be an "
                       r"int in the range \[1, inf\)\. Got 0 instead\."):  # fmt: skip
        run_single("synthetic_regression", "bgl", epochs=0)


def test_help_shows_the_constraint_it_checks():
    """`otfair methods describe` says what an option accepts in its constraint's words."""
    from sklearn.utils._param_validation import make_constraint

    from otfair_lab.experiments.methods import describe_option, get_method

    constraints = FairClassifier._parameter_constraints["lr"]  # a float, or "auto"
    words = " or ".join(str(make_constraint(c)) for c in constraints)
    assert describe_option(get_method("otf"), "lr") == words
    assert words in _reference("lr=-1")


def test_strength_reaches_the_parameter_it_is_checked_as():
    """The parameter a strength is checked as is the one the built estimator receives."""
    from otfair_lab.experiments.methods import get_method, list_methods

    for name in list_methods():
        spec = get_method(name)
        param = spec.strength_parameter
        if param is None:
            continue
        built = spec.build(0.37, random_state=0)
        params = built.get_params(deep=True)
        found = [k for k, v in params.items() if k.split("__")[-1] == param and v == 0.37]
        assert found, (name, param)


_PROGRAM = shutil.which("otfair")


@pytest.mark.slow
@pytest.mark.skipif(_PROGRAM is None, reason="the otfair console script is not installed")
@pytest.mark.parametrize("case", ["epochs=0", "lr=-1", "notion"])
def test_real_processes_answer_in_one_line(tmp_path, case):
    """``otfair fit`` and ``otfair sweep`` as processes: stderr one line, exit 2."""
    method, dataset, _, args, _, _ = CASES[case]
    expected = _reference(case)
    fit = [str(_PROGRAM), "fit", "--dataset", dataset, "--method", method]
    sweep = [str(_PROGRAM), "sweep", str(_spec(tmp_path, case))]
    for command in (fit + args, [*sweep, "--out", str(tmp_path / "out"), "--no-progress"]):
        proc = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
        assert expected in lines[0]
    assert not (tmp_path / "out").exists()  # refused before anything is stored
