"""Column-wise preprocessing fit on a training frame: impute, one-hot encode, scale.

The papers preprocess tabular data the same way (accuracy-disparity App. B, OTF App. C.2,
FTM §5.1): impute missing numeric values with the training mean, one-hot encode the
categorical columns and scale the numeric ones, standardizing (most papers) or min-max
scaling (FTM). Everything is estimated on the training part only, so that the test part
(or a shifted target domain) is transformed with the source statistics.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd

Scaling = Literal["standard", "minmax"]
SCALINGS: tuple[str, ...] = ("standard", "minmax")


class Preprocessor:
    r"""Impute, one-hot encode and scale a DataFrame with statistics of a training frame.

    Numeric column :math:`j` is imputed with its training mean and mapped to

    .. math::

        z_j = \frac{x_j - c_j}{d_j}, \qquad
        (c_j, d_j) = \begin{cases}
            (\bar x_j, \operatorname{sd}(x_j)) & \text{standard} \\
            (\min x_j, \max x_j - \min x_j) & \text{minmax}
        \end{cases}

    (population standard deviation; :math:`d_j = 1` for a constant column). Categorical
    columns are imputed with their training mode and one-hot encoded over the categories
    seen in training; a category unseen in training encodes as all zeros. Passthrough
    columns (already numeric, e.g. binary 0/1 indicators) are copied unchanged.

    Output columns are ordered: numeric, then one-hot blocks, then passthrough.

    Parameters
    ----------
    categorical : sequence of str
        Columns to one-hot encode.
    scaling : {"standard", "minmax"}, default="standard"
        How numeric columns are scaled.
    passthrough : sequence of str, default=()
        Numeric columns copied unchanged (no imputation: they must be finite).

    Attributes
    ----------
    numeric_ : list of str
        Numeric (scaled) columns, in input order.
    center_, scale_ : numpy.ndarray
        :math:`c_j` and :math:`d_j` of each numeric column.
    fill_ : dict
        Imputation value of every numeric (mean) and categorical (mode) column.
    categories_ : dict of str to list of str
        Training categories of each categorical column, sorted.
    feature_names_ : list of str
        Output column names (``"col=category"`` for one-hot columns).
    """

    def __init__(
        self,
        categorical: Sequence[str] = (),
        *,
        scaling: Scaling = "standard",
        passthrough: Sequence[str] = (),
    ) -> None:
        if scaling not in SCALINGS:
            raise ValueError(f"`scaling` must be one of {list(SCALINGS)}; got {scaling!r}.")
        self.categorical = list(categorical)
        self.scaling = scaling
        self.passthrough = list(passthrough)

    # ------------------------------------------------------------------ fit
    def fit(self, frame: pd.DataFrame) -> Preprocessor:
        """Estimate imputation values, categories and scaling on ``frame``.

        Parameters
        ----------
        frame : pandas.DataFrame
            Training rows. Columns not listed as categorical or passthrough are numeric.

        Returns
        -------
        Preprocessor
            ``self``.
        """
        self._check_frame(frame, "frame", fitted=False)
        if len(frame) == 0:
            raise ValueError("`frame` is empty: cannot fit preprocessing on zero rows.")
        special = set(self.categorical) | set(self.passthrough)
        self.columns_ = list(frame.columns)
        self.numeric_ = [c for c in frame.columns if c not in special]
        self.fill_: dict[str, object] = {}
        num = self._numeric_block(frame)
        with np.errstate(invalid="ignore"):
            means = np.nanmean(num, axis=0) if num.shape[1] else np.zeros(0)
        for col, mean in zip(self.numeric_, means, strict=True):
            if not np.isfinite(mean):
                raise ValueError(f"Numeric column {col!r} has no finite training value.")
            self.fill_[col] = float(mean)
        num = np.where(np.isnan(num), means, num)
        if self.scaling == "standard":
            center, scale = num.mean(axis=0), num.std(axis=0)
        else:
            center, scale = num.min(axis=0), num.max(axis=0) - num.min(axis=0)
        self.center_ = center
        self.scale_ = np.where(scale > 0, scale, 1.0)
        self.categories_: dict[str, list[str]] = {}
        for col in self.categorical:
            values = frame[col].dropna().astype(str)
            if values.empty:
                raise ValueError(f"Categorical column {col!r} has no training value.")
            self.fill_[col] = values.mode().sort_values().iloc[0]
            self.categories_[col] = sorted(values.unique().tolist())
        self.feature_names_ = (
            list(self.numeric_)
            + [f"{c}={v}" for c in self.categorical for v in self.categories_[c]]
            + list(self.passthrough)
        )
        return self

    # ------------------------------------------------------------ transform
    def transform(self, frame: pd.DataFrame) -> np.ndarray:
        """Return the preprocessed ``frame`` as a float32 array.

        Parameters
        ----------
        frame : pandas.DataFrame
            Rows with the training columns (extra columns are ignored).

        Returns
        -------
        numpy.ndarray of shape (n, len(``feature_names_``)), float32
        """
        if not hasattr(self, "feature_names_"):
            raise ValueError("This Preprocessor is not fitted yet; call fit() first.")
        self._check_frame(frame, "frame", fitted=True)
        num = self._numeric_block(frame)
        fill = np.array([self.fill_[c] for c in self.numeric_], dtype=np.float64)
        num = np.where(np.isnan(num), fill, num)
        blocks = [(num - self.center_) / self.scale_]
        rows = np.arange(len(frame))
        for col in self.categorical:
            values = frame[col].astype(object).where(frame[col].notna(), self.fill_[col])
            cats = self.categories_[col]
            codes = pd.Index(cats).get_indexer(values.astype(str))
            onehot = np.zeros((len(frame), len(cats)))
            seen = codes >= 0  # unseen categories (code -1) stay all zeros
            onehot[rows[seen], codes[seen]] = 1.0
            blocks.append(onehot)
        if self.passthrough:
            passed = frame[self.passthrough].to_numpy(dtype=np.float64)
            if not np.all(np.isfinite(passed)):
                raise ValueError(
                    f"Passthrough columns {self.passthrough} contain NaN or infinite values."
                )
            blocks.append(passed)
        return np.hstack(blocks).astype(np.float32)

    def fit_transform(self, frame: pd.DataFrame) -> np.ndarray:
        """Fit on ``frame`` and return its transform."""
        return self.fit(frame).transform(frame)

    # -------------------------------------------------------------- helpers
    def _numeric_block(self, frame: pd.DataFrame) -> np.ndarray:
        try:
            return frame[self.numeric_].to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError) as exc:
            bad = [c for c in self.numeric_ if not pd.api.types.is_numeric_dtype(frame[c].dtype)]
            raise ValueError(
                f"Columns {bad} are not numeric; list them in `categorical`."
            ) from exc

    def _check_frame(self, frame: pd.DataFrame, name: str, *, fitted: bool) -> None:
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"`{name}` must be a pandas DataFrame; got {type(frame).__name__}.")
        needed = self.columns_ if fitted else self.categorical + self.passthrough
        missing = [c for c in needed if c not in frame.columns]
        if missing:
            raise ValueError(f"`{name}` lacks the columns {missing}.")
