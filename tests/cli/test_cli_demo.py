from dataclasses import replace

import pytest
from typer.testing import CliRunner

import otfair.datasets
from otfair.datasets import DataFileError
from otfair_lab.cli import app
from otfair_lab.experiments import demo_spec, open_store, run_sweep
from otfair_lab.experiments.methods import paper_settings


def test_demo_spec_is_small():
    spec = demo_spec()
    runs = spec.runs()
    assert {r.dataset for r in runs} == {"synthetic"} and len(runs) <= 16
    assert {"unfair", "unfair-mlp", "gapreg", "ftm", "otf"} <= {r.method for r in runs}
    assert demo_spec("synthetic_regression").runs()[0].method == "unfair-reg"


def test_demo_description_names_the_dataset_used():
    assert "synthetic two-group data" in demo_spec().description
    adult = demo_spec("adult")
    assert {r.dataset for r in adult.runs()} == {"adult"}
    assert "`adult`" in adult.description and "synthetic" not in adult.description
    law = demo_spec("law_school")
    assert "`law_school`" in law.description and "synthetic" not in law.description
    # the regression demo trains with the paper's per-dataset settings (no epoch override)
    assert {r.epochs for r in law.runs()} == {None}
    assert f"{paper_settings('law_school')['epochs']} epochs" in law.description
    assert "paper's settings for this dataset" in law.description
    generic = demo_spec("synthetic_regression").description
    assert "does not cover this dataset" in generic


def test_law_school_demo_settings_give_a_positive_r2(tmp_path):
    # issue 16: 5 epochs at a generic learning rate left every method below R^2 = 0
    spec = demo_spec("law_school")
    spec = replace(spec, methods=spec.methods[:1], seeds=(0,))
    summary = run_sweep(spec, tmp_path, progress=False)
    assert summary.ok == 1
    with open_store(tmp_path) as store:
        frame = store.to_frame("ok")
    assert frame["method"].tolist() == ["unfair-reg"] and frame["r2"].iloc[0] > 0.05


def test_missing_data_file_is_one_line_exit_2(monkeypatch, tmp_path):
    def missing(name, **kwargs):
        raise DataFileError(f"{tmp_path}/adult/adult.data is missing; set OTFAIR_DATA_DIR.")

    monkeypatch.setattr(otfair.datasets, "load_dataset", missing)
    res = CliRunner().invoke(app, ["demo", "--dataset", "adult", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2
    assert res.stderr.startswith("error: ") and "adult.data is missing" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.output


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--dataset", "nosuch"], "Unknown dataset"), (["--workers", "0"], "--workers")],
)
def test_user_errors_are_one_line(tmp_path, args, message):
    res = CliRunner().invoke(app, ["demo", "--out", str(tmp_path), *args])
    assert res.exit_code == 2 and message in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_demo_end_to_end(tmp_path):
    res = CliRunner().invoke(app, ["demo", "--out", str(tmp_path), "--progress"])
    assert res.exit_code == 0, res.output
    n = len(demo_spec().runs())
    assert f"Demo on synthetic: {n} runs" in res.output
    assert f"{n}/{n}" in res.output  # the progress bar counts runs done / total
    assert "Report:" in res.output
    with open_store(tmp_path) as store:
        assert store.count("ok") == n
    assert (tmp_path / "report" / "plots" / "synthetic__dp_gap.png").stat().st_size > 1000
    index = (tmp_path / "report" / "index.md").read_text()
    assert all(m in index for m in ("unfair", "gapreg", "ftm", "otf"))
    assert "synthetic two-group data" in index


@pytest.mark.parametrize(("signame", "code"), [("SIGINT", 130), ("SIGTERM", 143)])
def test_interrupted_demo_says_what_was_kept_and_exits_128_plus_signal(
    monkeypatch, tmp_path, signame, code
):
    import otfair_lab.experiments
    from otfair_lab.experiments import SweepInterrupted, SweepSummary

    summary = SweepSummary(
        total=16,
        skipped=0,
        ok=3,
        failed=1,
        store_path=tmp_path / "results.sqlite",
        wall_time_s=2.0,
        interrupted=signame,
        abandoned=("otf 0.1 dp seed 0 on synthetic", "ftm 1 dp seed 0 on synthetic"),
        not_started=10,
    )

    def stopped(*args, **kwargs):
        raise SweepInterrupted(summary)

    def no_report(*args, **kwargs):
        raise AssertionError("no report after an interruption")

    monkeypatch.setattr(otfair_lab.experiments, "run_sweep", stopped)
    monkeypatch.setattr(otfair_lab.experiments, "make_report", no_report)
    res = CliRunner().invoke(app, ["demo", "--out", str(tmp_path), "--no-progress"])
    assert res.exit_code == code, res.output
    lines = res.stderr.strip().splitlines()
    assert 1 <= len(lines) <= 2 and "Traceback" not in res.output
    assert lines[0].startswith(f"interrupted by {signame}: 4 runs stored, 2 abandoned")
    assert "10 not started" in lines[0] and "resume" in res.stderr
    assert "Report:" not in res.stdout


def test_an_out_holding_another_sweep_names_only_the_demos_own_fix(tmp_path):
    """The store's refusal offers --merge to `otfair sweep`; the demo has no such flag."""
    from otfair_lab.experiments._claim import claim_store

    out = tmp_path / "o"
    store = open_store(out)
    claim_store(store, replace(demo_spec(None), name="other"), "full")
    res = CliRunner().invoke(app, ["demo", "--out", str(out)])
    assert res.exit_code == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "already holds sweep 'other'" in lines[0]
    assert lines[0].endswith("Use another --out.") and "--merge" not in lines[0]
