"""Every reproduction config in configs/ validates, and its quick profile runs end to end.

The quick run of each paper's config is also turned into the paper-vs-otfair comparison
by ``otfair reproduce PAPER --profile quick --no-run`` (the CLI on the stored runs: the
same report ``otfair reproduce PAPER --profile quick`` writes after running them).
"""

from pathlib import Path

import pytest

from otfair_lab.experiments import load_spec, make_report, open_store, run_sweep

CONFIGS = sorted((Path(__file__).resolve().parents[2] / "configs").glob("*.toml"))
PAPERS = {"accuracy_parity", "otf", "ftm", "adapfair"}


def test_every_paper_has_a_config_with_a_quick_profile():
    assert {c.stem for c in CONFIGS} >= PAPERS
    for config in CONFIGS:
        spec = load_spec(config)
        full, quick = spec.runs(), spec.runs("quick")
        assert "quick" in spec.profile_names()
        assert 0 < len(quick) <= 12 < len(full)
        assert {r.seed for r in quick} == {0}
        assert all(r.max_train_rows and r.epochs and r.epochs <= 5 for r in quick)
        info = spec.profile_info("quick")  # labelled as what it is, for the reports
        assert info["smoke"] and info["description"].startswith("Smoke test")
        assert not spec.profile_info()["smoke"]


@pytest.mark.slow
@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.stem)
def test_quick_profile_runs_and_reports(config, tmp_path):
    spec = load_spec(config)
    summary = run_sweep(spec, tmp_path, profile="quick", progress=False)
    assert summary.ok + summary.failed == summary.total
    with open_store(tmp_path) as store:
        rows = store.rows()
    assert len(rows) == summary.total
    methods = {r["method"] for r in rows}
    ok_methods = {r["method"] for r in rows if r["status"] == "ok"}
    assert ok_methods == methods, [r["error"] for r in rows if r["status"] == "error"]
    index = make_report(tmp_path)
    assert any((index.parent / "plots").glob("*.png"))
    text = index.read_text()
    assert all(m in text for m in methods)
    if config.stem in PAPERS:
        _check_reproduce_report(config, tmp_path)


def _check_reproduce_report(config, out):
    import pandas as pd
    from typer.testing import CliRunner

    from otfair_lab.cli import app
    from otfair_lab.reproduction import load_paper_values

    report = out / "comparison"
    args = ["reproduce", config.stem, "--profile", "quick", "--config", str(config)]
    args += ["--out", str(out), "--report-dir", str(report), "--no-run", "--no-progress"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    index = (report / "index.md").read_text(encoding="utf-8")
    assert "**Smoke test**" in index and "Verdict rule" in index
    table = pd.read_csv(report / "comparison.csv")
    assert len(table) == len(load_paper_values(config.stem))  # none dropped
    outcomes = {"reproduced", "close", "differs", "constant", "not run", "no verdict"}
    assert set(table["verdict"]) <= outcomes
    assert table.loc[table["verdict"] == "not run", "reason"].str.startswith("not run: ").all()
