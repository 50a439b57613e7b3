"""``train_group_share``: the imbalanced training part of FTM Table 3 (§5.4.1)."""

from __future__ import annotations

import numpy as np
import pytest

from otfair.datasets import load_dataset
from otfair_lab.experiments import run_single
from otfair_lab.experiments._grid import RunConfig
from otfair_lab.experiments._run_data import _imbalance_train
from otfair_lab.experiments._spec import ConfigError, parse_spec


@pytest.fixture(scope="module")
def german_split():
    return load_dataset("german").split(random_state=0)


def test_group_zero_is_the_asked_share_and_group_one_is_whole(german_split):
    out = _imbalance_train(german_split, 0.05, seed=3)
    s_before, s_after = np.asarray(german_split.s_train), np.asarray(out.s_train)
    n1 = int((s_before == 1).sum())
    assert int((s_after == 1).sum()) == n1
    assert int((s_after == 0).sum()) == round(0.05 / 0.95 * n1)
    # rows are kept whole (features, label and group move together) and the test part stays
    X_before, X_after = np.asarray(german_split.X_train), np.asarray(out.X_train)
    rows = {tuple(r) for r in np.column_stack([X_before, german_split.y_train, s_before])}
    assert all(tuple(r) in rows for r in np.column_stack([X_after, out.y_train, s_after]))
    np.testing.assert_array_equal(out.y_test, german_split.y_test)


def test_the_draw_follows_the_seed(german_split):
    a = _imbalance_train(german_split, 0.05, seed=1)
    b = _imbalance_train(german_split, 0.05, seed=1)
    c = _imbalance_train(german_split, 0.05, seed=2)
    np.testing.assert_array_equal(a.X_train, b.X_train)
    assert not np.array_equal(a.X_train, c.X_train)


def test_a_share_needing_more_rows_than_group_zero_has_is_an_error(german_split):
    with pytest.raises(ValueError, match="train_group_share.*cannot add rows"):
        _imbalance_train(german_split, 0.9, seed=0)


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, True, "0.05"])
def test_run_single_checks_the_share(bad):
    with pytest.raises((TypeError, ValueError), match="train_group_share"):
        run_single("german", "unfair", epochs=1, train_group_share=bad)


def test_run_single_trains_on_the_imbalanced_part():
    out = run_single("german", "unfair", epochs=1, train_group_share=0.1)
    full = run_single("german", "unfair", epochs=1)
    assert out["n_train"] < full["n_train"]
    assert out["n_test"] == full["n_test"]


def test_config_key_and_run_key():
    spec = parse_spec(
        {
            "datasets": [
                {"name": "german"},
                {"name": "german", "label": "german-imb", "train_group_share": 0.05},
            ],
            "methods": [{"name": "unfair"}],
        }
    )
    runs = spec.runs()
    assert [r.train_group_share for r in runs] == [None, 0.05]
    assert runs[0].key() != runs[1].key()
    # a run without the option keeps the key it had before the option existed
    assert "train_group_share" not in RunConfig("german", "unfair", 0).identity()
    with pytest.raises(ConfigError, match="train_group_share"):
        parse_spec(
            {
                "datasets": [{"name": "german", "train_group_share": 1.5}],
                "methods": [{"name": "unfair"}],
            }
        )
