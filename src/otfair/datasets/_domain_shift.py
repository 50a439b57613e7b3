"""Source/target domain pairs for AdapFair's drift scenario.

AdapFair (§5.2) deploys a classifier trained on one population on another (ACS Income
Michigan -> Alabama, Heritage Health). Those data are not available here, so the pairs
below split available datasets into two domains that share one feature space.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from otfair.datasets._adult import CATEGORICAL as ADULT_CATEGORICAL
from otfair.datasets._adult import adult_frame
from otfair.datasets._base import FairDataset, FairSplit
from otfair.datasets._diabetes import AGE_THRESHOLD, diabetes_frame
from otfair.datasets._fetch import DataHome
from otfair.datasets._io import categorical_columns
from otfair.datasets._verify import verification


@dataclass(frozen=True)
class DomainShift:
    """A source and a target dataset over the same columns.

    Attributes
    ----------
    name : str
    source, target : FairDataset
        Same features, sensitive attributes and task; different populations.
    description : str
        Which rows form each domain and how the sensitive attribute is coded.
    """

    name: str
    source: FairDataset
    target: FairDataset
    description: str

    def split(
        self,
        test_size: float = 0.2,
        random_state: int | None = 0,
        *,
        sensitive_as_input: bool = False,
    ) -> tuple[FairSplit, FairSplit]:
        """Split both domains by seed; preprocess both with the source training part.

        Parameters
        ----------
        test_size : float, default=0.2
            Test fraction in each domain.
        random_state : int or None, default=0
        sensitive_as_input : bool, default=False
            See :meth:`FairDataset.split`.

        Returns
        -------
        (FairSplit, FairSplit)
            Source split, and target split transformed with the source's fitted
            preprocessing (its ``preprocessor`` is the source's).
        """
        source = self.source.split(test_size, random_state, sensitive_as_input=sensitive_as_input)
        target = self.target.split(test_size, random_state, preprocess_like=source)
        return source, target


def _pair(
    name: str,
    frame: pd.DataFrame,
    domains: dict[str, np.ndarray],
    source: str,
    target: str,
    *,
    drop: list[str],
    sensitive: str,
    categorical: list[str],
    description: str,
) -> DomainShift:
    data = frame.drop(columns=[*drop, "Y", sensitive])
    full = FairDataset(
        name=name,
        data=data,
        target=frame["Y"].to_numpy(dtype=np.float64),
        sensitive=frame[[sensitive]].reset_index(drop=True),
        task="classification",
        description=description,
        categorical=[c for c in categorical if c in data.columns],
    )
    return DomainShift(
        name=name,
        source=full.subset(domains[source], name=f"{name}:{source}"),
        target=full.subset(domains[target], name=f"{name}:{target}"),
        description=f"{description} This pair: source = {source}, target = {target}.",
    )


def _diabetes_gender(data_home: DataHome, source: str, target: str) -> DomainShift:
    frame = diabetes_frame(data_home)
    frame["age"] = (frame["age"] >= AGE_THRESHOLD).astype(np.int64)
    categorical = categorical_columns(frame)
    male = (frame["gender"] == 1).to_numpy()
    return _pair(
        "diabetes_gender",
        frame,
        {"female": ~male, "male": male},
        source,
        target,
        drop=["gender"],
        sensitive="age",
        categorical=categorical,
        description=(
            "Diabetes (45,715 cleaned encounters) split by gender into domains 'female' "
            "(25,062) and 'male' (20,653); by default train on female, deploy on male "
            "patients (mirrors AdapFair's Heritage Health drift). Sensitive: age "
            f"(1 = {AGE_THRESHOLD} or older). Label: readmitted <30 days. Gender is removed "
            "from the features."
        ),
    )


def _adult_country(data_home: DataHome, source: str, target: str) -> DomainShift:
    frame = adult_frame(data_home)
    us = (frame["native-country"] == "United-States").to_numpy()
    return _pair(
        "adult_country",
        frame,
        {"us": us, "non_us": ~us},
        source,
        target,
        drop=["native-country", "race"],
        sensitive="sex",
        categorical=ADULT_CATEGORICAL,
        description=(
            "Adult (45,222 rows) split by native-country into domains 'us' (United-States, "
            "41,292) and 'non_us' (all other countries, 3,930); by default train on us, "
            "deploy on non_us, a population shift like AdapFair's Michigan -> Alabama ACS "
            "split. Sensitive: sex (1 = Male). Label: income >50K. native-country and race "
            "are removed from the features."
        ),
    )


@dataclass(frozen=True)
class _ShiftEntry:
    build: Callable[[DataHome, str, str], DomainShift]
    domains: tuple[str, str]  # (default source, default target)
    alias: str  # the dataset name this pair is built from


_SHIFTS: dict[str, _ShiftEntry] = {
    "diabetes_gender": _ShiftEntry(_diabetes_gender, ("female", "male"), "diabetes"),
    "adult_country": _ShiftEntry(_adult_country, ("us", "non_us"), "adult"),
}


def list_domain_shifts() -> list[str]:
    """Names accepted by :func:`load_domain_shift`."""
    return list(_SHIFTS)


def load_domain_shift(
    name: str,
    *,
    data_home: DataHome = None,
    source: str | None = None,
    target: str | None = None,
    verify: bool | None = None,
) -> DomainShift:
    """Load a source/target pair for a distribution-shift experiment.

    Parameters
    ----------
    name : {"diabetes_gender", "adult_country"}
        ``diabetes_gender``: domains ``female`` / ``male``, sensitive age >= 60.
        ``adult_country``: domains ``us`` / ``non_us``, sensitive sex. The dataset
        names ``"diabetes"`` and ``"adult"`` are accepted as aliases of these pairs.
    data_home : path or None
        First data directory searched (see :func:`otfair.datasets.search_dirs`).
    source, target : str or None
        Domain names; default ``female -> male`` and ``us -> non_us``. Giving them
        the other way round reverses the shift.
    verify : bool or None
        Check local files' sha256 (see :func:`otfair.datasets.load_dataset`).

    Returns
    -------
    DomainShift

    Raises
    ------
    ValueError
        Unknown pair or domain names (the message lists the valid ones), or
        ``source == target``.

    Examples
    --------
    >>> shift = load_domain_shift("adult_country")  # doctest: +SKIP
    >>> source_split, target_split = shift.split(random_state=0)  # doctest: +SKIP
    """
    aliases = {e.alias: key for key, e in _SHIFTS.items()}
    key = aliases.get(name, name)
    if key not in _SHIFTS:
        raise ValueError(
            f"Unknown domain shift {name!r}; valid names are {list_domain_shifts()} "
            f"(or the dataset aliases {sorted(aliases)})."
        )
    entry = _SHIFTS[key]
    source = entry.domains[0] if source is None else source
    target = entry.domains[1] if target is None else target
    for arg, value in (("source", source), ("target", target)):
        if value not in entry.domains:
            raise ValueError(
                f"`{arg}` must be one of {list(entry.domains)} for {key!r}; got {value!r}."
            )
    if source == target:
        raise ValueError(f"`source` and `target` must differ; both are {source!r}.")
    with verification(verify):
        return entry.build(data_home, source, target)
