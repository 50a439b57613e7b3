r"""What a classifier's fit is held against: finite numbers, unit-scale features, a constant.

The best constant predictor of binary labels with base rate :math:`\bar y` scores every
row :math:`\bar y`; its cross-entropy is the entropy
:math:`H(\bar y) = -\bar y \log \bar y - (1 - \bar y)\log(1 - \bar y)` and its accuracy
:math:`\max(\bar y, 1 - \bar y)`. It is perfectly fair under every notion (its scores do
not depend on the group), so the penalized objective of a fit is at most its
cross-entropy: a fit whose training cross-entropy or accuracy ends below it did not
optimize, and :func:`check_against_constant` says so (:class:`FitQualityWarning`), as it
does for a fit that predicts one class for every training row (a strength so large that
the penalty outweighs the labels, or an under-trained model).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import torch

#: features of larger magnitude get a warning naming the fix (a scaler in a Pipeline)
MAX_FEATURE_MAGNITUDE = 1e4


class FitQualityWarning(UserWarning):
    """A fit ended below the best constant predictor, or at one predicted class."""


def constant_baseline(y: np.ndarray) -> tuple[float, float]:
    """Return the best constant predictor's ``(cross_entropy, accuracy)`` on 0/1 ``y``.

    Examples
    --------
    >>> ce, acc = constant_baseline(np.array([0, 0, 0, 1]))
    >>> round(ce, 4), acc
    (0.5623, 0.75)
    """
    p = float(np.mean(y))
    ce = -sum(q * math.log(q) for q in (p, 1.0 - p) if q > 0)
    return ce, max(p, 1.0 - p)


def warn_feature_scale(X: np.ndarray, owner: str) -> None:
    """Warn when a feature's magnitude exceeds :data:`MAX_FEATURE_MAGNITUDE`.

    Gradient training on raw scales (incomes in dollars) ends far from the optimum or
    overflows; the warning names the largest column and the fix.
    """
    if X.size == 0:
        return
    magnitude = np.maximum(X.max(axis=0), -X.min(axis=0))  # no |X| temporary
    column = int(np.argmax(magnitude))
    if magnitude[column] > MAX_FEATURE_MAGNITUDE:
        warnings.warn(
            f"{owner}: feature column {column} of `X` reaches {magnitude[column]:.3g} in "
            f"magnitude; gradient training needs features on a unit scale. Put a "
            f"sklearn.preprocessing.StandardScaler before {owner} in a Pipeline "
            "(make_pipeline(StandardScaler(), ...)).",
            FitQualityWarning,
            stacklevel=4,
        )


def warn_not_converged(owner: str, solver: str, epochs: int, tol: float) -> None:
    """Warn (scikit-learn's ``ConvergenceWarning``) that a fit stopped at its cap."""
    from sklearn.exceptions import ConvergenceWarning

    unit = "iterations" if solver == "lbfgs" else "epochs"
    rule = (
        f"the largest gradient entry fell below tol={tol:g}"
        if solver == "lbfgs"
        else f"the training objective stopped improving by tol={tol:g}"
    )
    warnings.warn(
        f"{owner} (solver={solver!r}) reached epochs={epochs} {unit} before {rule}; raise "
        "`epochs`, or scale the features (a StandardScaler in a Pipeline).",
        ConvergenceWarning,
        stacklevel=4,
    )


def check_finite_model(model: torch.nn.Module, owner: str) -> None:
    """Raise ``ValueError`` when a fitted model holds a non-finite parameter."""
    for name, param in model.named_parameters():
        if not bool(torch.isfinite(param).all()):
            raise ValueError(
                f"{owner}'s training diverged: parameter {name!r} is not finite after fit. "
                "Scale the features (a StandardScaler in a Pipeline), lower `lr` or the "
                "strength."
            )


def check_against_constant(
    logits: np.ndarray,
    y: np.ndarray,
    *,
    owner: str,
    strength: float,
    penalized: bool,
    classes: Any = (0, 1),
) -> None:
    """Warn when training ``logits`` do worse than the best constant or predict one class.

    Parameters
    ----------
    logits : ndarray of shape (n,)
        The fitted model's training logits.
    y : ndarray of shape (n,)
        Training labels, 0/1.
    owner : str
        The estimator's name in the message.
    strength : float
        The fit's strength (named in the message).
    penalized : bool
        Whether a penalty was active (the message names the likely cause).
    classes : sequence of length 2, default=(0, 1)
        The labels of codes 0 and 1 (named in the message).

    Raises
    ------
    ValueError
        When a logit is not finite.
    """
    if not np.all(np.isfinite(logits)):
        raise ValueError(
            f"{owner}'s training diverged: its training scores are not finite. Scale the "
            "features (a StandardScaler in a Pipeline), lower `lr` or the strength."
        )
    const_ce, const_acc = constant_baseline(y)
    predicted = (logits >= 0).astype(np.int64)
    acc = float(np.mean(predicted == y))
    ce = float(np.mean(np.logaddexp(0.0, logits) - y * logits))
    cause = (
        f"at strength={strength:g} the penalty may outweigh the labels (a smaller strength, "
        "or FairnessCV to choose one within a budget)"
        if penalized
        else "the model is under-trained (raise `epochs`, or use solver='lbfgs')"
    )
    if acc < const_acc - 1e-12 or ce > const_ce * (1 + 1e-3):
        warnings.warn(
            f"{owner} ends below the best constant predictor on its training data "
            f"(accuracy {acc:.4f} vs {const_acc:.4f}, cross-entropy {ce:.4f} vs "
            f"{const_ce:.4f}); the constant is perfectly fair, so the fit did not "
            f"optimize: {cause}.",
            FitQualityWarning,
            stacklevel=4,
        )
    elif len(np.unique(predicted)) == 1:
        warnings.warn(
            f"{owner} predicts class {classes[int(predicted[0])]!r} for every training row "
            f"(accuracy {acc:.4f}, the best constant's {const_acc:.4f}): {cause}.",
            FitQualityWarning,
            stacklevel=4,
        )


def training_logits(model: torch.nn.Module, X: torch.Tensor) -> np.ndarray:
    """Return the model's first-output logits on ``X`` (no gradient), as float64."""
    with torch.no_grad():
        out: Any = model(X)[:, 0]
    return out.detach().cpu().double().numpy()
