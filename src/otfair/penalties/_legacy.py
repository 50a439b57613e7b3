"""The penalty protocol's names before the training plan, kept for one release.

:class:`LegacyEvaluation` (a base of :class:`~otfair.penalties.FairnessPenalty`) keeps
the evaluation methods and the traits that :class:`~otfair.penalties.TrainingPlan`,
:meth:`~otfair.penalties.FairnessPenalty.evaluate`,
:meth:`~otfair.penalties.FairnessPenalty.check` and
:meth:`~otfair.penalties.FairnessPenalty.adversary_objective` replace; each warns
(``FutureWarning``) and answers as before. A subclass that still declares a trait in its
class body has it translated into its plan (with the same warning). No fit enters this
module.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, cast

import torch

if TYPE_CHECKING:
    from otfair.penalties._base import FairnessPenalty, PenaltyBatch, TrainingPlan

#: the current protocol's classes, bound by the modules that define them
#: (:func:`bind`): this module imports none of them, so that they can import it
_BOUND: dict[str, Any] = {}


def bind(**classes: Any) -> None:
    """Give this module the classes the old names answer with (``PenaltyStack``, ...)."""
    _BOUND.update(classes)


#: the traits the plan replaced -> what the plan now says
_TRAITS = (
    "requires_pairs",
    "requires_binary_groups",
    "requires_features",
    "linear",
    "has_adversary",
    "default_mixing",
    "keeps_batch_work",
)


def _deprecated(old: str, new: str) -> None:
    warnings.warn(
        f"{old} is deprecated and will be removed in the next release; use {new}.",
        FutureWarning,
        stacklevel=3,
    )


def _plan_from_traits(plan: TrainingPlan, traits: dict[str, Any]) -> TrainingPlan:
    """Return the plan that a class body's old trait declarations describe."""
    changes: dict[str, Any] = {}
    if "default_mixing" in traits:
        changes["mixing"] = traits["default_mixing"]
    if traits.get("has_adversary"):
        changes.update(adversary=True, full_batch=False)
    if traits.get("keeps_batch_work"):
        changes.update(fixed_batches=True, full_batch=False)
    if traits.get("linear") or traits.get("requires_binary_groups") is False:
        changes["constraints"] = True
    if traits.get("requires_pairs"):
        changes.update(batches=_BOUND["MatchedBatches"](), full_batch=False)
    return dataclasses.replace(plan, **changes)


def _trait(name: str, new: str, read: Callable[[Any], Any]) -> Any:
    """Return a deprecated trait: a read-only property answering from the plan."""

    def get(self: Any) -> Any:
        _deprecated(f"`{type(self).__name__}.{name}`", f"`plan.{new}` (its TrainingPlan)")
        return read(self.plan)

    get.__doc__ = f"Deprecated: ``plan.{new}``."
    return property(get)


class LegacyEvaluation:
    """The deprecated evaluation methods and traits of a penalty (``FutureWarning``)."""

    plan: ClassVar[Any]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        declared = {k: cls.__dict__[k] for k in _TRAITS if k in cls.__dict__}
        declared = {k: v for k, v in declared.items() if not isinstance(v, property)}
        if not declared:
            return
        _deprecated(
            f"Declaring {', '.join(sorted(declared))} on {cls.__name__}",
            "a class attribute `plan = TrainingPlan(...)` (otfair.penalties.TrainingPlan)",
        )
        cls.plan = _plan_from_traits(cls.plan, declared)
        for key in declared:
            delattr(cls, key)

    # ---------------------------------------------------------------- the old traits
    requires_pairs = _trait(
        "requires_pairs", "batches is not None", lambda p: p.batches is not None
    )
    requires_binary_groups = _trait(
        "requires_binary_groups", "not constraints", lambda p: not p.constraints
    )
    requires_features = _trait("requires_features", "constraints", lambda p: p.constraints)
    linear = _trait("linear", "constraints", lambda p: p.constraints)
    has_adversary = _trait("has_adversary", "adversary", lambda p: p.adversary)
    default_mixing = _trait("default_mixing", "mixing", lambda p: p.mixing)
    keeps_batch_work = _trait("keeps_batch_work", "fixed_batches", lambda p: p.fixed_batches)

    # ---------------------------------------------------------------- the old methods
    def value(self, *batch: Any) -> torch.Tensor:
        """Return ``PenaltyStack(penalty).evaluate(PenaltyBatch(*batch))`` (deprecated).

        ``batch``: ``scores, sensitive, labels=None, features=None``, unchecked.
        """
        _deprecated("`value(...)`", "`evaluate(PenaltyBatch(...))` (unchecked) or the call")
        return _BOUND["PenaltyStack"](self._self()).evaluate(_BOUND["PenaltyBatch"](*batch))

    def evaluate_rows(self, batch: PenaltyBatch) -> torch.Tensor:
        """Return K values of a (K, n) block, one evaluation per row (deprecated)."""
        _deprecated("`evaluate_rows(batch)`", "`PenaltyStack(penalty).evaluate(batch)`")
        penalty = self._self()
        return torch.stack([penalty.evaluate(batch._replace(scores=h)) for h in batch.scores])

    def evaluate_unchecked(self, batch: PenaltyBatch) -> torch.Tensor:
        """Return :meth:`evaluate` (the formula on a well-formed batch) (deprecated)."""
        _deprecated("`evaluate_unchecked(batch)`", "`evaluate(batch)`")
        return self._self().evaluate(batch)

    def adversary_loss(
        self,
        scores: torch.Tensor,
        sensitive: torch.Tensor,
        labels: torch.Tensor | None = None,
        *,
        checked: bool = True,
    ) -> torch.Tensor:
        """Return :meth:`adversary_objective` of the (checked) batch (deprecated)."""
        _deprecated("`adversary_loss(...)`", "`adversary_objective(batch)`")
        penalty = self._self()
        if not penalty.plan.adversary:
            raise NotImplementedError(f"{type(self).__name__} has no adversary.")
        batch = _BOUND["PenaltyBatch"](scores.detach(), sensitive, labels)
        return penalty.adversary_objective(penalty.check(batch) if checked else batch)

    def evaluate_adversary(self, batch: PenaltyBatch) -> torch.Tensor:
        """Return :meth:`adversary_objective` of the checked batch (deprecated)."""
        _deprecated("`evaluate_adversary(batch)`", "`adversary_objective(check(batch))`")
        return self._self().adversary_objective(self._self().check(batch))

    def evaluate_adversary_unchecked(self, batch: PenaltyBatch) -> torch.Tensor:
        """Return :meth:`adversary_objective` (deprecated)."""
        _deprecated("`evaluate_adversary_unchecked(batch)`", "`adversary_objective(batch)`")
        return self._self().adversary_objective(batch)

    def _self(self) -> FairnessPenalty:
        return self  # type: ignore[return-value]  # the mixin of FairnessPenalty


def penalty_values(
    penalties: FairnessPenalty | Sequence[FairnessPenalty],
    scores: torch.Tensor,
    sensitive: torch.Tensor | None,
    labels: torch.Tensor | None = None,
    features: torch.Tensor | None = None,
    *,
    G: torch.Tensor | None = None,
    cache: dict[Any, Any] | None = None,
) -> torch.Tensor:
    """Return, deprecated, ``PenaltyStack(penalties).evaluate(PenaltyBatch(...))``.

    The unchecked value(s) of one batch: 0-dim for ``scores`` (n,), shape (K,) for a
    (K, n) block; ``G`` is the batch's constraint slice (``PenaltyBatch.constraints``).
    """
    _deprecated("`penalty_values(...)`", "`PenaltyStack(penalties).evaluate(PenaltyBatch(...))`")
    batch = _BOUND["PenaltyBatch"](scores, sensitive, labels, features, G, cache)
    return cast(torch.Tensor, _BOUND["PenaltyStack"](penalties).evaluate(batch))
