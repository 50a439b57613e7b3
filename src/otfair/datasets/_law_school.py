"""LSAC law school: UGPA regression (GerryFair file) or bar passage (Le Quy et al.)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from otfair.datasets._base import FairDataset
from otfair.datasets._fetch import DataHome
from otfair.datasets._io import check_choice, read_table

_GERRYFAIR = [
    "cluster", "lsat", "ugpa", "zfygpa", "zgpa", "bar1", "fulltime", "fam_inc", "age",
    "gender", *(f"race{i}" for i in range(1, 9)),
]  # fmt: skip
_CLEAN = [
    "decile1b", "decile3", "lsat", "ugpa", "zfygpa", "zgpa", "fulltime", "fam_inc", "male",
    "tier", "race", "pass_bar",
]  # fmt: skip


def load_law_school(
    *, data_home: DataHome = None, task: str = "regression", sensitive: str = "auto"
) -> FairDataset:
    """Load the LSAC law school data in one of the papers' two set-ups.

    ``task="regression"`` (accuracy-disparity paper, App. B): GerryFair's 1,823-row
    ``lawschool.csv``, target ``ugpa``, sensitive ``gender`` by default (coded as in the
    file: 1 for 824 rows, 0 for 999; the file does not document which sex is 1).
    ``race`` is ``race7`` (1 = the majority group, presumably White; the other race
    indicators are removed from the features). ``cluster`` is one-hot encoded.

    ``task="classification"``: Le Quy et al.'s 20,798-row ``law_school_clean.csv``,
    label ``pass_bar``, sensitive ``race`` by default (1 = White, 0 = non-White) or
    ``gender`` (the ``male`` column, 1 = male). AdapFair's admissions label is not
    available, so bar passage is used instead.

    Parameters
    ----------
    data_home : path or None
        Data directory (see :func:`otfair.datasets.get_data_home`).
    task : {"regression", "classification"}, default="regression"
    sensitive : {"auto", "gender", "race"}, default="auto"
        ``auto`` = gender for regression, race for classification.

    Returns
    -------
    FairDataset
    """
    check_choice(task, "task", ["regression", "classification"])
    check_choice(sensitive, "sensitive", ["auto", "gender", "race"])
    if task == "regression":
        return _gerryfair(data_home, "gender" if sensitive == "auto" else sensitive)
    return _clean(data_home, "race" if sensitive == "auto" else sensitive)


def _gerryfair(data_home: DataHome, sensitive: str) -> FairDataset:
    frame = read_table("law_school/lawschool.csv", data_home, columns=_GERRYFAIR)
    races = [f"race{i}" for i in range(1, 9)]
    if sensitive == "gender":
        sens = frame[["gender"]].astype(np.int64)
        data = frame.drop(columns=["ugpa", "gender"])
        coding = "gender as coded in the file (1: 824 rows, 0: 999 rows; undocumented)"
    else:
        sens = frame[["race7"]].astype(np.int64).rename(columns={"race7": "race"})
        data = frame.drop(columns=["ugpa", *races])
        coding = "race = race7 (1 = majority group, presumably White; 0 = other)"
    data["cluster"] = data["cluster"].astype(np.int64).astype(str)
    return FairDataset(
        name="law_school",
        data=data.reset_index(drop=True),
        target=frame["ugpa"].to_numpy(dtype=np.float64),
        sensitive=sens.reset_index(drop=True),
        task="regression",
        description=(
            f"GerryFair lawschool.csv ({len(frame):,} rows; accuracy-disparity paper). "
            f"Target: ugpa (undergraduate GPA). Sensitive: {coding}."
        ),
        categorical=["cluster"],
    )


def _clean(data_home: DataHome, sensitive: str) -> FairDataset:
    frame = read_table("law_school/law_school_clean.csv", data_home, columns=_CLEAN)
    values = sorted(frame["race"].dropna().unique().tolist())
    if values != ["Non-White", "White"]:
        raise ValueError(
            f"law_school/law_school_clean.csv is malformed: race values {values[:5]}."
        )
    frame = frame.dropna().reset_index(drop=True)
    race = (frame["race"] == "White").astype(np.int64)
    male = frame["male"].astype(np.int64)
    if sensitive == "race":
        sens = pd.DataFrame({"race": race})
        data = frame.drop(columns=["race", "pass_bar"])
        coding = "race (1 = White, 0 = non-White)"
    else:
        sens = pd.DataFrame({"gender": male})
        data = frame.drop(columns=["male", "pass_bar"]).assign(race=race)
        coding = "gender (1 = male, 0 = female)"
    return FairDataset(
        name="law_school",
        data=data,
        target=frame["pass_bar"].to_numpy(dtype=np.float64),
        sensitive=sens,
        task="classification",
        description=(
            f"Le Quy et al. law_school_clean.csv ({len(frame):,} rows). Label: pass_bar "
            f"(1 = passed). Sensitive: {coding}."
        ),
    )
