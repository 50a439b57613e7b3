r"""The base classifier of AdapFair's pipeline (Huang et al., 2024, App. A-D2).

:func:`train_base_classifier` trains the classifier that
:class:`~otfair.estimators.AdapFairClassifier` then freezes: the paper's 2 x 20 MLP on the
cross-entropy, with an optional Gap-Reg penalty (the new-notion scenario, §IV-C).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from otfair.estimators._torch_base import encode_binary_labels, warn_feature_scale
from otfair.estimators.preprocessing._adapfair_training import fit_generators, train_stratified
from otfair.models.mlp import MLP
from otfair.notions import as_notion, stratum_codes
from otfair.penalties import make_penalty
from otfair.utils import (
    check_consistent_length,
    check_features,
    encode_groups,
    resolve_device,
    torch_generator,
    use_generator,
)
from otfair.utils._deprecation import renamed_argument, renamed_value
from otfair.utils._params import check_positive_int, check_scalar
from otfair.utils._torch import fits_in_training_state, training_state

__all__ = ["BASE_PENALTIES", "RENAMED_PENALTIES", "train_base_classifier"]

#: The base classifier's penalties (penalty names of otfair.penalties)
BASE_PENALTIES = ("none", "gapreg")
#: Old spellings, kept for one release
RENAMED_PENALTIES = {"gap": "gapreg"}


def _check_base_penalty(penalty: str, notion: Any) -> tuple[str, Any]:
    """Return the base classifier's penalty name and notion, both checked."""
    penalty = renamed_value(penalty, RENAMED_PENALTIES, "penalty")
    if penalty not in BASE_PENALTIES:
        raise ValueError(f"`penalty` must be one of {BASE_PENALTIES}; got {penalty!r}.")
    try:
        return penalty, as_notion(notion, allowed=("dp", "eo"))
    except ValueError as exc:
        raise ValueError(f"`notion`: {exc}") from None


def train_base_classifier(
    X: Any,
    y: Any,
    *,
    sensitive_features: Any = None,
    penalty: str = "none",
    notion: str = "dp",
    strength: float = 1.0,
    hidden: tuple[int, ...] = (20, 20),
    epochs: int = 50,
    batch_size: int = 256,
    lr: float = 1e-3,
    random_state: int | None = None,
    device: str | torch.device | None = None,
    verbose: bool = False,
    penalty_notion: str | None = None,
    penalty_strength: float | None = None,
) -> MLP:
    r"""Train the classifier that AdapFair then keeps frozen (logits, eval mode).

    Minimizes :math:`\mathrm{CE}(y, \sigma(h(x)))` with Adam, plus, for
    ``penalty="gapreg"``, :math:`\mu\,\mathrm{Gap}` where Gap is
    :class:`otfair.penalties.GapPenalty` (squared difference of the groups' mean scores)
    on all samples (``notion="dp"``) or summed over the label cells :math:`Y=0` and
    :math:`Y=1` (``"eo"``).

    Parameters
    ----------
    X, y : array-like of shape (n, d) and (n,)
        Training data; labels of two classes (the larger one is the positive class).
    sensitive_features : array-like of shape (n,), optional
        Needed only for ``penalty="gapreg"``.
    penalty : {"none", "gapreg"}, default="none"
        Fairness penalty of the base classifier (``"gap"``, its old name, is deprecated).
    notion : {"dp", "eo"}, default="dp"
        Notion of the penalty.
    strength : float, default=1.0
        :math:`\mu`, the penalty's weight.
    hidden, epochs, batch_size, lr, random_state, device
        Architecture (the paper's 2 x 20 MLP) and optimization.
    verbose : bool, default=False
        Progress bar over epochs.
    penalty_notion, penalty_strength : optional
        Deprecated names of ``notion`` and ``strength`` (renamed in 0.2, removed in 0.3).

    Returns
    -------
    otfair.models.MLP
        The trained model, in eval mode, returning logits.

    See Also
    --------
    otfair.estimators.AdapFairClassifier : Freezes such a classifier and trains the flows.
    otfair.estimators.as_torch_classifier : Wraps any fitted classifier instead.

    Notes
    -----
    The fit's generators derive from ``random_state`` (``fit_seed``); python's, numpy's
    and torch's global generators are neither seeded nor drawn from.

    Examples
    --------
    >>> import numpy as np
    >>> import torch
    >>> from otfair.estimators import train_base_classifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)).astype(np.float32)
    >>> y = (X[:, 0] > 0).astype(int)
    >>> net = train_base_classifier(X, y, hidden=(8,), epochs=2, random_state=0)
    >>> net(torch.as_tensor(X[:4])).shape  # logits of the positive class
    torch.Size([4, 1])
    """
    notion, strength = _renamed_base_arguments(notion, strength, penalty_notion, penalty_strength)
    training = _training_settings(lr, epochs, batch_size)  # checked before any data
    X_np, y_np, codes, gap = _base_data(X, y, sensitive_features, penalty, notion)
    seed, rng = fit_generators(random_state)
    with training_state(), use_generator(torch_generator(seed)):  # any caller's torch state
        model = MLP(X_np.shape[1], hidden=hidden).to(resolve_device(device))  # initial weights
    _train_base(model, X_np, y_np, codes, gap, strength, rng, verbose=verbose, **training)
    return model.eval()


def _training_settings(lr: Any, epochs: Any, batch_size: Any) -> dict[str, Any]:
    """Return the base classifier's ``lr``, ``epochs`` and ``batch_size``, checked."""
    return {
        "lr": check_scalar(lr, "lr", minimum=0.0, strict=True),
        "epochs": check_positive_int(epochs, "epochs"),
        "batch_size": check_positive_int(batch_size, "batch_size"),
    }


@fits_in_training_state  # gradients on, float32, whatever the caller's torch state
def _train_base(
    model: MLP,
    X_np: np.ndarray,
    y_np: np.ndarray,
    codes: np.ndarray,
    gap: Any,
    strength: float,
    rng: np.random.Generator,
    *,
    lr: float,
    epochs: int,
    batch_size: int,
    verbose: bool,
) -> None:
    """Train ``model`` by Adam on cross-entropy (+ ``strength * gap``), label-stratified."""
    device = next(model.parameters()).device
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    X_t = torch.as_tensor(X_np, device=device)
    y_t = torch.as_tensor(y_np, dtype=torch.float32, device=device)
    g_t = torch.as_tensor(codes, device=device)
    model.train()

    def step(idx_np: np.ndarray) -> torch.Tensor:
        idx = torch.as_tensor(idx_np, device=device)
        logits = model(X_t[idx])[:, 0]
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, y_t[idx])
        if gap is not None:
            loss = loss + strength * gap(torch.sigmoid(logits), g_t[idx], y_t[idx])
        return loss

    train_stratified(
        stratum_codes(codes, y_np),
        rng,
        step,
        optimizer,
        epochs=epochs,
        batch_size=batch_size,
        verbose=verbose,
        desc="AdapFair base classifier",
    )


def _renamed_base_arguments(
    notion: Any, strength: Any, penalty_notion: Any, penalty_strength: Any
) -> tuple[Any, Any]:
    """Return ``notion`` and ``strength`` of ``train_base_classifier``, old names applied."""
    owner = "train_base_classifier"
    notion = renamed_argument(
        notion, penalty_notion, "penalty_notion", "notion", default="dp", owner=owner
    )
    strength = renamed_argument(
        strength, penalty_strength, "penalty_strength", "strength", default=1.0, owner=owner
    )
    return notion, strength


def _base_data(
    X: Any, y: Any, sensitive_features: Any, penalty: str, notion: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray, Any]:
    """Return the base classifier's ``X``, labels, group codes and penalty (or ``None``).

    Without a penalty there is one group: the batches are stratified by label only.
    """
    X_np = check_features(X, "X")
    _, y_np = encode_binary_labels(y, "y")  # two classes; the larger is the positive one
    check_consistent_length(X=X_np, y=y_np)
    warn_feature_scale(X_np, "train_base_classifier")
    penalty, notion = _check_base_penalty(penalty, notion)
    if penalty == "none":
        return X_np, y_np, np.zeros_like(y_np), None
    check_consistent_length(X=X_np, sensitive_features=sensitive_features)
    codes, _ = encode_groups(sensitive_features, "sensitive_features")
    return X_np, y_np, codes, make_penalty("gapreg", notion)  # summed over the label cells
