"""Front door: ``load_dataset(name, **options)`` and ``list_datasets()``."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from otfair.datasets._base import FairDataset
from otfair.datasets._fetch import DataHome
from otfair.datasets._preprocessing import SCALINGS
from otfair.datasets._verify import verification


@dataclass(frozen=True)
class DatasetEntry:
    """How to load one named dataset.

    Attributes
    ----------
    name : str
    loader : callable
        ``loader(*, data_home, **options) -> FairDataset`` for real data (or
        ``loader(**options)`` for synthetic data).
    summary : str
        One line for ``otfair datasets list``.
    choices : dict of str to tuple
        Valid values of the options that take one of a fixed set (first is the default).
    real : bool
        Whether the data comes from files (takes ``data_home``).
    rows : int or None
        Rows with the default options (``None``: not known in advance); with
        ``rows_by_option`` ({(option, value): rows}) for options that change the count.
        Sweeps use it to scale a timed run to the others (:meth:`approximate_rows`).
    """

    name: str
    loader: Callable[..., Any]
    summary: str
    choices: dict[str, tuple[Any, ...]]
    real: bool = True
    rows: int | None = None
    rows_by_option: dict[tuple[str, Any], int] = field(default_factory=dict)

    def approximate_rows(self, options: Mapping[str, Any] | None = None) -> int | None:
        """Rows of the dataset loaded with ``options`` (``None`` when not known)."""
        for (key, value), rows in self.rows_by_option.items():
            if (options or {}).get(key, object()) == value:
                return rows
        return self.rows

    def options(self) -> dict[str, Any]:
        """Option names and defaults of the loader (``data_home`` excluded)."""
        params = inspect.signature(self.loader).parameters
        return {k: p.default for k, p in params.items() if k != "data_home"}


def _real(
    name: str,
    loader: Callable[..., Any],
    summary: str,
    rows: int,
    rows_by_option: dict[tuple[str, Any], int] | None = None,
    **choices: tuple[Any, ...],
) -> DatasetEntry:
    """Return the entry of a dataset read from files (``loader`` takes ``data_home``)."""
    return DatasetEntry(name, loader, summary, choices, True, rows, rows_by_option or {})


def _real_entries() -> list[DatasetEntry]:
    """Return the entries of the real datasets, with their rows and option choices."""
    from otfair.datasets import (
        _adult,
        _bank,
        _compas,
        _crime,
        _diabetes,
        _dutch,
        _german,
        _law_school,
    )

    cls_reg, reg_cls = ("classification", "regression"), ("regression", "classification")
    return [
        _real(
            "adult",
            _adult.load_adult,
            "UCI Adult census income >50K (45,222 rows)",
            45_222,
            sensitive=("sex", "race", "both"),
            task=cls_reg,
            split=("random", "predefined"),
        ),
        _real(
            "compas",
            _compas.load_compas,
            "ProPublica COMPAS two-year recidivism (6,172 rows after filter)",
            6_172,
            task=cls_reg,
        ),
        _real(
            "law_school",
            _law_school.load_law_school,
            "LSAC law school: UGPA regression (1,823) or bar passage (20,798)",
            1_823,
            {("task", "classification"): 20_798},
            task=reg_cls,
            sensitive=("auto", "gender", "race"),
        ),
        _real(
            "communities_crime",
            _crime.load_communities_crime,
            "UCI Communities and Crime, violent crime rate (1,994 rows)",
            1_994,
            task=reg_cls,
            sensitive=("white", "minority"),
        ),
        _real(
            "german",
            _german.load_german,
            "UCI German credit, good credit (1,000 rows)",
            1_000,
            sensitive=("sex", "age"),
        ),
        _real(
            "bank",
            _bank.load_bank,
            "UCI Bank Marketing, term deposit (30,488 rows without 'unknown'; 41,188 with "
            "drop_unknown=False)",
            30_488,
            {("drop_unknown", False): 41_188},
            sensitive=("age_binned", "age", "age25"),
        ),
        _real(
            "dutch",
            _dutch.load_dutch,
            "Dutch census 2001, prestigious occupation (60,420 rows)",
            60_420,
        ),
        _real(
            "diabetes",
            _diabetes.load_diabetes,
            "Diabetes 130-US hospitals, readmission <30 days (45,715 rows)",
            45_715,
            sensitive=("gender", "age"),
        ),
    ]


def _synthetic_entries() -> list[DatasetEntry]:
    """Return the entries of the embedded synthetic datasets (no files, no options)."""
    from otfair.datasets import _synthetic

    def scm(**kw: Any) -> FairDataset:
        return _synthetic.make_synthetic_scm(**kw).dataset

    scm.__signature__ = inspect.signature(_synthetic.make_synthetic_scm)  # type: ignore[attr-defined]
    return [
        DatasetEntry(
            "synthetic",
            _synthetic.make_synthetic,
            "two groups, covariate shift + label bias (classification, embedded)",
            {},
            real=False,
        ),
        DatasetEntry(
            "synthetic_scm",
            scm,
            "linear SCM of FTM §4.1 with known counterfactuals (embedded)",
            {},
            real=False,
        ),
        DatasetEntry(
            "synthetic_regression",
            _synthetic.make_synthetic_regression,
            "regression, group-dependent label law and noise (embedded)",
            {},
            real=False,
        ),
    ]


def _entries() -> dict[str, DatasetEntry]:
    """Return every named dataset's entry, by name (real ones first)."""
    return {e.name: e for e in (*_real_entries(), *_synthetic_entries())}


_ENTRIES: dict[str, DatasetEntry] | None = None


def dataset_entries() -> dict[str, DatasetEntry]:
    """Return every registered dataset's :class:`DatasetEntry`, by name.

    The registry behind :func:`load_dataset` (built on first use): each entry's loader,
    one-line summary, options and their fixed choices, and whether it reads files.

    Returns
    -------
    dict of str to DatasetEntry
        Real datasets first, in registry order.

    Examples
    --------
    >>> from otfair.datasets import dataset_entries
    >>> entry = dataset_entries()["adult"]
    >>> entry.real, entry.choices["sensitive"][0]
    (True, 'sex')
    """
    global _ENTRIES
    if _ENTRIES is None:
        _ENTRIES = _entries()
    return _ENTRIES


def list_datasets() -> list[str]:
    """Names accepted by :func:`load_dataset`, real datasets first."""
    entries = dataset_entries()
    return [n for n, e in entries.items() if e.real] + [
        n for n, e in entries.items() if not e.real
    ]


def get_entry(name: str) -> DatasetEntry:
    """Return the :class:`DatasetEntry` of ``name`` or raise a ValueError listing names."""
    entries = dataset_entries()
    if not isinstance(name, str) or name not in entries:
        raise ValueError(f"Unknown dataset {name!r}; valid names are {list_datasets()}.")
    return entries[name]


def load_dataset(
    name: str,
    *,
    data_home: DataHome = None,
    scaling: str | None = None,
    verify: bool | None = None,
    **options: Any,
) -> FairDataset:
    """Load a dataset by name.

    Parameters
    ----------
    name : str
        One of :func:`list_datasets`.
    data_home : path or None
        First data directory searched for real datasets; then ``$OTFAIR_DATA_DIR``,
        then the user cache, then a verified download (see
        :func:`otfair.datasets.search_dirs`). Ignored by synthetic generators.
    scaling : {"standard", "minmax"} or None
        Override the dataset's default numeric scaling (FTM uses min-max).
    verify : bool or None
        Check local files against the registry's sha256 (cached by path, size and
        mtime). ``None`` follows ``$OTFAIR_VERIFY`` (on unless ``0``); pass ``False``
        for a copy you edited on purpose.
    **options
        Dataset variants, e.g. ``sensitive="both"`` for adult or ``task="regression"``;
        see ``otfair datasets list``.

    Returns
    -------
    FairDataset

    Raises
    ------
    ValueError
        Unknown name, unknown option or invalid option value (the message lists the
        valid ones), or a bad ``data_home`` (a :class:`DataDirError`).
    DataFileError
        A file is missing and cannot be downloaded, differs from the registry's sha256,
        or is malformed; ``str(exc)`` is one line ending with the fix.

    Examples
    --------
    >>> ds = load_dataset("synthetic", n_samples=500)
    >>> split = ds.split(random_state=0)
    >>> split.X_train.shape[0]
    400
    """
    entry = get_entry(name)
    valid = entry.options()
    unknown = sorted(set(options) - set(valid))
    if unknown:
        raise ValueError(
            f"Unknown option(s) {unknown} for dataset {name!r}; valid options are "
            f"{sorted(valid) + ['data_home', 'scaling', 'verify']}."
        )
    if scaling is not None and scaling not in SCALINGS:
        raise ValueError(f"`scaling` must be one of {list(SCALINGS)}; got {scaling!r}.")
    if not entry.real:
        dataset = entry.loader(**options)
    else:
        with verification(verify):
            dataset = entry.loader(data_home=data_home, **options)
    if scaling is not None:
        dataset = dataclasses.replace(dataset, scaling=scaling)
    return dataset
