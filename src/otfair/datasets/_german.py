"""UCI Statlog German credit."""

from __future__ import annotations

import numpy as np
import pandas as pd

from otfair.datasets._base import FairDataset
from otfair.datasets._fetch import DataHome
from otfair.datasets._io import MalformedFileError, categorical_columns, check_choice, read_table

COLUMNS = [
    "checking_status", "duration", "credit_history", "purpose", "credit_amount", "savings",
    "employment", "installment_rate", "personal_status_sex", "other_debtors",
    "residence_since", "property", "age", "other_installment_plans", "housing",
    "existing_credits", "job", "num_dependents", "telephone", "foreign_worker", "class",
]  # fmt: skip
MALE_CODES = ("A91", "A93", "A94")


def load_german(*, data_home: DataHome = None, sensitive: str = "sex") -> FairDataset:
    """Load German credit (1,000 applicants): predict good credit.

    Parameters
    ----------
    data_home : path or None
        Data directory (see :func:`otfair.datasets.get_data_home`).
    sensitive : {"sex", "age"}, default="sex"
        ``sex`` from attribute 9 (1 = male: A91, A93, A94; 0 = female: A92, A95), as in
        FTM; attribute 9 itself is then dropped because it encodes sex. ``age``: 1 if
        age > 25 (AIF360's privileged group); the age column is then dropped.

    Returns
    -------
    FairDataset
        Label 1 = good credit (700), 0 = bad (300). Numeric features are min-max scaled
        by default (FTM).
    """
    check_choice(sensitive, "sensitive", ["sex", "age"])
    frame = read_table("german/german.data", data_home, header=None, sep=" ")
    if frame.shape[1] != len(COLUMNS):
        raise MalformedFileError(
            f"german/german.data is malformed: {frame.shape[1]} columns, expected 21."
        )
    frame.columns = COLUMNS
    if not frame["class"].isin([1, 2]).all():
        raise MalformedFileError("german/german.data is malformed: class must be 1 or 2.")
    if sensitive == "sex":
        s = frame["personal_status_sex"].isin(MALE_CODES).astype(np.int64)
        drop = ["personal_status_sex", "class"]
        coding = "sex (1 = male, 0 = female; from attribute 9, which is dropped)"
    else:
        s = (frame["age"] > 25).astype(np.int64)
        drop = ["age", "class"]
        coding = "age (1 = older than 25, 0 = 25 or younger)"
    data = frame.drop(columns=drop)
    categorical = categorical_columns(data)
    return FairDataset(
        name="german",
        data=data,
        target=(frame["class"] == 1).to_numpy(dtype=np.float64),
        sensitive=pd.DataFrame({sensitive: s.to_numpy()}),
        task="classification",
        description=(
            f"UCI german.data ({len(frame):,} rows). Label: good credit (1) vs bad (0). "
            f"Sensitive: {coding}."
        ),
        categorical=categorical,
        scaling="minmax",
    )
