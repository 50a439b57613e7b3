"""otfair sweep stacks runs that differ only in strength; rows equal the unstacked ones."""

import pytest

from otfair.estimators import FairClassifier
from otfair_lab.experiments import RunConfig, load_spec, open_store, run_sweep
from otfair_lab.experiments._execute import execute_group
from otfair_lab.experiments._plan import Pilot, estimate_items
from otfair_lab.experiments._runner import execute_run
from otfair_lab.experiments._stacking import configs_of, stack_groups
from otfair_lab.experiments._store import timing_group
from otfair_lab.experiments.methods import MethodSpec, list_methods
from otfair_lab.experiments.methods import _spec as methods_spec

SPEC = """
name = "stack"
seeds = 1
epochs = 2
max_train_rows = 300

[[datasets]]
name = "synthetic"

[[methods]]
name = "gapreg"
strengths = [0.0, 1.0, 5.0]
options = { batch_size = 100 }

[[methods]]
name = "reduction"
strengths = [0.1, 0.05]

[profiles.quick]
max_strengths = 2
"""


def _rows(out):
    with open_store(out) as store:
        rows = store.rows()
    return {(r["method"], r["strength"]): r for r in rows}


def test_groups_only_strength_variants_of_stackable_methods():
    base = {"dataset": "synthetic", "seed": 0, "epochs": 1}
    configs = [
        RunConfig(method="gapreg", strength=0.0, **base),
        RunConfig(method="reduction", strength=0.1, **base),
        RunConfig(method="gapreg", strength=1.0, **base),
        RunConfig(method="gapreg", strength=1.0, **{**base, "seed": 1}),
        RunConfig(method="reduction", strength=0.05, **base),
    ]
    items = stack_groups(configs)
    assert [len(configs_of(i)) for i in items] == [2, 1, 1, 1]
    assert [c.strength for c in configs_of(items[0])] == [0.0, 1.0]


def test_stacked_sweep_equals_unstacked_and_resumes_per_run(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(SPEC)
    spec = load_spec(path)
    plain = run_sweep(spec, tmp_path / "plain", progress=False, stack=False)
    assert (plain.ok, plain.failed) == (5, 0)
    # stacked, resumed: the quick profile stores 2 gapreg strengths, the full run adds 1
    run_sweep(spec, tmp_path / "stacked", profile="quick", progress=False)
    again = run_sweep(spec, tmp_path / "stacked", progress=False)
    assert (again.skipped, again.ok, again.failed) == (4, 1, 0)
    a, b = _rows(tmp_path / "plain"), _rows(tmp_path / "stacked")
    assert a.keys() == b.keys()
    for key, row in a.items():
        assert b[key]["key"] == row["key"]
        for metric in ("accuracy", "dp_gap", "auc"):
            assert b[key][metric] == pytest.approx(row[metric], abs=1e-5), (key, metric)
    # the two runs of the quick profile were one stacked group, the resumed one alone
    stacked = [b[("gapreg", s)]["metrics"].get("stacked_runs") for s in (0.0, 1.0, 5.0)]
    assert sorted(stacked, key=str) == [2, 2, None]


def test_plan_says_when_stacking_makes_the_estimate_an_upper_bound(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(SPEC)
    spec = load_spec(path)
    plans = []
    run_sweep(spec, tmp_path / "a", progress=False, on_plan=plans.append)
    basis = plans[-1].basis
    # 5 runs: gapreg's 3 strengths in one stacked fit, reduction's 2 alone; the pilot
    # of reduction (no epochs) is its first run, stored: 2 fits left for 4 runs
    assert "4 runs from pilot fits" in basis and "2 fits, stacked groups counted once" in basis
    plans.clear()
    run_sweep(spec, tmp_path / "b", progress=False, on_plan=plans.append, stack=False)
    assert "stacked" not in plans[-1].basis


def _synthetic_spec(name: str, epochs: int, method: dict):
    """A sweep of one method entry on 300 synthetic training rows."""
    from otfair_lab.experiments._spec import parse_spec

    return parse_spec(
        {
            "name": name,
            "epochs": epochs,
            "max_train_rows": 300,
            "datasets": [{"name": "synthetic"}],
            "methods": [method],
        }
    )


def test_the_estimate_counts_a_timed_stacked_group_per_run(tmp_path):
    """A stacked group timed first stands for its K runs once, not K times."""
    method = {"name": "gapreg", "strengths": [0.0, 1.0, 5.0], "options": {"batch_size": 100}}
    spec = _synthetic_spec("stack", 2, method)
    plans = []
    # one work item: piloted only when asked (a one-fit sweep otherwise trains once)
    run_sweep(spec, tmp_path / "out", progress=False, on_plan=plans.append, pilot=True)
    with open_store(tmp_path / "out") as store:
        rows = store.rows()
    assert len(rows) == 3
    final = [p for p in plans if p.estimate_s is not None and not p.partial]
    # one stacked fit for the 3 runs, from a pilot of the group (not 3 fits)
    assert final and "1 fits, stacked groups counted once" in final[-1].basis
    assert "3 runs from pilot fits of 1 method x dataset group" in final[-1].basis
    # the arithmetic behind it, with a pilot of the whole group taking 2 s
    items = [tuple(spec.runs())]
    group = timing_group(items[0][0])
    seconds, _ = estimate_items(items, {}, {group: Pilot(runs=3, wall_s=2.0)}, workers=1)
    assert seconds == pytest.approx(2.0)  # the group once, not 3 x 2 s


def test_adapfair_runs_share_one_base_classifier_with_equal_rows(tmp_path):
    method = {
        "name": "adapfair",
        "strengths": [0.9, 0.5, 0.1],
        "options": {"base_epochs": 2, "batch_size": 100},
    }
    spec = _synthetic_spec("af", 1, method)
    assert [len(configs_of(i)) for i in stack_groups(spec.runs())] == [3]
    run_sweep(spec, tmp_path / "plain", progress=False, stack=False)
    run_sweep(spec, tmp_path / "stacked", progress=False)
    a, b = _rows(tmp_path / "plain"), _rows(tmp_path / "stacked")
    assert a.keys() == b.keys()
    for key, row in a.items():
        for metric in ("accuracy", "dp_gap", "auc"):
            assert b[key][metric] == row[metric], (key, metric)  # the same computation
        assert b[key]["metrics"]["stacked_runs"] == 3


# ------------------------------------------------------------ the explicit group path
def _gapreg_method(monkeypatch, name: str, make) -> str:
    """Register, for one test, a gapreg method built by ``make(strength, seed, epochs)``."""

    def build(strength, *, notion=None, random_state=None, epochs=None, **options):
        return make(strength, random_state, epochs or 2)

    spec = MethodSpec(
        name=name,
        task="classification",
        build=build,
        strength_name="alpha",
        default_strengths=(0.1, 0.5),
        notions=("dp",),
    )
    list_methods()  # the registered families first
    monkeypatch.setitem(methods_spec._REGISTRY, name, spec)
    return name


def _gapreg(strength, seed, epochs, **kw):
    return FairClassifier(
        "gapreg", strength, epochs=epochs, batch_size=100, random_state=seed, **kw
    )


def _group(method, strengths=(0.1, 0.5)):
    base = {"dataset": "synthetic", "seed": 0, "epochs": 2, "max_train_rows": 300}
    return tuple(RunConfig(method=method, strength=a, **base) for a in strengths)


def _metrics(record):
    return {k: record["result"][k] for k in ("strength", "accuracy", "dp_gap", "auc")}


def test_group_stacks_the_built_values_when_the_registry_maps_the_strength(monkeypatch):
    """A builder may map the run's strength (here x10): the curve holds the built values."""
    method = _gapreg_method(
        monkeypatch, "test-gapreg-x10", lambda a, seed, ep: _gapreg(10 * a, seed, ep)
    )
    group = _group(method)
    records = execute_group(group)
    assert [r["status"] for r in records] == ["ok", "ok"]
    # one curve fit, carried by the first run (share_fit_time spreads it)
    assert records[0]["result"]["fit_time_s"] > 0 and records[1]["result"]["fit_time_s"] == 0
    assert records[1]["started_at"] == records[0]["finished_at"]  # spans tile the group
    for config, record in zip(group, records, strict=True):
        alone = execute_run(config)
        assert record["result"]["strength"] == config.strength  # the run's, not the built one
        assert _metrics(record) == pytest.approx(_metrics(alone), abs=1e-6)


def test_group_fits_separately_when_other_parameters_differ(monkeypatch):
    """Built estimators that differ beyond the strength are not stacked: K plain fits."""
    method = _gapreg_method(
        monkeypatch, "test-gapreg-lr", lambda a, seed, ep: _gapreg(a, seed, ep, lr=1e-3 * (1 + a))
    )
    group = _group(method)
    records = execute_group(group)
    assert all(r["result"]["fit_time_s"] > 0 for r in records)
    for config, record in zip(group, records, strict=True):
        assert _metrics(record) == _metrics(execute_run(config))  # the same computation


def test_a_failing_run_of_a_group_fails_alone(monkeypatch):
    def make(a, seed, ep):
        if a == 0.5:
            raise ValueError("no model at 0.5")
        return _gapreg(a, seed, ep)

    records = execute_group(
        _group(_gapreg_method(monkeypatch, "test-gapreg-fail", make), (0.1, 0.5, 1.0))
    )
    assert [r["status"] for r in records] == ["ok", "error", "ok"]
    assert records[1]["error"] == "ValueError: no model at 0.5" and records[1]["traceback"]
    assert records[0]["result"]["fit_time_s"] > 0 and records[2]["result"]["fit_time_s"] == 0
