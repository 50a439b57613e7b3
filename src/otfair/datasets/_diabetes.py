"""Diabetes 130-US hospitals, cleaned as Le Quy et al. (2022) to 45,715 encounters."""

from __future__ import annotations

import numpy as np
import pandas as pd

from otfair.datasets._base import FairDataset
from otfair.datasets._fetch import DataHome, locate_first
from otfair.datasets._io import MalformedFileError, categorical_columns, check_choice, read_table

GZ_FILE = "diabetes/diabetic_data.csv.gz"
CSV_FILE = "diabetes/diabetic_data.csv"
DROPPED = ["weight", "payer_code", "medical_specialty"]  # mostly missing (97%, 40%, 49%)
IDS = ["encounter_id", "patient_nbr"]
ID_CATEGORIES = ["admission_type_id", "discharge_disposition_id", "admission_source_id"]
DIAGNOSES = ["diag_1", "diag_2", "diag_3"]
_NEEDED = [*IDS, *DROPPED, *ID_CATEGORIES, *DIAGNOSES, "race", "gender", "age", "readmitted"]
AGE_THRESHOLD = 60


def diagnosis_group(codes: pd.Series) -> pd.Series:
    """Map ICD-9 codes to the 9 groups of Strack et al. (2014), Table 2.

    Circulatory (390-459, 785), Respiratory (460-519, 786), Digestive (520-579, 787),
    Diabetes (250.xx), Injury (800-999), Musculoskeletal (710-739), Genitourinary
    (580-629, 788), Neoplasms (140-239) and Other (everything else, incl. E/V codes).
    """
    text = codes.astype(str)
    num = pd.to_numeric(text.where(~text.str[:1].isin(["E", "V"])), errors="coerce")
    groups = np.select(
        [
            num.between(390, 459.99) | (num.floordiv(1) == 785),
            num.between(460, 519.99) | (num.floordiv(1) == 786),
            num.between(520, 579.99) | (num.floordiv(1) == 787),
            num.floordiv(1) == 250,
            num.between(800, 999.99),
            num.between(710, 739.99),
            num.between(580, 629.99) | (num.floordiv(1) == 788),
            num.between(140, 239.99),
        ],
        [
            "Circulatory",
            "Respiratory",
            "Digestive",
            "Diabetes",
            "Injury",
            "Musculoskeletal",
            "Genitourinary",
            "Neoplasms",
        ],  # fmt: skip
        default="Other",
    )
    return pd.Series(groups, index=codes.index)


def diabetes_frame(data_home: DataHome = None) -> pd.DataFrame:
    """Return the 45,715 cleaned encounters (label and sensitive columns included).

    Reproduces Le Quy et al.'s ``diabetes-clean.csv`` from the raw UCI file: keep the
    encounters followed by a readmission (``readmitted`` is ``<30`` or ``>30``: 46,902),
    drop ``weight``, ``payer_code`` and ``medical_specialty``, then drop the rows with a
    missing value (``?`` in race or a diagnosis) -> 45,715 rows (gender has no
    ``Unknown/Invalid`` left). Then: ``Y`` = 1 for ``<30`` (11,066), ``gender`` = 1 for
    Male, ``age`` = lower bound of the 10-year band in years, diagnoses grouped with
    :func:`diagnosis_group`, ids dropped.
    """
    return _clean(_read_raw(data_home))


def _read_raw(data_home: DataHome) -> pd.DataFrame:
    """Read the raw encounters: the gzipped copy where present, else the UCI csv."""
    relpath, _ = locate_first((GZ_FILE, CSV_FILE), data_home)
    return read_table(
        relpath,
        data_home,
        columns=_NEEDED,
        keep_default_na=False,  # "None" is a value of max_glu_serum / A1Cresult
        na_values="?",
        low_memory=False,
    )


def _clean(raw: pd.DataFrame) -> pd.DataFrame:
    frame = raw.loc[raw["readmitted"].isin(["<30", ">30"])].drop(columns=DROPPED + IDS)
    frame = frame.dropna().reset_index(drop=True)
    frame = frame.loc[frame["gender"].isin(["Male", "Female"])].reset_index(drop=True)
    bands = frame["age"].astype(str).str.extract(r"^\[(\d+)-")[0]
    if bands.isna().any():
        raise MalformedFileError(f"{CSV_FILE} is malformed: age must look like '[70-80)'.")
    frame["age"] = bands.astype(np.float64)
    frame["Y"] = (frame.pop("readmitted") == "<30").astype(np.float64)
    frame["gender"] = (frame["gender"] == "Male").astype(np.int64)
    for col in DIAGNOSES:
        frame[col] = diagnosis_group(frame[col])
    for col in ID_CATEGORIES:
        frame[col] = frame[col].astype(str)
    return frame


def load_diabetes(*, data_home: DataHome = None, sensitive: str = "gender") -> FairDataset:
    """Load Diabetes 130-US hospitals: predict readmission within 30 days.

    Parameters
    ----------
    data_home : path or None
        Data directory (see :func:`otfair.datasets.get_data_home`). Reads
        ``diabetes/diabetic_data.csv.gz`` if present, else ``diabetes/diabetic_data.csv``
        (downloaded from UCI when missing).
    sensitive : {"gender", "age"}, default="gender"
        ``gender`` (1 = Male, 0 = Female; OTF) or ``age`` (1 = 60 or older).

    Returns
    -------
    FairDataset
        45,715 rows (see ``diabetes_frame`` for the cleaning).
    """
    check_choice(sensitive, "sensitive", ["gender", "age"])
    raw = _read_raw(data_home)
    frame = _clean(raw)
    if sensitive == "gender":
        sens = frame[["gender"]]
        coding = "gender (1 = Male, 0 = Female)"
    else:
        sens = pd.DataFrame({"age": (frame["age"] >= AGE_THRESHOLD).astype(np.int64)})
        coding = f"age (1 = {AGE_THRESHOLD} or older)"
    data = frame.drop(columns=["Y", sensitive])
    categorical = categorical_columns(data)
    return FairDataset(
        name="diabetes",
        data=data,
        target=frame["Y"].to_numpy(dtype=np.float64),
        sensitive=sens.reset_index(drop=True),
        task="classification",
        description=(
            f"UCI diabetic_data.csv ({len(raw):,} encounters), cleaned as Le Quy et al.: "
            "readmitted encounters only, weight/payer_code/medical_specialty dropped, rows "
            "with '?' dropped "
            f"-> {len(frame):,} rows. Label: readmitted <30 days (1) vs >30 (0). Sensitive: "
            f"{coding}. Diagnoses grouped into Strack et al.'s 9 ICD-9 groups."
        ),
        categorical=categorical,
    )
