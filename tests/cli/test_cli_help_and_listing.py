"""Plain help placeholders, the methods list's paper column, honest notes (issue 28)."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from otfair_lab.cli import app
from otfair_lab.cli.methods import short_paper
from otfair_lab.experiments.methods import get_method, list_methods

COMMANDS = [
    ["audit"], ["fit"], ["sweep"], ["report"], ["demo"], ["reproduce"], ["bench"],
    ["datasets", "where"], ["datasets", "describe"], ["datasets", "fetch"],
    ["methods", "list"], ["methods", "describe"],
]  # fmt: skip


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help_has_no_typer_placeholders(command):
    res = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert not re.search(r"<(str|bool|int|float|path|list\[str\])>", res.output), res.output
    assert not re.search(r"\{[a-z_]+\}", res.output), res.output


def test_audit_help_shows_plain_metavars():
    out = CliRunner().invoke(app, ["audit", "--help"], env={"COLUMNS": "200"}).output
    assert "Usage: otfair audit [OPTIONS] FILE" in out
    assert re.search(r"--threshold\s+FLOAT", out) and re.search(r"--label\s+TEXT", out)
    assert re.search(r"--min-group-size\s+INTEGER", out)


def test_methods_list_has_a_paper_column():
    res = CliRunner().invoke(app, ["methods", "list"], env={"COLUMNS": "250"})
    assert res.exit_code == 0 and "paper" in res.output.splitlines()[2]
    assert "Buyl & De Bie" in res.output and "Kim et al." in res.output
    rows = json.loads(CliRunner().invoke(app, ["methods", "list", "--json"]).stdout)
    assert {r["name"]: r["paper"] for r in rows} == {
        n: get_method(n).paper for n in list_methods()
    }


@pytest.mark.parametrize(
    ("paper", "short"),
    [
        ("Kim et al., fairness through matching (FTM paper), §5.1 and App. D", "Kim et al."),
        ("Xian, Yin, Zhao 2023, §3-4", "Xian, Yin, Zhao 2023"),
        ("Kleindessner et al. 2023, Algorithms 1-2", "Kleindessner et al. 2023"),
        ("AdapFair (adapfair.txt), §III-IV and App. A-D2", "AdapFair"),
        ("Zhao et al. 2020, §3; AdapFair paper §IV and App. D", "Zhao et al. 2020"),
    ],
)
def test_short_paper(paper, short):
    assert short_paper(paper) == short


def test_fit_without_progress_bar_says_what_it_trains(data_dir):
    res = CliRunner().invoke(
        app, ["fit", "--dataset", "german", "--method", "ftm", "--epochs", "2", "--json"]
    )
    assert res.exit_code == 0, res.output
    assert "note: ftm: training 2 epochs on 800 training rows" in res.stderr
    assert json.loads(res.stdout)["method"] == "ftm"


def test_fit_says_when_a_default_leaves_few_optimizer_steps(data_dir):
    # the OTF paper's batch of 1,000 on German's 800 training rows: 1 step per epoch
    args = ["fit", "--dataset", "german", "--method", "unfair", "--epochs", "3", "--json"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "note: unfair: only 3 optimizer steps (3 epochs of 1 batch(es)" in res.stderr
    assert "-o solver=lbfgs -o tol=1e-4" in res.stderr  # the logistic model: full batch
    res = CliRunner().invoke(app, [*args, "-o", "batch_size=8"])  # 300 steps: no note
    assert res.exit_code == 0 and "optimizer steps" not in res.stderr
    res = CliRunner().invoke(app, [*args, "-o", "solver=lbfgs"])  # epochs caps iterations
    assert res.exit_code == 0 and "optimizer steps" not in res.stderr


def test_datasets_where_resolves_a_relative_data_dir(data_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(data_dir.parent)
    monkeypatch.setenv("OTFAIR_DATA_DIR", data_dir.name)
    res = CliRunner().invoke(app, ["datasets", "where", "--no-verify"])
    assert res.exit_code == 0, res.output
    assert str(data_dir.resolve()) in res.stdout
    assert f"'{data_dir.name}' is a relative path" in res.stdout
    out = json.loads(
        CliRunner().invoke(app, ["datasets", "where", "--no-verify", "--json"]).stdout
    )
    env = next(d for d in out["search_order"] if d["source"] == "$OTFAIR_DATA_DIR")
    assert env["resolved"] == str(data_dir.resolve())


def test_sweep_data_home_must_exist(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text('name = "s"\n[[datasets]]\nname = "synthetic"\n[[methods]]\nname = "unfair"\n')
    res = CliRunner().invoke(
        app,
        ["sweep", str(spec), "--out", str(tmp_path / "o"), "--data-home", str(tmp_path / "no")],
    )
    assert res.exit_code == 2 and "--data-home" in res.stderr and "not an existing" in res.stderr
