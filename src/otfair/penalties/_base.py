"""The protocol of every fairness penalty, its training plan and the penalty objects.

A :class:`FairnessPenalty` is evaluated by one call: ``penalty(scores, sensitive,
labels=None, features=None)`` checks the batch (:meth:`~FairnessPenalty.check`) and
returns :meth:`~FairnessPenalty.evaluate` of it; the training engine, which validated
the training set once, calls :meth:`~FairnessPenalty.evaluate` itself. A penalty with
an adversary adds :meth:`~FairnessPenalty.adversary_objective`. Everything else its
training needs (how batches are drawn, how the penalty joins the cross-entropy, whether
a full-batch solver suits its cost, the adversary's step) is its :class:`TrainingPlan`,
which the penalty object hands to the estimator (:meth:`PenaltyObject.training_plan`):
the estimator reads the plan, never a penalty's trait or name. :class:`PenaltyStack`
evaluates the K penalties of a stacked curve on a (K, n) block of scores.
:class:`LinearPenalty` is the base of the linear-notion penalties. A
:class:`PenaltyObject` holds a penalty's settings, its default strength grids and
builds its torch penalty; :func:`as_penalty_object` resolves a name through
:data:`PENALTY_OBJECTS`. A fit enters this module and its penalty's own module only.
"""

from __future__ import annotations

import abc
import dataclasses
import inspect
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, NamedTuple

import torch
from torch import nn

from otfair.notions import LinearConstraints, Notion, as_notion
from otfair.penalties._checks import check_labels, check_scores
from otfair.penalties._legacy import LegacyEvaluation, bind
from otfair.penalties._plan import BatchScheme, FixedBatchPenalty, StrengthGrids
from otfair.utils import check_values


class PenaltyBatch(NamedTuple):
    """One batch as a penalty sees it (see :class:`FairnessPenalty` for the shapes).

    ``constraints`` is the batch's slice (d_F, n) of the training set's constraint
    matrix ``G`` (linear penalties; built from ``sensitive`` when absent) and ``cache``
    a dict the engine keeps for this batch across epochs (fixed batches), where a
    penalty may store the batch's data work (OTF's class-reduced cost).
    """

    scores: torch.Tensor
    sensitive: torch.Tensor  # (a constraint penalty reads ``constraints`` instead)
    labels: torch.Tensor | None = None
    features: torch.Tensor | None = None
    constraints: torch.Tensor | None = None
    cache: dict[Any, Any] | None = None


@dataclasses.dataclass(frozen=True)
class TrainingPlan:
    """Everything the training of one penalty needs, as its penalty object hands it over.

    Attributes
    ----------
    mixing : {"additive", "convex"}
        How the penalty joins the cross-entropy under ``mixing="auto"``: ``"convex"``
        ``(1 - a) CE + a R`` (OTF paper Eq. 13) or ``"additive"`` ``CE + a R`` (FTM paper
        Eq. 7), as in the penalty's paper.
    full_batch : bool
        Whether its cost suits a full-batch quasi-Newton solver (``solver="auto"`` picks
        L-BFGS for the logistic model); ``False`` for OTF, whose class-reduced cost is
        quadratic in the rows and cheap on batches only.
    fixed_batches : bool
        ``fixed_batches="auto"``: keep the first epoch's batches (the penalty keeps
        per-batch data work in their caches: OTF).
    constraints : bool
        The batch's ``sensitive`` is the notion's constraint matrix ``G`` (built once per
        fit, sliced per batch) and its ``features`` the model inputs (linear penalties);
        otherwise the 0/1 codes of two groups.
    batches : BatchScheme or None
        The penalty's own batches (FTM's matched pairs); ``None``: the engine's
        stratified batches. A penalty with its own batches needs the groups at any
        strength and is refused by L-BFGS.
    adversary : bool
        The penalty has an adversary, trained by its own Adam on
        :meth:`FairnessPenalty.adversary_objective` after each model step (refused by
        L-BFGS).
    adversary_lr : float or None
        The adversary's learning rate (``None``: the classifier's).
    kink_at_constant : bool
        Not differentiable where every group's mean score is equal (Norm, Barycenter),
        the logistic L-BFGS start: that fit starts at the unpenalized minimum instead.
    """

    mixing: str = "additive"
    full_batch: bool = True
    fixed_batches: bool = False
    constraints: bool = False
    batches: BatchScheme | None = None
    adversary: bool = False
    adversary_lr: float | None = None
    kink_at_constant: bool = False

    def needs_batches(self) -> str | None:
        """Why the penalty cannot train on the full batch (``None``: it can)."""
        if self.batches is not None:
            return "its own batches (matched pairs)"
        return "an adversary" if self.adversary else None


class FairnessPenalty(LegacyEvaluation, nn.Module, abc.ABC):
    """A fairness penalty: a non-negative, differentiable function of batch scores.

    The one protocol of every fairness loss in otfair, in two methods and a call:

    - :meth:`evaluate` (``batch`` -> value): the penalty's formula on a well-formed
      :class:`PenaltyBatch` (what the training engine calls: it validated the training
      set once);
    - :meth:`check` (``batch`` -> batch): the batch's checks, raising ``ValueError``
      naming the argument instead of a torch traceback (default: ``scores`` finite
      probabilities, ``labels`` binary when ``requires_labels``);
    - ``penalty(scores, sensitive, labels=None, features=None)`` returns
      ``evaluate(check(batch))``: a 0-dim tensor.

    A penalty with an adversary adds :meth:`adversary_objective`; what its training needs is
    its :class:`TrainingPlan` (``plan``). Traits on the penalty: ``requires_labels``,
    ``batchable`` (:meth:`evaluate` of a (K, n) block in one call, per-model state per row;
    else :class:`PenaltyStack`, row by row) and ``draws`` (default ``True``: training routes
    draws to the fit's generator, ``otfair.utils._random.use_generator``, a dispatch on
    every torch call; ``False``: a penalty that never draws trains without it).

    Penalties built from training-set statistics (the linear notions' ``G``) compute
    them in :meth:`fit`, called once per estimator fit; the default does nothing.

    Notes
    -----
    Shapes of the arguments of the call:

    - ``scores``: (n,) or (n, 1), probabilities of the positive class, in [0, 1];
    - ``sensitive``: (n,) or (n, k), group codes (0/1) for group-based penalties;
      numeric attributes (one-hot, binary or continuous) for linear-constraint penalties;
    - ``labels``: (n,), optional, binary labels, needed by equalized-odds notions;
    - ``features``: (n, d), optional, model inputs, needed by penalties with a transport
      cost in input space (OTF).
    """

    requires_labels: bool = False
    batchable: bool = False
    draws: bool = True
    plan: ClassVar[TrainingPlan] = TrainingPlan()

    def fit(self, sensitive: Any, labels: Any = None) -> FairnessPenalty:
        """Fit training-set statistics (default: nothing to fit); returns ``self``."""
        return self

    def forward(
        self,
        scores: torch.Tensor,
        sensitive: torch.Tensor,
        labels: torch.Tensor | None = None,
        features: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Check the batch and return the penalty value (a 0-dim tensor, >= 0)."""
        return self.evaluate(self.check(PenaltyBatch(scores, sensitive, labels, features)))

    def check(self, batch: PenaltyBatch) -> PenaltyBatch:
        """Return the checked batch (``ValueError`` naming a malformed argument).

        The checks common to all penalties: ``scores`` finite probabilities, ``labels``
        binary when ``requires_labels``. A penalty adds its own (both groups present,
        constraint shapes) and may normalize the batch (group codes).
        """
        scores = check_scores(batch.scores)
        labels = check_labels(batch.labels, scores.shape[0]) if self.requires_labels else None
        return batch._replace(scores=scores, labels=labels if labels is not None else batch.labels)

    def evaluate(self, batch: PenaltyBatch) -> torch.Tensor:
        """Return the penalty of a well-formed batch: 0-dim for (n,) scores, (K,) for a block.

        A penalty that overrides ``forward`` only (the protocol before this one) is
        evaluated through it, row by row.
        """
        if type(self).forward is FairnessPenalty.forward:
            raise NotImplementedError(f"{type(self).__name__} must implement `evaluate(batch)`.")
        rows = [batch.scores] if batch.scores.dim() == 1 else list(batch.scores)
        args = (batch.sensitive, batch.labels, batch.features)
        values = torch.stack([self(h, *args) for h in rows])
        return values[0] if batch.scores.dim() == 1 else values

    def adversary_objective(self, batch: PenaltyBatch) -> torch.Tensor:
        """Return the loss the penalty's adversary minimizes, on a batch of detached scores.

        Only a penalty whose plan has an ``adversary``; the engine steps the adversary's
        own optimizer on it after each model step.
        """
        raise NotImplementedError(f"{type(self).__name__} has no adversary.")

    def full_batch_variant(self) -> FairnessPenalty:
        """Return the penalty L-BFGS minimizes: ``self``, or a smoothed copy (Norm)."""
        return self

    def fixed_batch_objective(
        self, features: torch.Tensor, G: torch.Tensor, batches: Sequence[Any]
    ) -> FixedBatchPenalty | None:
        r"""Return the penalty averaged over fixed batches as one function, or None.

        :math:`\frac1B \sum_b R(h_b)` over the training rows' ``batches`` (row indices;
        a batch missing a group adds nothing), with its gradient in the scores, for a
        full-batch quasi-Newton solver when the penalty's plan is not ``full_batch``
        (its work is per batch). ``features`` (n, d) and ``G`` (d_F, n) are the
        training set's inputs and constraint matrix. ``None`` (the default): not
        offered for this data; the estimator trains with Adam on the batches.
        """
        return None


class PenaltyStack:
    """The penalties of K stacked models, evaluated as one (both trainers' call).

    ``penalties``: one instance per model of a curve (all of one class, configured
    alike), or one instance for all. A ``batchable`` penalty evaluates a (K, n) block of
    scores on the first instance (it keeps per-model state per row); otherwise instance
    ``k`` evaluates row ``k`` (its own state: an adversary's parameters).
    """

    def __init__(self, penalties: FairnessPenalty | Sequence[FairnessPenalty]) -> None:
        if isinstance(penalties, FairnessPenalty):
            penalties = [penalties]
        if not penalties:
            raise ValueError("`penalties` must hold at least one penalty.")
        kinds = {type(p) for p in penalties}
        if len(kinds) != 1:
            raise ValueError(
                f"`penalties` must be of one class; got {sorted(k.__name__ for k in kinds)}."
            )
        self.penalties = list(penalties)

    def _rows(self, scores: torch.Tensor) -> list[FairnessPenalty]:
        own = self.penalties
        if scores.dim() not in (1, 2) or (
            len(own) > 1 and (scores.dim() != 2 or scores.shape[0] != len(own))
        ):
            raise ValueError(
                f"`scores` must have shape (n,) or (K, n) with K = {len(own)} (one row per "
                f"penalty instance); got {tuple(scores.shape)}."
            )
        return own if len(own) > 1 else own * (1 if scores.dim() == 1 else scores.shape[0])

    def evaluate(self, batch: PenaltyBatch) -> torch.Tensor:
        """Unchecked value(s): 0-dim for (n,) scores, shape (K,) for a (K, n) block."""
        scores = batch.scores
        rows = self._rows(scores)
        if scores.dim() == 1 or rows[0].batchable:
            return rows[0].evaluate(batch)
        pairs = zip(rows, scores, strict=True)
        return torch.stack([p.evaluate(batch._replace(scores=h)) for p, h in pairs])

    def adversary_objective(self, batch: PenaltyBatch) -> torch.Tensor:
        """Return the adversaries' summed losses on detached scores (nothing couples them)."""
        scores = batch.scores.detach()
        rows = [scores] if scores.dim() == 1 else list(scores)
        pairs = zip(self._rows(scores), rows, strict=True)
        losses = [p.adversary_objective(batch._replace(scores=h)) for p, h in pairs]
        return torch.stack(losses).sum() if len(losses) > 1 else losses[0]

    def parameters(self) -> list[nn.Parameter]:
        """Return the parameters of every instance (an adversary's)."""
        return [p for penalty in self.penalties for p in penalty.parameters()]


bind(PenaltyBatch=PenaltyBatch, PenaltyStack=PenaltyStack)


class LinearPenalty(FairnessPenalty):
    r"""A penalty of the batch scores through the linear constraint matrix ``G``.

    Linear fairness notions (OTF paper §3.1, Def. 1) are the rows of
    :math:`G \in \mathbb R^{d_F \times n}` with :math:`G\mathbf h = 0` for a fair score
    vector :math:`\mathbf h`. The training engine slices ``G`` of the whole training set
    once per batch and calls :meth:`from_matrix`; called directly, the penalty builds
    ``G`` of the batch from the sensitive attributes (and labels for PEO). The built-in
    linear penalties are ``batchable``: :meth:`from_matrix` takes scores of shape (n,)
    or a (K, n) block of K models (one slice ``G`` serves all of them).

    Parameters
    ----------
    constraints : LinearConstraints
        A constraint builder (PDP or PEO; binary, several or continuous attributes),
        fitted on the training set by :meth:`fit` unless already fitted.
    """

    plan = TrainingPlan(mixing="convex", constraints=True)

    def __init__(self, constraints: LinearConstraints) -> None:
        super().__init__()
        if not isinstance(constraints, LinearConstraints):
            raise TypeError(
                f"`constraints` must be a LinearConstraints; got {type(constraints).__name__}."
            )
        self.constraints = constraints
        self.notion = constraints.notion_
        self.requires_labels = constraints.requires_labels

    def fit(self, sensitive: Any, labels: Any = None) -> FairnessPenalty:
        """Fit the constraint rows' expectations on the training set (unless fitted)."""
        if not hasattr(self.constraints, "rows_"):
            self.constraints.fit(sensitive, labels)
        return self

    def check(self, batch: PenaltyBatch) -> PenaltyBatch:
        """Check the batch and build its ``G`` (d_F, n) from the sensitive attributes."""
        batch = super().check(batch)
        scores = batch.scores
        G = self.constraints.matrix(
            batch.sensitive, batch.labels, device=scores.device, dtype=scores.dtype
        )
        if G.shape[1] != scores.shape[0]:
            raise ValueError(
                f"`sensitive` has {G.shape[1]} rows but `scores` has {scores.shape[0]}."
            )
        return batch._replace(constraints=G)

    def matrix(self, sensitive: Any, labels: Any, device: Any = None) -> torch.Tensor:
        """Return the constraint matrix ``G`` (d_F, n) of the fitted notion on these rows.

        What the training slices per batch (its plan has ``constraints``).
        """
        return self.constraints.matrix(sensitive, labels, device=device)

    def evaluate(self, batch: PenaltyBatch) -> torch.Tensor:
        """:meth:`from_matrix` of the batch's ``G`` (built from ``sensitive`` when absent)."""
        G = batch.constraints
        if G is None:
            G = self.check(batch).constraints
            assert G is not None  # check builds it
        if batch.cache is None:
            return self.from_matrix(batch.scores, G, batch.features)
        return self.from_matrix(batch.scores, G, batch.features, cache=batch.cache)

    @abc.abstractmethod
    def from_matrix(
        self,
        scores: torch.Tensor,
        G: torch.Tensor,
        features: torch.Tensor | None = None,
        cache: dict | None = None,
    ) -> torch.Tensor:
        """Penalty for a precomputed constraint matrix ``G`` (d_F, n) of the batch.

        ``scores`` (n,) gives a 0-dim value, a (K, n) block (``batchable`` penalties)
        K values. ``cache`` is a dict the caller keeps for this batch across epochs
        (fixed batches), where the penalty may store the batch's data work.
        """


class PenaltyObject(StrengthGrids):
    """A penalty's settings, cloneable: what ``FairClassifier(penalty=...)`` takes.

    Like fairlearn's ``constraints=`` objects, it holds nothing of the data: each fit
    calls :meth:`build` for the estimator's notion, so the object is never changed by a
    fit. A subclass declares ``name`` (its registered name), its settings as keyword
    parameters of ``__init__`` stored under the same names (scikit-learn's convention:
    :func:`sklearn.base.clone` copies it, ``set_params(penalty__eps=...)`` reaches it),
    ``notions`` (the notions it serves; ``None``: all) and :meth:`make`, which builds its
    torch penalty. ``training_settings`` are read by the training itself (FTM's
    matching, the adversary's learning rate), the others are the penalty's options.
    ``register_penalty(MyObject)`` makes ``name`` a penalty name.
    """

    name: ClassVar[str] = ""
    #: the notions the penalty serves (``None``: every notion);
    #: :meth:`~otfair.penalties.PenaltyObject.build` refuses others
    notions: ClassVar[tuple[str, ...] | None] = None
    #: appended to the refusal of a notion (a hint at what serves it)
    notion_hint: ClassVar[str] = ""
    #: settings the training reads itself (not options of the penalty)
    training_settings: ClassVar[tuple[str, ...]] = ()
    #: the settings' constraints (scikit-learn's format), checked by :meth:`check`
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {}

    @classmethod
    def _param_names(cls) -> list[str]:
        params = inspect.signature(cls.__init__).parameters
        kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        return [p.name for p in params.values() if p.name != "self" and p.kind in kinds]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Return the settings (the constructor's parameters) by name."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params: Any) -> PenaltyObject:
        """Set settings by name (``ValueError`` naming an unknown one); return ``self``."""
        valid = self._param_names()
        for key, value in params.items():
            if key not in valid:
                raise ValueError(
                    f"Invalid parameter {key!r} for {type(self).__name__}; valid parameters "
                    f"are {valid}."
                )
            setattr(self, key, value)
        return self

    def factory_options(self) -> dict[str, Any]:
        """Return the penalty's options: the settings but the ``training_settings``."""
        params = self.get_params()
        return {k: v for k, v in params.items() if k not in self.training_settings}

    def check(self) -> PenaltyObject:
        """Check the settings against ``_parameter_constraints``; return ``self``."""
        check_values(self._parameter_constraints, self.get_params(), caller=type(self).__name__)
        return self

    def adversary_lr(self, default: float) -> float:
        """Learning rate of the penalty's adversary (default: the classifier's, ``default``)."""
        return float(default)

    def training_plan(self, penalty: FairnessPenalty) -> TrainingPlan:
        """Return the plan of training ``penalty`` (built by this object): its class's.

        An object whose settings shape the training adds them (FTM: its matched
        batches; Adversary: its learning rate).
        """
        return penalty.plan

    def make(self, notion: Notion) -> FairnessPenalty:
        """Return the torch penalty for ``notion`` (one :meth:`build` checked it serves it)."""
        raise NotImplementedError(f"{type(self).__name__} must implement `make(notion)`.")

    def build(self, notion: str | Notion = "dp") -> FairnessPenalty:
        """Return a new (unfitted) penalty for ``notion``.

        Raises
        ------
        ValueError
            For a notion the penalty does not serve, or an invalid setting.
        """
        notion = as_notion(notion)
        if self.notions is not None and notion.name not in self.notions:
            served = ", ".join(n.upper() for n in self.notions)
            raise ValueError(
                f"notion={notion.name!r} is not supported by this penalty ({served} only)"
                f"{self.notion_hint}."
            )
        return checked_penalty(self.name, notion, self.make(notion))

    @classmethod
    def factory(cls, notion: str | Notion = "dp", **options: Any) -> FairnessPenalty:
        """``cls(**options).build(notion)``: the object as a name's factory (``make_penalty``)."""
        return cls(**options).build(notion)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.get_params() == self.get_params()

    def __hash__(self) -> int:
        return hash((type(self).__name__, repr(self)))


#: every penalty name -> its object's maker, what a fit resolves a name with: the object
#: class (``register_penalty(TheObject)``) or ``Penalty(name)`` for a factory's name
PENALTY_OBJECTS: dict[str, Callable[[], PenaltyObject]] = {}


def checked_penalty(name: str, notion: Notion, penalty: Any) -> FairnessPenalty:
    """Return ``penalty`` built for ``notion``, refusing one that ignores its label cells."""
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


def as_penalty_object(penalty: str | PenaltyObject, name: str = "penalty") -> PenaltyObject:
    """Return the penalty object of ``penalty`` (a registered name or an object).

    A name of a penalty object gives it with the default settings (``"otf"`` ->
    ``OTF()``); a name registered with a factory gives ``Penalty(name)``.

    Raises
    ------
    ValueError
        For an unknown name (listing the registered ones) or another type, naming the
        argument ``name``.
    """
    if isinstance(penalty, PenaltyObject):
        return penalty
    if isinstance(penalty, str) and penalty in PENALTY_OBJECTS:
        return PENALTY_OBJECTS[penalty]()
    raise ValueError(
        f"`{name}` must be 'none', a penalty object (otfair.penalties.OTF(), FTM(), ...) or "
        f"one of {', '.join(sorted(PENALTY_OBJECTS))}; got {penalty!r}."
    )
