"""Fairness benchmark datasets (real and synthetic), returned as ``FairDataset``.

``load_dataset(name, **options)`` returns a :class:`FairDataset`: cleaned features, a
label, the sensitive attributes (kept out of the features) and the task. Its
:meth:`FairDataset.split` draws a seeded train/test split and preprocesses both parts
(impute, one-hot, scale) with statistics of the training part only, giving a
:class:`FairSplit` of float32 arrays. ``load_domain_shift`` gives source/target pairs
for AdapFair's drift scenario. See ``docs/datasets.md`` for every dataset's cleaning
and codings.

Where data files come from (one order for the library, the ``otfair`` CLI and the
tests; ``otfair datasets where`` prints it):

1. ``data_home=`` (``--data-home``), 2. ``$OTFAIR_DATA_DIR``, 3. the user cache
``$XDG_CACHE_HOME/otfair`` (``~/.cache/otfair``); the first directory holding a file
wins. A file found nowhere is downloaded from its registry address into the first of
these directories (sha256-verified, written atomically); ``otfair datasets fetch NAME``
or ``--all`` does it ahead of time. Local files are checked against the registry's
sha256 too (remembered by path, size and mtime, so a file is hashed once); opt out for
an edited copy with ``verify=False`` or ``OTFAIR_VERIFY=0`` (``--no-verify`` on
``otfair datasets describe`` / ``where``). Every
problem raises a :class:`DataFileError` whose one-line message names the fix.
"""

from otfair.datasets._adult import load_adult
from otfair.datasets._api import DatasetEntry, dataset_entries, list_datasets, load_dataset
from otfair.datasets._bank import load_bank
from otfair.datasets._base import FairDataset, FairSplit
from otfair.datasets._compas import load_compas
from otfair.datasets._crime import load_communities_crime
from otfair.datasets._diabetes import load_diabetes
from otfair.datasets._domain_shift import DomainShift, list_domain_shifts, load_domain_shift
from otfair.datasets._dutch import load_dutch
from otfair.datasets._errors import (
    ChecksumError,
    DataDirError,
    DataFileError,
    MalformedFileError,
)
from otfair.datasets._fetch import fetch_file, get_data_home, search_dirs
from otfair.datasets._german import load_german
from otfair.datasets._law_school import load_law_school
from otfair.datasets._preprocessing import Preprocessor
from otfair.datasets._status import (
    FileStatus,
    data_status,
    dataset_files,
    ensure_file,
    file_status,
    real_dataset_names,
)
from otfair.datasets._summary import dataset_summary
from otfair.datasets._synthetic import (
    SyntheticSCM,
    make_synthetic,
    make_synthetic_regression,
    make_synthetic_scm,
)

__all__ = [
    "ChecksumError",
    "DataDirError",
    "DataFileError",
    "DatasetEntry",
    "DomainShift",
    "FairDataset",
    "FairSplit",
    "FileStatus",
    "MalformedFileError",
    "Preprocessor",
    "SyntheticSCM",
    "data_status",
    "dataset_entries",
    "dataset_files",
    "dataset_summary",
    "ensure_file",
    "fetch_file",
    "file_status",
    "get_data_home",
    "list_datasets",
    "list_domain_shifts",
    "load_adult",
    "load_bank",
    "load_communities_crime",
    "load_compas",
    "load_dataset",
    "load_diabetes",
    "load_domain_shift",
    "load_dutch",
    "load_german",
    "load_law_school",
    "make_synthetic",
    "make_synthetic_regression",
    "make_synthetic_scm",
    "real_dataset_names",
    "search_dirs",
]
