"""The one name table of fairness penalties: ``make_penalty`` and ``register_penalty``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from otfair.notions import Notion, as_notion
from otfair.penalties._base import FairnessPenalty

#: ``factory(notion: Notion, **options) -> FairnessPenalty``
PenaltyFactory = Callable[..., FairnessPenalty]

_FACTORIES: dict[str, PenaltyFactory] = {}


def register_penalty(name: str, factory: PenaltyFactory, *, replace: bool = False) -> None:
    """Make ``make_penalty(name, notion, **options)`` call ``factory(notion, **options)``.

    Parameters
    ----------
    name : str
        Penalty name (``FairClassifier(penalty=name)``); ``"none"`` is reserved.
    factory : callable
        ``factory(notion, **options)`` returning a :class:`FairnessPenalty`; it receives
        a :class:`otfair.notions.Notion` and should raise ``ValueError`` for a notion it
        does not support.
    replace : bool, default=False
        Allow replacing an existing entry (otherwise a second registration is an error).
    """
    if not isinstance(name, str) or not name or name == "none":
        raise ValueError(f"`name` must be a non-empty string other than 'none'; got {name!r}.")
    if not callable(factory):
        raise TypeError(f"`factory` must be callable; got {type(factory).__name__}.")
    if name in _FACTORIES and not replace and _FACTORIES[name] is not factory:
        raise ValueError(f"A penalty named {name!r} is already registered.")
    _FACTORIES[name] = factory


def list_penalties() -> list[str]:
    """Names of the registered penalties."""
    return sorted(_FACTORIES)


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
    penalty = factory(notion, **options)
    if not isinstance(penalty, FairnessPenalty):
        raise TypeError(
            f"The factory of penalty {name!r} returned {type(penalty).__name__}, not a "
            "FairnessPenalty."
        )
    if notion.requires_labels and not penalty.requires_labels:
        # a factory that ignores `notion` would silently train demographic parity
        raise ValueError(
            f"penalty {name!r} was asked for notion={notion.name!r}, but its factory built "
            f"{type(penalty).__name__}, which does not read the labels "
            "(requires_labels=False): it would train demographic parity. The factory "
            "must build a penalty for the notion or raise ValueError for it."
        )
    return penalty


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


def _register_builtins() -> None:
    from otfair.notions import LinearConstraints
    from otfair.penalties._adversary import AdversaryPenalty
    from otfair.penalties._barycenter import BarycenterPenalty
    from otfair.penalties._fairtorch import FairTorchDemographicParity
    from otfair.penalties._gap import GapPenalty
    from otfair.penalties._group_wasserstein import GroupWassersteinLoss
    from otfair.penalties._mdp import MatchedDemographicParity
    from otfair.penalties._norm import NormPenalty
    from otfair.penalties._otf import OTFPenalty

    def dp_only(cls: type[FairnessPenalty], hint: str = "") -> PenaltyFactory:
        def factory(notion: Notion, **options: Any) -> FairnessPenalty:
            if notion.requires_labels:  # DP is the one notion without label cells
                raise ValueError(
                    f"notion={notion.name!r} is not supported by this penalty (DP only){hint}."
                )
            return cls(**options)

        return factory

    def linear(cls: type[FairnessPenalty]) -> PenaltyFactory:
        return lambda notion, **options: cls(LinearConstraints(notion), **options)

    register_penalty("otf", linear(OTFPenalty))
    register_penalty("norm", linear(NormPenalty))
    register_penalty("barycenter", dp_only(BarycenterPenalty))
    register_penalty("gapreg", lambda notion, **options: GapPenalty(notion, **options))
    register_penalty("adv", lambda notion, **options: AdversaryPenalty(notion=notion, **options))
    register_penalty("group-w2", lambda notion, **options: GroupWassersteinLoss(notion, **options))
    register_penalty(
        "ftm", dp_only(MatchedDemographicParity, "; use matching='joint' to target EO")
    )
    register_penalty("fairtorch-dp", dp_only(FairTorchDemographicParity))


_register_builtins()
