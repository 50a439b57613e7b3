"""Private input checks shared by the OT primitives.

Every check raises a ``ValueError`` or ``TypeError`` that names the offending argument,
so callers never see a deep torch traceback for malformed input.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from otfair.utils import as_float_tensor


def as_tensor(x: object, name: str, *, like: torch.Tensor | None = None) -> torch.Tensor:
    """Return ``x`` as a finite floating tensor (on ``like``'s device and dtype if given).

    Without ``like``, tensors keep their floating dtype and arrays keep numpy's
    (float64 stays float64, as in POT); integer and boolean inputs become float32.
    """
    if like is None:
        return as_float_tensor(x, name, dtype=_floating_dtype(x))
    t = as_float_tensor(x, name, device=like.device, dtype=like.dtype)
    if t.dtype != like.dtype:
        t = t.to(like.dtype)
    return t


def _floating_dtype(x: object) -> torch.dtype:
    """float64 for non-tensor float64 input (numpy arrays, lists of floats), else float32."""
    if isinstance(x, torch.Tensor):
        return torch.float32  # only used when the tensor is not floating
    try:
        kind = np.asarray(x).dtype
    except (TypeError, ValueError):
        return torch.float32  # as_float_tensor raises the error naming the argument
    return torch.float64 if kind == np.float64 else torch.float32


def check_vector(x: object, name: str, *, like: torch.Tensor | None = None) -> torch.Tensor:
    """Return ``x`` as a non-empty, finite 1-D tensor; an ``(n, 1)`` column is flattened."""
    t = as_tensor(x, name, like=like)
    if t.dim() == 2 and t.shape[1] == 1:
        t = t[:, 0]
    if t.dim() != 1:
        raise ValueError(f"`{name}` must be 1-D (n,), got shape {tuple(t.shape)}.")
    if t.numel() == 0:
        raise ValueError(f"`{name}` is empty.")
    return t


def check_matrix(x: object, name: str, *, like: torch.Tensor | None = None) -> torch.Tensor:
    """Return ``x`` as a non-empty finite 2-D tensor; a 1-D input becomes one column."""
    t = as_tensor(x, name, like=like)
    if t.dim() == 1:
        t = t[:, None]
    if t.dim() != 2:
        raise ValueError(f"`{name}` must be 2-D (n, d), got shape {tuple(t.shape)}.")
    if t.shape[0] == 0 or t.shape[1] == 0:
        raise ValueError(f"`{name}` is empty (shape {tuple(t.shape)}).")
    return t


def check_weights(
    w: object | None, n: int, name: str, *, like: torch.Tensor, normalize: bool = True
) -> torch.Tensor:
    """Return non-negative weights of length ``n`` (uniform when ``None``).

    Parameters
    ----------
    w : array-like of shape (n,) or None
        Weights; ``None`` means ``1/n`` each.
    n : int
        Expected length.
    name : str
        Argument name for error messages.
    like : torch.Tensor
        Tensor whose device and dtype the weights take.
    normalize : bool, default=True
        Divide by the total so that the weights sum to one.
    """
    if w is None:
        return torch.full((n,), 1.0 / n, dtype=like.dtype, device=like.device)
    t = check_vector(w, name, like=like)
    if t.shape[0] != n:
        raise ValueError(f"`{name}` has {t.shape[0]} entries but {n} points were given.")
    td = t.detach()
    if bool((td < 0).any()):
        raise ValueError(f"`{name}` must be non-negative; min is {float(td.min()):.4g}.")
    total = float(td.sum())
    if total <= 0.0:
        raise ValueError(f"`{name}` must have a positive total; got {total:.4g}.")
    return t / t.sum() if normalize else t


def check_same_mass(a: torch.Tensor, b: torch.Tensor, names: tuple[str, str]) -> None:
    """Balanced OT needs equal total masses: raise if ``sum(a)`` and ``sum(b)`` differ."""
    sa, sb = float(a.detach().sum()), float(b.detach().sum())
    if not math.isclose(sa, sb, rel_tol=1e-4, abs_tol=1e-8):
        raise ValueError(
            f"`{names[0]}` and `{names[1]}` must have the same total mass for balanced "
            f"OT; got {sa:.6g} and {sb:.6g}."
        )


def check_eps(eps: float, name: str = "eps") -> float:
    """Return ``eps`` as a positive finite float."""
    try:
        value = float(eps)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`{name}` must be a positive number; got {eps!r}.") from exc
    if not (math.isfinite(value) and value > 0.0):
        raise ValueError(f"`{name}` must be a positive finite number; got {eps!r}.")
    return value


def check_positive_int(value: int, name: str) -> int:
    """Return ``value`` as a positive int."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"`{name}` must be a positive integer; got {value!r}.")
    return value


def check_shaped(
    x: object, shape: tuple[int, ...], name: str, *, like: torch.Tensor
) -> torch.Tensor:
    """Return a finite tensor of exactly ``shape`` (cost matrices, warm-start duals)."""
    t = as_tensor(x, name, like=like)
    if tuple(t.shape) != tuple(shape):
        raise ValueError(f"`{name}` must have shape {tuple(shape)}, got {tuple(t.shape)}.")
    return t
