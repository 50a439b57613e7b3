"""The method registry (otfair_lab.experiments.methods) and its deprecated old home."""

import inspect

import pytest

from otfair_lab.experiments.methods import (
    PAPER_SETTINGS,
    MethodSpec,
    check_options,
    get_method,
    list_methods,
    paper_settings,
    register_method,
)


def test_register_and_get():
    spec = MethodSpec(name="_test_dummy", task="classification", build=lambda s, **kw: None)
    register_method(spec)
    assert get_method("_test_dummy") is spec
    assert "_test_dummy" in list_methods("classification")
    assert "_test_dummy" not in list_methods("regression")
    with pytest.raises(ValueError, match="already registered"):
        register_method(MethodSpec(name="_test_dummy", task="regression", build=print))
    with pytest.raises(TypeError, match="MethodSpec"):
        register_method("nope")


def test_unknown_method_lists_known():
    with pytest.raises(ValueError, match="Unknown method 'nope'. Known methods:"):
        get_method("nope")


def test_every_builtin_spec_is_self_consistent():
    for name in list_methods():
        spec = get_method(name)
        if not spec.build.__module__.startswith("otfair_lab.experiments.methods"):
            continue  # registered by a test
        assert spec.description and spec.paper, name
        if spec.has_strength:
            # the default strength is a number; the grid (if any) is sorted one way
            assert isinstance(spec.strength_for(None), float), name
        else:
            assert spec.strength_for("adult") is None and not spec.default_strengths, name
        if spec.estimator is not None:
            built = spec.build(None, notion=None, random_state=0, epochs=1, device="cpu",
                               dataset=None)  # fmt: skip
            # the built estimator is of the declared class, or wraps one (ot-repair, fair-pca:
            # a repair before a logistic regression; the barycenter methods: a sensitive-column
            # adapter around the estimator)
            inner = [built, getattr(built, "repair", None), getattr(built, "estimator", None)]
            assert any(isinstance(part, spec.estimator) for part in inner), name
            params = set(inspect.signature(spec.estimator.__init__).parameters)
            if spec.penalty is not None:  # the penalty object's settings, flat and nested
                own = set(inspect.signature(spec.penalty.__init__).parameters) - {"self"}
                params |= own | {f"penalty__{n}" for n in own}
                assert isinstance(built.penalty, spec.penalty), name
            assert set(spec.option_names()) <= params, name
            assert not {"random_state", "device", "notion"} & set(spec.option_names())


def test_moved_names_point_to_their_new_home():
    import otfair.estimators

    for name in ("get_method", "list_methods", "MethodSpec", "paper_settings"):
        with pytest.raises(
            AttributeError, match=f"import {name} from otfair_lab.experiments.methods"
        ):
            getattr(otfair.estimators, name)
    with pytest.raises(ModuleNotFoundError):
        import otfair.estimators.registry  # noqa: F401


def test_paper_settings_one_table():
    assert paper_settings("law_school")["clip"] == 0.2
    assert paper_settings("german", paper="ftm") == {"batch_size": 200}
    assert paper_settings("unknown") == PAPER_SETTINGS["accuracy-disparity"]["*"]
    with pytest.raises(ValueError, match="`paper`"):
        paper_settings("adult", paper="nope")
    # per-dataset strengths come from the same table
    bgl = get_method("bgl")
    assert bgl.strength_for("law_school") == PAPER_SETTINGS["accuracy-disparity"][
        "law_school"]["bgl_eps"]  # fmt: skip
    assert bgl.build(None, random_state=0, dataset="adult").eps == 0.07


@pytest.mark.parametrize(
    ("method", "options", "match"),
    [
        # the estimator's _parameter_constraints, in its fit's words
        (
            "otf",
            {"lr": "abc"},
            r"The 'lr' parameter of FairClassifier must be a float in the "
            r"range \(0.0, inf\) or a str among \{'auto'\}. Got 'abc' instead.",
        ),  # fmt: skip
        ("otf", {"lr": -1}, "'lr' parameter of FairClassifier"),
        ("otf", {"batch_size": 1.5}, "'batch_size' parameter of FairClassifier must be an int"),
        ("otf", {"nonsense": 1}, "unknown option.*valid options: .*batch_size"),
        ("cenet", {"encoder_hidden": [8, "a"]}, "'encoder_hidden' parameter of CENet"),
        ("adapfair", {"sensitive_column": "x"}, "'sensitive_column' parameter of AdapFair"),
        # a penalty object's setting: the object's _parameter_constraints
        ("otf", {"eps": "small"}, "The 'eps' parameter of OTF must be a float"),
        ("ftm", {"group_batch_size": 0}, "The 'group_batch_size' parameter of FTM must be an int"),
        ("reduction", {"epochs": 3}, "valid options: C, max_iter"),
    ],
)
def test_check_options_names_option_and_type(method, options, match):
    with pytest.raises(ValueError, match=match):
        check_options(get_method(method), options)


def test_check_options_accepts_valid_values():
    spec = get_method("otf")
    opts = {"lr": 1, "hidden": [8, 8], "eps": 0.01, "penalty__tol": 1e-3, "model": "mlp"}
    assert check_options(spec, opts) == opts
    ftm = {"matching_seed": 3, "cache_dir": None, "penalty__n_pairing_rounds": 1}
    assert check_options(get_method("ftm-joint"), ftm) == ftm
    assert check_options(get_method("adapfair"), {"base_epochs": 3, "sensitive_column": None})
