"""ProPublica COMPAS two-year recidivism, with ProPublica's standard filter."""

from __future__ import annotations

import numpy as np

from otfair.datasets._base import FairDataset
from otfair.datasets._fetch import DataHome
from otfair.datasets._io import check_choice, read_table

FEATURES = [
    "sex", "age", "juv_fel_count", "juv_misd_count", "juv_other_count", "priors_count",
    "c_charge_degree",
]  # fmt: skip
_NEEDED = FEATURES + [
    "race", "two_year_recid", "days_b_screening_arrest", "is_recid", "score_text",
]  # fmt: skip


def load_compas(*, data_home: DataHome = None, task: str = "classification") -> FairDataset:
    """Load COMPAS: predict two-year recidivism (``two_year_recid``).

    ProPublica's filter keeps rows with ``-30 <= days_b_screening_arrest <= 30``,
    ``is_recid != -1``, ``c_charge_degree != 'O'`` and ``score_text != 'N/A'``, leaving
    6,172 of 7,214 rows. Features: sex, age, juvenile felony / misdemeanour / other
    counts, priors count and charge degree (COMPAS's own scores are left out).

    Parameters
    ----------
    data_home : path or None
        Data directory (see :func:`otfair.datasets.get_data_home`).
    task : {"classification", "regression"}, default="classification"
        ``regression`` treats the 0/1 label as a real target (accuracy-disparity paper).

    Returns
    -------
    FairDataset
        Sensitive ``race``: 1 = White (Caucasian), 0 = non-White.
    """
    check_choice(task, "task", ["classification", "regression"])
    raw = read_table("compas/compas-scores-two-years.csv", data_home, columns=_NEEDED)
    days = raw["days_b_screening_arrest"]
    keep = (
        days.between(-30, 30)
        & (raw["is_recid"] != -1)
        & (raw["c_charge_degree"] != "O")
        & raw["score_text"].notna()
        & (raw["score_text"] != "N/A")
    )
    frame = raw.loc[keep].reset_index(drop=True)
    race = (frame["race"] == "Caucasian").astype(np.int64).to_frame("race")
    return FairDataset(
        name="compas",
        data=frame[FEATURES].copy(),
        target=frame["two_year_recid"].to_numpy(dtype=np.float64),
        sensitive=race,
        task=task,  # type: ignore[arg-type]
        description=(
            f"ProPublica compas-scores-two-years.csv ({len(raw):,} rows) with ProPublica's filter "
            f"-> {len(frame):,} rows. Label: two_year_recid (1 = reoffended). Sensitive: race "
            "(1 = White/Caucasian, 0 = non-White). Features: sex, age, juvenile counts, "
            "priors_count, c_charge_degree."
        ),
        categorical=["sex", "c_charge_degree"],
    )
