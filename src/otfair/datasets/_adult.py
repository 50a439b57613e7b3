"""UCI Adult (census income), as used by all four papers."""

from __future__ import annotations

import numpy as np
import pandas as pd

from otfair.datasets._base import FairDataset
from otfair.datasets._fetch import DataHome
from otfair.datasets._io import MalformedFileError, check_choice, read_table

COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "Y",
]  # fmt: skip
CATEGORICAL = [
    "workclass", "marital-status", "occupation", "relationship", "native-country",
]  # fmt: skip
SENSITIVE = {"sex": ["sex"], "race": ["race"], "both": ["sex", "race"]}


def adult_frame(data_home: DataHome = None) -> pd.DataFrame:
    """Return train + test Adult rows without missing values (45,222 rows).

    The label column ``Y`` is 1 for income ``>50K`` (the test file's trailing ``.``
    is stripped); ``sex`` is 1 for Male, ``race`` is 1 for White; ``fnlwgt`` (a census
    sampling weight) and ``education`` (duplicated by ``education-num``) are dropped.
    """
    return _clean(_read_raw(data_home)).drop(columns="_from_test")


def _read_raw(data_home: DataHome) -> pd.DataFrame:
    parts = [
        read_table(
            f"adult/{name}", data_home, columns=COLUMNS, skipinitialspace=True, na_values="?"
        ).assign(_from_test=name == "adult.test")
        for name in ("adult.data", "adult.test")
    ]
    return pd.concat(parts, ignore_index=True)


def _clean(raw: pd.DataFrame) -> pd.DataFrame:
    frame = raw.dropna().reset_index(drop=True)
    label = frame["Y"].astype(str).str.rstrip(".")
    bad = sorted(set(label) - {">50K", "<=50K"})
    if bad:
        raise MalformedFileError(f"adult/adult.* is malformed: unexpected labels {bad[:5]}.")
    frame["Y"] = (label == ">50K").astype(np.float64)
    frame["sex"] = (frame["sex"] == "Male").astype(np.int64)
    frame["race"] = (frame["race"] == "White").astype(np.int64)
    return frame.drop(columns=["fnlwgt", "education"])


def load_adult(
    *,
    data_home: DataHome = None,
    sensitive: str = "sex",
    task: str = "classification",
    split: str = "random",
) -> FairDataset:
    """Load UCI Adult: predict income > 50K.

    Parameters
    ----------
    data_home : path or None
        Data directory (see :func:`otfair.datasets.get_data_home`).
    sensitive : {"sex", "race", "both"}, default="sex"
        ``sex`` (1 = Male), ``race`` (1 = White, 0 = non-White) or both columns
        (OTF §5 uses both).
    task : {"classification", "regression"}, default="classification"
        ``regression`` treats the 0/1 label as a real target (accuracy-disparity paper).
    split : {"random", "predefined"}, default="random"
        ``predefined`` keeps the UCI files' split: :meth:`FairDataset.split` puts the
        30,162 ``adult.data`` rows in train and the 15,060 ``adult.test`` rows in test
        whatever the seed (the accuracy-parity paper's App. B protocol); ``random``
        leaves the split to the seed and ``test_size``.

    Returns
    -------
    FairDataset
        45,222 rows (``adult.data`` + ``adult.test`` minus rows with ``?``).
    """
    check_choice(sensitive, "sensitive", list(SENSITIVE))
    check_choice(task, "task", ["classification", "regression"])
    check_choice(split, "split", ["random", "predefined"])
    raw = _read_raw(data_home)
    frame = _clean(raw)
    sens_cols = SENSITIVE[sensitive]
    from_test = frame.pop("_from_test").to_numpy(dtype=bool)
    data = frame.drop(columns=["Y", "sex", "race"])
    description = (
        f"UCI Adult, adult.data + adult.test ({len(raw):,} rows) minus rows with '?' -> "
        f"{len(frame):,} rows. Label: income >50K (1). Sensitive: {', '.join(sens_cols)} "
        "(sex: 1 = Male, 0 = Female; race: 1 = White, 0 = non-White). Dropped fnlwgt "
        "and education (duplicate of education-num)."
    )
    return FairDataset(
        name="adult",
        data=data,
        target=frame["Y"].to_numpy(dtype=np.float64),
        sensitive=frame[sens_cols].reset_index(drop=True),
        task=task,  # type: ignore[arg-type]
        description=description,
        categorical=list(CATEGORICAL),
        test_rows=from_test if split == "predefined" else None,
    )
