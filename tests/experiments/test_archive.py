"""Run archives (JSON lines): a sweep resumable from committed files (issue 27, item 5)."""

from __future__ import annotations

import json

import pytest
from _exp_helpers import write_spec

from otfair_lab.experiments import load_archive, load_spec, open_store, run_sweep
from otfair_lab.experiments._archive import ArchiveError, export_runs, import_runs, read_archive
from otfair_lab.experiments._labels import method_label
from otfair_lab.experiments._store import config_key


def _spec(tmp_path):
    # dummy-lr only (dummy-raise always fails, and failed runs are not archived)
    path = write_spec(tmp_path / "s.toml", seeds=2)
    text = path.read_text().replace('[[methods]]\nname = "dummy-raise"\n', "")
    path.write_text(text)
    return load_spec(path)


def test_export_then_import_resumes_without_rerunning(plugin_path, tmp_path):
    spec = _spec(tmp_path)
    first = run_sweep(spec, tmp_path / "a", profile="full")
    assert first.ok == 6 and first.failed == 0
    counts = export_runs(tmp_path / "a", tmp_path / "runs")
    assert counts == {0: 3, 1: 3}
    lines = (tmp_path / "runs" / "seed-0.jsonl").read_text().splitlines()
    keys = [json.loads(line)["key"] for line in lines]
    assert keys == sorted(keys)  # stable diffs
    assert all("traceback" not in json.loads(line) for line in lines)

    # another machine: a fresh store resumes from the archive and runs nothing
    assert import_runs(tmp_path / "runs", tmp_path / "b") == 6
    again = run_sweep(spec, tmp_path / "b", profile="full")
    assert again.ok + again.failed == 0 and again.skipped == 6
    with open_store(tmp_path / "a") as a, open_store(tmp_path / "b") as b:
        fa, fb = a.to_frame("ok"), b.to_frame("ok")
    cols = ["key", "accuracy", "dp_gap", "auc", "fit_time_s"]
    fa, fb = fa.sort_values("key")[cols], fb.sort_values("key")[cols]
    assert fa.reset_index(drop=True).equals(fb.reset_index(drop=True))
    # the archive read as a table holds the store's values, without a store
    table = load_archive(tmp_path / "runs").sort_values("key").reset_index(drop=True)
    assert len(table) == 6 and {"dataset", "method", "strength", "seed"} <= set(table.columns)
    assert table["accuracy"].tolist() == fa["accuracy"].tolist()
    assert table["dp_gap"].tolist() == fa["dp_gap"].tolist()
    # each run's series label, as the reports plot it (this spec's method has no notion)
    assert set(table["label"]) == {"dummy-lr"}


@pytest.mark.parametrize(
    ("method", "notion", "label"),
    [("otf", "dp", "otf [dp]"), ("norm", "eo", "norm [eo]"), ("barycenter", None, "barycenter"),
     ("unfair", float("nan"), "unfair"), ("unfair", "", "unfair")],
)  # fmt: skip
def test_series_label_names_the_notion_when_there_is_one(method, notion, label):
    assert method_label(method, notion) == label


def test_archives_of_different_seeds_merge(plugin_path, tmp_path):
    spec = _spec(tmp_path)
    run_sweep(spec, tmp_path / "a", profile="quick")  # seed 0, two strengths
    export_runs(tmp_path / "a", tmp_path / "runs")
    before = (tmp_path / "runs" / "seed-0.jsonl").read_text()
    run_sweep(spec, tmp_path / "b", profile="full")  # a second machine: both seeds
    keys_b = {c.key() for c in spec.runs("full") if c.seed == 1}
    export_runs(tmp_path / "b", tmp_path / "runs", keys_b)
    assert (tmp_path / "runs" / "seed-0.jsonl").read_text() == before  # kept as it was
    assert len(read_archive(tmp_path / "runs")) == 2 + 3


def test_a_damaged_archive_names_the_file_and_line(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    config = {"dataset": "synthetic", "seed": 0}
    line = json.dumps({"key": config_key(config), "status": "ok", "config": config})
    (runs / "seed-0.jsonl").write_text(line + '\n{"key": "b", "sta')
    with pytest.raises(ArchiveError, match=r"seed-0.jsonl, line 2: not JSON"):
        read_archive(runs)
    edited = json.dumps(
        {"key": config_key(config), "status": "ok", "config": {**config, "seed": 1}}
    )
    (runs / "seed-0.jsonl").write_text(line + "\n" + edited + "\n")
    with pytest.raises(ArchiveError, match=r"line 2: its `key` is not the key of its `config`"):
        read_archive(runs)
    (runs / "seed-0.jsonl").write_text('{"key": "a", "status": "error"}\n')
    with pytest.raises(ArchiveError, match="line 1: not an archived run"):
        import_runs(runs, tmp_path / "store")
    assert not (tmp_path / "store").exists()  # nothing written


def test_reproduce_writes_the_same_report_from_the_archive_alone(tmp_path, data_dir):
    from otfair_lab.reproduction._run import reproduce

    runs = tmp_path / "runs"
    first = reproduce("otf", tmp_path / "a", profile="quick", runs=runs)
    assert first.pending == 0 and sorted(p.name for p in runs.iterdir()) == ["seed-0.jsonl"]
    # a fresh machine: no store, only the committed archive
    again = reproduce("otf", tmp_path / "b", profile="quick", runs=runs, run=False)
    assert again.pending == 0
    a = (first.index.parent / "comparison.csv").read_text()
    b = (again.index.parent / "comparison.csv").read_text()
    assert a == b and a.count("\n") > 10
