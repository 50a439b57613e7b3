import json

import pandas as pd
from typer.testing import CliRunner

from otfair.cli import app
from otfair.datasets import list_datasets

runner = CliRunner()


def _all_output(res) -> str:
    try:
        return res.output + res.stderr
    except ValueError:  # older click: stderr not captured separately
        return res.output


def test_list_json_names_every_dataset():
    res = runner.invoke(app, ["datasets", "list", "--json"])
    assert res.exit_code == 0, res.output
    payload = json.loads(res.output)
    assert [row["name"] for row in payload["datasets"]] == list_datasets()
    adult = next(r for r in payload["datasets"] if r["name"] == "adult")
    assert adult["options"]["sensitive"] == ["sex", "race", "both"]
    assert "diabetes_gender" in payload["domain_shifts"]


def test_list_table():
    res = runner.invoke(app, ["datasets", "list"])
    assert res.exit_code == 0 and "communities_crime" in res.output


def test_describe_adult_json_matches_raw(data_dir):
    res = runner.invoke(app, ["datasets", "describe", "adult", "--json", "-o", "sensitive=both"])
    assert res.exit_code == 0, _all_output(res)
    out = json.loads(res.output)
    kw = {"skipinitialspace": True, "na_values": "?"}
    raw = pd.concat(
        [pd.read_csv(data_dir / "adult" / f, **kw) for f in ("adult.data", "adult.test")]
    ).dropna()
    female = raw[raw.sex == "Female"]
    assert out["rows"] == len(raw) == 45_222
    groups = out["sensitive"]["sex"]["groups"]
    assert groups["0"]["size"] == len(female)
    assert groups["0"]["base_rate"] == (female.Y.str.startswith(">50K")).mean()
    assert set(out["sensitive"]) == {"sex", "race"}
    assert out["features"] > out["raw_features"]  # one-hot encoding widened the table


def test_describe_regression_text():
    res = runner.invoke(
        app, ["datasets", "describe", "synthetic_regression", "-o", "n_samples=500"]
    )
    assert res.exit_code == 0, _all_output(res)
    assert "500 rows" in res.output and "group = 1: n = " in res.output and "std" in res.output


def test_describe_continuous_sensitive():
    res = runner.invoke(app, ["datasets", "describe", "bank", "-o", "sensitive=age", "--json"])
    out = json.loads(res.output)
    assert out["sensitive"]["age"]["kind"] == "continuous" and out["rows"] == 30_488


def test_describe_errors():
    res = runner.invoke(app, ["datasets", "describe", "nope"])
    assert res.exit_code == 2 and "Unknown dataset 'nope'" in _all_output(res)
    res = runner.invoke(app, ["datasets", "describe", "adult", "-o", "sensitive=age"])
    assert res.exit_code == 2 and "`sensitive` must be one of" in _all_output(res)
    res = runner.invoke(app, ["datasets", "describe", "adult", "-o", "oops"])
    assert res.exit_code == 2 and "key=value" in _all_output(res)
    res = runner.invoke(app, ["datasets", "describe", "adult", "--data-home", "/nonexistent"])
    assert res.exit_code == 2 and "does not exist" in _all_output(res)
