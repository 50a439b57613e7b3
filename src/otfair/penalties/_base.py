"""The protocol of every fairness penalty, its linear-notion base and the penalty objects.

:class:`FairnessPenalty` maps the scores of one batch to its value: scores of shape (n,)
(one model: a 0-dim value) or a (K, n) block (K models of a stacked curve,
:class:`otfair.models.StackedMLP`: K values). Both trainers call :func:`penalty_values`.
A ``batchable`` penalty (Norm, GapReg, MDP, OTF, FairTorch) evaluates the block in one
call with the formula of one vector (``scores @ c`` is both) and keeps per-model state
per row (OTF's warm starts); others go row by row. :class:`LinearPenalty` is the base of
the linear-notion penalties. A :class:`PenaltyObject` holds a penalty's settings and
builds its torch penalty; :func:`as_penalty_object` resolves a name through
:data:`PENALTY_OBJECTS`. A fit enters this module and its penalty's own module only.
"""

from __future__ import annotations

import abc
import inspect
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, NamedTuple, cast

import torch
from torch import nn

from otfair.notions import LinearConstraints, Notion, as_notion
from otfair.penalties._checks import check_labels, check_scores
from otfair.utils import check_values


class PenaltyBatch(NamedTuple):
    """One batch as a penalty sees it (see :class:`FairnessPenalty` for the shapes)."""

    scores: torch.Tensor
    sensitive: torch.Tensor
    labels: torch.Tensor | None = None
    features: torch.Tensor | None = None


class FairnessPenalty(nn.Module, abc.ABC):
    """A fairness penalty: a non-negative, differentiable function of batch scores.

    The one protocol of every fairness loss in otfair. A penalty is called as
    ``penalty(scores, sensitive, labels=None, features=None)`` and returns a 0-dim
    tensor. Inputs are validated eagerly so that a malformed batch raises a
    ``ValueError`` naming the argument instead of a torch traceback; the training engine,
    which validated the whole training set once, calls the unchecked :meth:`value`.
    Both are template methods: a penalty implements :meth:`evaluate` on a
    :class:`PenaltyBatch` (and :meth:`evaluate_unchecked` when its bare formula is
    cheaper than the checked one); ``forward`` may still be overridden instead.

    Declared traits (class attributes, read by the training engine instead of
    ``isinstance`` branches; the table of ``docs/extending.md`` says what each does):

    - ``requires_labels``: the batch labels must be passed (label-conditioned notions);
    - ``requires_features``: the batch features must be passed (OTF's transport cost);
    - ``requires_pairs``: batches are matched group pairs (FTM): ``scores`` = the
      group-0 batch followed by its partners in group 1, in matched order;
    - ``requires_binary_groups``: ``sensitive`` is one binary attribute coded 0/1;
      otherwise several or continuous numeric columns (linear notions);
    - ``linear``: evaluated on a batch slice of the constraint matrix ``G`` by
      ``from_matrix(scores, G, features)`` (``G`` built once per fit from
      ``penalty.constraints``);
    - ``has_adversary``: owns parameters trained by their own optimizer on
      :meth:`adversary_loss` after each predictor step;
    - ``default_mixing``: ``"convex"`` (``(1 - alpha) CE + alpha R``, OTF paper Eq. 13)
      or ``"additive"`` (``CE + lambda R``, FTM paper Eq. 7), as in the penalty's paper;
    - ``batchable``: :meth:`value` of a (K, n) block of K models' scores is one batched
      evaluation of the single-vector formula, per-model state kept per row, so the K
      models of a curve share one instance (default ``False``: row by row);
    - ``keeps_batch_work``: keeps per-batch data work in the cache the engine passes for
      fixed batches (OTF: the class-reduced cost; ``fixed_batches="auto"`` fixes them).

    Penalties built from training-set statistics (the linear notions' ``G``) compute
    them in :meth:`fit`, called once per estimator fit; the default does nothing.

    Notes
    -----
    Shapes of the arguments of :meth:`forward`:

    - ``scores``: (n,) or (n, 1), probabilities of the positive class, in [0, 1];
    - ``sensitive``: (n,) or (n, k), group codes (0/1) for group-based penalties;
      numeric attributes (one-hot, binary or continuous) for linear-constraint penalties;
    - ``labels``: (n,), optional, binary labels, needed by equalized-odds notions;
    - ``features``: (n, d), optional, model inputs, needed by penalties with a transport
      cost in input space (OTF).
    """

    requires_labels: bool = False
    requires_features: bool = False
    requires_pairs: bool = False
    requires_binary_groups: bool = True
    linear: bool = False
    has_adversary: bool = False
    default_mixing: str = "additive"
    batchable: bool = False
    keeps_batch_work: bool = False

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
        """Validate the batch and return the penalty value (a 0-dim tensor, >= 0).

        The template of every penalty: the checks common to all (``scores`` finite
        probabilities, ``labels`` binary when ``requires_labels``) run here once,
        then :meth:`evaluate` computes the penalty on the checked :class:`PenaltyBatch`.
        A subclass implements :meth:`evaluate` (and optionally the unchecked fast path
        :meth:`evaluate_unchecked`); overriding ``forward`` itself still works.
        """
        scores = check_scores(scores)
        if self.requires_labels:
            labels = check_labels(labels, scores.shape[0])
        return self.evaluate(PenaltyBatch(scores, sensitive, labels, features))

    def evaluate(self, batch: PenaltyBatch) -> torch.Tensor:
        """Penalty of a batch whose scores (and labels) :meth:`forward` checked.

        Checks specific to the penalty (both groups present, constraint shapes) belong
        here and raise ``ValueError`` naming the argument.
        """
        raise NotImplementedError(
            f"{type(self).__name__} must implement `evaluate(batch)` or override `forward`."
        )

    def value(
        self,
        scores: torch.Tensor,
        sensitive: torch.Tensor,
        labels: torch.Tensor | None = None,
        features: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Penalty value *without* the input checks of :meth:`forward`.

        For training loops that validated the whole training set once per fit and
        guarantee well-formed batches (probabilities, both groups present): at ~2 ms
        steps the per-call checks (finite, range, group codes) cost several percent of a
        step. ``scores`` of shape (n,) give a 0-dim value; a (K, n) block (K models on
        this batch) gives K values: one :meth:`evaluate_unchecked` call on the block for
        a ``batchable`` penalty, otherwise one per row (:meth:`evaluate_rows`).
        """
        batch = PenaltyBatch(scores, sensitive, labels, features)
        if scores.dim() == 2 and not self.batchable:
            return self.evaluate_rows(batch)
        return self.evaluate_unchecked(batch)

    def evaluate_rows(self, batch: PenaltyBatch) -> torch.Tensor:
        """K values of a (K, n) block, one :meth:`evaluate_unchecked` call per row."""
        rows = [self.evaluate_unchecked(batch._replace(scores=h)) for h in batch.scores]
        return torch.stack(rows)

    def evaluate_unchecked(self, batch: PenaltyBatch) -> torch.Tensor:
        """Bare formula on a well-formed batch; the default validates (calls ``forward``).

        A (K, n) block (K models of a curve, a ``batchable`` penalty) goes to
        :meth:`evaluate` directly, whose formula serves both shapes (the engine checked
        the data once; ``forward``'s checks are for one score vector); a penalty that
        overrides ``forward`` only is evaluated row by row.
        """
        if batch.scores.dim() == 2:
            if type(self).evaluate is not FairnessPenalty.evaluate:
                return self.evaluate(batch)
            return self.evaluate_rows(batch)
        return self(batch.scores, batch.sensitive, batch.labels, batch.features)

    def adversary_loss(
        self,
        scores: torch.Tensor,
        sensitive: torch.Tensor,
        labels: torch.Tensor | None = None,
        *,
        checked: bool = True,
    ) -> torch.Tensor:
        """Loss of the penalty's own adversary (only when ``has_adversary``).

        What the adversary's optimizer minimizes after each predictor step, on detached
        scores (the adversary's step does not move the predictor): :meth:`evaluate_adversary`
        (``checked=False``, the engine's call: :meth:`evaluate_adversary_unchecked`).
        """
        if not self.has_adversary:
            raise NotImplementedError(f"{type(self).__name__} has no adversary.")
        batch = PenaltyBatch(scores.detach(), sensitive, labels)
        if checked:
            return self.evaluate_adversary(batch)
        return self.evaluate_adversary_unchecked(batch)

    def evaluate_adversary(self, batch: PenaltyBatch) -> torch.Tensor:
        """Adversary's loss on a batch with detached scores (penalties with an adversary)."""
        raise NotImplementedError(f"{type(self).__name__} has no adversary.")

    def evaluate_adversary_unchecked(self, batch: PenaltyBatch) -> torch.Tensor:
        """Adversary's loss on a well-formed batch (default: :meth:`evaluate_adversary`)."""
        return self.evaluate_adversary(batch)


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
    """Unchecked penalty value(s) of one batch: what both training loops call.

    Parameters
    ----------
    penalties : FairnessPenalty or sequence of FairnessPenalty
        The penalty, or one instance per model of a curve (all of one class, configured
        alike). A ``batchable`` penalty evaluates the whole block on the first instance
        (it keeps per-model state per row); otherwise instance ``k`` evaluates row ``k``
        (its own state: an adversary's parameters).
    scores : tensor of shape (n,) or (K, n)
        Probabilities of one model (0-dim result) or of K models (result of shape (K,)).
    sensitive, labels, features : tensors, optional
        The batch, as in :meth:`FairnessPenalty.value`.
    G : tensor of shape (d_F, n), optional
        The batch slice of the constraint matrix of a linear penalty: then
        ``from_matrix(scores, G, features)`` is called (``sensitive`` is unused).
    cache : dict, optional
        Kept by the caller for this batch across epochs (fixed batches): a linear
        penalty may store the batch's data work in it (OTF: the class-reduced cost).

    Returns
    -------
    torch.Tensor
        0-dim for ``scores`` (n,), shape (K,) for (K, n).
    """
    if isinstance(penalties, FairnessPenalty):  # one instance: the single fit's call
        first, own = penalties, None
    else:
        if not penalties:
            raise ValueError("`penalties` must hold at least one penalty.")
        kinds = {type(p) for p in penalties}
        if len(kinds) != 1:
            raise ValueError(
                f"`penalties` must be of one class; got {sorted(k.__name__ for k in kinds)}."
            )
        first, own = penalties[0], (penalties if len(penalties) > 1 else None)
    if scores.dim() not in (1, 2) or (
        own is not None and (scores.dim() != 2 or scores.shape[0] != len(own))
    ):
        n_rows = 1 if own is None else len(own)
        raise ValueError(
            f"`scores` must have shape (n,) or (K, n) with K = {n_rows} (one row per penalty "
            f"instance); got {tuple(scores.shape)}."
        )
    if scores.dim() == 2 and not first.batchable:
        own = own or [first] * scores.shape[0]
        pairs = zip(own, scores, strict=True)
        return torch.stack([_value(p, h, sensitive, labels, features, G, cache) for p, h in pairs])
    return _value(first, scores, sensitive, labels, features, G, cache)


def _value(
    penalty: FairnessPenalty,
    scores: torch.Tensor,
    sensitive: torch.Tensor | None,
    labels: torch.Tensor | None,
    features: torch.Tensor | None,
    G: torch.Tensor | None,
    cache: dict[Any, Any] | None,
) -> torch.Tensor:
    """One penalty's unchecked value: ``from_matrix`` on ``G`` (linear) or ``value``."""
    if G is not None and penalty.linear:
        linear = cast(LinearPenalty, penalty)  # the `linear` penalties are LinearPenalty
        if cache is None:
            return linear.from_matrix(scores, G, features)
        return linear.from_matrix(scores, G, features, cache=cache)
    assert sensitive is not None  # only the constraint matrix G stands in for it
    return penalty.value(scores, sensitive, labels, features)


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

    requires_binary_groups = False
    linear = True
    default_mixing = "convex"

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

    def evaluate(self, batch: PenaltyBatch) -> torch.Tensor:
        """Build the batch's ``G`` (d_F, n) and return :meth:`from_matrix`."""
        scores = batch.scores
        G = self.constraints.matrix(
            batch.sensitive, batch.labels, device=scores.device, dtype=scores.dtype
        )
        if G.shape[1] != scores.shape[0]:
            raise ValueError(
                f"`sensitive` has {G.shape[1]} rows but `scores` has {scores.shape[0]}."
            )
        return self.from_matrix(scores, G, batch.features)

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


class PenaltyObject:
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

    def matched_batches(self, X: Any, y: Any, groups: Any, batch_size: int) -> Any:
        """Return the pairings ``(P, 2, m)``, the group shares and the steps per epoch (FTM).

        Only an object whose penalty trains on matched batches (``requires_pairs``) has them.
        """
        raise ValueError(
            f"{type(self).__name__}({self.name!r}) builds a penalty that trains on matched "
            "batches (requires_pairs) but supplies none; use a penalty object with "
            "matched_batches (otfair.penalties.FTM)."
        )

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
