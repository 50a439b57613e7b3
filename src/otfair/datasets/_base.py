"""``FairDataset`` (a cleaned table with label and sensitive attributes) and ``FairSplit``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from otfair.datasets._preprocessing import SCALINGS, Preprocessor, Scaling
from otfair.utils import check_binary_labels, check_finite_1d, check_sensitive_features

Task = Literal["classification", "regression"]
TASKS: tuple[str, ...] = ("classification", "regression")


def is_binary_column(values: pd.Series) -> bool:
    """Return whether a sensitive column is a 0/1 indicator (then it stays integer)."""
    arr = values.to_numpy(dtype=np.float64)
    return bool(np.all(np.isin(arr, (0.0, 1.0))))


@dataclass(frozen=True)
class FairSplit:
    """A preprocessed train/test split of a :class:`FairDataset`.

    Attributes
    ----------
    X_train, X_test : numpy.ndarray of shape (n, d), float32
        Preprocessed features. With ``sensitive_as_input=True`` the sensitive columns
        are the *last* ``len(sensitive_names)`` columns (binary ones as 0/1, continuous
        ones scaled like the other numeric features).
    y_train, y_test : numpy.ndarray of shape (n,), float64
        Labels (0/1 for classification).
    s_train, s_test : numpy.ndarray
        One binary attribute: a 1-D int64 array of 0/1. Several or continuous
        attributes: an (n, k) float64 array in the column order of ``sensitive_names``.
    feature_names : list of str
        Names of the columns of ``X_*``.
    sensitive_names : list of str
        Names of the sensitive attributes.
    task : {"classification", "regression"}
    dataset : str
        Name of the dataset the split comes from.
    train_index, test_index : numpy.ndarray of int
        Row positions in ``FairDataset.data`` of the two parts.
    preprocessor : Preprocessor
        Feature preprocessing, fit on the training part (reuse it for a shifted domain).
    sensitive_preprocessor : Preprocessor or None
        Scaling of the sensitive inputs when ``sensitive_as_input=True``.
    """

    X_train: np.ndarray
    X_test: np.ndarray
    y_train: np.ndarray
    y_test: np.ndarray
    s_train: np.ndarray
    s_test: np.ndarray
    feature_names: list[str]
    sensitive_names: list[str]
    task: Task
    dataset: str
    train_index: np.ndarray = field(repr=False)
    test_index: np.ndarray = field(repr=False)
    preprocessor: Preprocessor = field(repr=False)
    sensitive_preprocessor: Preprocessor | None = field(default=None, repr=False)

    @property
    def sensitive_as_input(self) -> bool:
        """Whether the sensitive columns were appended to ``X``."""
        return self.sensitive_preprocessor is not None


@dataclass(frozen=True)
class FairDataset:
    """A cleaned fairness benchmark before preprocessing.

    Attributes
    ----------
    name : str
        Dataset name as accepted by :func:`otfair.datasets.load_dataset`.
    data : pandas.DataFrame
        Cleaned features; the sensitive columns are *not* included.
    target : numpy.ndarray of shape (n,), float64
        Label; 0/1 for classification.
    sensitive : pandas.DataFrame
        Sensitive attributes, binary ones coded 0/1 (``description`` says which group
        is 1), continuous ones as floats.
    task : {"classification", "regression"}
    description : str
        The choices made when loading (source file, filters, codings, counts).
    categorical : list of str
        Columns of ``data`` to one-hot encode.
    scaling : {"standard", "minmax"}
        How numeric features are scaled by :meth:`split`.
    test_rows : numpy.ndarray of bool, optional
        A predefined test part (e.g. Adult's ``adult.test`` file): :meth:`split` then
        uses it instead of a random split, so every seed sees the same train/test rows.
    """

    name: str
    data: pd.DataFrame
    target: np.ndarray
    sensitive: pd.DataFrame
    task: Task
    description: str
    categorical: list[str] = field(default_factory=list)
    scaling: Scaling = "standard"
    test_rows: np.ndarray | None = None

    def __post_init__(self) -> None:
        n = len(self.data)
        if self.test_rows is not None:
            object.__setattr__(self, "test_rows", np.asarray(self.test_rows))  # frozen
            if self.test_rows.dtype != bool or self.test_rows.shape != (n,):
                raise ValueError(
                    f"`test_rows` must be a boolean mask of shape ({n},); got dtype "
                    f"{self.test_rows.dtype}, shape {self.test_rows.shape}."
                )
            if self.test_rows.all() or not self.test_rows.any():
                raise ValueError("`test_rows` must leave both a train and a test part.")
        if len(self.target) != n or len(self.sensitive) != n:
            raise ValueError(
                f"FairDataset {self.name!r}: data has {n} rows, target {len(self.target)}, "
                f"sensitive {len(self.sensitive)}."
            )
        if self.task not in TASKS:
            raise ValueError(f"`task` must be one of {list(TASKS)}; got {self.task!r}.")
        if self.scaling not in SCALINGS:
            raise ValueError(f"`scaling` must be one of {list(SCALINGS)}; got {self.scaling!r}.")
        if self.sensitive.shape[1] == 0:
            raise ValueError(f"FairDataset {self.name!r} has no sensitive attribute.")
        if self.task == "classification":
            check_binary_labels(self.target, "target")
        else:
            check_finite_1d(self.target, "target")
        check_sensitive_features(self.sensitive, n, name="sensitive")
        overlap = set(self.sensitive.columns) & set(self.data.columns)
        if overlap:
            raise ValueError(f"Sensitive columns {sorted(overlap)} must not be in `data`.")
        missing = [c for c in self.categorical if c not in self.data.columns]
        if missing:
            raise ValueError(f"`categorical` names columns not in `data`: {missing}.")

    def __len__(self) -> int:
        return len(self.data)

    @property
    def sensitive_names(self) -> list[str]:
        """Names of the sensitive attributes."""
        return list(self.sensitive.columns)

    def sensitive_array(self, index: np.ndarray | None = None) -> np.ndarray:
        """Sensitive attributes in the :class:`FairSplit` convention.

        A 1-D int64 0/1 array for one binary attribute, else an (n, k) float64 array.
        """
        sens = self.sensitive if index is None else self.sensitive.iloc[index]
        if sens.shape[1] == 1 and is_binary_column(sens.iloc[:, 0]):
            return sens.iloc[:, 0].to_numpy(dtype=np.int64)
        return sens.to_numpy(dtype=np.float64)

    def subset(self, mask: np.ndarray, *, name: str | None = None) -> FairDataset:
        """Return the rows where boolean ``mask`` is true (index reset)."""
        mask = np.asarray(mask, dtype=bool)
        return FairDataset(
            name=name or self.name,
            data=self.data.loc[mask].reset_index(drop=True),
            target=self.target[mask],
            sensitive=self.sensitive.loc[mask].reset_index(drop=True),
            task=self.task,
            description=self.description,
            categorical=list(self.categorical),
            scaling=self.scaling,
            test_rows=None if self.test_rows is None else self.test_rows[mask],
        )

    def split(
        self,
        test_size: float = 0.2,
        random_state: int | None = 0,
        *,
        sensitive_as_input: bool = False,
        stratify: bool = True,
        preprocess_like: FairSplit | None = None,
    ) -> FairSplit:
        """Split into train and test parts and preprocess both with train statistics.

        A dataset with predefined ``test_rows`` (Adult's ``split="predefined"``) is split
        there: ``test_size``, ``random_state`` and ``stratify`` are then not used (the
        seed of a run still seeds its model).

        Parameters
        ----------
        test_size : float, default=0.2
            Fraction of rows in the test part, in (0, 1).
        random_state : int or None, default=0
            Seed of the shuffle; the same seed gives the same split.
        sensitive_as_input : bool, default=False
            Append the sensitive columns as the last columns of ``X`` (binary 0/1
            unchanged, continuous ones scaled with train statistics).
        stratify : bool, default=True
            Keep the proportions of every (label, binary sensitive group) cell
            (classification) or of every binary sensitive group (regression) in both
            parts. Ignored where a cell has fewer than two rows.
        preprocess_like : FairSplit or None, default=None
            Reuse the fitted preprocessing of another split instead of fitting on this
            training part (domain shift: transform a target with the source statistics).
            Its ``sensitive_as_input`` setting is used.

        Returns
        -------
        FairSplit
        """
        train_idx, test_idx = self._split_rows(test_size, random_state, stratify)
        pre, sens_pre = self._preprocessing(train_idx, sensitive_as_input, preprocess_like)
        names = list(pre.feature_names_)
        if sens_pre is not None:
            names += list(sens_pre.feature_names_)
        return FairSplit(
            X_train=self._features(train_idx, pre, sens_pre),
            X_test=self._features(test_idx, pre, sens_pre),
            y_train=self.target[train_idx].astype(np.float64),
            y_test=self.target[test_idx].astype(np.float64),
            s_train=self.sensitive_array(train_idx),
            s_test=self.sensitive_array(test_idx),
            feature_names=names,
            sensitive_names=self.sensitive_names,
            task=self.task,
            dataset=self.name,
            train_index=train_idx,
            test_index=test_idx,
            preprocessor=pre,
            sensitive_preprocessor=sens_pre,
        )

    def _split_rows(
        self, test_size: float, random_state: int | None, stratify: bool
    ) -> tuple[np.ndarray, np.ndarray]:
        """Return the sorted train and test row indices (predefined ``test_rows`` first)."""
        from sklearn.model_selection import train_test_split  # lazy: slow import

        if not 0.0 < float(test_size) < 1.0:
            raise ValueError(f"`test_size` must be in (0, 1); got {test_size!r}.")
        idx = np.arange(len(self))
        strata = self._strata() if stratify else None
        if self.test_rows is not None:
            train_idx, test_idx = idx[~self.test_rows], idx[self.test_rows]
        else:
            try:
                train_idx, test_idx = train_test_split(
                    idx, test_size=test_size, random_state=random_state, stratify=strata
                )
            except ValueError:  # a stratum too small for the split: plain shuffle
                train_idx, test_idx = train_test_split(
                    idx, test_size=test_size, random_state=random_state
                )
        return np.sort(train_idx), np.sort(test_idx)

    def _preprocessing(
        self,
        train_idx: np.ndarray,
        sensitive_as_input: bool,
        preprocess_like: FairSplit | None,
    ) -> tuple[Preprocessor, Preprocessor | None]:
        """Return the feature and sensitive preprocessors: ``preprocess_like``'s, or fitted.

        The sensitive preprocessor (``None`` unless ``sensitive_as_input``) passes binary
        columns through and scales the others with the training rows' statistics.
        """
        if preprocess_like is not None:
            if preprocess_like.sensitive_names != self.sensitive_names:
                raise ValueError(
                    "`preprocess_like` has sensitive attributes "
                    f"{preprocess_like.sensitive_names}, this dataset {self.sensitive_names}."
                )
            return preprocess_like.preprocessor, preprocess_like.sensitive_preprocessor
        pre = Preprocessor(self.categorical, scaling=self.scaling).fit(self.data.iloc[train_idx])
        if not sensitive_as_input:
            return pre, None
        binary = [c for c in self.sensitive.columns if is_binary_column(self.sensitive[c])]
        sens_pre = Preprocessor(scaling=self.scaling, passthrough=binary).fit(
            self.sensitive.iloc[train_idx]
        )
        return pre, sens_pre

    def _features(
        self, rows: np.ndarray, pre: Preprocessor, sens_pre: Preprocessor | None
    ) -> np.ndarray:
        """Return the preprocessed features of ``rows``, sensitive columns appended last."""
        X = pre.transform(self.data.iloc[rows])
        if sens_pre is not None:
            X = np.hstack([X, sens_pre.transform(self.sensitive.iloc[rows])])
        return X

    def _strata(self) -> np.ndarray | None:
        parts = [
            self.sensitive[c].to_numpy(dtype=np.int64).astype(str)
            for c in self.sensitive.columns
            if is_binary_column(self.sensitive[c])
        ]
        if self.task == "classification":
            parts.append(self.target.astype(np.int64).astype(str))
        if not parts:
            return None
        strata = parts[0]
        for p in parts[1:]:
            strata = np.char.add(np.char.add(strata, "|"), p)
        _, counts = np.unique(strata, return_counts=True)
        return strata if counts.min() >= 2 else None
