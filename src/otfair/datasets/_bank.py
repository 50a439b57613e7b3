"""UCI Bank Marketing (bank-additional-full.csv)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from otfair.datasets._base import FairDataset
from otfair.datasets._fetch import DataHome
from otfair.datasets._io import categorical_columns, check_choice, read_table

COLUMNS = [
    "age", "job", "marital", "education", "default", "housing", "loan", "contact", "month",
    "day_of_week", "duration", "campaign", "pdays", "previous", "poutcome", "emp.var.rate",
    "cons.price.idx", "cons.conf.idx", "euribor3m", "nr.employed", "y",
]  # fmt: skip
AGE_THRESHOLD = 38  # OTF: the median age of all 41,188 rows (App. C.2)
AIF360_AGE_THRESHOLD = 25  # AIF360's BankDataset: privileged = age >= 25 (FTM, App. D.1)
SENSITIVE = ("age_binned", "age", "age25")


def load_bank(
    *, data_home: DataHome = None, sensitive: str = "age_binned", drop_unknown: bool = True
) -> FairDataset:
    """Load Bank Marketing: predict term-deposit subscription.

    The two papers that use Bank code age differently; pick the variant of the paper:

    - FTM (App. D.1, Table 6): ``sensitive="age25"``, 30,488 rows (its 24,390/6,098
      split): 1 = age >= 25 (AIF360's privileged group), 0 = younger, ~2.8 % of the
      rows; FTM's Table 11 has 175 of 6,098 test rows in S = 0.
    - OTF (App. C.2): ``sensitive="age"`` (continuous) and ``sensitive="age_binned"``
      (1 = age >= 38, the median of its rows), both with ``drop_unknown=False``: all
      41,188 rows.

    With ``drop_unknown=True`` (the default, AIF360's ``BankDataset`` and FTM), rows
    containing ``unknown`` in any column are dropped: 41,188 -> 30,488 rows, the count
    FTM's 24,390/6,098 split adds up to. The median age of those rows is 37, not 38.

    Parameters
    ----------
    data_home : path or None
        Data directory (see :func:`otfair.datasets.get_data_home`).
    sensitive : {"age_binned", "age", "age25"}, default="age_binned"
        ``age_binned``: 1 if age >= 38, else 0 (OTF). ``age``: the continuous age in
        years (OTF). ``age25``: 1 if age >= 25, else 0 (AIF360's rule, FTM). Age is
        removed from the features in every case.
    drop_unknown : bool, default=True
        Drop the rows containing ``unknown`` (AIF360, FTM: 30,488 rows); ``False``
        keeps all 41,188 rows (OTF); ``unknown`` is then one more category.

    Returns
    -------
    FairDataset
        30,488 rows (41,188 with ``drop_unknown=False``); label 1 = subscribed.

    Raises
    ------
    ValueError
        If ``sensitive`` is not one of the variants or ``drop_unknown`` is not a bool.
    """
    check_choice(sensitive, "sensitive", list(SENSITIVE))
    if not isinstance(drop_unknown, bool):
        raise ValueError(f"`drop_unknown` must be a bool; got {drop_unknown!r}.")
    raw = read_table("bank/bank-additional-full.csv", data_home, columns=COLUMNS, sep=";")
    frame = raw.loc[~raw.isin(["unknown"]).any(axis=1)] if drop_unknown else raw
    frame = frame.reset_index(drop=True)
    age = frame["age"].to_numpy(dtype=np.float64)
    if sensitive == "age":
        sens = pd.DataFrame({"age": age})
        coding = "age (continuous, years)"
    elif sensitive == "age25":
        sens = pd.DataFrame({"age25": (age >= AIF360_AGE_THRESHOLD).astype(np.int64)})
        coding = f"age25 (1 = age >= {AIF360_AGE_THRESHOLD}, 0 = younger; AIF360, FTM)"
    else:
        sens = pd.DataFrame({"age_binned": (age >= AGE_THRESHOLD).astype(np.int64)})
        coding = f"age_binned (1 = age >= {AGE_THRESHOLD}, 0 = younger; OTF)"
    data = frame.drop(columns=["age", "y"])
    categorical = categorical_columns(data)
    return FairDataset(
        name="bank",
        data=data,
        target=(frame["y"] == "yes").to_numpy(dtype=np.float64),
        sensitive=sens,
        task="classification",
        description=(
            "UCI bank-additional-full.csv (41,188 rows)"
            + (" without rows containing 'unknown'" if drop_unknown else "")
            + f" -> {len(frame):,} rows. Label: subscribed (y = yes -> 1). Sensitive: {coding}."
        ),
        categorical=categorical,
    )
