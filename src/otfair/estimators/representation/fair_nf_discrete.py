r"""Fair Normalizing Flows on a finite input space (the paper's encoder for tabular data).

Balunović, Ruoss, Vechev, *Fair Normalizing Flows*, ICLR 2022, §5 ("FNF for categorical
data") and the authors' ``train_enc_categorical.py``. When every feature is categorical
(:class:`~otfair.estimators.representation._discrete_coding.DiscreteCoding`: one-hot
blocks kept, other columns cut at quantiles), the input is a cell :math:`c` of a finite
space :math:`\mathcal C`, and an invertible encoder is a *bijection* of :math:`\mathcal C`.
With per-group densities :math:`p_0, p_1` on :math:`\mathcal C` (one
``CategoricalMADE`` per group), the bijection :math:`T` of the
mapped group :math:`a` onto the reference group :math:`b` that minimizes the statistical
distance of the encoded laws,

.. math::

    \Delta(T) = \tfrac12 \sum_{c \in \mathcal C}
        \bigl|\, p_b(c) - p_a(T^{-1}(c)) \,\bigr|,

matches the cells by the rank of their probabilities: the :math:`r`-th most likely cell
under :math:`p_a` goes to the :math:`r`-th most likely cell under :math:`p_b` (the
monotone rearrangement, i.e. exact 1-D optimal transport between the two lists of cell
masses under the cost :math:`|u - v|`). The reference group keeps its cells. Two such
bijections are built: :math:`T_{\text{all}}` on all of :math:`\mathcal C`, and
:math:`T_{\text{label}}`, the same matching within each class of a label predictor
(a group-balanced logistic regression on the cells), which keeps what the predictor
says about a mapped row. The encoder of the mapped group is randomized,

.. math::

    z = T_{\text{label}}(c) \text{ with probability } 1 - \gamma, \qquad
    z = T_{\text{all}}(c) \text{ with probability } \gamma,

so :math:`\gamma` (the ``strength``) trades accuracy for fairness, and the latent laws
are known exactly under the density model: :math:`q_b = p_b` and
:math:`q_a = (1-\gamma)\, T_{\text{label}}\#p_a + \gamma\, T_{\text{all}}\#p_a`.
Their statistical distance ``statistical_distance_`` is the paper's certificate: under
the density model, no classifier on :math:`z` has a DP gap above it, and no adversary a
balanced accuracy above :math:`(1 + \Delta)/2` (the paper's §3, Thm. 1).

A 2x20 MLP is trained on the one-hot :math:`z` of the training rows (the mapped rows'
maps drawn once, seeded). ``predict_proba`` returns the expectation over the randomized
encoder, :math:`(1-\gamma)\, g(T_{\text{label}}(c)) + \gamma\, g(T_{\text{all}}(c))` for
a mapped row (deterministic; the paper draws one encoding), and ``transform`` the
expected one-hot vector.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.utils.validation import check_is_fitted
from torch.nn import functional as F

from otfair.estimators._docs import fill_estimator_doc
from otfair.estimators._training import run_epochs
from otfair.estimators.preprocessing.sensitive_column import split_sensitive_column
from otfair.estimators.representation._base import (
    FITTED_ATTRIBUTES,
    FitStart,
    GroupWiseSearch,
    RepresentationEstimator,
    cell_batches,
    groupwise_inputs,
)
from otfair.estimators.representation._discrete_coding import DiscreteCoding
from otfair.models.made import CategoricalMADE
from otfair.models.mlp import MLP
from otfair.utils import (
    SENSITIVE_COLUMN,
    Interval,
    Widths,
    positive_int,
    positive_real,
    use_generator,
)
from otfair.utils._docstrings import fill_doc

__all__ = ["DiscreteFairNFClassifier", "encoded_distance", "rank_matching"]

_CHUNK = 65_536


def rank_matching(log_p_source: np.ndarray, log_p_target: np.ndarray) -> np.ndarray:
    r"""Return the bijection of cells that sorts both probability lists the same way.

    Returns ``perm`` with ``perm[i]`` the target cell of source cell ``i``: the cell of
    rank :math:`r` under ``log_p_source`` goes to the cell of rank :math:`r` under
    ``log_p_target`` (ties broken by cell index). Among all bijections :math:`T` it
    minimizes :math:`\sum_c |p_{target}(c) - p_{source}(T^{-1}(c))|` (the monotone
    rearrangement is the optimal 1-D transport plan for a convex cost of the difference).
    """
    src = np.argsort(log_p_source, kind="stable")
    tgt = np.argsort(log_p_target, kind="stable")
    perm = np.empty(len(src), dtype=np.int64)
    perm[src] = tgt
    return perm


@fill_estimator_doc
@fill_doc(fitted_attributes=FITTED_ATTRIBUTES)
@dataclass(eq=False, repr=False)
class DiscreteFairNFClassifier(GroupWiseSearch, RepresentationEstimator):
    r"""Fair Normalizing Flows with the exact encoder of a finite input space.

    See the module doc for the math (Balunović et al. 2022, §5).

    Parameters
    ----------
    strength : float, default=0.5
        :math:`\gamma \in [0, 1]`, the probability of the label-blind map
        :math:`T_{\text{all}}` in the mapped group's randomized encoder.
    n_bins : int or None, default=4
        Quantile levels of each non-one-hot column; None drops those columns (the
        authors' Adult keeps the categorical columns only).
    max_levels : int, default=20
        One-hot blocks with more levels are dropped (Adult's native country).
    max_cells : int, default=2_000_000
        Largest finite space enumerated (a ``ValueError`` above it: lower ``n_bins`` or
        ``max_levels``).
    density_hidden : sequence of int, default=(50, 50)
        Hidden widths of each group's ``CategoricalMADE``.
    density_epochs : int, default=30
        Epochs of each density fit (Adam, ``density_lr``, weight decay 1e-4, batches of
        ``batch_size``; the authors: 100 epochs, learning rate 1e-2).
    density_lr : float, default=1e-2
    head_hidden : sequence of int, default=(20, 20)
        Classifier widths on :math:`z` (AdapFair App. D: two layers of 20, as for its
        other baselines; the authors' script has one).
    epochs, batch_size, lr : int, int, float
        The classifier's training (Adam).
    sensitive_column : int or None, default=None
        When set, ``X``'s column of that index is the group (read at predict time when
        ``sensitive_features`` is not given) and is not a feature.
    device, random_state, verbose, tol, n_iter_no_change
        As for the other estimators; ``random_state`` seeds the densities, the label
        predictor, the encoder's draws and the classifier.

    Attributes
    ----------
    coding_ : DiscreteCoding
        The finite space (``coding_.cardinalities_``, ``coding_.n_cells_``).
    mapped_group_, reference_group_ : int
        Codes (indices into ``groups_``) of the group that is mapped (the larger one at
        fit time, as the authors' Adult maps men onto women) and of the one kept.
    densities_ : torch.nn.ModuleList
        The two groups' ``CategoricalMADE`` (by group code).
    label_predictor_ : sklearn.linear_model.LogisticRegression
        The group-balanced label predictor whose classes :math:`T_{\text{label}}` keeps.
    map_label_, map_all_ : ndarray of int
        :math:`T_{\text{label}}` and :math:`T_{\text{all}}` as cell-index arrays.
    statistical_distance_ : float
        :math:`\Delta` of the encoded laws under the densities (the certificate). It
        does not bound the DP gap on the data beyond what the densities capture: with
        ~10^5-10^6 cells and ~10^4 rows per group the empirical laws are too sparse to
        compare cell by cell.
    {fitted_attributes}

    See Also
    --------
    otfair.estimators.FairNormalizingFlowClassifier : The continuous (coupling-flow) version.
    otfair.estimators.LAFTRClassifier : An adversarial fair representation.

    {references_fnf}

    {examples_binary}
    >>> from otfair.estimators import DiscreteFairNFClassifier
    >>> clf = DiscreteFairNFClassifier(epochs=2, random_state=0)
    >>> clf.fit(X, y, sensitive_features=s).predict_proba(X, sensitive_features=s).shape
    (200, 2)
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **RepresentationEstimator._parameter_constraints,
        "strength": [Interval(numbers.Real, 0, 1, closed="both")],
        "n_bins": [None, positive_int()],
        "max_levels": [positive_int()],
        "max_cells": [positive_int()],
        "density_hidden": [Widths()],
        "density_epochs": [positive_int()],
        "density_lr": [positive_real()],
        "sensitive_column": SENSITIVE_COLUMN,
    }

    strength: float = 0.5
    n_bins: int | None = 4
    max_levels: int = 20
    max_cells: int = 2_000_000
    density_hidden: Sequence[int] = (50, 50)
    density_epochs: int = 30
    density_lr: float = 1e-2
    head_hidden: Sequence[int] = (20, 20)
    sensitive_column: int | None = None

    def _fit(self, data: FitStart, sensitive_features: Any) -> None:
        """Train the finite space, the group densities, the two maps and the classifier."""
        gamma = float(self.strength)
        epochs, batch_size, lr = self._training_budget()
        X, y, codes, rng, device, _, torch_gen = data
        X, _ = split_sensitive_column(X, sensitive_features, self.sensitive_column)

        coding = self._fit_coding(X)
        levels = coding.codes(X)
        cells = coding.cell_index(levels)
        sizes = np.bincount(codes, minlength=2)
        mapped, reference = (0, 1) if sizes[0] >= sizes[1] else (1, 0)
        space = torch.as_tensor(coding.one_hot(coding.all_cells()), device=device)
        log_p = self._fit_densities(coding, levels, codes, space, batch_size, rng, torch_gen)

        predictor = LogisticRegression(max_iter=1000)
        share = sizes / sizes.sum()
        predictor.fit(coding.one_hot(levels), y, sample_weight=share[1 - codes])
        label_class = predictor.predict(space.cpu().numpy()).astype(np.int64)
        map_all, map_label = _label_maps(log_p[mapped], log_p[reference], label_class)

        self.coding_, self.mapped_group_, self.reference_group_ = coding, mapped, reference
        self.label_predictor_ = predictor
        self.map_all_, self.map_label_ = map_all, map_label
        self.statistical_distance_ = encoded_distance(
            np.exp(log_p[reference]), np.exp(log_p[mapped]), map_label, map_all, gamma
        )

        encoded = cells.copy()
        is_mapped = codes == mapped
        blind = rng.random(len(cells)) < gamma
        encoded[is_mapped & ~blind] = map_label[cells[is_mapped & ~blind]]
        encoded[is_mapped & blind] = map_all[cells[is_mapped & blind]]
        Z = space[torch.as_tensor(encoded, device=device)]

        with use_generator(torch_gen):
            head = MLP(Z.shape[1], hidden=tuple(self.head_hidden)).to(device)
        optimizer = torch.optim.Adam(head.parameters(), lr=lr)
        yt = torch.as_tensor(y, device=device)

        def step(idx: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor], float]:
            ce = F.binary_cross_entropy_with_logits(head(Z[idx])[:, 0], yt[idx])
            return ce, {"ce": ce}, float(len(idx))

        self._train(
            epochs,
            cell_batches(codes, y, batch_size, rng, device),
            step,
            optimizer,
            task_key="ce",
        )
        self.head_, self.device_ = head.eval(), device

    def _fit_coding(self, X: np.ndarray) -> DiscreteCoding:
        """Return the finite input space of ``X``, refused above ``max_cells`` cells."""
        coding = DiscreteCoding(self.n_bins, int(self.max_levels)).fit(X)
        max_cells = int(self.max_cells)
        if coding.n_cells_ > max_cells:
            one_hot = coding.cardinalities_[: coding.n_one_hot_]
            blocks_only = int(np.prod(one_hot, dtype=np.float64))
            if not one_hot:
                fix = (
                    "no column of `X` is part of a 0/1 one-hot block, so every column is "
                    "binned into `n_bins` levels (one-hot columns scaled by a "
                    "StandardScaler are no longer 0/1: scale only the numeric columns, e.g. "
                    "with a ColumnTransformer); lower `n_bins` or select fewer columns"
                )
            elif blocks_only <= max_cells:
                fix = (
                    f"lower `n_bins` (None drops the non-one-hot columns: the one-hot "
                    f"blocks alone have {blocks_only:,} cells) or `max_levels`"
                )
            else:
                fix = (
                    f"the one-hot blocks alone have {blocks_only:,} cells, so `n_bins` "
                    "cannot fix it: lower `max_levels` (blocks with more levels are "
                    "dropped) or select fewer columns"
                )
            raise ValueError(
                f"The finite input space has {coding.n_cells_:,} cells "
                f"(levels {coding.cardinalities_}), above `max_cells`={max_cells:,}: "
                f"{fix}, or use the coupling flows of FairNormalizingFlowClassifier "
                "(`fair-nf`), which take any numeric features."
            )
        return coding

    def _fit_densities(
        self,
        coding: DiscreteCoding,
        levels: np.ndarray,
        codes: np.ndarray,
        space: torch.Tensor,
        batch_size: int,
        rng: np.random.Generator,
        torch_gen: torch.Generator,
    ) -> dict[int, np.ndarray]:
        """Fit ``densities_`` (a MADE per group); return each group's ``log p`` of ``space``."""
        log_p, densities = {}, torch.nn.ModuleList()
        for g in (0, 1):
            with use_generator(torch_gen):
                made = CategoricalMADE(coding.cardinalities_, tuple(self.density_hidden))
            made = made.to(space.device)
            rows = torch.as_tensor(coding.one_hot(levels[codes == g]), device=space.device)
            epochs, lr = int(self.density_epochs), float(self.density_lr)
            _fit_density(made, rows, epochs, batch_size, lr, rng)
            log_p[g] = _log_prob_all(made, space)
            densities.append(made)
        self.densities_ = densities
        return log_p

    @torch.no_grad()
    def _forward(self, X: Any, sensitive_features: Any) -> tuple[np.ndarray, np.ndarray]:
        check_is_fitted(self, "head_")
        X, codes = groupwise_inputs(self, X, sensitive_features)
        coding = self.coding_
        levels = coding.codes(X)
        cells = coding.cell_index(levels)
        is_mapped = codes == self.mapped_group_
        gamma = float(self.strength)
        label_cells = np.where(is_mapped, self.map_label_[cells], cells)
        blind_cells = np.where(is_mapped, self.map_all_[cells], cells)
        z_label = coding.one_hot(coding.cells(label_cells))
        z_blind = coding.one_hot(coding.cells(blind_cells))
        weight = np.where(is_mapped, gamma, 0.0)[:, None]
        z = (1.0 - weight) * z_label + weight * z_blind
        p = (1.0 - weight[:, 0]) * self._proba(z_label) + weight[:, 0] * self._proba(z_blind)
        p = np.clip(p, 1e-12, 1.0 - 1e-12)
        return z.astype(np.float64), np.log(p) - np.log1p(-p)

    @torch.no_grad()
    def _proba(self, z: np.ndarray) -> np.ndarray:
        """Return the classifier's :math:`P(y = 1)` on one-hot rows ``z`` (float64)."""
        logits = self.head_(torch.as_tensor(z, device=self.device_))[:, 0]
        return torch.sigmoid(logits).double().cpu().numpy()


def _fit_density(
    made: CategoricalMADE,
    rows: torch.Tensor,
    epochs: int,
    batch_size: int,
    lr: float,
    rng: np.random.Generator,
) -> None:
    """Fit ``made`` to ``rows`` by maximum likelihood.

    Adam with weight decay 1e-4; the learning rate drops 10x at half the epochs.
    """
    optimizer = torch.optim.Adam(made.parameters(), lr=lr, weight_decay=1e-4)
    schedule = torch.optim.lr_scheduler.StepLR(optimizer, step_size=max(1, epochs // 2), gamma=0.1)

    def epoch_batches(epoch: int) -> list[torch.Tensor]:
        order = torch.as_tensor(rng.permutation(len(rows)), device=rows.device)
        starts = range(0, len(rows), batch_size)
        return [rows[order[start : start + batch_size]] for start in starts]

    def step(batch: torch.Tensor) -> torch.Tensor:
        return -made.log_prob(batch).mean()

    run_epochs(
        epochs, epoch_batches, step, optimizer=optimizer, scheduler=schedule, desc="density"
    )
    made.eval()


@torch.no_grad()
def _log_prob_all(made: CategoricalMADE, space: torch.Tensor) -> np.ndarray:
    """``log p`` of every cell, float64."""
    parts = [made.log_prob(space[i : i + _CHUNK]) for i in range(0, len(space), _CHUNK)]
    return torch.cat(parts).double().cpu().numpy()


def _label_maps(
    log_p_mapped: np.ndarray, log_p_reference: np.ndarray, label_class: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Return the rank matchings of all cells and of the cells within each predicted label."""
    map_all = rank_matching(log_p_mapped, log_p_reference)
    map_label = np.empty_like(map_all)
    for k in (0, 1):
        members = np.flatnonzero(label_class == k)
        if len(members):
            map_label[members] = members[
                rank_matching(log_p_mapped[members], log_p_reference[members])
            ]
    return map_all, map_label


def encoded_distance(
    p_reference: np.ndarray,
    p_mapped: np.ndarray,
    map_label: np.ndarray,
    map_all: np.ndarray,
    gamma: float,
) -> float:
    r"""Statistical distance of the encoded laws, the FNF certificate.

    :math:`\Delta = \frac12 \bigl\| p_b - \bigl((1-\gamma)\, T_{label}\#p_a
    + \gamma\, T_{all}\#p_a\bigr) \bigr\|_1` with the maps given as cell-index arrays.
    """
    n = len(p_reference)
    pushed = (1.0 - gamma) * np.bincount(map_label, weights=p_mapped, minlength=n)
    pushed += gamma * np.bincount(map_all, weights=p_mapped, minlength=n)
    return float(0.5 * np.abs(p_reference - pushed).sum())
