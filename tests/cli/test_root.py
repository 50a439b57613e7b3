from typer.testing import CliRunner

from otfair import __version__
from otfair_lab.cli import app


def test_version_and_help():
    runner = CliRunner()
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and __version__ in res.output
    res = runner.invoke(app, ["--help"])
    assert res.exit_code == 0 and "optimal transport" in res.output


def test_methods_list_and_describe():
    import json

    from otfair_lab.experiments.methods import get_method, list_methods

    runner = CliRunner()
    res = runner.invoke(app, ["methods", "list", "--json"])
    assert res.exit_code == 0, res.output
    listed = json.loads(res.stdout)
    assert [m["name"] for m in listed] == list_methods()
    regression = json.loads(runner.invoke(app, ["methods", "list", "--task", "regression",
                                                "--json"]).stdout)  # fmt: skip
    assert [m["name"] for m in regression] == list_methods("regression")
    table = runner.invoke(app, ["methods"])
    assert table.exit_code == 0 and "ftm-joint" in table.stdout
    res = runner.invoke(app, ["methods", "describe", "adapfair", "--json"])
    assert res.exit_code == 0, res.output
    info = json.loads(res.stdout)
    spec = get_method("adapfair")
    assert info["notions"] == ["dp", "eopp", "eo"] and info["strength"] == "lambda"
    assert info["strength_grid"] == list(spec.default_strengths)
    assert info["default_strength"] == 0.5 and info["takes_domains"] is True
    # what the option accepts: the words of its constraint (AdapFairClassifier's)
    assert info["options"]["base_epochs"] == "an int in the range [1, inf)"
    assert "base_epochs" in info["announced"]
    assert info["paper"]
    text = runner.invoke(app, ["methods", "describe", "bgl"])
    assert text.exit_code == 0 and "law_school" in text.stdout and "max_iter" in text.stdout


def test_methods_errors_are_one_line():
    runner = CliRunner()
    for argv in (["methods", "describe", "nope"], ["methods", "list", "--task", "x"]):
        res = runner.invoke(app, argv)
        assert res.exit_code == 2
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ")
