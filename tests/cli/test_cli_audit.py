"""`otfair audit` on temporary CSV files (typer CliRunner)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import sklearn.metrics as skm
from fairlearn.metrics import demographic_parity_difference, equalized_odds_difference
from typer.testing import CliRunner

from otfair_lab.cli import app

CLASSIFICATION_KEYS = [
    "accuracy", "auc", "dp_gap", "mean_score_gap", "wdp", "ksdp", "tvdp", "tpr_gap",
    "fpr_gap", "eo_gap", "pdp_violation", "peo_violation",
]  # fmt: skip
REGRESSION_KEYS = ["mse", "r2", "error_gap", "wdp", "ksdp"]


@pytest.fixture
def predictions(tmp_path):
    rng = np.random.default_rng(7)
    n = 400
    sex = rng.choice(["Female", "Male"], n)
    race = rng.choice(["a", "b"], n)
    y = rng.integers(0, 2, n)
    p = 1 / (1 + np.exp(-(y + (sex == "Male") - 1 + rng.normal(size=n))))
    frame = pd.DataFrame(
        {
            "label": y,
            "score": p,
            "sex": sex,
            "race": race,
            "age": rng.normal(40, 10, n),
            "target": rng.normal(size=n) + (sex == "Male"),
        }
    )
    frame["pred"] = frame["target"] + rng.normal(scale=0.5, size=n)
    path = tmp_path / "preds.csv"
    frame.to_csv(path, index=False)
    return path, frame


def _run(*args):
    return CliRunner().invoke(app, ["audit", *map(str, args)])


def test_json_classification_matches_references(predictions):
    path, frame = predictions
    res = _run(path, "--label", "label", "--score", "score", "--sensitive", "sex", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert set(CLASSIFICATION_KEYS) <= set(out) and "by_group" in out
    y, p, s = frame["label"], frame["score"], frame["sex"]
    yhat = (p >= 0.5).astype(int)
    assert out["accuracy"] == pytest.approx(skm.accuracy_score(y, yhat))
    assert out["auc"] == pytest.approx(skm.roc_auc_score(y, p))
    assert out["dp_gap"] == pytest.approx(
        demographic_parity_difference(y, yhat, sensitive_features=s)
    )
    assert out["eo_gap"] == pytest.approx(
        equalized_odds_difference(y, yhat, sensitive_features=s, agg="mean")
    )
    assert [g["group"] for g in out["by_group"]] == ["Female", "Male"]
    assert sum(g["n"] for g in out["by_group"]) == len(frame)


def test_threshold_and_several_sensitive_columns(predictions):
    path, frame = predictions
    res = _run(
        path, "--label", "label", "--score", "score", "--sensitive", "sex",
        "--sensitive", "race", "--sensitive", "age", "--threshold", "0.7", "--json",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    yhat = (frame["score"] >= 0.7).astype(int)
    expected = demographic_parity_difference(
        frame["label"], yhat, sensitive_features=frame[["sex", "race"]]
    )
    assert out["dp_gap"] == pytest.approx(expected)  # age is continuous: not a group
    assert out["n_groups"] == 4 and len(out["by_group"]) == 4


def test_table_output(predictions):
    path, _ = predictions
    res = _run(path, "--label", "label", "--score", "score", "--sensitive", "sex")
    assert res.exit_code == 0, res.output
    for word in ("dp_gap", "peo_violation", "by group", "Female", "Male"):
        assert word in res.stdout


def test_regression_includes_accuracy_disparity(predictions):
    path, frame = predictions
    args = [path, "--label", "target", "--score", "pred", "--sensitive", "sex", "--task"]
    res = _run(*args, "regression", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert set(REGRESSION_KEYS) <= set(out)
    assert out["r2"] == pytest.approx(skm.r2_score(frame["target"], frame["pred"]))
    audit = out["accuracy_disparity"]
    assert audit["error_gap"] == pytest.approx(out["error_gap"])
    table = _run(*args, "regression")
    assert table.exit_code == 0 and "accuracy disparity" in table.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--label", "nope", "--score", "score", "--sensitive", "sex"], "unknown column"),
        (["--label", "label", "--score", "score", "--sensitive", "gender"], "available: label"),
        (["--label", "age", "--score", "score", "--sensitive", "sex"], "binary labels"),
        (["--label", "label", "--score", "age", "--sensitive", "sex"], "probabilities"),
        (["--label", "label", "--score", "score", "--sensitive", "sex", "--task", "x"], "--task"),
    ],
)
def test_errors_exit_2_with_one_line(predictions, args, message):
    path, _ = predictions
    res = _run(path, *args)
    assert res.exit_code == 2
    assert message in res.stderr
    assert "Traceback" not in res.output and len(res.stderr.strip().splitlines()) == 1


def test_missing_file_nan_and_single_group(tmp_path):
    res = _run(tmp_path / "absent.csv", "--label", "y", "--score", "p", "--sensitive", "s")
    assert res.exit_code == 2 and "not found" in res.stderr
    path = tmp_path / "bad.csv"
    pd.DataFrame({"y": [0, 1, 1], "p": [0.1, None, 0.3], "s": [0, 1, 0]}).to_csv(path, index=False)
    res = _run(path, "--label", "y", "--score", "p", "--sensitive", "s")
    assert res.exit_code == 2 and "missing value" in res.stderr
    pd.DataFrame({"y": [0, 1, 1], "p": [0.1, 0.2, 0.3], "s": [1, 1, 1]}).to_csv(path, index=False)
    res = _run(path, "--label", "y", "--score", "p", "--sensitive", "s")
    assert res.exit_code == 2 and "at least 2 groups" in res.stderr


def _one_line_error(res, needle):
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], lines


def test_max_categories_must_be_positive(predictions):
    path, _ = predictions
    base = [path, "--label", "label", "--score", "score", "--sensitive", "sex"]
    _one_line_error(_run(*base, "--max-categories", "-3"), "--max-categories must be >= 1")
    _one_line_error(_run(*base, "--max-categories", "0"), "--max-categories")


def test_intersectional_groups_carry_column_names(tmp_path):
    rng = np.random.default_rng(1)
    n = 200
    frame = pd.DataFrame(
        {
            "y": rng.integers(0, 2, n),
            "p": rng.random(n),
            "sex": rng.integers(0, 2, n).astype(float),  # read back as 0.0 / 1.0
            "race": rng.integers(0, 2, n),
        }
    )
    path = tmp_path / "p.csv"
    frame.to_csv(path, index=False)
    res = _run(path, "--label", "y", "--score", "p", "--sensitive", "sex", "--sensitive",
               "race", "--json")  # fmt: skip
    assert res.exit_code == 0, res.output
    groups = [g["group"] for g in json.loads(res.stdout)["by_group"]]
    assert groups == ["sex=0,race=0", "sex=0,race=1", "sex=1,race=0", "sex=1,race=1"]
    for g in json.loads(res.stdout)["by_group"]:
        sex, race = (int(part.split("=")[1]) for part in g["group"].split(","))
        assert g["n"] == int(((frame["sex"] == sex) & (frame["race"] == race)).sum())


def test_hard_predictions_warn(predictions, tmp_path):
    _, frame = predictions
    frame = frame.assign(hard=(frame["score"] >= 0.5).astype(int))
    path = tmp_path / "hard.csv"
    frame.to_csv(path, index=False)
    res = _run(path, "--label", "label", "--score", "hard", "--sensitive", "sex", "--json")
    assert res.exit_code == 0, res.output
    assert "note: --score column 'hard' holds only 0/1 values" in res.stderr
    json.loads(res.stdout)
    res = _run(path, "--label", "label", "--score", "score", "--sensitive", "sex", "--json")
    assert res.exit_code == 0 and "0/1" not in res.stderr


def test_pos_label_for_string_labels(predictions, tmp_path):
    _, frame = predictions
    frame = frame.assign(income=np.where(frame["label"] == 1, ">50K", "<=50K"))
    path = tmp_path / "income.csv"
    frame.to_csv(path, index=False)
    base = [path, "--score", "score", "--sensitive", "sex", "--json"]
    res = _run(*base, "--label", "income", "--pos-label", ">50K")
    assert res.exit_code == 0, res.output
    ref = json.loads(_run(*base, "--label", "label").stdout)
    out = json.loads(res.stdout)
    assert out["accuracy"] == pytest.approx(ref["accuracy"])
    assert out["auc"] == pytest.approx(skm.roc_auc_score(frame["label"], frame["score"]))
    _one_line_error(_run(*base, "--label", "income"), "--pos-label")
    _one_line_error(_run(*base, "--label", "income", "--pos-label", "yes"), "values: <=50K")
    reg = [path, "--label", "target", "--score", "pred", "--sensitive", "sex"]
    _one_line_error(_run(*reg, "--task", "regression", "--pos-label", "x"), "classification")


def test_regression_audit_names_its_two_groups(tmp_path):
    rng = np.random.default_rng(2)
    n = 150
    sex = np.where(rng.random(n) < 0.4, "female", "male")
    frame = pd.DataFrame({"t": rng.normal(size=n), "sex": sex})
    frame["p"] = frame["t"] + rng.normal(scale=np.where(sex == "male", 0.3, 0.8))
    path = tmp_path / "r.csv"
    frame.to_csv(path, index=False)
    res = _run(path, "--label", "t", "--score", "p", "--sensitive", "sex", "--task", "regression")
    assert res.exit_code == 0, res.output
    assert "0 = female, 1 = male" in res.stdout
    res = _run(path, "--label", "t", "--score", "p", "--sensitive", "sex", "--task", "regression",
               "--json")  # fmt: skip
    audit = json.loads(res.stdout)["accuracy_disparity"]
    assert audit["groups"] == ["female", "male"] and audit["n_0"] == int((sex == "female").sum())


def test_regression_audit_skipped_with_three_groups(tmp_path):
    rng = np.random.default_rng(2)
    n = 150
    frame = pd.DataFrame({"t": rng.normal(size=n), "s": rng.integers(0, 3, n)})
    frame["p"] = frame["t"] + rng.normal(scale=0.3, size=n)
    path = tmp_path / "r.csv"
    frame.to_csv(path, index=False)
    res = _run(path, "--label", "t", "--score", "p", "--sensitive", "s", "--task", "regression",
               "--json")  # fmt: skip
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["accuracy_disparity"] is None
    assert "needs exactly two sensitive groups, found 3" in res.stderr


def _small_group_csv(tmp_path):
    # COMPAS-like: two large groups and two of 2 and 6 people with extreme rates
    race = np.array(["Black"] * 200 + ["White"] * 200 + ["Asian"] * 2 + ["Native"] * 6)
    rng = np.random.default_rng(3)
    score = np.r_[rng.uniform(0.3, 0.8, 400), [0.9, 0.9], [0.1] * 6]
    frame = pd.DataFrame({"y": rng.integers(0, 2, len(race)), "p": score, "race": race})
    path = tmp_path / "small.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_small_groups_flagged_left_out_and_named_on_stderr(tmp_path):
    path, frame = _small_group_csv(tmp_path)
    res = _run(path, "--label", "y", "--score", "p", "--sensitive", "race", "--json")
    assert res.exit_code == 0, res.output
    warning = [line for line in res.stderr.splitlines() if line.startswith("warning:")]
    assert len(warning) == 1 and "Asian (n=2)" in warning[0] and "Native (n=6)" in warning[0]
    out = json.loads(res.stdout)
    big = frame["race"].isin(["Black", "White"])
    yhat = (frame["p"] >= 0.5).astype(int)
    assert out["dp_gap"] == pytest.approx(
        demographic_parity_difference(
            frame["y"][big], yhat[big], sensitive_features=frame["race"][big]
        )
    )
    flags = {r["group"]: r["small"] for r in out["by_group"]}
    assert flags == {"Asian": True, "Black": False, "Native": True, "White": False}
    everyone = _run(path, "--label", "y", "--score", "p", "--sensitive", "race", "--json",
                    "--min-group-size", "0")  # fmt: skip
    assert "min_group_size" not in everyone.stderr  # no small-group warning at 0
    # the two Asian rows have no y = 1: their TPR, and the TPR gap, are undefined
    assert "tpr_gap and the equalized-odds gaps are NaN: group(s) Asian" in everyone.stderr
    assert json.loads(everyone.stdout)["dp_gap"] == pytest.approx(1.0)  # Asian 1 vs Native 0


def test_continuous_declared_and_matches_the_library(predictions):
    path, frame = predictions
    frame = frame.assign(level=np.arange(len(frame)) % 3)
    frame.to_csv(path, index=False)
    groups = _run(path, "--label", "label", "--score", "score", "--sensitive", "level", "--json")
    assert json.loads(groups.stdout)["n_groups"] == 3  # 0/1/2 are groups by default
    cont = _run(path, "--label", "label", "--score", "score", "--sensitive", "level",
                "--continuous", "level", "--json")  # fmt: skip
    out = json.loads(cont.stdout)
    assert out["n_groups"] == 0
    assert out["pdp_violation"] == pytest.approx(
        abs(np.corrcoef(frame["score"], frame["level"])[0, 1])
    )


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--sensitive", "sex", "--sensitive", "sex"], "--sensitive names 'sex' more than once"),
        (["--sensitive", "sex", "--continuous", "age"], "--continuous 'age' is not a --sensitive"),
        (["--sensitive", "sex", "--min-group-size", "-1"], "--min-group-size must be >= 0"),
    ],
)
def test_audit_request_errors_are_one_line(predictions, args, needle):
    path, _ = predictions
    res = _run(path, "--label", "label", "--score", "score", *args)
    assert res.exit_code == 2 and "Traceback" not in res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], res.stderr


def test_header_only_and_empty_csv_are_one_line(tmp_path):
    header = tmp_path / "header.csv"
    header.write_text("y,p,s\n")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    for path, needle in ((header, "has a header but no rows"), (empty, "is empty")):
        res = _run(path, "--label", "y", "--score", "p", "--sensitive", "s")
        assert res.exit_code == 2, res.output
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and needle in lines[0], res.stderr


def test_cli_default_min_group_size_is_the_library_default():
    from otfair.metrics._report import MIN_GROUP_SIZE as LIB
    from otfair_lab.cli.audit import MIN_GROUP_SIZE as CLI

    assert CLI == LIB


def test_string_predictions_with_pos_label(predictions, tmp_path):
    """`--score` may hold predicted labels (what `pipe.predict` returns) with --pos-label."""
    _, frame = predictions
    hard = (frame["score"] >= 0.5).astype(int)
    frame = frame.assign(
        income=np.where(frame["label"] == 1, ">50K", "<=50K"),
        predicted=np.where(hard == 1, ">50K", "<=50K"),
        typo=np.where(hard == 1, ">50K.", "<=50K"),
    )
    path = tmp_path / "income.csv"
    frame.to_csv(path, index=False)
    base = [path, "--label", "income", "--sensitive", "sex", "--json"]
    res = _run(*base, "--score", "predicted", "--pos-label", ">50K")
    assert res.exit_code == 0, res.output
    assert "holds predicted labels" in res.stderr
    out = json.loads(res.stdout)
    assert out["dp_gap"] == pytest.approx(
        demographic_parity_difference(frame["label"], hard, sensitive_features=frame["sex"])
    )
    assert out["accuracy"] == pytest.approx(skm.accuracy_score(frame["label"], hard))
    _one_line_error(_run(*base, "--score", "typo", "--pos-label", ">50K"), ">50K.")
    numeric = [path, "--label", "label", "--sensitive", "sex"]
    _one_line_error(_run(*numeric, "--score", "predicted"), "--pos-label")


def test_a_typo_in_a_numeric_column_names_its_cell(tmp_path):
    """A score column of numbers with one typo reads as strings: the error names that
    cell's CSV line, not --pos-label."""
    path = tmp_path / "typo.csv"
    path.write_text("y,p,s\n1,0.9,0\n0,0.2,1\n1,abc,1\n0,0.4,0\n1,0.7,1\n")
    res = _run(path, "--label", "y", "--score", "p", "--sensitive", "s")
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "line 4: 'abc'" in lines[0] and "--pos-label" not in lines[0]
    labels = tmp_path / "labels.csv"
    labels.write_text("y,p,s\nyes,0.9,0\nno,0.2,1\nyes,0.5,1\n")  # true strings: as before
    res = _run(labels, "--label", "y", "--score", "p", "--sensitive", "s")
    assert res.exit_code == 2 and "--pos-label" in res.stderr
