"""Dutch Virtual Census 2001 (Le Quy et al.'s ``dutch.csv``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from otfair.datasets._base import FairDataset
from otfair.datasets._fetch import DataHome
from otfair.datasets._io import MalformedFileError, read_table

COLUMNS = [
    "sex", "age", "household_position", "household_size", "prev_residence_place",
    "citizenship", "country_birth", "edu_level", "economic_status", "cur_eco_activity",
    "marital_status", "occupation",
]  # fmt: skip


def load_dutch(*, data_home: DataHome = None) -> FairDataset:
    """Load the Dutch census: predict a high-level ("prestigious") occupation.

    Parameters
    ----------
    data_home : path or None
        Data directory (see :func:`otfair.datasets.get_data_home`).

    Returns
    -------
    FairDataset
        60,420 rows. Sensitive ``sex``: 1 = male, 0 = female. Every feature is a coded
        category and is one-hot encoded, except ``age`` (an ordinal age band).
    """
    frame = read_table("dutch/dutch.csv", data_home, columns=COLUMNS)
    sexes = sorted(frame["sex"].dropna().unique().tolist())
    if sexes != ["female", "male"] or not frame["occupation"].isin([0, 1]).all():
        raise MalformedFileError(
            f"dutch/dutch.csv is malformed: sex values {sexes[:5]}, occupation must be 0/1."
        )
    data = frame.drop(columns=["sex", "occupation"])
    categorical = [c for c in data.columns if c != "age"]
    data[categorical] = data[categorical].astype(str)
    return FairDataset(
        name="dutch",
        data=data,
        target=frame["occupation"].to_numpy(dtype=np.float64),
        sensitive=pd.DataFrame({"sex": (frame["sex"] == "male").to_numpy(dtype=np.int64)}),
        task="classification",
        description=(
            f"Le Quy et al. dutch.csv ({len(frame):,} rows). Label: occupation "
            "(1 = high-level/prestigious). Sensitive: sex (1 = male, 0 = female)."
        ),
        categorical=categorical,
    )
