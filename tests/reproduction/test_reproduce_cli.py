"""``otfair reproduce``: end to end on real data (FTM's quick profile), and its user errors."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from otfair_lab.cli import app
from otfair_lab.reproduction import load_paper_values

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def _error_line(res):
    """The one ``error:`` line of a user error (exit 2, no traceback)."""
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    (line,) = [text for text in res.stderr.splitlines() if text.strip()]
    return line if line.startswith("error: ") else pytest.fail(res.stderr)


@pytest.mark.slow
def test_reproduce_ftm_quick_end_to_end(tmp_path, data_dir):
    # configs/ftm.toml's quick profile without the two reductions (fairlearn's exponentiated
    # gradient alone takes ~35 s here; the paper's Reduction, fairtorch-reduction, rows then
    # read "not run: method ... not in this profile's runs", which this test also wants)
    text = (CONFIGS / "ftm.toml").read_text(encoding="utf-8")
    quick = 'datasets = ["german"]\n'
    assert quick in text
    text = text.replace(
        quick, quick + 'methods = ["unfair-mlp", "ftm", "ftm-joint", "gapreg", "adv"]\n', 1
    )
    # the same runs on two seeds: seed 1 is never run (a protocol not finished)
    start = text.index("[profiles.quick]")
    block = text[start : text.index("\n\n", start)]
    assert "seeds = [0]" in block
    two = block.replace("[profiles.quick]", "[profiles.quick_two_seeds]")
    text += "\n" + two.replace("seeds = [0]", "seeds = [0, 1]") + "\n"
    config = tmp_path / "ftm.toml"
    config.write_text(text, encoding="utf-8")
    out, report = tmp_path / "runs", tmp_path / "report"
    args = ["reproduce", "ftm", "--profile", "quick", "--config", str(config)]
    args += ["--out", str(out), "--report-dir", str(report), "--no-progress"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    index = (report / "index.md").read_text(encoding="utf-8")
    assert "**Smoke test**" in index and "say nothing about the methods" in index
    assert "Verdict rule" in index and "the paper: 5)" in index
    table = pd.read_csv(report / "comparison.csv")
    paper = load_paper_values("ftm")
    assert len(table) == len(paper)  # one row per published number, none dropped
    assert set(table["verdict"]) <= {"reproduced", "close", "differs", "not run", "constant"}
    judged = table[table["verdict"] != "not run"]
    from_runs = ~judged["ours_strength"].fillna("").str.contains("otfair's split")
    assert from_runs.any() and (judged.loc[from_runs, "dataset"] == "german").all()
    # Table 6's sizes come from the loaders and split of every dataset (no training)
    assert (judged.loc[~from_runs, "ref"] == "Table 6").all() and (~from_runs).sum() == 12
    assert table.loc[table["verdict"] == "not run", "reason"].str.startswith("not run: ").all()
    # every paper value of German's Table 4 appears beside otfair's value and a verdict
    t4 = paper.query(
        "ref == 'Table 4' and dataset == 'german' and method != 'fairtorch-reduction'"
    )
    assert len(t4) == 6
    for value in t4["value_text"]:
        assert re.search(rf"\| {re.escape(f'{float(value):.4f}')} \| [0-9.]+ ", index), value
    # every method FTM compares is registered now (laftr, sipm-lfr landed): none may be
    # reported as unregistered
    assert "is not a registered otfair method" not in index
    assert "not run: method `fairtorch-reduction` not in this profile's runs on german" in index
    # the audit rows (Tables 1, 8: subsets by age; Table 11: 2x2 cells; Figure 4's std)
    # are compared for German, none is an unimplemented audit any more
    audits = table[
        (table["dataset"] == "german")
        & table["ref"].isin(["Table 1", "Table 8", "Table 11", "Figure 4"])
        & ~table["method"].isin(["fairtorch-reduction", "all"])
    ]
    assert len(audits) == 18 + 18 + 24 + 1  # 3 methods x 6 / x 6 / x 8, FTM's std
    assert (audits["verdict"] != "not run").all(), audits.loc[audits["verdict"] == "not run"]
    assert not table["reason"].fillna("").str.contains("not implemented").any()
    cells = audits[audits["ref"] == "Table 11"]
    # otfair's German test groups (62 / 138 rows) are not the paper's (68 / 132): shares
    assert cells["metric"].str.match(r"^sfp_s[01]_unfair[01]_fair[01]_share$").all()
    assert cells["paper_value"].between(0, 1).all() and cells["ours_mean"].between(0, 1).all()
    assert "not run: dutch not in this profile's runs" in index
    assert list(report.glob("*.png")) and not list(report.glob("*.sqlite"))
    assert (out / "results.sqlite").is_file()
    # every plotted point is in figure_points.csv, equal to the store's runs grouped here
    points = pd.read_csv(report / "figure_points.csv")
    assert "[figure_points.csv](figure_points.csv)" in index
    assert set(points["ref"]) == {"Figure 3", "Figure 5", "Figure 8"}
    assert not points.duplicated(["ref", "dataset", "label", "strength"]).any()  # one row each
    from otfair_lab.experiments import open_store

    with open_store(out) as store:
        runs = store.to_frame("ok")
    runs = runs[runs["method"] == "ftm"]
    fig5 = points[(points["ref"] == "Figure 5") & (points["method"] == "ftm")]
    assert len(fig5) == runs["strength"].nunique() > 0
    for _, point in fig5.iterrows():
        accs = runs.loc[runs["strength"].astype(float) == point["strength"], "accuracy"]
        assert point["accuracy_mean"] == pytest.approx(accs.mean(), rel=1e-5)
        assert point["n_seeds"] == len(accs) == 1  # the quick profile: one seed, no SE
        assert pd.isna(point["accuracy_se"])
    # --no-run writes the same comparison from the store without training
    res = CliRunner().invoke(app, [*args, "--no-run"])
    assert res.exit_code == 0, res.output
    pd.testing.assert_frame_equal(pd.read_csv(report / "comparison.csv"), table)
    # --seeds restricts the runs, not the paper's count (it sets the verdicts' n_paper)
    res = CliRunner().invoke(app, [*args, "--no-run", "--seeds", "0"])
    assert res.exit_code == 0, res.output
    assert "seeds [0] (1 seed(s); the paper: 5)" in (report / "index.md").read_text("utf-8")
    pd.testing.assert_frame_equal(pd.read_csv(report / "comparison.csv"), table)
    # a profile half stored (seed 1 not run): the report says what is missing
    args[args.index("quick")] = "quick_two_seeds"
    res = CliRunner().invoke(app, [*args, "--no-run"])
    assert res.exit_code == 0, res.output
    index = (report / "index.md").read_text(encoding="utf-8")
    assert "**Not finished**" in index and "runs are not stored ok" in index
    # a profile with no stored run at all: a user error (a mistyped --out), no report
    args[args.index("quick_two_seeds")] = "one_split"
    (report / "index.md").unlink()
    res = CliRunner().invoke(app, [*args, "--no-run"])
    assert res.exit_code == 2 and "no run of ftm's profile 'one_split'" in res.output
    assert not (report / "index.md").exists()


def test_reproduce_user_errors_are_one_line(tmp_path):
    line = _error_line(CliRunner().invoke(app, ["reproduce", "nope", "--out", str(tmp_path)]))
    assert "unknown paper 'nope'" in line
    res = CliRunner().invoke(
        app, ["reproduce", "ftm", "--profile", "huge", "--out", str(tmp_path), "--no-run"]
    )
    assert "`profile` must be one of" in _error_line(res)
    res = CliRunner().invoke(
        app, ["reproduce", "otf", "--config", str(tmp_path / "x.toml"), "--out", str(tmp_path)]
    )
    assert "does not exist" in _error_line(res)
    # --seeds: a seed the profile does not run, or not a number, is refused before any run
    args = ["reproduce", "otf", "--profile", "full", "--out", str(tmp_path / "s"), "--yes"]
    line = _error_line(CliRunner().invoke(app, [*args, "--seeds", "12"]))
    assert "`seeds` [12] are not seeds of profile 'full'" in line
    line = _error_line(CliRunner().invoke(app, [*args, "--seeds", "3,x"]))
    assert "--seeds must be comma-separated integers" in line
    assert not (tmp_path / "s" / "results.sqlite").exists()  # nothing was written


def test_reproduce_device_is_checked_before_any_run(tmp_path, monkeypatch):
    """``--device`` overrides the config's device and is checked before anything runs."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    out = tmp_path / "runs"
    args = ["reproduce", "otf", "--profile", "quick", "--out", str(out), "--yes"]
    line = _error_line(CliRunner().invoke(app, [*args, "--device", "cuda"]))
    assert "asks for CUDA" in line and "--device" in line
    line = _error_line(CliRunner().invoke(app, [*args, "--device", "plasma"]))
    assert "got 'plasma'" in line and "--device" in line
    assert not out.exists()  # nothing written: the request is refused before the store
