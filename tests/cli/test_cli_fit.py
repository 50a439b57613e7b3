import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from otfair_lab.cli import app

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))


@pytest.fixture
def dummy():
    import _exp_dummy_methods  # noqa: F401


def _fit(*args):
    return CliRunner().invoke(app, ["fit", "--dataset", "synthetic", *map(str, args)])


def test_fit_json_equals_run_single(dummy):
    from otfair_lab.experiments import run_single

    res = _fit("--method", "dummy-lr", "--strength", "0.1", "--seed", "2", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    ref = run_single("synthetic", "dummy-lr", strength=0.1, seed=2)
    assert out["accuracy"] == pytest.approx(ref["accuracy"])
    assert out["dp_gap"] == pytest.approx(ref["dp_gap"])
    assert out["reference"]["n_features"] == ref["reference"]["n_features"]


def test_fit_table_and_options(dummy):
    res = _fit("--method", "dummy-lr", "-o", "sleep=0.01", "--max-train-rows", "300")
    assert res.exit_code == 0, res.output
    assert "accuracy" in res.output and "n_train" in res.output and "300" in res.output


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["--method", "nope"], "Unknown method"),
        (["-o", "novalue"], "key=value"),
        (["--source-domain", "a"], "together"),
    ],
)
def test_fit_errors(dummy, args, match):
    res = _fit("--method", "dummy-lr", *args)
    assert res.exit_code == 2 and match in res.output


def test_fit_real_method_smoke():
    res = _fit("--method", "unfair", "--epochs", "1", "--max-train-rows", "500", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert 0.0 <= out["accuracy"] <= 1.0 and out["n_train"] == 500


def _one_line_error(res, *needles):
    """A user error: exit 2, one `error:` line on stderr naming the fix, no traceback."""
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert "Traceback" not in res.output
    for needle in needles:
        assert needle in lines[0], lines[0]


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--method", "otf", "-o", "lr=abc"], ["'lr' parameter of FairClassifier", "'abc'"]),
        (["--method", "otf", "-o", "nonsense=1"], ["'nonsense'", "valid options:", "lr"]),
        (["--method", "ftm-joint", "--notion", "eo"], ["supports the notion(s) dp", "'eo'"]),
        (["--method", "barycenter", "--notion", "eopp"], ["notion(s) dp;", "'eopp'"]),
        (["--method", "cenet", "--notion", "dp"], ["no choice of fairness notion"]),
        (
            ["--method", "ftm", "--source-domain", "us", "--target-domain", "non_us"],
            ["does not take a source and a target domain", "adapfair"],
        ),
        (["--method", "unfair-mlp", "--strength", "5"], ["no trade-off strength"]),
        (["--method", "nope"], ["Unknown method 'nope'"]),
        (["--method", "otf", "-o", "novalue"], ["key=value"]),
    ],
)
def test_fit_user_errors_are_one_line(args, needles):
    res = _fit(*args)
    _one_line_error(res, *needles)
    assert "matching='joint'" not in res.stderr


def test_fit_missing_data_file_names_the_fix(tmp_path, monkeypatch):
    from otfair.datasets import DataFileError

    def missing(*args, **kwargs):
        raise DataFileError("adult/adult.data is missing and has no download address.")

    argv = ["fit", "--dataset", "german", "--method", "otf"]
    res = CliRunner().invoke(app, [*argv, "--data-home", str(tmp_path / "absent")])
    _one_line_error(res, "data_home")
    monkeypatch.setattr("otfair.datasets.load_dataset", missing)
    res = CliRunner().invoke(app, ["fit", "--dataset", "adult", "--method", "otf"])
    _one_line_error(res, "adult.data", "otfair datasets fetch adult", "OTFAIR_DATA_DIR")


def test_fit_reports_default_strength_and_notion_used():
    from otfair_lab.experiments.methods import get_method

    res = _fit("--method", "otf", "--epochs", "1", "--max-train-rows", "300", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["strength"] == get_method("otf").strength_for("synthetic") == 0.01
    assert out["notion"] == "dp"
    res = _fit("--method", "unfair", "--epochs", "1", "--max-train-rows", "300", "--json")
    out = json.loads(res.stdout)
    assert out["strength"] is None and out["notion"] is None


def test_fit_data_home_reaches_the_loader(dummy, monkeypatch, tmp_path):
    import otfair.datasets

    seen = {}
    real = otfair.datasets.load_dataset

    def spy(name, **options):
        seen.update(options)
        options.pop("data_home")
        return real(name, **options)

    monkeypatch.setattr("otfair.datasets.load_dataset", spy)
    res = _fit("--method", "dummy-lr", "--data-home", tmp_path, "--json")
    assert res.exit_code == 0, res.output
    assert seen["data_home"] == str(tmp_path)


class _Verbose:
    """Records the ``verbose`` it was given (a method whose estimator takes one)."""

    seen: list = []

    def __init__(self, verbose=False, budget=3):
        self.verbose = verbose
        self.budget = budget

    def get_params(self, deep=True):
        return {"verbose": self.verbose, "budget": self.budget}

    def set_params(self, **params):
        self.__dict__.update(params)
        return self

    def fit(self, X, y, *, sensitive_features=None):
        from sklearn.linear_model import LogisticRegression

        _Verbose.seen.append(self.verbose)
        self.model_ = LogisticRegression().fit(X, y)
        return self

    def predict_proba(self, X):
        return self.model_.predict_proba(X)


@pytest.fixture
def verbose_method():
    from otfair_lab.experiments.methods import MethodSpec, list_methods, register_method

    if "_verbose" not in list_methods():
        register_method(
            MethodSpec(
                name="_verbose",
                task="classification",
                build=lambda strength, **kw: _Verbose(budget=kw.get("budget", 3)),
                strength_name=None,
                estimator=_Verbose,
                announce={"budget": "what the fit costs"},
            )
        )
    _Verbose.seen.clear()
    return _Verbose.seen


def test_progress_flag_sets_verbose_where_accepted(dummy, verbose_method):
    assert _fit("--method", "_verbose", "--progress").exit_code == 0
    assert _fit("--method", "_verbose", "--json").exit_code == 0  # default off with --json
    assert _fit("--method", "_verbose").exit_code == 0  # default off when not a terminal
    assert verbose_method == [True, False, False]
    assert _fit("--method", "dummy-lr", "--progress").exit_code == 0  # no verbose: ignored


def test_declared_budgets_are_announced(verbose_method):
    res = _fit("--method", "_verbose", "-o", "budget=7", "--json")
    assert res.exit_code == 0, res.output
    assert "note: _verbose: budget=7 (what the fit costs)" in res.stderr
    json.loads(res.stdout)  # the note does not pollute the JSON on stdout


def test_adapfair_announces_its_base_epochs():
    from otfair_lab.experiments.methods import check_options, get_method

    spec = get_method("adapfair")
    assert "base_epochs" in spec.announce and "base_epochs" in spec.option_names()
    check_options(spec, {"base_epochs": 5})
    est = spec.build(None, random_state=0, epochs=2, dataset=None, base_epochs=5)
    assert (est.epochs, est.base_epochs) == (2, 5)


def test_fit_help_lists_the_methods():
    from otfair_lab.experiments.methods import list_methods

    res = CliRunner().invoke(app, ["fit", "--help"])
    assert res.exit_code == 0
    text = " ".join(res.stdout.split())
    for name in list_methods("regression"):
        assert name in text
    assert "ftm-joint" in text and "adapfair-blind" in text
