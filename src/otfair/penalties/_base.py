"""Base class, the score-penalty protocol and the input checks of all fairness penalties.

The score-penalty protocol (one for the single fit and the stacked curve): a penalty
maps the scores of one batch to its value. Scores are a vector of shape (n,) (one
model: a 0-dim value) or a block of shape (K, n) (K models on the same batch, the
stacked curve of :class:`otfair.models.StackedMLP`: K values). Both trainers call
:func:`penalty_values`, which calls :meth:`FairnessPenalty.value` (or
:meth:`LinearPenalty.from_matrix <otfair.penalties.LinearPenalty.from_matrix>` on the
batch's constraint slice ``G``). A penalty that declares ``batchable = True`` (Norm,
GapReg, MDP, OTF, FairTorch) evaluates the block in one call with the formula of one
vector (``scores @ c`` is both) and keeps any per-model state per row (OTF's warm
starts), so the K models of a curve share one instance; for any other penalty the
default evaluates row by row (one instance per model when the curve has several: an
adversary's parameters are per model). No formula exists twice.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import torch
from torch import nn

if TYPE_CHECKING:
    from otfair.penalties._linear import LinearPenalty


class PenaltyBatch(NamedTuple):
    """One batch as a penalty sees it (see :class:`FairnessPenalty` for the shapes)."""

    scores: torch.Tensor
    sensitive: torch.Tensor
    labels: torch.Tensor | None = None
    features: torch.Tensor | None = None


class FairnessPenalty(nn.Module, abc.ABC):
    """A fairness penalty: a non-negative, differentiable function of batch scores.

    The one protocol of every fairness loss in otfair. A penalty is called as
    ``penalty(scores, sensitive, labels=None, features=None)`` and returns a 0-dim
    tensor. Inputs are validated eagerly so that a malformed batch raises a
    ``ValueError`` naming the argument instead of a torch traceback; the training engine,
    which validated the whole training set once, calls the unchecked :meth:`value`.
    Both are template methods: a penalty implements :meth:`evaluate` on a
    :class:`PenaltyBatch` (and :meth:`evaluate_unchecked` when its bare formula is
    cheaper than the checked one); ``forward`` may still be overridden instead.

    Declared traits (class attributes, read by the training engine instead of
    ``isinstance`` branches):

    ``requires_labels``
        the batch labels must be passed (label-conditioned notions);
    ``requires_features``
        the batch features must be passed (transport cost in input space, OTF);
    ``requires_pairs``
        batches are matched group pairs (FTM): ``scores`` = the group-0 batch followed
        by its partners in group 1, in matched order;
    ``requires_binary_groups``
        ``sensitive`` is one binary attribute coded 0/1 (group penalties); otherwise it
        may be several or continuous numeric columns (linear notions);
    ``linear``
        a linear-notion penalty: evaluated on a batch slice of the constraint matrix
        ``G`` by ``from_matrix(scores, G, features)`` (the estimator builds ``G`` once
        per fit from ``penalty.constraints``);
    ``has_adversary``
        the penalty owns parameters trained by their own optimizer on
        :meth:`adversary_loss` after each predictor step;
    ``default_mixing``
        ``"convex"`` (``(1 - alpha) CE + alpha R``, OTF paper Eq. 13) or ``"additive"``
        (``CE + lambda R``, FTM paper Eq. 7), as in the penalty's paper;
    ``batchable``
        :meth:`value` (and ``from_matrix``) of a (K, n) block of K models' scores is one
        batched evaluation of the single-vector formula, and per-model state is kept
        per row: the K models of a curve share one instance (see the module docstring
        and :func:`penalty_values`). Default ``False``: a (K, n) block is evaluated row
        by row.

    ``keeps_batch_work``
        the penalty keeps per-batch data work in the cache the training engine passes
        for fixed batches (OTF: the batch's class-reduced cost), so fixing the batches
        saves it on every later epoch (``FairClassifier(fixed_batches="auto")``).

    Penalties built from training-set statistics (the linear notions' ``G``) compute
    them in :meth:`fit`, called once per estimator fit; the default does nothing.

    Notes
    -----
    Shapes of the arguments of :meth:`forward`:

    - ``scores``: (n,) or (n, 1), probabilities of the positive class, in [0, 1];
    - ``sensitive``: (n,) or (n, k), group codes (0/1) for group-based penalties;
      numeric attributes (one-hot, binary or continuous) for linear-constraint penalties;
    - ``labels``: (n,), optional, binary labels, needed by equalized-odds notions;
    - ``features``: (n, d), optional, model inputs, needed by penalties with a transport
      cost in input space (OTF).
    """

    requires_labels: bool = False
    requires_features: bool = False
    requires_pairs: bool = False
    requires_binary_groups: bool = True
    linear: bool = False
    has_adversary: bool = False
    default_mixing: str = "additive"
    batchable: bool = False
    keeps_batch_work: bool = False

    def fit(self, sensitive: Any, labels: Any = None) -> FairnessPenalty:
        """Fit training-set statistics (default: nothing to fit); returns ``self``."""
        return self

    def forward(
        self,
        scores: torch.Tensor,
        sensitive: torch.Tensor,
        labels: torch.Tensor | None = None,
        features: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Validate the batch and return the penalty value (a 0-dim tensor, >= 0).

        The template of every penalty: the checks common to all (``scores`` finite
        probabilities, ``labels`` binary when :attr:`requires_labels`) run here once,
        then :meth:`evaluate` computes the penalty on the checked :class:`PenaltyBatch`.
        A subclass implements :meth:`evaluate` (and optionally the unchecked fast path
        :meth:`evaluate_unchecked`); overriding ``forward`` itself still works.
        """
        scores = check_scores(scores)
        if self.requires_labels:
            labels = check_labels(labels, scores.shape[0])
        return self.evaluate(PenaltyBatch(scores, sensitive, labels, features))

    def evaluate(self, batch: PenaltyBatch) -> torch.Tensor:
        """Penalty of a batch whose scores (and labels) :meth:`forward` checked.

        Checks specific to the penalty (both groups present, constraint shapes) belong
        here and raise ``ValueError`` naming the argument.
        """
        raise NotImplementedError(
            f"{type(self).__name__} must implement `evaluate(batch)` or override `forward`."
        )

    def value(
        self,
        scores: torch.Tensor,
        sensitive: torch.Tensor,
        labels: torch.Tensor | None = None,
        features: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Penalty value *without* the input checks of :meth:`forward`.

        For training loops that validated the whole training set once per fit and
        guarantee well-formed batches (probabilities, both groups present): at ~2 ms
        steps the per-call checks (finite, range, group codes) cost several percent of a
        step. ``scores`` of shape (n,) give a 0-dim value; a (K, n) block (K models on
        this batch) gives K values: one :meth:`evaluate_unchecked` call on the block for
        a ``batchable`` penalty, otherwise one per row (:meth:`evaluate_rows`).
        """
        batch = PenaltyBatch(scores, sensitive, labels, features)
        if scores.dim() == 2 and not self.batchable:
            return self.evaluate_rows(batch)
        return self.evaluate_unchecked(batch)

    def evaluate_rows(self, batch: PenaltyBatch) -> torch.Tensor:
        """K values of a (K, n) block, one :meth:`evaluate_unchecked` call per row.

        The default for penalties that cannot batch (barycenter's per-group sorts, an
        adversary, outside penalties).
        """
        rows = [self.evaluate_unchecked(batch._replace(scores=h)) for h in batch.scores]
        return torch.stack(rows)

    def evaluate_unchecked(self, batch: PenaltyBatch) -> torch.Tensor:
        """Bare formula on a well-formed batch; the default validates (calls ``forward``).

        A (K, n) block (K models of a curve, a ``batchable`` penalty) goes to
        :meth:`evaluate` directly, whose formula serves both shapes (the engine checked
        the data once; ``forward``'s checks are for one score vector); a penalty that
        overrides ``forward`` only is evaluated row by row.
        """
        if batch.scores.dim() == 2:
            if type(self).evaluate is not FairnessPenalty.evaluate:
                return self.evaluate(batch)
            return self.evaluate_rows(batch)
        return self(batch.scores, batch.sensitive, batch.labels, batch.features)

    def adversary_loss(
        self,
        scores: torch.Tensor,
        sensitive: torch.Tensor,
        labels: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Loss of the penalty's own adversary (only when ``has_adversary``).

        What the adversary's optimizer minimizes after each predictor step; the scores
        are detached (the adversary's step does not move the predictor), then
        :meth:`evaluate_adversary` computes the loss on the batch.
        """
        if not self.has_adversary:
            raise NotImplementedError(f"{type(self).__name__} has no adversary.")
        return self.evaluate_adversary(PenaltyBatch(scores.detach(), sensitive, labels))

    def evaluate_adversary(self, batch: PenaltyBatch) -> torch.Tensor:
        """Adversary's loss on a batch with detached scores (penalties with an adversary)."""
        raise NotImplementedError(f"{type(self).__name__} has no adversary.")


def penalty_values(
    penalties: FairnessPenalty | Sequence[FairnessPenalty],
    scores: torch.Tensor,
    sensitive: torch.Tensor | None,
    labels: torch.Tensor | None = None,
    features: torch.Tensor | None = None,
    *,
    G: torch.Tensor | None = None,
    cache: dict[Any, Any] | None = None,
) -> torch.Tensor:
    """Unchecked penalty value(s) of one batch: what both training loops call.

    Parameters
    ----------
    penalties : FairnessPenalty or sequence of FairnessPenalty
        The penalty, or one instance per model of a curve (all of one class, configured
        alike). A ``batchable`` penalty evaluates the whole block on the first instance
        (it keeps per-model state per row); otherwise instance ``k`` evaluates row ``k``
        (its own state: an adversary's parameters).
    scores : tensor of shape (n,) or (K, n)
        Probabilities of one model (0-dim result) or of K models (result of shape (K,)).
    sensitive, labels, features : tensors, optional
        The batch, as in :meth:`FairnessPenalty.value`.
    G : tensor of shape (d_F, n), optional
        The batch slice of the constraint matrix of a linear penalty: then
        ``from_matrix(scores, G, features)`` is called (``sensitive`` is unused).
    cache : dict, optional
        Kept by the caller for this batch across epochs (fixed batches): a linear
        penalty may store the batch's data work in it (OTF: the class-reduced cost).

    Returns
    -------
    torch.Tensor
        0-dim for ``scores`` (n,), shape (K,) for (K, n).
    """
    if isinstance(penalties, FairnessPenalty):  # one instance: the single fit's call
        first, own = penalties, None
    else:
        if not penalties:
            raise ValueError("`penalties` must hold at least one penalty.")
        kinds = {type(p) for p in penalties}
        if len(kinds) != 1:
            raise ValueError(
                f"`penalties` must be of one class; got {sorted(k.__name__ for k in kinds)}."
            )
        first, own = penalties[0], (penalties if len(penalties) > 1 else None)
    if scores.dim() not in (1, 2) or (
        own is not None and (scores.dim() != 2 or scores.shape[0] != len(own))
    ):
        n_rows = 1 if own is None else len(own)
        raise ValueError(
            f"`scores` must have shape (n,) or (K, n) with K = {n_rows} (one row per penalty "
            f"instance); got {tuple(scores.shape)}."
        )
    if scores.dim() == 2 and not first.batchable:
        own = own or [first] * scores.shape[0]
        pairs = zip(own, scores, strict=True)
        return torch.stack([_value(p, h, sensitive, labels, features, G, cache) for p, h in pairs])
    return _value(first, scores, sensitive, labels, features, G, cache)


def _value(
    penalty: FairnessPenalty,
    scores: torch.Tensor,
    sensitive: torch.Tensor | None,
    labels: torch.Tensor | None,
    features: torch.Tensor | None,
    G: torch.Tensor | None,
    cache: dict[Any, Any] | None,
) -> torch.Tensor:
    """One penalty's unchecked value: ``from_matrix`` on ``G`` (linear) or ``value``."""
    if G is not None and penalty.linear:
        linear = cast("LinearPenalty", penalty)  # the `linear` penalties are LinearPenalty
        if cache is None:
            return linear.from_matrix(scores, G, features)
        return linear.from_matrix(scores, G, features, cache=cache)
    assert sensitive is not None  # only the constraint matrix G stands in for it
    return penalty.value(scores, sensitive, labels, features)


def check_scores(scores: torch.Tensor, name: str = "scores") -> torch.Tensor:
    """Return ``scores`` as a finite 1-D tensor of probabilities (autograd kept)."""
    if not isinstance(scores, torch.Tensor):
        raise TypeError(f"`{name}` must be a torch.Tensor; got {type(scores).__name__}.")
    if scores.ndim == 2 and scores.shape[1] == 1:
        scores = scores[:, 0]
    if scores.ndim != 1:
        raise ValueError(f"`{name}` must have shape (n,) or (n, 1); got {tuple(scores.shape)}.")
    if scores.numel() == 0:
        raise ValueError(f"`{name}` is empty.")
    if not scores.is_floating_point():
        raise TypeError(f"`{name}` must be a floating tensor; got {scores.dtype}.")
    detached = scores.detach()
    if not torch.isfinite(detached).all():
        raise ValueError(f"`{name}` contains NaN or infinite values.")
    if detached.min() < 0 or detached.max() > 1:
        raise ValueError(
            f"`{name}` must be probabilities in [0, 1]; pass sigmoid(logits), not logits."
        )
    return scores


def check_binary_groups(
    sensitive: torch.Tensor, n: int, name: str = "sensitive"
) -> tuple[torch.Tensor, torch.Tensor]:
    """Return boolean masks ``(in_group_0, in_group_1)`` for a binary attribute.

    Raises
    ------
    ValueError
        If the shape does not match ``n``, values are not 0/1, or a group is empty in
        this batch (group penalties are undefined without both groups).
    """
    if not isinstance(sensitive, torch.Tensor):
        sensitive = torch.as_tensor(sensitive)
    if sensitive.ndim == 2 and sensitive.shape[1] == 1:
        sensitive = sensitive[:, 0]
    if sensitive.ndim != 1 or sensitive.shape[0] != n:
        raise ValueError(
            f"`{name}` must be a binary attribute of shape ({n},); got {tuple(sensitive.shape)}."
        )
    one = sensitive == 1
    if not torch.logical_or(one, sensitive == 0).all():
        raise ValueError(f"`{name}` must contain group codes 0/1 only.")
    n1 = int(one.sum())
    if n1 == 0 or n1 == n:
        raise ValueError(
            f"`{name}` has an empty group in this batch (group {0 if n1 == n else 1} "
            "has no samples); group penalties need both groups in every batch."
        )
    return ~one, one


def check_labels(labels: torch.Tensor | None, n: int, name: str = "labels") -> torch.Tensor:
    """Return binary labels as a float tensor of shape (n,)."""
    if labels is None:
        raise ValueError(f"`{name}` is required by this penalty (equalized-odds notion).")
    if not isinstance(labels, torch.Tensor):
        labels = torch.as_tensor(labels)
    if labels.ndim == 2 and labels.shape[1] == 1:
        labels = labels[:, 0]
    if labels.ndim != 1 or labels.shape[0] != n:
        raise ValueError(f"`{name}` must have shape ({n},); got {tuple(labels.shape)}.")
    if not torch.logical_or(labels == 0, labels == 1).all():
        raise ValueError(f"`{name}` must contain binary labels in {{0, 1}}.")
    return labels.float()
