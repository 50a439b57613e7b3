import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from otfair.datasets import _fetch, list_datasets
from otfair.datasets._fetch import RemoteFile
from otfair_lab.cli import app

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


def _stderr_lines(res) -> list[str]:
    return [line for line in res.stderr.splitlines() if line.strip()]


def _assert_one_line_error(res, *fragments: str) -> str:
    assert res.exit_code == 2, res.output
    lines = _stderr_lines(res)
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    assert "Traceback" not in res.output
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def test_describe_rows_follow_the_loaded_data(tmp_path, isolated_data, data_dir):
    home = tmp_path / "home"
    (home / "adult").mkdir(parents=True)
    lines = (data_dir / "adult" / "adult.data").read_bytes().splitlines(keepends=True)
    (home / "adult" / "adult.data").write_bytes(b"".join(lines[:15_982]))
    shutil.copy(data_dir / "adult" / "adult.test", home / "adult" / "adult.test")
    res = runner.invoke(app, ["datasets", "describe", "adult", "--data-home", str(home)])
    _assert_one_line_error(res, "adult.data differs", "otfair datasets fetch adult --force")
    res = runner.invoke(
        app, ["datasets", "describe", "adult", "--data-home", str(home), "--no-verify", "--json"]
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    kw = {"skipinitialspace": True, "na_values": "?"}
    raw = [pd.read_csv(home / "adult" / f, **kw) for f in ("adult.data", "adult.test")]
    assert out["rows"] == len(pd.concat(raw).dropna()) < 45_222
    assert f"({len(raw[0]) + len(raw[1]):,} rows)" in out["description"]


def test_describe_missing_file_without_network(isolated_data, monkeypatch, unreachable_url):
    entry = _fetch.REMOTE_FILES["german/german.data"]
    remote = RemoteFile(f"{unreachable_url}/german.data", entry.sha256)
    monkeypatch.setitem(_fetch.REMOTE_FILES, "german/german.data", remote)
    res = runner.invoke(app, ["datasets", "describe", "german"])
    _assert_one_line_error(
        res, "Could not download german/german.data", "Fix: run `otfair datasets fetch german`"
    )
    monkeypatch.setenv("OTFAIR_DATA_DIR", str(isolated_data.parent / "nowhere"))
    res = runner.invoke(app, ["datasets", "describe", "german"])
    _assert_one_line_error(res, "$OTFAIR_DATA_DIR", "does not exist", "Fix: create it")


def test_where_lists_order_and_locations(data_dir):
    res = runner.invoke(app, ["datasets", "where", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert [d["source"] for d in out["search_order"]][-1] == "user cache"
    adult = next(f for f in out["files"] if f["file"] == "adult/adult.data")
    assert adult["state"] == "ok" and adult["directory"] == str(data_dir)
    res = runner.invoke(app, ["datasets", "where"])
    assert res.exit_code == 0 and "Search order" in res.stdout
    # the text shows each directory resolved (a symlinked data directory by its target)
    assert "adult/adult.test" in res.stdout and str(Path(data_dir).resolve()) in res.stdout


def test_where_reports_missing_and_differing(tmp_path, isolated_data):
    (isolated_data / "german").mkdir(parents=True)
    (isolated_data / "german" / "german.data").write_text("edited\n")
    res = runner.invoke(app, ["datasets", "where", "--json"])
    assert res.exit_code == 0, res.output
    files = {f["file"]: f for f in json.loads(res.stdout)["files"]}
    assert files["german/german.data"]["state"] == "differs"
    assert files["adult/adult.data"] == {
        "dataset": "adult",
        "file": "adult/adult.data",
        "state": "missing",
        "directory": None,
    }
    res = runner.invoke(app, ["datasets", "where", "--no-verify"])
    assert "unchecked" in res.stdout and "-> otfair datasets fetch adult" in res.stdout


def _serve(monkeypatch, url: str, relpath: str) -> None:
    entry = _fetch.REMOTE_FILES[relpath]
    name = relpath.rsplit("/", 1)[-1]
    monkeypatch.setitem(_fetch.REMOTE_FILES, relpath, RemoteFile(f"{url}/{name}", entry.sha256))


def test_fetch_downloads_and_says_where(
    http_server, tmp_path, isolated_data, monkeypatch, data_dir
):
    root, url, requests = http_server
    for name in ("adult.data", "adult.test"):
        shutil.copy(data_dir / "adult" / name, root / name)
        _serve(monkeypatch, url, f"adult/{name}")
    target = tmp_path / "new" / "dir"
    res = runner.invoke(app, ["datasets", "fetch", "adult", "--data-home", str(target)])
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines() == [
        f"adult/adult.data: downloaded to {target} (sha256 ok)",
        f"adult/adult.test: downloaded to {target} (sha256 ok)",
    ]
    assert [line.split(" (")[0] for line in _stderr_lines(res)] == [
        "downloading adult/adult.data",
        "downloading adult/adult.test",
    ]
    res = runner.invoke(app, ["datasets", "fetch", "adult", "--data-home", str(target)])
    assert res.exit_code == 0 and "present in" in res.stdout and len(requests) == 2
    res = runner.invoke(app, ["datasets", "describe", "adult", "--data-home", str(target)])
    assert res.exit_code == 0 and "45,222 rows" in res.stdout
    # a differing copy in the download directory is replaced only with --force
    (target / "adult" / "adult.test").write_text("edited")
    res = runner.invoke(app, ["datasets", "fetch", "adult", "--data-home", str(target)])
    _assert_one_line_error(res, "adult.test differs", "Fix: rerun with --force")
    res = runner.invoke(app, ["datasets", "fetch", "adult", "--data-home", str(target), "--force"])
    assert res.exit_code == 0 and "adult/adult.test: downloaded to" in res.stdout
    digest = hashlib.sha256((target / "adult" / "adult.test").read_bytes()).hexdigest()
    assert digest == _fetch.REMOTE_FILES["adult/adult.test"].sha256


def test_fetch_without_network_is_one_line(isolated_data, monkeypatch, unreachable_url):
    _serve(monkeypatch, unreachable_url, "german/german.data")
    res = runner.invoke(app, ["datasets", "fetch", "german"])
    line = _assert_one_line_error(res, "Could not download german/german.data")
    assert f"copy the file by hand to {isolated_data / 'german' / 'german.data'}" in line
    assert not (isolated_data / "german" / "german.data").exists()


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ([], "give dataset names or --all"),
        (["adult", "--all"], "give dataset names or --all"),
        (["synthetic"], "'synthetic' is not a dataset read from files"),
    ],
)
def test_fetch_usage_errors(args, fragment, isolated_data):
    _assert_one_line_error(runner.invoke(app, ["datasets", "fetch", *args]), fragment)


def test_subprocess_missing_data_no_traceback(tmp_path, unreachable_url):
    """The real console entry point: one stderr line, exit code 2 (no network used)."""
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "XDG_CACHE_HOME": str(tmp_path / "xdg"),
        "OTFAIR_DATA_DIR": str(tmp_path / "empty"),
        "PYTHONPATH": ":".join(sys.path),
    }
    (tmp_path / "empty").mkdir()
    code = (
        "import sys; from otfair.datasets import _fetch; from otfair_lab.cli import main;"
        "_fetch.REMOTE_FILES['german/german.data'] = "
        f"_fetch.RemoteFile('{unreachable_url}/g', 'x');"
        "sys.argv = ['otfair', 'datasets', 'describe', 'german']; main()"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: Could not download german/german.data")
    assert "Fix: run `otfair datasets fetch german`" in lines[0]


def test_where_and_describe_bad_or_malformed(tmp_path, isolated_data):
    res = runner.invoke(app, ["datasets", "where", "--data-home", str(tmp_path / "nope")])
    _assert_one_line_error(res, "`data_home` =", "does not exist", "Fix: ")
    (tmp_path / "german").mkdir()
    (tmp_path / "german" / "german.data").write_text("A11 6\nA12 7\n")
    args = ["datasets", "describe", "german", "--data-home", str(tmp_path), "--no-verify"]
    _assert_one_line_error(
        runner.invoke(app, args),
        "german.data is malformed",
        "Fix: restore the original with `otfair datasets fetch german --force`",
    )
