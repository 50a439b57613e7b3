"""Feed-forward torch modules shared by all estimators."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

_ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh, "elu": nn.ELU, "leaky_relu": nn.LeakyReLU}


def activation_class(activation: str) -> type[nn.Module]:
    """Return the module class of the hidden non-linearity ``activation``.

    Raises
    ------
    ValueError
        If ``activation`` is not one of "relu", "tanh", "elu", "leaky_relu".
    """
    if activation not in _ACTIVATIONS:
        raise ValueError(
            f"`activation` must be one of {sorted(_ACTIVATIONS)}, got {activation!r}."
        )
    return _ACTIVATIONS[activation]


#: the hidden widths of ``hidden="auto"``: scikit-learn's ``MLPClassifier`` default
AUTO_HIDDEN: tuple[int, ...] = (100,)


def mlp_widths(hidden: Sequence[int] | str | None, in_features: int) -> tuple[int, ...]:
    """Return the hidden widths an estimator's ``hidden`` setting names.

    ``"auto"``: :data:`AUTO_HIDDEN`, one layer of 100 (scikit-learn's
    ``MLPClassifier``); ``None``: two layers of width ``in_features`` (the FTM paper's
    network, Kim et al., TMLR 2024, App. D.1); a sequence: those widths.

    Examples
    --------
    >>> mlp_widths("auto", 7), mlp_widths(None, 7), mlp_widths([8, 4], 7)
    ((100,), (7, 7), (8, 4))
    """
    if isinstance(hidden, str):
        if hidden != "auto":
            raise ValueError(
                f'`hidden` must be "auto", None or a sequence of widths, got {hidden!r}.'
            )
        return AUTO_HIDDEN
    if hidden is None:
        return (int(in_features), int(in_features))
    return tuple(int(width) for width in hidden)


class MLP(nn.Module):
    """Multi-layer perceptron returning *logits* (no output non-linearity).

    Parameters
    ----------
    in_features : int
        Input dimension.
    hidden : sequence of int, default=(100,)
        Widths of the hidden layers; ``()`` gives a linear model (logistic regression
        when trained with a sigmoid cross-entropy).
    out_features : int, default=1
        Output dimension.
    activation : {"relu", "tanh", "elu", "leaky_relu"}, default="relu"
        Hidden non-linearity.

    Examples
    --------
    >>> import torch
    >>> net = MLP(4, hidden=(8, 8))
    >>> net(torch.zeros(3, 4)).shape
    torch.Size([3, 1])
    """

    def __init__(
        self,
        in_features: int,
        hidden: Sequence[int] = (100,),
        out_features: int = 1,
        activation: str = "relu",
    ) -> None:
        super().__init__()
        if int(in_features) < 1:
            raise ValueError(f"`in_features` must be >= 1, got {in_features}.")
        act = activation_class(activation)
        bad = [h for h in hidden if isinstance(h, bool) or int(h) != h or int(h) < 1]
        if bad:
            raise ValueError(f"`hidden` widths must be positive integers; got {tuple(hidden)}.")
        widths = [int(in_features), *[int(h) for h in hidden]]
        layers: list[nn.Module] = []
        for w_in, w_out in zip(widths[:-1], widths[1:], strict=True):
            layers += [nn.Linear(w_in, w_out), act()]
        layers.append(nn.Linear(widths[-1], int(out_features)))
        self.net = nn.Sequential(*layers)
        self.in_features = int(in_features)
        self.out_features = int(out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return logits of shape (n, out_features)."""
        return self.net(x)


def logistic_regression(in_features: int) -> MLP:
    """Return a linear model ``x -> w^T x + b`` (logits)."""
    return MLP(in_features, hidden=())
