"""Randomness kept local: one seed per fit, and generators derived from it.

A fit never seeds, draws from or restores the process-wide generators (python's
:mod:`random`, numpy's legacy global ``RandomState``, torch's default generator): two
threads that fit at once neither disturb each other nor become irreproducible. Instead

* :func:`draw_seed` draws the fit's one seed from ``random_state`` (an int, ``None``, a
  :class:`numpy.random.RandomState` or a :class:`numpy.random.Generator`);
* :func:`torch_generator` makes the fit's :class:`torch.Generator` from it, which is
  passed down (``torch.randperm(n, generator=g)``, ``torch.nn.init.*_(..., generator=g)``,
  a dropout mask ``torch.bernoulli(p, generator=g)``);
* :func:`reset_parameters` initializes a module's parameters from that generator, and
  :func:`use_generator` builds modules (whose constructors draw their initial weights)
  on it. Both draw exactly the numbers that torch's global generator, seeded with the
  same seed, would have drawn: a fit keeps the numbers of the global seeding it replaces.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch
from sklearn.utils import check_random_state
from torch import nn
from torch.overrides import TorchFunctionMode

__all__ = [
    "draw_seed",
    "local_random_state",
    "reset_parameters",
    "torch_generator",
    "use_generator",
]

#: Exclusive upper bound of a fit's seed (what ``RandomState.randint(2**31 - 1)`` draws).
SEED_BOUND = 2**31 - 1


def local_random_state(random_state: Any) -> np.random.RandomState:
    """Return a ``RandomState`` for ``random_state`` that is never numpy's global one.

    As :func:`sklearn.utils.check_random_state`, except for ``None``: a fresh generator
    seeded from OS entropy instead of the global singleton, so drawing from it leaves
    the caller's ``np.random`` stream untouched. An int gives ``RandomState(int)``; a
    ``RandomState`` instance is returned as is (the caller's own generator); a
    :class:`numpy.random.Generator` gives a ``RandomState`` seeded by one draw of it
    (``generator.integers(2**31 - 1)``).
    """
    if random_state is None:
        return np.random.RandomState()
    if isinstance(random_state, np.random.Generator):
        return np.random.RandomState(int(random_state.integers(SEED_BOUND)))
    return check_random_state(random_state)


def draw_seed(random_state: Any) -> int:
    """Draw the one seed of a fit from ``random_state``: an int in [0, 2**31 - 1).

    For an int this is what ``check_random_state(random_state).randint(2**31 - 1)``
    gives; a ``RandomState`` draws it with ``.randint(2**31 - 1)``, a
    :class:`numpy.random.Generator` with ``.integers(2**31 - 1)`` (both advance the
    caller's generator, as scikit-learn's estimators do); ``None`` draws fresh entropy
    without touching numpy's global generator.

    Raises
    ------
    ValueError
        If ``random_state`` is none of these (scikit-learn's message).
    """
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(SEED_BOUND))
    return int(local_random_state(random_state).randint(SEED_BOUND))


def torch_generator(seed: int, device: torch.device | str | None = None) -> torch.Generator:
    """Return a fresh :class:`torch.Generator` seeded with ``seed`` (the fit's own).

    On the CPU (the default) its draws are those of torch's global generator after
    ``torch.manual_seed(seed)``.
    """
    gen = torch.Generator(device=device if device is not None else "cpu")
    gen.manual_seed(int(seed))
    return gen


def _functions(owner: Any, names: str) -> frozenset:
    """Return the attributes ``names`` (space-separated) of ``owner``."""
    return frozenset(getattr(owner, name) for name in names.split())


#: torch functions that draw random numbers and take a ``generator=`` argument.
_RANDOM_FUNCTIONS = (
    _functions(
        torch.nn.init,
        "uniform_ normal_ trunc_normal_ kaiming_uniform_ kaiming_normal_ xavier_uniform_ "
        "xavier_normal_ orthogonal_ sparse_",
    )
    | _functions(
        torch.Tensor,
        "uniform_ normal_ bernoulli_ random_ exponential_ geometric_ cauchy_ log_normal_",
    )
    | _functions(torch, "rand randn randint randperm bernoulli multinomial normal poisson")
)
#: random draws that cannot take a generator (they would draw from the global one).
_GLOBAL_ONLY = _functions(
    torch.nn.functional,
    "dropout dropout1d dropout2d dropout3d alpha_dropout feature_alpha_dropout",
) | _functions(torch, "rand_like randn_like randint_like")


class _GeneratorMode(TorchFunctionMode):
    """Route every random draw that names no generator to ``generator`` (this thread)."""

    def __init__(self, generator: torch.Generator) -> None:
        super().__init__()
        self.generator = generator

    def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: D105
        kwargs = dict(kwargs or {})
        if func in _RANDOM_FUNCTIONS and kwargs.get("generator") is None:
            kwargs["generator"] = self.generator
        elif func in _GLOBAL_ONLY:
            raise RuntimeError(
                f"{getattr(func, '__name__', func)} draws from torch's global generator; "
                "inside use_generator() draw with an explicit generator "
                "(a dropout mask: torch.bernoulli(p, generator=g))."
            )
        return func(*args, **kwargs)


@contextmanager
def use_generator(generator: torch.Generator) -> Iterator[torch.Generator]:
    """Draw every random number of the block from ``generator``, in this thread only.

    Inside the block a torch random function called without ``generator=`` (an
    ``nn.Linear`` constructor's ``kaiming_uniform_``, ``torch.randn``, ...) draws from
    ``generator`` instead of torch's global generator, which the block never touches;
    other threads are not affected (torch function modes are thread-local). A function
    that cannot take a generator (``F.dropout``, ``torch.rand_like``) raises
    ``RuntimeError``. Meant for building modules (a few calls); training loops pass
    their generator explicitly.

    Examples
    --------
    >>> g = torch_generator(0)
    >>> with use_generator(g):
    ...     layer = nn.Linear(3, 2)
    >>> torch.manual_seed(0) and None
    >>> torch.equal(layer.weight, nn.Linear(3, 2).weight)
    True
    """
    with _GeneratorMode(generator):
        yield generator


def _reset_linear(layer: nn.Linear, generator: torch.Generator) -> None:
    """``nn.Linear.reset_parameters`` with ``generator``: the same draws, in the same order."""
    nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=generator)
    if layer.bias is not None:
        fan_in = layer.weight.shape[1]
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
        nn.init.uniform_(layer.bias, -bound, bound, generator=generator)


def reset_parameters(module: nn.Module, generator: torch.Generator) -> nn.Module:
    """Re-initialize ``module``'s layers from ``generator``; return ``module``.

    Every submodule (in :meth:`~torch.nn.Module.modules` order) that defines
    ``reset_parameters`` runs it with its draws taken from ``generator``:
    ``nn.Linear`` as :meth:`torch.nn.Linear.reset_parameters` (``kaiming_uniform_``
    with ``a = sqrt(5)`` on the weight, ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))`` on the
    bias) with ``generator=``, any other layer inside :func:`use_generator`. For a module
    whose layers were constructed in registration order, the parameters equal those of
    a construction after ``torch.manual_seed(seed)`` when ``generator`` was seeded with
    ``seed``; torch's global generator is not used.
    """
    with torch.no_grad():
        for sub in module.modules():
            if isinstance(sub, nn.Linear):
                _reset_linear(sub, generator)
                continue
            reset = getattr(sub, "reset_parameters", None)
            if callable(reset):
                with use_generator(generator):
                    reset()
    return module
