"""A frozen classifier seen as a differentiable score function ``x -> logit``.

AdapFair (Huang et al., 2024, §III-A) treats the classifier :math:`f` as a black box that returns
predictions and their gradients with respect to the *input*; its parameters never change.
:func:`as_torch_classifier` turns the classifiers we support into a :class:`TorchScorer`:

- any ``torch.nn.Module`` (or plain callable) mapping ``(n, d)`` inputs to logits or to
  probabilities of the positive class (shape ``(n,)``, ``(n, 1)``, or ``(n, 2)`` for a
  two-class softmax head);
- fitted scikit-learn ``LogisticRegression``/linear classifiers and ``MLPClassifier``
  (rebuilt exactly as torch modules from ``coef_``/``coefs_``), alone or as the last step
  of a ``Pipeline`` whose other steps are ``StandardScaler`` steps;
- otfair estimators exposing their fitted torch module as ``module_`` (or ``model_``, as
  :class:`~otfair.estimators.FairClassifier` does).
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Iterator
from typing import Any, Literal, cast

import numpy as np
import torch
from torch import nn

Output = Literal["logits", "probability"]

_PROB_EPS = 1e-7
_SKLEARN_ACTIVATIONS: dict[str, Callable[[], nn.Module]] = {
    "relu": nn.ReLU,
    "tanh": nn.Tanh,
    "logistic": nn.Sigmoid,
    "identity": nn.Identity,
}


class _CallableModule(nn.Module):
    """Parameter-free module around a plain differentiable callable."""

    def __init__(self, fn: Callable[[torch.Tensor], torch.Tensor]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fn(x)


class TorchScorer(nn.Module):
    r"""Differentiable binary score of a frozen classifier, returned as a logit.

    Parameters
    ----------
    module : torch.nn.Module or callable
        The classifier :math:`f`. Its output of shape ``(n,)`` or ``(n, 1)`` is the score
        of the positive class; an ``(n, 2)`` output is a two-class head (column 1 is the
        positive class).
    output : {"logits", "probability"}, default="logits"
        What ``module`` returns. Probabilities are mapped to logits,
        :math:`\operatorname{logit}(p) = \log p - \log(1 - p)` (clipped at
        :math:`10^{-7}`), so that the cross-entropy is always computed stably.
    n_features : int or None
        Input dimension when known (checked against the data).

    Attributes
    ----------
    module : torch.nn.Module
        The wrapped classifier (a callable is wrapped in a module).
    output : {"logits", "probability"}
        What ``module`` returns.
    n_features : int or None
        Input dimension, given or read from the module's first layer.

    See Also
    --------
    otfair.estimators.as_torch_classifier : Builds it from a fitted classifier.
    otfair.estimators.AdapFairPreprocessor : Trains flows against it.

    Examples
    --------
    >>> import torch
    >>> from otfair.estimators import TorchScorer
    >>> scorer = TorchScorer(torch.nn.Linear(3, 2))  # a two-class head: column 1
    >>> scorer(torch.zeros(4, 3)).shape
    torch.Size([4])
    """

    def __init__(
        self,
        module: nn.Module | Callable[[torch.Tensor], torch.Tensor],
        output: Output = "logits",
        n_features: int | None = None,
    ) -> None:
        super().__init__()
        if output not in ("logits", "probability"):
            raise ValueError(f"`output` must be 'logits' or 'probability'; got {output!r}.")
        if not isinstance(module, nn.Module):
            if not callable(module):
                raise TypeError(
                    "`classifier` must be a torch.nn.Module, a callable, a fitted "
                    "scikit-learn linear/MLP classifier or an otfair estimator with a "
                    f"`module_`; got {type(module).__name__}."
                )
            module = _CallableModule(module)
        self.module = module
        self.output = output
        self.n_features = n_features if n_features is not None else _infer_in_features(module)

    @property
    def device(self) -> torch.device:
        """Device of the classifier's parameters (CPU for a parameter-free callable)."""
        for p in self.module.parameters():
            return p.device
        return torch.device("cpu")

    @property
    def dtype(self) -> torch.dtype | None:
        """Floating dtype of the classifier's parameters (None for a parameter-free callable)."""
        for p in self.module.parameters():
            return p.dtype if p.is_floating_point() else None
        return None

    def raw(self, x: torch.Tensor) -> torch.Tensor:
        """Return the classifier's positive-class output (logit or probability), shape (n,).

        The input is moved to the classifier's device and cast to its parameters' dtype
        (a float64 module takes the float32 features); the output has the input's dtype.
        """
        out = self.module(x.to(device=self.device, dtype=self.dtype or x.dtype))
        if isinstance(out, torch.Tensor) and out.is_floating_point():
            out = out.to(x.dtype)
        if not isinstance(out, torch.Tensor):
            raise TypeError(f"`classifier` must return a torch.Tensor; got {type(out).__name__}.")
        if out.ndim == 2 and out.shape[1] == 2:
            out = out[:, 1] - out[:, 0] if self.output == "logits" else out[:, 1]
        elif out.ndim == 2 and out.shape[1] == 1:
            out = out[:, 0]
        elif out.ndim != 1:
            raise ValueError(
                "`classifier` must return one score per sample (shape (n,), (n, 1) or a "
                f"two-class (n, 2)); got shape {tuple(out.shape)}."
            )
        return out.to(x.device)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        r"""Return the positive-class logit :math:`\operatorname{logit} f(x)`, shape (n,)."""
        out = self.raw(x)
        if self.output == "probability":
            out = torch.logit(out, eps=_PROB_EPS)
        return out


def _infer_in_features(module: nn.Module) -> int | None:
    in_features = getattr(module, "in_features", None)
    if isinstance(in_features, int):
        return in_features
    for m in module.modules():
        if isinstance(m, nn.Linear):
            return m.in_features
    return None


class _Standardize(nn.Module):
    """A fitted ``StandardScaler``'s map ``(x - mean) / scale`` (float32 buffers)."""

    shift: torch.Tensor
    scale: torch.Tensor

    def __init__(self, mean: Any, scale: Any, n_features: int) -> None:
        super().__init__()
        shift = np.zeros(n_features) if mean is None else np.asarray(mean, dtype=np.float64)
        scale = np.ones(n_features) if scale is None else np.asarray(scale, dtype=np.float64)
        self.register_buffer("shift", torch.as_tensor(shift, dtype=torch.float32))
        self.register_buffer("scale", torch.as_tensor(scale, dtype=torch.float32))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x - self.shift) / self.scale


def _from_pipeline(est: Any) -> TorchScorer | None:
    """Rebuild a fitted ``Pipeline`` of ``StandardScaler`` steps and a supported classifier."""
    from sklearn.preprocessing import StandardScaler

    steps = [step for _, step in est.steps if step not in (None, "passthrough")]
    if not steps or not all(isinstance(step, StandardScaler) for step in steps[:-1]):
        return None
    final = _from_sklearn(steps[-1])
    if final is None or final.output != "logits":
        return None
    layers: list[nn.Module] = [
        _Standardize(  # what transform does: mean_ is kept even when not subtracted
            step.mean_ if step.with_mean else None,
            step.scale_ if step.with_std else None,
            int(step.n_features_in_),
        )
        for step in steps[:-1]
    ]
    n_features = int(steps[0].n_features_in_)
    return TorchScorer(nn.Sequential(*layers, final.module), "logits", n_features)


def _from_sklearn(est: Any) -> TorchScorer | None:
    """Rebuild a fitted binary scikit-learn classifier as a torch module (logits)."""
    from sklearn.pipeline import Pipeline

    if isinstance(est, Pipeline):
        return _from_pipeline(est)
    classes = getattr(est, "classes_", None)
    if classes is None:
        return None
    if len(classes) != 2:
        raise ValueError(
            f"`classifier` must be a binary classifier; it has {len(classes)} classes."
        )
    if hasattr(est, "coefs_") and hasattr(est, "intercepts_"):  # MLPClassifier
        act = _SKLEARN_ACTIVATIONS.get(est.activation)
        if act is None:
            raise ValueError(f"Unsupported MLPClassifier activation {est.activation!r}.")
        layers: list[nn.Module] = []
        for i, (w, b) in enumerate(zip(est.coefs_, est.intercepts_, strict=True)):
            lin = _copied_linear(w.shape[0], w.shape[1])
            with torch.no_grad():
                lin.weight.copy_(torch.as_tensor(np.asarray(w).T, dtype=torch.float32))
                lin.bias.copy_(torch.as_tensor(np.asarray(b), dtype=torch.float32))
            layers.append(lin)
            if i < len(est.coefs_) - 1:
                layers.append(act())
        return TorchScorer(nn.Sequential(*layers), "logits", est.coefs_[0].shape[0])
    coef = getattr(est, "coef_", None)
    if coef is not None and hasattr(est, "decision_function"):  # linear classifiers
        coef = np.atleast_2d(np.asarray(coef))
        lin = _copied_linear(coef.shape[1], 1)
        with torch.no_grad():
            lin.weight.copy_(torch.as_tensor(coef, dtype=torch.float32))
            lin.bias.copy_(torch.as_tensor(np.ravel(est.intercept_), dtype=torch.float32))
        return TorchScorer(lin, "logits", coef.shape[1])
    return None


def _copied_linear(n_in: int, n_out: int) -> nn.Linear:
    """Return a float32 ``nn.Linear`` left uninitialized (its weights are copied in next).

    ``nn.Linear``'s own initialization draws from torch's global generator, which a
    wrapper of a fitted model has no reason to touch (``torch.manual_seed(0)`` followed
    by ``torch.rand`` gives the same numbers with or without it).
    """
    return torch.nn.utils.skip_init(nn.Linear, n_in, n_out, dtype=torch.float32)


def as_torch_classifier(classifier: Any, output: Output | None = None) -> TorchScorer:
    """Wrap ``classifier`` as a differentiable :class:`TorchScorer` (no copy of a module).

    Parameters
    ----------
    classifier : torch.nn.Module, callable, scikit-learn classifier or otfair estimator
        See the module docstring for what is supported.
    output : {"logits", "probability"} or None
        What a torch module / callable returns; ``None`` means ``"logits"`` (otfair's
        models return logits). Ignored for scikit-learn models, which are rebuilt to
        return logits.

    Returns
    -------
    TorchScorer
        The positive-class logit of ``classifier``, differentiable in its input.

    Raises
    ------
    TypeError
        If ``classifier`` is of an unsupported kind.

    See Also
    --------
    otfair.estimators.TorchScorer : The module it returns.
    otfair.estimators.AdapFairPreprocessor : Trains flows against a frozen classifier.

    Examples
    --------
    >>> import numpy as np
    >>> import torch
    >>> from sklearn.linear_model import LogisticRegression
    >>> from otfair.estimators import as_torch_classifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 3))
    >>> clf = LogisticRegression().fit(X, (X[:, 0] > 0).astype(int))
    >>> scorer = as_torch_classifier(clf)
    >>> logit = scorer(torch.as_tensor(X[:5], dtype=torch.float32))
    >>> np.allclose(torch.sigmoid(logit).detach().numpy(), clf.predict_proba(X[:5])[:, 1],
    ...             atol=1e-5)
    True
    """
    if isinstance(classifier, TorchScorer):
        return classifier
    if isinstance(classifier, nn.Module) or (
        callable(classifier) and not hasattr(classifier, "fit")
    ):
        return TorchScorer(classifier, output or "logits")
    module = getattr(classifier, "module_", None)
    if not isinstance(module, nn.Module):  # FairClassifier keeps its network in `model_`
        module = getattr(classifier, "model_", None)
    if isinstance(module, nn.Module):
        out = cast(Output, output or getattr(classifier, "output_", "logits"))
        return TorchScorer(module, out, getattr(classifier, "n_features_in_", None))
    scorer = _from_sklearn(classifier)
    if scorer is None:
        raise TypeError(
            "`classifier` must be a torch.nn.Module, a callable, a fitted scikit-learn "
            "linear or MLP classifier (alone or after StandardScaler steps in a Pipeline), "
            "or an otfair estimator with a fitted `module_` / `model_`; "
            f"got {type(classifier).__name__}{_why_unsupported(classifier)}."
        )
    return scorer


def _why_unsupported(classifier: Any) -> str:
    """Return why a scikit-learn-like ``classifier`` is not supported, for the message."""
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    if not hasattr(classifier, "fit"):
        return ""
    try:
        check_is_fitted(classifier)
    except (NotFittedError, TypeError):
        return " (is it fitted?)"
    return (
        ", fitted, but AdapFair needs the classifier's gradient in its input, which only "
        "linear and MLP classifiers (and scalers) give here"
    )


def state_fingerprint(module: nn.Module) -> str:
    """SHA-256 of every parameter and buffer of ``module`` (names, dtypes and bytes)."""
    h = hashlib.sha256()
    for name, t in sorted(module.state_dict().items()):
        h.update(name.encode())
        h.update(str(t.dtype).encode())
        h.update(t.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


@contextlib.contextmanager
def frozen(module: nn.Module) -> Iterator[nn.Module]:
    """Put ``module`` in eval mode with ``requires_grad=False``; restore both on exit.

    Eval mode matters as much as the gradient flag: a batch-norm layer in training mode
    updates its running statistics on every forward pass.
    """
    flags = [p.requires_grad for p in module.parameters()]
    modes = [m.training for m in module.modules()]
    module.eval()
    for p in module.parameters():
        p.requires_grad_(False)
    try:
        yield module
    finally:
        for p, flag in zip(module.parameters(), flags, strict=True):
            p.requires_grad_(flag)
        for m, mode in zip(module.modules(), modes, strict=True):
            m.training = mode
