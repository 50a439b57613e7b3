"""The penalty names: ``register_penalty``, ``make_penalty``, ``list_penalties``.

A name is a :class:`~otfair.penalties.PenaltyObject` subclass (the built-ins:
``register_penalty(OTF)``) or a plug-in's factory (``register_penalty("name", factory)``,
reached through the generic :class:`Penalty`). Each name's object maker is kept in
:data:`otfair.penalties._base.PENALTY_OBJECTS`, which a fit reads without entering this
module; the factories of :func:`make_penalty` are kept here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ClassVar

from otfair.notions import Notion, as_notion
from otfair.penalties import _base
from otfair.penalties._base import FairnessPenalty, PenaltyObject, checked_penalty
from otfair.utils import validate_params

#: ``factory(notion: Notion, **options) -> FairnessPenalty``
PenaltyFactory = Callable[..., FairnessPenalty]

_FACTORIES: dict[str, PenaltyFactory] = {}


def register_penalty(
    name: str | type[PenaltyObject],
    factory: PenaltyFactory | None = None,
    *,
    replace: bool = False,
) -> None:
    """Add a penalty name: a penalty object class, or a name and its factory.

    ``register_penalty(MyPenalty)`` (a :class:`~otfair.penalties.PenaltyObject`
    subclass) makes ``MyPenalty.name`` resolve to ``MyPenalty()`` in
    ``FairClassifier(penalty=name)`` and ``make_penalty(name, notion, **options)`` build
    ``MyPenalty(**options).build(notion)``. ``register_penalty(name, factory)`` makes
    ``make_penalty(name, notion, **options)`` call ``factory(notion, **options)`` (and
    ``penalty=name`` mean ``Penalty(name)``).

    Parameters
    ----------
    name : str or PenaltyObject subclass
        Penalty name (``FairClassifier(penalty=name)``; ``"none"`` is reserved), or a
        penalty object class (its ``name``; then no ``factory``).
    factory : callable, optional
        ``factory(notion, **options)`` returning a :class:`FairnessPenalty`; it receives
        a :class:`otfair.notions.Notion` and should raise ``ValueError`` for a notion it
        does not support.
    replace : bool, default=False
        Allow replacing an existing entry (otherwise a second registration is an error).
    """
    obj = None
    if isinstance(name, type) and issubclass(name, PenaltyObject):
        if factory is not None:
            raise TypeError("Pass a PenaltyObject subclass alone, or a name and a factory.")
        obj = name
        name, factory = obj.name, obj.factory
    if not isinstance(name, str) or not name or name == "none":
        raise ValueError(f"`name` must be a non-empty string other than 'none'; got {name!r}.")
    if not callable(factory):
        raise TypeError(f"`factory` must be callable; got {type(factory).__name__}.")
    if name in _FACTORIES and not replace and _FACTORIES[name] != factory:
        raise ValueError(f"A penalty named {name!r} is already registered.")
    _FACTORIES[name] = factory
    _base.PENALTY_OBJECTS[name] = obj if obj is not None else functools.partial(Penalty, name)


def list_penalties() -> list[str]:
    """Names of the registered penalties."""
    return sorted(_FACTORIES)


@validate_params({"name": [str], "notion": [str, Notion]})
def make_penalty(name: str, notion: str | Notion = "dp", **options: Any) -> FairnessPenalty:
    """Build the penalty registered as ``name`` for ``notion``.

    Penalties needing training-set statistics (linear notions) are returned unfitted;
    the estimator calls their :meth:`~FairnessPenalty.fit` once per fit.

    Raises
    ------
    ValueError
        For an unknown name (listing the registered ones), a notion the penalty does
        not support, or a factory that ignores a notion with label cells (it returned a
        penalty that does not read the labels).

    Examples
    --------
    >>> make_penalty("gapreg", "eo").requires_labels
    True
    """
    try:
        factory = _FACTORIES[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"Unknown penalty {name!r}. Registered penalties: {', '.join(list_penalties())}."
        ) from None
    notion = as_notion(notion)
    return checked_penalty(name, notion, factory(notion, **options))


def penalty_notions(name: str, **options: Any) -> tuple[str, ...]:
    """Names of the notions penalty ``name`` supports, in :data:`otfair.notions.NOTIONS` order.

    Derived from the penalty itself: a notion is supported when its factory builds a
    penalty for it (``make_penalty(name, notion, **options)``) and unsupported when the
    factory raises ``ValueError``. The method registry reads its notions from here, so
    ``otfair fit --notion`` and ``FairClassifier(notion=...)`` cannot disagree.

    Examples
    --------
    >>> penalty_notions("gapreg"), penalty_notions("ftm")
    (('dp', 'eopp', 'eo'), ('dp',))
    """
    from otfair.notions import NOTIONS

    supported = []
    for notion in NOTIONS:
        try:
            make_penalty(name, notion, **options)
        except ValueError as exc:
            if str(exc).startswith("Unknown penalty"):
                raise
            continue
        supported.append(notion)
    return tuple(supported)


class Penalty(PenaltyObject):
    """Any registered penalty by name, with its factory's options (``register_penalty``).

    Parameters
    ----------
    name : str
        A name of :func:`~otfair.penalties.list_penalties`.
    options : dict, optional
        Keyword options of its factory.
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "name": [str],
        "options": [None, dict],
    }

    def __init__(self, name: str, options: dict[str, Any] | None = None) -> None:
        self.name = name  # type: ignore[misc]  # an instance's name, not the class's
        self.options = options

    def factory_options(self) -> dict[str, Any]:
        """Return ``options`` (the factory's keyword options)."""
        return dict(self.options or {})

    def build(self, notion: str | Notion = "dp") -> FairnessPenalty:
        """Return ``make_penalty(name, notion, **options)``."""
        return make_penalty(self.name, notion, **self.factory_options())


def _register_builtins() -> None:
    from otfair.penalties._adversary import Adversary
    from otfair.penalties._barycenter import Barycenter
    from otfair.penalties._fairtorch import FairTorchDP
    from otfair.penalties._ftm import FTM
    from otfair.penalties._gap import GapReg
    from otfair.penalties._group_wasserstein import GroupWassersteinLoss
    from otfair.penalties._norm import Norm
    from otfair.penalties._otf import OTF

    for obj in (OTF, Norm, Barycenter, GapReg, Adversary, FTM, FairTorchDP):
        register_penalty(obj)
    register_penalty("group-w2", lambda notion, **options: GroupWassersteinLoss(notion, **options))


_register_builtins()
