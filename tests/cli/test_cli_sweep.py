import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from otfair_lab.cli import app
from otfair_lab.experiments import open_store

HERE = Path(__file__).resolve().parents[1] / "experiments"
sys.path.insert(0, str(HERE))
from _exp_helpers import write_spec  # noqa: E402

OK_ONLY = '[profiles.ok]\nmethods = ["dummy-lr"]\nseeds = [0]\n'


@pytest.fixture
def plugin_env(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(HERE))
    import _exp_dummy_methods  # noqa: F401 - registers dummy-lr / dummy-raise


def _sweep(config, out, *extra):
    args = ["sweep", str(config), "--out", str(out), "--no-progress", *extra]
    return CliRunner().invoke(app, args)


def _error_line(res):
    """The single `error:` line of a failed command (and no traceback)."""
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    return lines[0]


def test_sweep_with_failures_exits_1_and_lists_errors_then_report(plugin_env, tmp_path):
    config = write_spec(tmp_path / "s.toml")
    res = _sweep(config, tmp_path / "o", "--profile", "quick")
    assert res.exit_code == 1, res.output
    assert "3 runs (profile quick): 0 already done, 2 ok, 1 failed" in res.stdout
    assert "1 x RuntimeError: dummy-raise always fails" in res.stderr
    res = _sweep(config, tmp_path / "o", "--profile", "quick")
    assert res.exit_code == 1  # the stored failure still counts
    assert "3 already done, 0 ok, 0 failed" in res.stdout
    assert "stored: 2 ok, 1 failed" in res.stdout
    res = CliRunner().invoke(
        app,
        ["report", str(tmp_path / "o"), "--out", str(tmp_path / "r")]
        + ["--csv", str(tmp_path / "all.csv")],
    )
    assert res.exit_code == 0, res.output
    assert (tmp_path / "r" / "index.html").is_file() and (tmp_path / "all.csv").is_file()
    # report outputs that cannot be written: one line each, nothing written
    taken = tmp_path / "all.csv"
    for extra, words in (
        (["--out", str(taken)], "existing file"),
        (["--out", str(taken / "r")], "cannot be created"),
        (["--csv", str(tmp_path / "r")], "is a directory"),
        (["--csv", str(taken / "x.csv")], "cannot be created"),
    ):
        res = CliRunner().invoke(app, ["report", str(tmp_path / "o"), *extra])
        lines = [line for line in res.stderr.splitlines() if line.strip()]
        assert res.exit_code == 2 and len(lines) == 1, (extra, res.output)
        assert words in lines[0] and extra[0] in lines[0], (extra, lines[0])


def test_sweep_without_failures_exits_0(plugin_env, tmp_path):
    res = _sweep(write_spec(tmp_path / "s.toml", OK_ONLY), tmp_path / "o", "--profile", "ok")
    assert res.exit_code == 0, res.output
    assert "stored: 3 ok, 0 failed" in res.stdout and "error" not in res.stderr


def test_report_of_a_store_without_successful_run_is_one_line(plugin_env, tmp_path):
    config = write_spec(tmp_path / "s.toml", '[profiles.bad]\nmethods = ["dummy-raise"]')
    assert _sweep(config, tmp_path / "o", "--profile", "bad").exit_code == 1
    res = CliRunner().invoke(app, ["report", str(tmp_path / "o")])
    assert "no successful run (2 failed)" in _error_line(res)
    assert not (tmp_path / "o" / "report").exists()
    res = CliRunner().invoke(app, ["report", str(tmp_path / "nothing")])
    assert "no sweep results" in _error_line(res)
    assert not (tmp_path / "nothing").exists()


def test_long_sweep_needs_yes(plugin_env, tmp_path):
    config = write_spec(tmp_path / "s.toml", OK_ONLY)
    out = tmp_path / "o"
    res = _sweep(config, out, "--profile", "ok", "--confirm-above", "0")
    assert res.exit_code == 2
    assert "3 runs, 0 already stored, 3 to run on 1 worker; timing a pilot" in res.stderr
    assert "estimated at least" in res.stderr and "pass --yes" in res.stderr
    assert "quick" in res.stderr
    with open_store(out) as store:
        assert store.count() == 1  # only the pilot (dummy-lr has no epochs: a real run)
    res = _sweep(config, out, "--profile", "ok", "--confirm-above", "0", "--yes")
    assert res.exit_code == 0, res.output
    assert "2 runs from the mean times of stored runs" in res.stderr  # no new pilot
    assert "3 runs (profile ok): 1 already done, 2 ok, 0 failed" in res.stdout


def test_another_config_in_the_same_out_is_refused_unless_merge(plugin_env, tmp_path):
    first = write_spec(tmp_path / "a.toml", OK_ONLY, name="first")
    second = write_spec(tmp_path / "b.toml", OK_ONLY.replace("[0]", "[1]"), name="second")
    assert _sweep(first, tmp_path / "o", "--profile", "ok").exit_code == 0
    line = _error_line(_sweep(second, tmp_path / "o", "--profile", "ok"))
    assert f"'first' ({first})" in line and f"'second' ({second})" in line and "--merge" in line
    res = _sweep(second, tmp_path / "o", "--profile", "ok", "--merge")
    assert res.exit_code == 0, res.output
    with open_store(tmp_path / "o") as store:
        names = [c["name"] for c in store.get_meta("configs")]
        assert names == ["first", "second"] and store.count() == 6


def test_unreachable_scheduler_is_one_line(plugin_env, tmp_path):
    config = write_spec(tmp_path / "s.toml", OK_ONLY)
    res = _sweep(
        config, tmp_path / "o", "--profile", "ok", "--backend", "cluster",
        "--scheduler", "tcp://127.0.0.1:1",
    )  # fmt: skip
    assert "cannot reach the Dask scheduler tcp://127.0.0.1:1 within 5 s" in _error_line(res)


def test_malformed_config_is_a_clean_error(tmp_path):
    config = tmp_path / "bad.toml"
    config.write_text(
        '[[datasets]]\nname = "synthetic"\n[[methods]]\nname = "unfair"\nepoch = 3\n'
    )
    res = CliRunner().invoke(app, ["sweep", str(config), "--out", str(tmp_path / "o")])
    assert "config key 'methods[0].epoch'" in _error_line(res)


def test_sweep_help_says_a_spec_runs_code_like_a_script():
    from typer.testing import CliRunner

    from otfair_lab.cli import app

    text = " ".join(CliRunner().invoke(app, ["sweep", "--help"]).output.split())
    assert "A spec runs code like a script" in text and "listed in plugins" in text
