"""Torch plumbing: device resolution and tensor conversion (randomness: ``_random``).

All torch code in otfair takes a ``device`` argument and goes through these helpers so
that it runs unchanged on CPU (the default) or CUDA.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable, Iterator
from typing import Any, TypeVar, cast

import numpy as np
import torch

from otfair.utils._threads import one_blas_thread_if_small

F = TypeVar("F", bound=Callable[..., Any])

#: ``validate_data`` settings for features that become tensors (``torch.as_tensor``
#: shares their memory): C order, as torch refuses negative strides (``X[::-1]``, a
#: frame's ``iloc[::-1]``), and writable, as torch warns on a read-only array (pandas 3
#: gives one for every frame). Either is a copy only where the array is not so already.
TORCH_READY: dict[str, Any] = {"order": "C", "force_writeable": True}


def resolve_device(device: str | torch.device | None = None) -> torch.device:
    """Return a ``torch.device``.

    Parameters
    ----------
    device : str, torch.device or None
        ``None`` or ``"cpu"`` gives the CPU; ``"auto"`` picks CUDA when available;
        anything else is passed to ``torch.device``.

    Raises
    ------
    ValueError
        If the device string is invalid or CUDA is requested but not available.
    """
    if device is None:
        return torch.device("cpu")
    if isinstance(device, torch.device):
        dev = device
    elif device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        try:
            dev = torch.device(device)
        except (RuntimeError, TypeError) as exc:
            raise ValueError(f"`device` is not a valid torch device: {device!r}.") from exc
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("`device` asks for CUDA but torch.cuda.is_available() is False.")
    return dev


def as_float_tensor(
    x: Any, name: str, *, device: torch.device | str | None = None, dtype=torch.float32
) -> torch.Tensor:
    """Convert ``x`` to a floating tensor on ``device``, rejecting NaN/inf.

    Tensors keep their autograd graph (only moved/cast when needed).
    """
    if isinstance(x, torch.Tensor):
        t = x
        if not t.is_floating_point():
            t = t.to(dtype)
    else:
        try:
            t = torch.as_tensor(np.asarray(x, dtype=np.float64), dtype=dtype)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"`{name}` must be numeric array-like; got {type(x).__name__}."
            ) from exc
    if device is not None:
        t = t.to(resolve_device(device) if not isinstance(device, torch.device) else device)
    if t.numel() and not _all_finite(t.detach()):
        raise ValueError(f"`{name}` contains NaN or infinite values.")
    return t


def _all_finite(t: torch.Tensor) -> bool:
    """Whether every entry is finite: one min/max reduction (NaN propagates through it).

    About 15x cheaper than ``torch.isfinite(t).all()`` on a 1024 x 1024 float32 matrix,
    which matters when costs are checked on every training step.
    """
    if not t.is_floating_point():
        return True
    lo, hi = torch.aminmax(t)
    return math.isfinite(float(lo)) and math.isfinite(float(hi))


@contextlib.contextmanager
def training_state() -> Iterator[None]:
    """Run a fit in torch's training state, whatever the caller's state is.

    A fit trains with gradients and float32 parameters. A user may call it inside
    ``torch.no_grad()`` or ``torch.inference_mode()`` (evaluation code), or after
    ``torch.set_default_dtype(torch.float64)``; inside this context gradients are on and
    inference mode is off (both thread-local in torch), and the default dtype is float32.
    The default dtype is process-wide: it is set only when the caller changed it, and
    restored on exit. Torch's and BLAS's thread counts are the caller's here;
    :func:`fits_in_training_state` runs a fit on small inputs on one thread of each
    (:mod:`otfair.utils._threads`).
    """
    dtype = torch.get_default_dtype()
    with torch.inference_mode(False), torch.enable_grad():
        if dtype is torch.float32:
            yield
            return
        torch.set_default_dtype(torch.float32)
        try:
            yield
        finally:
            torch.set_default_dtype(dtype)


def fits_in_training_state(method: F) -> F:
    """Decorate a torch estimator's ``fit`` (or path hook) to run in :func:`training_state`.

    On small inputs (the method's ``X``: its first argument after ``self``, or ``X=``)
    the fit runs on one torch and one BLAS thread, the caller's counts restored on exit
    (:func:`otfair.utils._threads.one_blas_thread_if_small`).
    """

    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        X = args[1] if len(args) > 1 else kwargs.get("X")
        with training_state(), one_blas_thread_if_small(X, torch_threads=True):
            return method(*args, **kwargs)

    return cast(F, wrapper)
