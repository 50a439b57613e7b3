import numpy as np
import pandas as pd
import pytest

from otfair.datasets import load_dataset


@pytest.fixture(scope="module")
def raw(data_dir):
    kw = {"skipinitialspace": True, "na_values": "?"}
    frames = [pd.read_csv(data_dir / "adult" / f, **kw) for f in ("adult.data", "adult.test")]
    return pd.concat(frames, ignore_index=True)


def test_adult_counts(raw):
    ds = load_dataset("adult")
    assert len(ds) == 45_222  # PROVENANCE / OTF paper
    clean = raw.dropna()
    assert ds.target.sum() == clean["Y"].str.startswith(">50K").sum()
    assert ds.sensitive["sex"].sum() == (clean["sex"] == "Male").sum()
    assert ds.sensitive_names == ["sex"]
    assert "sex" not in ds.data.columns and "race" not in ds.data.columns


def test_adult_variants():
    both = load_dataset("adult", sensitive="both")
    assert both.sensitive_names == ["sex", "race"]
    assert both.sensitive["race"].sum() == pytest.approx(0.86 * 45_222, rel=0.01)
    sp = both.split(random_state=0)
    assert sp.s_train.shape == (len(sp.y_train), 2) and sp.s_train.dtype == np.float64
    assert not np.isnan(sp.X_train).any() and not np.isnan(sp.X_test).any()
    reg = load_dataset("adult", task="regression")
    assert reg.task == "regression"
    with pytest.raises(ValueError, match=r"`sensitive` must be one of \['sex', 'race', 'both'\]"):
        load_dataset("adult", sensitive="age")


def test_adult_predefined_split_is_the_uci_files(raw):
    ds = load_dataset("adult", task="regression", split="predefined")
    a, b = ds.split(random_state=0), ds.split(random_state=7, test_size=0.5)
    # the accuracy-parity paper's App. B sizes: adult.data / adult.test without '?'
    assert (len(a.y_train), len(a.y_test)) == (30_162, 15_060)
    np.testing.assert_array_equal(a.test_index, b.test_index)  # seed and size unused
    # the test part is the adult.test rows (read after adult.data): its positive count
    test_file = raw.iloc[len(raw) - 16_281 :].dropna()  # adult.test holds 16,281 rows
    np.testing.assert_array_equal(a.test_index, np.arange(30_162, 45_222))
    assert ds.target[a.test_index].sum() == test_file["Y"].str.startswith(">50K").sum()
    assert load_dataset("adult").test_rows is None
    with pytest.raises(ValueError, match=r"`split` must be one of \['random', 'predefined'\]"):
        load_dataset("adult", split="fixed")


def test_test_rows_mask_is_checked():
    ds = load_dataset("synthetic")
    n = len(ds)
    with pytest.raises(ValueError, match="`test_rows` must be a boolean mask"):
        type(ds)(**{**_fields(ds), "test_rows": np.zeros(n, dtype=int)})
    with pytest.raises(ValueError, match="`test_rows` must leave both a train and a test"):
        type(ds)(**{**_fields(ds), "test_rows": np.ones(n, dtype=bool)})
    mask = np.arange(n) % 4 == 0
    sub = type(ds)(**{**_fields(ds), "test_rows": mask}).subset(np.arange(n) < n // 2)
    assert sub.split().test_index.tolist() == np.flatnonzero(mask[: n // 2]).tolist()


def _fields(ds):
    import dataclasses

    return {f.name: getattr(ds, f.name) for f in dataclasses.fields(ds)}
