"""Eager input checks of the fairness penalties' checked calls (``penalty(...)``).

The training engine validates the whole training set once per fit and calls the
unchecked :meth:`~otfair.penalties.FairnessPenalty.value`, which never enters this module;
a direct call ``penalty(scores, sensitive, ...)`` (and a penalty's own ``evaluate``)
checks each batch here, raising ``ValueError`` / ``TypeError`` naming the argument.
"""

from __future__ import annotations

import torch


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
