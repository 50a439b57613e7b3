"""``otfair methods describe M`` lists each option once, with a description."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from otfair_lab.cli import app
from otfair_lab.cli._option_docs import param_descriptions
from otfair_lab.experiments.methods import list_methods


def _describe(method, *extra):
    res = CliRunner().invoke(app, ["methods", "describe", method, *extra])
    assert res.exit_code == 0, res.output
    return res


@pytest.mark.parametrize("method", list_methods())
def test_each_option_once(method):
    info = json.loads(_describe(method, "--json").stdout)
    shown = info["option_help"]
    aliases = [r["alias"] for r in shown.values() if r["alias"]]
    # every accepted key appears exactly once: as an option or as another's alias
    assert sorted([*shown, *aliases]) == sorted(info["options"])
    assert all(r["expects"] == info["options"][k] for k, r in shown.items())


def test_described_from_the_owning_class():
    info = json.loads(_describe("otf", "--json").stdout)["option_help"]
    assert info["eps"]["alias"] == "penalty__eps" and "penalty__eps" not in info
    assert "Entropic smoothing" in info["eps"]["description"]  # the OTF object's doc
    assert info["lr"]["description"].startswith("Adam learning rate")  # the classifier's
    adapfair = json.loads(_describe("adapfair", "--json").stdout)["option_help"]
    # "Passed to AdapFairPreprocessor" is followed to that class's own entry
    assert "Passed to" not in adapfair["n_blocks"]["description"]
    described = sum(r["description"] != "-" for r in info.values())
    assert described == len(info)
    table = _describe("otf").stdout
    assert table.count("penalty__eps") == 1 and "Entropic smoothing" in table


def test_param_descriptions_parser():
    class Doc:
        """Title.

        Parameters
        ----------
        a, b : int, default=1
            Two numbers. More text.
        c
            Untyped entry.

        Attributes
        ----------
        d : int
            Not a parameter.
        """

    assert param_descriptions(Doc) == {
        "a": "Two numbers.",
        "b": "Two numbers.",
        "c": "Untyped entry.",
    }
