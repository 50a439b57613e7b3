"""The one base of otfair's torch estimators: random state, device, chunks, labels, tags.

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
  transform output in float64).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import column_or_1d

from otfair.utils import resolve_device

__all__ = [
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
