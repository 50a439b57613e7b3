r"""The one base of otfair's torch estimators: random state, device, chunks, labels, tags.

Every torch estimator (:class:`~otfair.estimators.FairClassifier`, the regression nets,
the representation classifiers, AdapFair) derives from :class:`TorchEstimatorMixin`,
placed first in its bases (``class X(TorchEstimatorMixin, ClassifierMixin,
BaseEstimator)``), which owns:

* **random state**: nothing. A fit draws its one seed from ``random_state``
  (:func:`otfair.utils.draw_seed`) and passes generators derived from it down
  (:func:`otfair.utils.torch_generator`, :func:`numpy.random.default_rng`); it never
  seeds, draws from or restores python's, numpy's or torch's global generators, so a
  thread drawing from them while another fits sees its own sequence;
* **device**: :meth:`TorchEstimatorMixin._device` (``device`` parameter,
  :func:`otfair.utils.resolve_device`);
* **chunked prediction**: :func:`predict_in_chunks` (bounded memory on large inputs);
* **label encoding** (classifiers): :func:`encode_binary_labels` learns ``classes_``
  (any two labels, sorted as :func:`numpy.unique` sorts them; ``classes_[1]`` is the
  positive class of the fairness notions' label cells) and predictions return the
  original labels; a single-class ``y`` is a ``ValueError`` naming ``y``;
* **tags**: ``__sklearn_tags__`` (binary classifiers only, no NaN, ``y`` required,
  transform output in float64);
* **fit checks**: what a fit is held against (finite numbers, unit-scale features, the
  best constant predictor; below, and :func:`check_regression_against_constant` for
  the regression nets, whose best constant predicts the training mean).

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
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import column_or_1d

from otfair.utils import DEVICE, RANDOM_STATE, positive_int, positive_real, resolve_device
from otfair.utils._warnings import user_stacklevel

__all__ = [
    "TRAINING_CONSTRAINTS",
    "FitQualityWarning",
    "check_regression_against_constant",
    "TorchEstimatorMixin",
    "encode_binary_labels",
    "predict_in_chunks",
]


def encode_binary_labels(y: Any, name: str = "y") -> tuple[np.ndarray, np.ndarray]:
    """Return ``(classes, codes)``: the two labels of ``y`` and each sample's code in {0, 1}.

    Any two labels are accepted (numbers, strings such as ``"<=50K"`` / ``">50K"``,
    booleans); ``classes`` is :func:`numpy.unique` of ``y``, so ``classes[1]`` (the larger
    label, ``1`` for 0/1 labels) is the positive class.

    Raises
    ------
    ValueError
        Naming ``name``: ``y`` is None, continuous (``Unknown label type``), holds one
        class only, or more than two.
    """
    if y is None:
        raise ValueError(
            f"This estimator requires y to be passed, but the target y is None (`{name}`)."
        )
    y = column_or_1d(y, warn=True)
    if y.dtype.kind in "fc" and not np.all(np.isfinite(y)):
        # before type_of_target, which casts NaN/inf to int (a RuntimeWarning in numpy 2)
        raise ValueError(f"Input `{name}` contains NaN or infinity; labels must be finite.")
    check_classification_targets(y)
    classes, codes = np.unique(y, return_inverse=True)
    if len(classes) < 2:
        raise ValueError(
            f"`{name}` contains only one class ({classes.tolist()}); a binary classifier "
            "needs samples of two classes."
        )
    if len(classes) > 2:
        raise ValueError(
            f"Only binary classification is supported. `{name}` must contain two classes; "
            f"got {len(classes)}: {classes.tolist()[:5]}."
        )
    return classes, codes.astype(np.int64).reshape(-1)


def predict_in_chunks(
    fn: Callable[[torch.Tensor], torch.Tensor | tuple[torch.Tensor, ...]],
    X: np.ndarray,
    device: torch.device,
    chunk_size: int = 8192,
) -> list[np.ndarray]:
    """Apply ``fn`` to ``X`` in row chunks under ``torch.no_grad``; return its outputs.

    ``fn`` maps a (b, d) tensor on ``device`` to one tensor or a tuple of tensors with
    b rows; the result is one (CPU) array per output, the chunks concatenated. Memory is
    bounded by ``chunk_size`` rows whatever the size of ``X``.
    """
    parts: list[list[np.ndarray]] = []
    with torch.no_grad():
        for start in range(0, X.shape[0], chunk_size):
            out = fn(torch.as_tensor(X[start : start + chunk_size], device=device))
            outs = out if isinstance(out, tuple) else (out,)
            if not parts:
                parts = [[] for _ in outs]
            for acc, tensor in zip(parts, outs, strict=True):
                acc.append(tensor.cpu().numpy())
    return [np.concatenate(acc) for acc in parts]


#: The constraints of the training parameters every torch estimator declares, merged
#: into its ``_parameter_constraints`` (``{**TRAINING_CONSTRAINTS, ...}``).
TRAINING_CONSTRAINTS: dict[str, list[Any]] = {
    "epochs": [positive_int()],
    "batch_size": [positive_int()],
    "lr": [positive_real()],
    "random_state": RANDOM_STATE,
    "device": DEVICE,
}


class TorchEstimatorMixin:
    """The base of every torch estimator of otfair (put it first among the bases).

    Subclasses get the label, device and chunk helpers below, and the tags. Their fits
    keep randomness local (see the module docstring): nothing here seeds, wraps or
    restores the global generators.
    """

    # -- device --------------------------------------------------------------------------
    def _device(self) -> torch.device:
        """Return the checked torch device of ``self.device``."""
        return resolve_device(getattr(self, "device", None))

    # -- labels --------------------------------------------------------------------------
    def _encode_labels(self, y: Any) -> np.ndarray:
        """Learn ``classes_`` from ``y``; return the 0/1 codes (:func:`encode_binary_labels`)."""
        self.classes_, codes = encode_binary_labels(y, "y")
        return codes

    def _codes_of(self, y: Any, name: str = "y") -> np.ndarray:
        """Return the 0/1 codes of labels ``y`` under the learned ``classes_``.

        A label outside ``classes_`` is a ``ValueError`` naming ``name``.
        """
        y = column_or_1d(y)
        codes = np.clip(np.searchsorted(self.classes_, y), 0, len(self.classes_) - 1)
        unknown = self.classes_[codes] != y
        if np.any(unknown):
            raise ValueError(
                f"`{name}` holds labels outside the fitted classes {self.classes_.tolist()}: "
                f"{np.unique(y[unknown])[:5].tolist()}."
            )
        return codes.astype(np.int64)

    def _decode_labels(self, codes: np.ndarray) -> np.ndarray:
        """Map 0/1 codes back to the labels of ``classes_``."""
        return self.classes_[np.asarray(codes, dtype=np.int64)]

    # -- tags ----------------------------------------------------------------------------
    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()  # type: ignore[misc]
        tags.input_tags.allow_nan = False
        tags.target_tags.required = True
        if tags.classifier_tags is not None:
            tags.classifier_tags.multi_class = False  # binary fairness notions
        if tags.transformer_tags is not None:
            tags.transformer_tags.preserves_dtype = ["float64"]
        return tags


#: features of larger magnitude get a warning naming the fix (a scaler in a Pipeline)
MAX_FEATURE_MAGNITUDE = 1e4
#: a training cross-entropy above the constant's by more than this share warns: the
#: rounding of a fit that ends at the constant itself (float32 logits), no more
CONSTANT_LOSS_RTOL = 1e-6


class FitQualityWarning(UserWarning):
    """A fit ended below the best constant predictor, or at one predicted class.

    Also raised for features on a raw scale (magnitude above 1e4), which gradient
    training cannot fit well; the message names the fix. A fitted torch estimator keeps
    the message of its fit's check in ``fit_quality_warning_`` (None when it passed),
    which sweeps record and reports mark.

    See Also
    --------
    otfair.estimators.FairClassifier : the estimator whose fits are checked.
    otfair.metrics.DegeneratePredictorWarning : the same check on test predictions.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from otfair.estimators import FairClassifier, FitQualityWarning
    >>> X = np.random.default_rng(0).normal(size=(100, 2)); y = (X[:, 0] > 0).astype(int)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = FairClassifier().fit(X * 1e6, y)
    >>> any(issubclass(w.category, FitQualityWarning) for w in caught)
    True
    """


def base_rate_log_odds(y: np.ndarray) -> float:
    """Return the best constant predictor's logit: the log-odds of 0/1 ``y``'s mean.

    The mean is clipped to [1e-6, 1 - 1e-6]; a fit starts its output bias here.
    """
    rate = float(np.clip(np.mean(y), 1e-6, 1 - 1e-6))
    return math.log(rate / (1.0 - rate))


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


def warn_feature_scale(X: np.ndarray, owner: str) -> bool:
    """Warn when a feature's magnitude exceeds :data:`MAX_FEATURE_MAGNITUDE`; say whether.

    Gradient training on raw scales (incomes in dollars) ends far from the optimum or
    overflows; the warning names the largest column and the fix. The return value
    (True: it warned) lets the fit-quality checks name the scale as the likely cause.
    """
    if X.size == 0:
        return False
    magnitude = np.maximum(X.max(axis=0), -X.min(axis=0))  # no |X| temporary
    column = int(np.argmax(magnitude))
    if magnitude[column] > MAX_FEATURE_MAGNITUDE:
        warnings.warn(
            f"{owner}: feature column {column} of `X` reaches {magnitude[column]:.3g} in "
            f"magnitude; gradient training needs features on a unit scale. Put a "
            f"sklearn.preprocessing.StandardScaler before {owner} in a Pipeline "
            "(make_pipeline(StandardScaler(), ...)).",
            FitQualityWarning,
            stacklevel=user_stacklevel(),
        )
        return True
    return False


def warn_not_converged(
    owner: str, solver: str, epochs: int, tol: float, *, held_out: bool = False
) -> None:
    """Warn (scikit-learn's ``ConvergenceWarning``) that a fit stopped at its cap.

    ``held_out``: the rule was early stopping's (the objective on held-out rows).
    """
    from sklearn.exceptions import ConvergenceWarning

    unit = "iterations" if solver == "lbfgs" else "epochs"
    watched = "held-out" if held_out else "training"
    rule = (
        f"the largest gradient entry fell below tol={tol:g}"
        if solver == "lbfgs"
        else f"the {watched} objective stopped improving by tol={tol:g}"
    )
    warnings.warn(
        f"{owner} (solver={solver!r}) reached epochs={epochs} {unit} before {rule}; raise "
        "`epochs`, or scale the features (a StandardScaler in a Pipeline).",
        ConvergenceWarning,
        stacklevel=user_stacklevel(),
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


#: the cause a fit on features far from a unit scale names first (:func:`warn_feature_scale`)
SCALE_CAUSE = (
    "the features are far from a unit scale, which gradient training cannot fit (a "
    "StandardScaler before the model in a Pipeline); else "
)


def _likely_cause(
    strength: float, penalized: bool, at_cap: bool, more_training: str, remedy: str
) -> str:
    """Return the words naming why a fit ended below the best constant predictor.

    ``more_training`` names the longer training beside the other fixes of a penalized
    fit that ran to its cap; ``remedy`` the fix of an unpenalized one.
    """
    if penalized and at_cap:
        return (
            f"at strength={strength:g} the penalty may outweigh the labels, or the model is "
            f"under-trained: the training ran to its `epochs` cap (a smaller strength; "
            f"{more_training}; or FairnessCV to choose a strength within a budget)"
        )
    if penalized:
        return (
            f"at strength={strength:g} the penalty may outweigh the labels (a smaller "
            "strength, or FairnessCV to choose one within a budget)"
        )
    return f"the model is under-trained ({remedy})"


def check_against_constant(
    logits: np.ndarray,
    y: np.ndarray,
    *,
    owner: str,
    strength: float,
    penalized: bool,
    classes: Any = (0, 1),
    at_cap: bool = False,
    remedy: str = "raise `epochs`, or use solver='lbfgs'",
    balanced: bool = False,
    raw_scale: bool = False,
) -> str | None:
    """Warn when training ``logits`` do worse than the best constant or predict one class.

    Returns the warning's message (None: no warning); the estimator keeps it as
    ``fit_quality_warning_``.

    Worse: a lower training accuracy, or a training cross-entropy above the constant's
    by more than :data:`CONSTANT_LOSS_RTOL` of it (``FairnessCV`` excludes such a
    strength: its ``above_reference`` is False). With ``balanced`` (a model trained on
    the class-balanced cross-entropy, CFair's), the balanced accuracy and the
    class-balanced cross-entropy instead, against the best constant's under that
    weighting (0.5 and log 2): such a model trades plain accuracy for the
    minority class's on purpose, and on imbalanced labels (Bank, Diabetes) its plain
    accuracy is below the majority constant's without anything wrong.

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
    at_cap : bool, default=False
        Whether the training ran to its cap (``epochs``): a penalized fit that did may
        also be under-trained, and the message names both causes.
    remedy : str, optional
        The fix of an unpenalized fit that is under-trained, in words (the estimator's
        own parameters).
    balanced : bool, default=False
        Compare on the class-balanced measures (above).
    raw_scale : bool, default=False
        :func:`warn_feature_scale` warned: the message names the scale first.

    Raises
    ------
    ValueError
        When a logit is not finite.
    """
    _check_not_diverged(logits, owner, "scores")
    predicted = (logits >= 0).astype(np.int64)
    acc, ce, const_acc, const_ce, kind, measure = _against_constant(predicted, logits, y, balanced)
    cause = SCALE_CAUSE * raw_scale + _likely_cause(
        strength, penalized, at_cap, "more `epochs` or solver='lbfgs'", remedy
    )
    message = None
    if acc < const_acc - 1e-12 or ce > const_ce * (1 + CONSTANT_LOSS_RTOL):
        message = (
            f"{owner} ends below the best constant predictor on its training data "
            f"({measure.format(acc, const_acc, ce, const_ce)}); the constant is perfectly "
            f"fair, so the fit did not optimize: {cause}."
        )
    elif len(np.unique(predicted)) == 1:
        message = (
            f"{owner} predicts class {classes[int(predicted[0])]} for every training row "
            f"({kind} {acc:.4f}, the best constant's {const_acc:.4f}): {cause}."
        )
    if message is not None:
        warnings.warn(message, FitQualityWarning, stacklevel=user_stacklevel())
    return message


def _check_not_diverged(values: np.ndarray, owner: str, noun: str) -> None:
    """Raise ``ValueError`` when a fit's training ``values`` (its ``noun``) are not finite."""
    if not np.all(np.isfinite(values)):
        raise ValueError(
            f"{owner}'s training diverged: its training {noun} are not finite. Scale the "
            "features (a StandardScaler in a Pipeline), lower `lr` or the strength."
        )


def _against_constant(
    predicted: np.ndarray, logits: np.ndarray, y: np.ndarray, balanced: bool
) -> tuple[float, float, float, float, str, str]:
    """Return the fit's and the best constant's accuracy and cross-entropy, and their words.

    ``(acc, ce, constant_acc, constant_ce, kind, measure)``; with ``balanced`` (and both
    classes present) each class's mean, then their mean, against 0.5 and log 2.
    """
    if balanced and len(np.unique(y)) == 2:
        hit = predicted == y
        loss = np.logaddexp(0.0, logits) - y * logits
        labels = np.unique(y)
        acc = float(np.mean([hit[y == c].mean() for c in labels]))
        ce = float(np.mean([loss[y == c].mean() for c in labels]))
        words = "balanced accuracy {:.4f} vs {:.4f}, balanced cross-entropy {:.4f} vs {:.4f}"
        return acc, ce, 0.5, math.log(2.0), "balanced accuracy", words
    const_ce, const_acc = constant_baseline(y)
    acc = float(np.mean(predicted == y))
    ce = float(np.mean(np.logaddexp(0.0, logits) - y * logits))
    words = "accuracy {:.4f} vs {:.4f}, cross-entropy {:.4f} vs {:.4f}"
    return acc, ce, const_acc, const_ce, "accuracy", words


def check_regression_against_constant(
    predictions: np.ndarray,
    y: np.ndarray,
    *,
    owner: str,
    strength: float,
    penalized: bool,
    raw_scale: bool = False,
) -> str | None:
    r"""Warn when training ``predictions`` have a larger squared error than the mean.

    The best constant regressor predicts the training mean :math:`\bar y` and its mean
    squared error is the variance of ``y``; a fit whose training MSE exceeds it by more
    than :data:`CONSTANT_LOSS_RTOL` of it (a training :math:`R^2` below 0) warns
    (:class:`FitQualityWarning`): the constant is perfectly fair, so such a fit did not
    optimize. Returns the warning's message (None: no warning), which the estimator keeps
    as ``fit_quality_warning_``.

    Parameters
    ----------
    predictions, y : ndarray of shape (n,)
        The fitted model's training predictions and the targets, in the same units.
    owner : str
        The estimator's name in the message.
    strength : float
        The fit's strength (named in the message).
    penalized : bool
        Whether an adversary was active (the message names the likely cause).
    raw_scale : bool, default=False
        :func:`warn_feature_scale` warned: the message names the scale first.

    Raises
    ------
    ValueError
        When a prediction is not finite.
    """
    _check_not_diverged(predictions, owner, "predictions")
    mse = float(np.mean((predictions - y) ** 2))
    constant = float(np.var(y))
    if mse <= constant * (1 + CONSTANT_LOSS_RTOL):
        return None
    cause = SCALE_CAUSE * raw_scale + _likely_cause(
        strength, penalized, False, "more `epochs`", "raise `epochs`"
    )
    r2 = 1.0 - mse / constant if constant > 0 else float("nan")
    message = (
        f"{owner} ends below the best constant predictor (the training mean) on its "
        f"training data (mean squared error {mse:.4g} vs {constant:.4g} in the units of "
        f"`y`, R^2 {r2:.4f}); the constant is perfectly fair, so the fit did not "
        f"optimize: {cause}."
    )
    warnings.warn(message, FitQualityWarning, stacklevel=user_stacklevel())
    return message


def training_logits(model: torch.nn.Module, X: torch.Tensor) -> np.ndarray:
    """Return the model's first-output logits on ``X`` (no gradient), as float64."""
    with torch.no_grad():
        out: Any = model(X)[:, 0]
    return out.detach().cpu().double().numpy()
