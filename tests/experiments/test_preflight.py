"""Issue 28: a sweep request is checked as a whole before its first run (and timed by pilots)."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from otfair.estimators import FairClassifier
from otfair_lab.experiments import load_spec, run_sweep
from otfair_lab.experiments._plan import (
    Pilot,
    epoch_seconds,
    estimate_items,
    format_duration,
    pool_start_seconds,
)
from otfair_lab.experiments._preflight import RequestError, check_request, missing_data_files
from otfair_lab.experiments._spec import ConfigError, RunConfig, parse_spec
from otfair_lab.experiments._store import (
    STORE_FILENAME,
    ResultStore,
    StoreError,
    check_store_file,
    timing_group,
)


def _spec(method: str = "otf", strengths=(0.1,), options: str = "", dataset: str = "synthetic"):
    text = {
        "name": "t",
        "datasets": [{"name": dataset, **({"options": {}} if not options else {})}],
        "methods": [{"name": method, "strengths": list(strengths)}],
        "epochs": 1,
        "max_train_rows": 64,
    }
    return parse_spec(text)


def _fit_error(**params) -> str:
    """The error ``FairClassifier.fit`` itself raises (the independent reference)."""
    rng = np.random.default_rng(0)
    X, y, s = rng.normal(size=(40, 3)), np.arange(40) % 2, (np.arange(40) // 2) % 2
    with pytest.raises(ValueError) as info:
        FairClassifier(epochs=1, **params).fit(X, y, sensitive_features=s)
    return str(info.value)


@pytest.mark.parametrize(
    ("strength", "params"),
    [(-1.0, {"penalty": "otf", "strength": -1.0}), (3.0, {"penalty": "otf", "strength": 3.0})],
)
def test_a_strength_out_of_range_is_the_estimators_own_error(strength, params):
    # -1 breaks a constraint the name table describes: refused as the spec is read;
    # 3 breaks FairClassifier's convex-mixing rule: refused by the request's probe fit
    with pytest.raises((ConfigError, RequestError)) as info:
        check_request(_spec(strengths=(0.1, strength)).runs())
    message = str(info.value)
    assert f"{strength:g}" in message and "strength" in message
    assert _fit_error(**params) in message  # the same check as `otfair fit`


def test_option_types_sensitive_names_and_devices_are_one_error_each():
    raw = {
        "datasets": [{"name": "synthetic"}],
        "methods": [{"name": "ftm", "strengths": [0.1], "options": {"lr": "abc"}}],
    }
    with pytest.raises(ConfigError, match="'lr' parameter of FairClassifier must be a float"):
        parse_spec(raw)  # as the spec is read, without torch
    # a spec built in code is checked before its first run, in the same words
    lr = parse_spec({**raw, "methods": [{"name": "ftm", "strengths": [0.1]}]})
    with pytest.raises(RequestError, match="'lr' parameter of FairClassifier must be a float"):
        check_request(replace(lr, methods=(replace(lr.methods[0], options={"lr": "abc"}),)).runs())
    raw_height = {
        "datasets": [{"name": "german", "options": {"sensitive": "height"}}],
        "methods": [{"name": "unfair"}],
    }
    with pytest.raises(ConfigError, match=r"`sensitive` must be one of \['sex', 'age'\]"):
        parse_spec(raw_height)  # as the spec is read, without torch
    german = parse_spec({**raw_height, "datasets": [{"name": "german"}]})
    height = replace(
        german, datasets=(replace(german.datasets[0], options={"sensitive": "height"}),)
    )
    with pytest.raises(RequestError, match=r"`sensitive` must be one of \['sex', 'age'\]"):
        check_request(height.runs())
    with pytest.raises(ConfigError, match="got 'tpu'"):
        parse_spec({**raw_height, "datasets": [{"name": "german"}], "device": "tpu"})
    with pytest.raises(RequestError, match="not a valid torch device: 'tpu'"):
        check_request(_spec().with_device("tpu").runs())


def test_a_dimension_wider_than_the_probe_data_is_left_to_the_run():
    # FairPCA's n_components=40 is more than the probe data's 24 features: the probe is
    # fitted again on data wide enough, and the run's own data decides (German has 56)
    spec = parse_spec(
        {
            "datasets": [{"name": "synthetic"}],
            "methods": [{"name": "fair-pca", "options": {"n_components": 40}}],
        }
    )
    check_request(spec.runs())
    # wider than any probe (256 features): left to the run's data too
    wide = replace(spec, methods=(replace(spec.methods[0], options={"n_components": 300}),))
    check_request(wide.runs())
    # a value no data can take is still the request's error, in fit's words
    bad = replace(spec, methods=(replace(spec.methods[0], options={"n_components": -3}),))
    with pytest.raises((ConfigError, RequestError), match="n_components"):
        check_request(bad.runs())


def test_missing_data_files_are_named_with_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv("OTFAIR_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert set(missing_data_files(["german", "synthetic"])) == {"german"}
    spec = parse_spec({"datasets": [{"name": "german"}], "methods": [{"name": "unfair"}]})
    with pytest.raises(RequestError) as info:
        check_request(spec.runs())
    message = str(info.value)
    assert "missing data files (german:" in message and "otfair datasets fetch german" in message
    assert "\n" not in message


def test_damaged_data_files_are_named_before_any_run(tmp_path, monkeypatch, data_dir):
    import shutil

    home = tmp_path / "data"
    shutil.copytree(Path(data_dir) / "german", home / "german")
    data = home / "german" / "german.data"
    data.write_bytes(data.read_bytes()[:-100])  # a truncated copy
    monkeypatch.setenv("OTFAIR_DATA_DIR", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("OTFAIR_VERIFY", raising=False)
    spec = parse_spec({"datasets": [{"name": "german"}], "methods": [{"name": "unfair"}]})
    with pytest.raises(RequestError) as info:
        check_request(spec.runs(), probe=False)
    message = str(info.value)
    assert "damaged data files (german:" in message and str(data) in message
    assert "otfair datasets fetch german --force" in message and "\n" not in message
    # a dataset option or the environment switches the check off, as for the run itself
    off = parse_spec(
        {"datasets": [{"name": "german", "options": {"verify": False}}],
         "methods": [{"name": "unfair"}]}
    )  # fmt: skip
    check_request(off.runs(), probe=False)
    monkeypatch.setenv("OTFAIR_VERIFY", "0")
    check_request(spec.runs(), probe=False)


def test_a_bad_request_stores_nothing(tmp_path):
    with pytest.raises(RequestError):
        run_sweep(_spec(strengths=(3.0, 1.0)), tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()


def test_the_shipped_configs_pass_the_check():
    for name in ("otf", "ftm", "adapfair", "accuracy_parity"):
        spec = load_spec(f"configs/{name}.toml")
        assert check_request(spec.runs("quick"), probe=False) >= 0.0


def test_a_damaged_store_is_named_and_left_untouched(tmp_path):
    path = tmp_path / STORE_FILENAME
    with ResultStore(path) as store:
        for i in range(200):
            store.set_meta(f"k{i}", "x" * 500)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])  # truncated
    before = path.read_bytes()
    with pytest.raises(StoreError, match="not a readable result store"):
        ResultStore(path)
    assert path.read_bytes() == before
    path.write_bytes(b"a,b\n1,2\n")
    with pytest.raises(StoreError, match="not an SQLite database"):
        check_store_file(path)
    with sqlite3.connect(tmp_path / "ok.sqlite") as conn:
        conn.execute("CREATE TABLE t (x)")
    check_store_file(tmp_path / "ok.sqlite")  # a sound database passes


def test_a_store_killed_during_a_checkpoint_is_sound(tmp_path):
    # SIGKILL while SQLite copies the write-ahead log into the database file leaves a
    # main file that is whole only together with its -wal (SQLite replays it). Built
    # here from the files before and after a checkpoint: the first page written, the
    # rest not yet. The store must open it and keep every committed row.
    live = tmp_path / "live" / STORE_FILENAME
    store = ResultStore(live)
    for i in range(300):
        store.set_meta(f"k{i}", "x" * 500)
    wal = live.with_name(live.name + "-wal")
    before, before_wal = live.read_bytes(), wal.read_bytes()
    with sqlite3.connect(live) as other:  # another connection checkpoints the log
        other.execute("PRAGMA wal_checkpoint(PASSIVE)")
    after = live.read_bytes()
    store.close()
    page = int.from_bytes(before[16:18], "big")
    assert len(after) > len(before) >= page  # the checkpoint grew the main file
    killed = tmp_path / "killed" / STORE_FILENAME
    killed.parent.mkdir()
    killed.write_bytes(after[:page] + before[page:])
    killed.with_name(killed.name + "-wal").write_bytes(before_wal)
    check_store_file(killed)
    with ResultStore(killed) as reopened:
        assert [reopened.get_meta(f"k{i}") for i in range(300)] == ["x" * 500] * 300


def test_pilot_estimate_separates_fixed_and_per_epoch_cost():
    # a 1-epoch fit of 3 s (2 s fixed + 1 s per epoch) and 0.5 s of loading and scoring
    pilot = Pilot(runs=1, wall_s=3.5, fit_s=3.0, epochs=100, epoch_s=1.0)
    assert pilot.estimate(1) == pytest.approx(0.5 + 2.0 + 100 * 1.0)
    assert pilot.estimate(3) == pytest.approx(3 * 102.5)  # a stacked group of 3 vs 1
    linear = Pilot(runs=1, wall_s=1.5, fit_s=1.0, epochs=2)  # no per-epoch split: E x fit
    assert linear.estimate(1) == pytest.approx(0.5 + 2.0)
    real = Pilot(runs=2, wall_s=4.0, fit_s=1.0)  # the pilot was the real item
    assert real.estimate(2) == pytest.approx(4.0)


def test_pilot_fits_whose_difference_is_noise_do_not_drop_the_epochs():
    # 2- and 1-epoch fits of a few hundred rows: the 2-epoch one may come out faster
    assert epoch_seconds(0.010, 0.012) is None and epoch_seconds(0.012, 0.012) is None
    assert epoch_seconds(3.0, 2.0) == pytest.approx(1.0)
    noisy = Pilot(runs=1, wall_s=0.02, fit_s=0.012, epochs=100_000, epoch_s=None)
    assert noisy.estimate(1) == pytest.approx(0.008 + 0.012 * 100_000)  # E x the 1-epoch fit


def test_estimate_items_spreads_over_workers_but_not_below_the_longest_item():
    runs = [RunConfig(dataset="d", method="m", seed=s) for s in range(4)]
    pilots = {timing_group(runs[0]): Pilot(runs=1, wall_s=10.0)}
    one, _ = estimate_items([[r] for r in runs], {}, pilots, workers=1, cores=2)
    two, basis = estimate_items([[r] for r in runs], {}, pilots, workers=2, cores=2)
    assert one == pytest.approx(40.0)
    assert two == pytest.approx(40.0 / 1.75) and "effective workers" in basis
    single, _ = estimate_items([runs], {}, pilots, workers=2, cores=2)  # one stacked item
    assert single == pytest.approx(40.0)
    assert estimate_items([[runs[0]]], {}, {}, workers=1) == (None, "")


def test_no_duration_prints_as_zero_seconds():
    assert format_duration(0.0) == "under 1 s" and format_duration(0.4) == "under 1 s"
    assert format_duration(0.5) == "under 1 s" and format_duration(1.0) == "1 s"
    assert format_duration(42.0) == "42 s" and format_duration(7200.0) == "2.0 h"


def test_workers_share_an_accelerator_without_oversubscribing(monkeypatch):
    import torch

    from otfair_lab.experiments._backends import ACCELERATOR_SHARE, accelerator_fraction

    assert accelerator_fraction(2, ["cpu"]) is None
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert accelerator_fraction(2, ["cpu", "cpu"]) is None
    assert accelerator_fraction(2, ["cuda"]) == pytest.approx(ACCELERATOR_SHARE / 2)
    assert accelerator_fraction(3, ["auto"]) == pytest.approx(ACCELERATOR_SHARE / 3)
    assert accelerator_fraction(4, ["cuda"]) * 4 <= 1.0


def test_longest_first_orders_by_estimate_and_keeps_untimed_items_first():
    from otfair_lab.experiments._plan import longest_first

    names = ("short", "long", "new")
    short, long_, new = (RunConfig(dataset=d, method="m", seed=0) for d in names)
    stored = {timing_group(short): (1.0, 3), timing_group(long_): (5.0, 2)}
    items = [[short], [long_], [short, short, short, short, short, short], [new]]
    # 1 s, 5 s, a stacked item of 6 x 1 s, untimed
    assert longest_first(items, stored, {}) == [3, 2, 1, 0]
    pilots = {timing_group(short): Pilot(runs=1, wall_s=10.0)}  # a pilot wins over the store
    assert longest_first(items, stored, pilots) == [3, 2, 0, 1]
    assert longest_first([[short], [short]], stored, {}) == [0, 1]  # ties keep their order


def test_sweep_submits_the_longest_stored_groups_first(plugin_path, tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(
        """
name = "order"
max_train_rows = 200
seeds = 2
plugins = ["_exp_dummy_methods"]

[[datasets]]
name = "synthetic"

[[methods]]
name = "dummy-lr"
label = "fast"
strengths = [0.1]

[[methods]]
name = "dummy-lr"
label = "slow"
strengths = [0.1]
options = { sleep = 0.4 }

[profiles.first]
seeds = [0]
"""
    )
    spec = load_spec(path)
    run_sweep(spec, tmp_path / "out", profile="first", progress=False)  # timings of seed 0
    run_sweep(spec, tmp_path / "out", progress=False)  # seed 1: slow is submitted first
    with ResultStore(tmp_path / "out" / STORE_FILENAME) as store:
        rows = [r for r in store.rows() if r["seed"] == 1]
    started = {r["method"]: r["started_at"] for r in rows}  # the label
    assert set(started) == {"fast", "slow"}
    assert started["slow"] < started["fast"]


def test_a_sweep_whose_pilots_ran_every_run_says_so(tmp_path):
    spec = parse_spec(
        {"name": "one", "datasets": [{"name": "synthetic"}], "methods": [{"name": "unfair"}],
         "epochs": 1, "max_train_rows": 64, "seeds": [0]}
    )  # fmt: skip
    plans = []
    summary = run_sweep(spec, tmp_path / "out", progress=False, on_plan=plans.append, pilot=True)
    assert summary.ok == 1
    assert plans[-1].basis == "nothing left: the pilot fits ran every run"


def test_pool_start_up_is_added_once_per_round_of_workers_on_the_cores():
    runs = [RunConfig(dataset="d", method="m", seed=s) for s in range(4)]
    pilots = {timing_group(runs[0]): Pilot(runs=1, wall_s=10.0)}
    items = [[r] for r in runs]
    # 2 workers on 2 cores start together: 40 s / 1.75 effective workers + one 3 s start-up
    two, basis = estimate_items(items, {}, pilots, workers=2, cores=2, startup_s=3.0)
    assert two == pytest.approx(40.0 / 1.75 + 3.0) and "to start the workers" in basis
    # 4 workers on 2 cores: 4 start-ups share 2 cores (6 s); throughput of 2 workers
    four, _ = estimate_items(items, {}, pilots, workers=4, cores=2, startup_s=3.0)
    assert four == pytest.approx(40.0 / 1.75 + 6.0)
    # one worker runs in this process: nothing to start
    one, basis = estimate_items(items, {}, pilots, workers=1, cores=2, startup_s=3.0)
    assert one == pytest.approx(40.0) and "start" not in basis
    # a pool of 4 with 1 item starts 1 worker
    assert pool_start_seconds(3.0, workers=4, items=1, cores=2) == pytest.approx(3.0)
    assert pool_start_seconds(3.0, workers=8, items=8, cores=2) == pytest.approx(12.0)
    assert pool_start_seconds(0.0, workers=8, items=8, cores=2) == 0.0


def test_pilot_fits_draw_splits_no_run_uses_and_give_the_epoch_cost(monkeypatch):
    from otfair_lab.experiments import _pilots

    seen = []
    fits = {2: 5.0, 1: 3.0}  # fit seconds of the 2- and 1-epoch pilots

    def fake_run_item(item, plugins, stop):
        runs = item if isinstance(item, tuple) else (item,)
        seen.append([(c.seed, c.epochs) for c in runs])
        fit = fits[runs[0].epochs]
        return [
            {"started_at": 0.0, "finished_at": fit + 0.5, "result": {"fit_time_s": fit}}
            for _ in runs
        ]

    monkeypatch.setattr(_pilots, "run_item", fake_run_item)
    monkeypatch.setattr(_pilots, "run_epochs_of", lambda config: 10)
    item = tuple(RunConfig(dataset="d", method="m", seed=3, strength=s) for s in (0.1, 0.2, 0.3))
    pilot, records = _pilots.pilot_item(item, (), None)
    assert records is None
    offset = _pilots.PILOT_SEED_OFFSET
    # 2 runs of the stacked group, each fit on a seed of its own, far from the sweep's
    assert seen == [[(3 + offset, 2)] * 2, [(3 + offset + 1, 1)] * 2]
    # per pilot item of 2 runs: wall 2 x 3.5, fit 2 x 3; epoch 2 x (5 - 3) = 4 s
    assert (pilot.runs, pilot.wall_s, pilot.fit_s, pilot.epoch_s) == (2, 7.0, 6.0, 4.0)
    # hand computed: other 1 + fixed 2 + 10 x 4 = 43 s per 2 runs; 3 runs: 64.5 s
    assert pilot.estimate(3) == pytest.approx(43.0 * 3 / 2)


def test_a_workers_start_up_is_timed_with_each_method_and_each_dataset():
    from otfair_lab.experiments._pilots import start_up_configs

    runs = [
        RunConfig(dataset=d, method=m, seed=s, epochs=50, max_train_rows=None)
        for d in ("german", "adult")
        for m in ("unfair", "otf")
        for s in (0, 1)
    ]
    configs = start_up_configs(runs)
    synthetic = [c for c in configs if c.dataset == "synthetic"]
    real = [c for c in configs if c.dataset != "synthetic"]
    assert sorted(c.method for c in synthetic) == ["otf", "unfair"]
    # the first run on each dataset, shrunk to 1 epoch and 64 training rows
    assert [(c.dataset, c.method, c.seed) for c in real] == [
        ("german", "unfair", 0),
        ("adult", "unfair", 0),
    ]
    assert all(c.epochs == 1 and c.max_train_rows == 64 for c in configs)
