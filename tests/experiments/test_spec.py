import pytest
from _exp_helpers import write_spec

from otfair_lab.experiments import ConfigError, RunConfig, load_spec, parse_spec
from otfair_lab.experiments._spec import _thin


def test_grid_expansion_and_quick_profile(plugin_path, tmp_path):
    spec = load_spec(write_spec(tmp_path / "s.toml"))
    runs = spec.runs()
    assert len(runs) == (3 + 1) * 2  # (3 strengths + dummy-raise) x 2 seeds
    quick = spec.runs("quick")
    assert sorted((r.method, r.strength, r.seed) for r in quick) == [
        ("dummy-lr", 0.01, 0),
        ("dummy-lr", 1.0, 0),
        ("dummy-raise", None, 0),
    ]
    assert len({r.key() for r in runs}) == len(runs)


def test_thin_keeps_ends():
    assert _thin((1, 2, 3, 4, 5), 3) == (1, 3, 5)
    assert _thin((1, 2), 5) == (1, 2)


def test_run_key_is_stable_and_ignores_cosmetics():
    a = RunConfig(dataset="adult", method="otf", seed=0, strength=0.5, dataset_options={"x": 1})
    same = RunConfig(
        dataset="adult",
        method="otf",
        seed=0,
        strength=0.5,
        dataset_options={"x": 1},
        dataset_label="Adult (sex)",
        device="cuda",
    )
    assert a.key() == same.key()
    assert a.key() != RunConfig(dataset="adult", method="otf", seed=1, strength=0.5).key()
    assert (
        a.key()
        != RunConfig(
            dataset="adult", method="otf", seed=0, strength=0.5, dataset_options={"x": 2}
        ).key()
    )


BASE = {"datasets": [{"name": "synthetic"}], "methods": [{"name": "dummy-lr"}]}


@pytest.mark.parametrize(
    ("patch", "key"),
    [
        ({"sedes": 3}, "sedes"),
        ({"seeds": "three"}, "seeds"),
        ({"seeds": [0, 0]}, "seeds"),
        ({"test_size": 2}, "test_size"),
        ({"epochs": "two"}, "epochs"),  # its range is the estimator's (test_option_messages)
        ({"datasets": [{"name": "nope"}]}, "datasets[0].name"),
        ({"datasets": [{"name": "synthetic", "optoins": {}}]}, "datasets[0].optoins"),
        ({"datasets": [{"name": "synthetic", "source_domain": "a"}]}, "datasets[0].target_domain"),
        ({"methods": [{"name": "nope"}]}, "methods[0].name"),
        ({"methods": [{"name": "dummy-lr", "strenghts": [1]}]}, "methods[0].strenghts"),
        ({"methods": [{"name": "dummy-lr", "strengths": [1, "x"]}]}, "methods[0].strengths[1]"),
        ({"methods": [{"name": "dummy-lr", "notions": ["eopp"]}]}, "methods[0].notions[0]"),
        ({"methods": "dummy-lr"}, "methods"),
        ({"profiles": {"quick": {"datasets": ["adult"]}}}, "profiles.quick.datasets[0]"),
        ({"profiles": {"quick": {"max_strenghts": 2}}}, "profiles.quick.max_strenghts"),
        ({"report": {"matched_levels": {"dp_gap": ["a"]}}}, "report.matched_levels.dp_gap[0]"),
        ({"plugins": ["no_such_plugin_module"]}, "plugins[0]"),
        ({"audits": ["fmt"]}, "audits[0]"),
        ({"methods": [{"name": "dummy-lr", "datasets": ["adult"]}]}, "methods[0].datasets[0]"),
        ({"methods": [{"name": "dummy-lr", "label": ""}]}, "methods[0].label"),
    ],
)
def test_malformed_config_names_the_key(plugin_path, patch, key):
    raw = {**BASE, **patch}
    with pytest.raises(
        ConfigError, match=r"config key '" + key.replace("[", r"\[").replace("]", r"\]") + "'"
    ) as info:
        parse_spec(raw)
    assert info.value.key == key


def test_missing_sections_and_bad_toml(plugin_path, tmp_path):
    with pytest.raises(ConfigError, match="'methods'"):
        parse_spec({"datasets": [{"name": "synthetic"}]})
    bad = tmp_path / "bad.toml"
    bad.write_text("name = [unclosed\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_spec(bad)
    with pytest.raises(FileNotFoundError):
        load_spec(tmp_path / "missing.toml")


def test_unknown_profile(plugin_path):
    with pytest.raises(ConfigError, match="profiles.fast"):
        parse_spec(BASE).runs("fast")


def test_same_method_twice_needs_distinct_labels(plugin_path):
    twice = [{"name": "dummy-lr"}, {"name": "dummy-lr", "label": "lr-b", "options": {"sleep": 0}}]
    spec = parse_spec({**BASE, "methods": twice})
    runs = spec.runs()
    assert {r.method_label for r in runs} == {"dummy-lr", "lr-b"}
    assert {r.method for r in runs} == {"dummy-lr"}
    assert len({r.key() for r in runs}) == len(runs)  # the options differ
    with pytest.raises(ConfigError, match="config key 'methods': labels must be unique"):
        parse_spec({**BASE, "methods": [{"name": "dummy-lr"}, {"name": "dummy-lr"}]})


def test_method_restricted_to_datasets(plugin_path):
    raw = {
        "datasets": [{"name": "synthetic"}, {"name": "synthetic", "label": "b", "options": {}}],
        "methods": [
            {"name": "dummy-lr", "strengths": [1.0]},
            {"name": "dummy-raise", "datasets": ["b"]},
        ],
    }
    runs = parse_spec(raw).runs()
    assert sorted((r.dataset_label, r.method) for r in runs) == [
        ("b", "dummy-lr"),
        ("b", "dummy-raise"),
        ("synthetic", "dummy-lr"),
    ]


def test_profile_smoke_label_and_description(plugin_path, tmp_path):
    body = 'smoke = true\ndescription = "Smoke test: one seed."\n'
    spec = load_spec(write_spec(tmp_path / "s.toml", body))
    assert spec.profile_info("quick") == {
        "name": "quick",
        "smoke": True,
        "description": "Smoke test: one seed.",
    }
    assert spec.profile_info()["smoke"] is False
    with pytest.raises(ConfigError, match=r"profiles\.quick\.smoke"):
        load_spec(write_spec(tmp_path / "bad.toml", 'smoke = "yes"\n'))


def test_identity_follows_the_grid_not_the_labels(plugin_path, tmp_path):
    spec = load_spec(write_spec(tmp_path / "s.toml"))
    ident = spec.identity()
    assert (ident["name"], ident["source"]) == ("test", str(tmp_path / "s.toml"))
    relabelled = parse_spec({**BASE, "description": "other", "name": "test"})
    more_seeds = parse_spec({**BASE, "seeds": 3, "name": "test"})
    assert relabelled.identity()["fingerprint"] != more_seeds.identity()["fingerprint"]
    same = parse_spec({**BASE, "name": "test", "description": "again"})
    assert same.identity() == relabelled.identity()


def test_dataset_test_size_between_sweep_and_profile(plugin_path):
    raw = {
        **BASE,
        "test_size": 0.2,
        "datasets": [{"name": "synthetic"}, {"name": "synthetic", "label": "b", "test_size": 0.3}],
        "methods": [{"name": "dummy-lr", "strengths": [1.0]}],
        "profiles": {"p": {"test_size": 0.5}},
    }
    sizes = {r.dataset_label: r.test_size for r in parse_spec(raw).runs()}
    assert sizes == {"synthetic": 0.2, "b": 0.3}
    assert {r.test_size for r in parse_spec(raw).runs("p")} == {0.5}  # the profile wins
    bad = {**raw, "datasets": [{"name": "synthetic", "test_size": 1.5}]}
    with pytest.raises(ConfigError, match=r"datasets\[0\]\.test_size"):
        parse_spec(bad)


def test_with_seeds_runs_a_subset_of_a_profile_with_the_same_keys(plugin_path, tmp_path):
    spec = load_spec(write_spec(tmp_path / "s.toml", seeds=3))
    one = spec.with_seeds("full", [2])
    assert {r.seed for r in one.runs("full")} == {2}
    assert {r.key() for r in one.runs("full")} == {
        r.key() for r in spec.runs("full") if r.seed == 2
    }  # the same runs: pieces resume and merge like the whole profile
    assert one.identity() == spec.identity()  # the store sees the same sweep
    assert one.full_seeds() == spec.full_seeds() == (0, 1, 2)  # the protocol's count
    assert [r.seed for r in spec.with_seeds("quick", [0]).runs("quick")] == [
        r.seed for r in spec.runs("quick")
    ]
    with pytest.raises(ValueError, match=r"`seeds` \[5\] are not seeds of profile 'full'"):
        spec.with_seeds("full", [5])
    with pytest.raises(ValueError, match="distinct"):
        spec.with_seeds("full", [1, 1])
    with pytest.raises(ValueError, match="distinct"):
        spec.with_seeds("full", [])
    with pytest.raises(ConfigError):
        spec.with_seeds("nope", [0])


def test_a_dataset_factory_loads_only_from_a_listed_plugin(plugin_path):
    # a spec runs code like a script: `os:system` would run a shell command with the
    # dataset's options; a factory must come from a module the spec lists in `plugins`
    def raw(name, plugins=()):
        return {
            "plugins": list(plugins),
            "datasets": [{"name": name, "options": {"command": "echo pwned"}}],
            "methods": [{"name": "dummy-lr"}],
        }

    with pytest.raises(ConfigError, match=r"datasets\[0\]\.name.*'os:system' is not in a module"):
        parse_spec(raw("os:system", ["_exp_dummy_methods"]))
    with pytest.raises(ConfigError, match="not in a module of the spec's plugins"):
        parse_spec(raw("otfair.datasets:make_synthetic"))
    with pytest.raises(ConfigError, match="not in a module"):  # a prefix is not a package
        parse_spec(raw("otfair.datasets_x:f", ["otfair.datasets"]))
    spec = parse_spec(raw("otfair.datasets:make_synthetic", ["otfair.datasets"]))
    assert spec.datasets[0].name == "otfair.datasets:make_synthetic"
    spec = parse_spec(raw("otfair.datasets:make_synthetic", ["otfair"]))  # inside a package
    assert spec.plugins == ("otfair",)
