r"""Penalty objects: what ``FairClassifier(penalty=...)`` takes.

A penalty object holds a fairness penalty's own settings and nothing of the data, like
fairlearn's ``constraints=`` objects: ``FairClassifier(penalty=OTF(eps=1e-3),
notion="eo")``. Each fit builds a fresh :class:`~otfair.penalties.FairnessPenalty` from
it for the estimator's notion (:meth:`PenaltyObject.build`), so the object passed in is
never changed by a fit. Penalty objects follow scikit-learn's parameter protocol
(``get_params`` / ``set_params`` read the constructor's signature), so
:func:`sklearn.base.clone` copies them and ``FairClassifier.set_params(penalty__eps=...)``
reaches into them; the names of :func:`~otfair.penalties.make_penalty` are still
accepted (``penalty="otf"`` is ``penalty=OTF()``, :func:`as_penalty_object`).

What each penalty computes is documented on its torch class; the objects here carry:

==================  ===============================  ====================================
object              penalty (name)                   settings
==================  ===============================  ====================================
:class:`OTF`        :class:`OTFPenalty` ("otf")      ``eps``, ``max_iter``, ``tol``,
                                                     ``warm_start`` (OTF paper §3.2)
:class:`Norm`       :class:`NormPenalty` ("norm")    none
:class:`Barycenter` :class:`BarycenterPenalty`       none
                    ("barycenter")
:class:`GapReg`     :class:`GapPenalty` ("gapreg")   none
:class:`Adversary`  :class:`AdversaryPenalty`        ``hidden``, ``lr`` (the adversary's
                    ("adv")                          Adam learning rate)
:class:`FTM`        :class:`MatchedDemographicParity`  ``matching``, ``label_weight``,
                    ("ftm")                          ``group_batch_size``,
                                                     ``n_pairing_rounds``,
                                                     ``matching_seed``, ``cache_dir``
                                                     (FTM paper §4.3, App. D)
:class:`FairTorchDP` :class:`FairTorchDemographicParity`  ``rows``
                    ("fairtorch-dp")
:class:`Penalty`    any registered name              ``options`` of its factory
==================  ===============================  ====================================
"""

from __future__ import annotations

import inspect
import math
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from otfair.notions import Notion
from otfair.penalties._base import FairnessPenalty
from otfair.penalties._registry import list_penalties, make_penalty
from otfair.utils import check_positive_int, check_scalar

#: the public names (re-exported by :mod:`otfair.penalties`)
__all__ = ["FTM", "OTF", "Adversary", "Barycenter", "FairTorchDP", "GapReg", "Norm"]
__all__ += ["Penalty", "PenaltyObject", "as_penalty_object"]


class PenaltyObject:
    """Base of the penalty objects: a registered penalty's settings, cloneable.

    Subclasses declare ``name`` (the :func:`~otfair.penalties.make_penalty` name) and
    their settings as keyword parameters of ``__init__`` stored under the same names
    (scikit-learn's convention). :meth:`factory_options` are the settings handed to the
    penalty's factory; the others (FTM's matching, the adversary's learning rate) are
    read by the training.
    """

    name: ClassVar[str] = ""
    #: settings the training reads itself (not passed to the penalty's factory)
    training_settings: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def _param_names(cls) -> list[str]:
        params = inspect.signature(cls.__init__).parameters
        return [
            p.name
            for p in params.values()
            if p.name != "self" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        ]

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
        """Return the keyword options of the penalty's factory (``make_penalty``)."""
        params = self.get_params()
        return {k: v for k, v in params.items() if k not in self.training_settings}

    def check(self) -> PenaltyObject:
        """Check the settings the training reads itself (default: none); return ``self``."""
        return self

    def adversary_lr(self, default: float) -> float:
        """Learning rate of the penalty's adversary (default: the classifier's, ``default``)."""
        return float(default)

    def matched_batches(
        self, X: np.ndarray, y: np.ndarray, groups: np.ndarray, batch_size: int
    ) -> tuple[np.ndarray, tuple[float, float], int]:
        """Return the matched group batches of a ``requires_pairs`` penalty (FTM).

        Returns the pairings ``(P, 2, m)``, the groups' shares of the training set and
        the steps per epoch. Only a penalty object whose penalty trains on matched
        batches supplies them.
        """
        raise ValueError(
            f"{type(self).__name__}({self.name!r}) builds a penalty that trains on matched "
            "batches (requires_pairs) but supplies none; use a penalty object with "
            "matched_batches (otfair.penalties.FTM)."
        )

    def build(self, notion: str | Notion = "dp") -> FairnessPenalty:
        """Return a new (unfitted) penalty for ``notion``.

        Raises
        ------
        ValueError
            For a notion the penalty does not support, or an invalid setting.
        """
        return make_penalty(self.name, notion, **self.factory_options())

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.get_params() == self.get_params()

    def __hash__(self) -> int:
        return hash((type(self).__name__, repr(self)))


class OTF(PenaltyObject):
    r"""Adjusted optimal transport to fairness, :math:`\mathrm{OTF}^0_\varepsilon` (OTF paper §3).

    Parameters
    ----------
    eps : float, default=1e-3
        Entropic smoothing :math:`\varepsilon` (OTF paper §3.2), for costs scaled as in
        :class:`~otfair.penalties.OTFPenalty`.
    max_iter : int, default=20
        Newton iterations of the semi-dual solve per batch.
    warm_start : bool, default=True
        Start each batch's solve from the previous batch's duals.
    tol : float, default=1e-4
        Relative tolerance of the solve.
    """

    name = "otf"

    def __init__(
        self, eps: float = 1e-3, *, max_iter: int = 20, warm_start: bool = True, tol: float = 1e-4
    ) -> None:
        self.eps = eps
        self.max_iter = max_iter
        self.warm_start = warm_start
        self.tol = tol


class Norm(PenaltyObject):
    r"""L1 norm of the linear constraints, :math:`\lVert G h\rVert_1 / n` (OTF paper §5.1)."""

    name = "norm"


class Barycenter(PenaltyObject):
    """W1 of each group's scores to the groups' barycenter (Jiang et al. 2020; DP only)."""

    name = "barycenter"


class GapReg(PenaltyObject):
    """Squared mean score gap between the groups (the FTM paper's Gap Reg baseline)."""

    name = "gapreg"


class Adversary(PenaltyObject):
    """Adversarial debiasing (Zhang et al. 2018): an adversary predicts S from the score.

    Parameters
    ----------
    hidden : int, default=32
        Width of the adversary's hidden layer.
    lr : float, optional
        Adam learning rate of the adversary; ``None`` uses the classifier's ``lr``.
    """

    name = "adv"
    training_settings = ("lr",)

    def __init__(self, hidden: int = 32, *, lr: float | None = None) -> None:
        self.hidden = hidden
        self.lr = lr

    def adversary_lr(self, default: float) -> float:
        """``lr`` when set, else the classifier's learning rate ``default``."""
        return float(self.lr or default)


class FTM(PenaltyObject):
    r"""Fairness through matching: the matched score gap on OT-matched batches (FTM §4.3).

    Training on this penalty draws equal-size group batches matched by the transport
    map (Kim et al., TMLR 2024, §4.3, Eq. (7)); these settings describe them.

    Parameters
    ----------
    matching : {"marginal", "joint"}, default="marginal"
        Transport map: cost :math:`\lVert x_0-x_1\rVert^2` or
        :math:`\lVert x_0-x_1\rVert^2 + a|y_0-y_1|` (the joint map, App. D).
    label_weight : float, default=100.0
        :math:`a` of the joint map.
    group_batch_size : int, default=1024
        Size ``m`` of each group batch (Adult 1024, German 200, Dutch 1024, Bank 512); a
        step sees ``2m`` points.
    n_pairing_rounds : int, default=2
        Rounds of cached batch pairings (each covers every point once).
    matching_seed : int, default=0
        Seed of the pairing draw, separate from the classifier's ``random_state`` so
        that the model seeds of a sweep share the cached matchings.
    cache_dir : str or Path, optional
        Directory of the on-disk matching cache (in memory only when ``None``).
    """

    name = "ftm"
    training_settings = (
        "matching",
        "label_weight",
        "group_batch_size",
        "n_pairing_rounds",
        "matching_seed",
        "cache_dir",
    )

    def __init__(
        self,
        matching: str = "marginal",
        *,
        label_weight: float = 100.0,
        group_batch_size: int = 1024,
        n_pairing_rounds: int = 2,
        matching_seed: int = 0,
        cache_dir: str | Path | None = None,
    ) -> None:
        self.matching = matching
        self.label_weight = label_weight
        self.group_batch_size = group_batch_size
        self.n_pairing_rounds = n_pairing_rounds
        self.matching_seed = matching_seed
        self.cache_dir = cache_dir

    def check(self) -> FTM:
        """Check the settings (``ValueError`` naming the setting); return ``self``."""
        if self.matching not in ("marginal", "joint"):
            raise ValueError(f"`matching` must be 'marginal' or 'joint'; got {self.matching!r}.")
        for name in ("group_batch_size", "n_pairing_rounds"):
            check_positive_int(getattr(self, name), name)
        check_scalar(self.label_weight, "label_weight", minimum=0.0)
        if isinstance(self.matching_seed, bool) or not isinstance(self.matching_seed, int):
            raise ValueError(f"`matching_seed` must be an integer; got {self.matching_seed!r}.")
        return self

    def matched_batches(
        self, X: np.ndarray, y: np.ndarray, groups: np.ndarray, batch_size: int
    ) -> tuple[np.ndarray, tuple[float, float], int]:
        """FTM's cached pairings, the group weights and the steps per epoch.

        The pairings (FTM paper §4.3) come from the matching cache of ``cache_dir``
        (in memory when None). An epoch takes as many steps as the plain loop,
        ``ceil(n / batch_size)``: with the learning rate decayed per epoch, the paper
        code's ``ceil(max(n0, n1) / m)`` gave FTM fewer steps than its unfair baseline
        and underfit (German at lambda = 0: 0.722 vs 0.75 accuracy over 3 seeds; 0.743
        with this).
        """
        from otfair.penalties._ftm_matching import get_cache

        pool = get_cache(self.cache_dir).get(
            X,
            groups,
            y,
            m=self.group_batch_size,
            label_weight=None if self.matching == "marginal" else float(self.label_weight),
            seed=self.matching_seed,
            n_rounds=self.n_pairing_rounds,
        )
        sizes = np.bincount(groups, minlength=2)
        steps = math.ceil(sizes.sum() / batch_size)
        return pool, (sizes[0] / sizes.sum(), sizes[1] / sizes.sum()), steps


class FairTorchDP(PenaltyObject):
    """FairTorch's demographic-parity constraint penalty (the FTM paper's "Reduction").

    Parameters
    ----------
    rows : {"released", "per-group"}, default="released"
        Which of FairTorch's two constraint-row conventions to use
        (:class:`~otfair.penalties.FairTorchDemographicParity`).
    """

    name = "fairtorch-dp"

    def __init__(self, rows: str = "released") -> None:
        self.rows = rows


class Penalty(PenaltyObject):
    """Any registered penalty by name, with its factory's options (``register_penalty``).

    Parameters
    ----------
    name : str
        A name of :func:`~otfair.penalties.list_penalties`.
    options : dict, optional
        Keyword options of its factory.
    """

    def __init__(self, name: str, options: dict[str, Any] | None = None) -> None:
        self.name = name  # type: ignore[misc]  # an instance's name, not the class's
        self.options = options

    def factory_options(self) -> dict[str, Any]:
        """Return ``options`` (the factory's keyword options)."""
        return dict(self.options or {})


#: the built-in penalty objects by registered name
_BY_NAME: dict[str, type[PenaltyObject]] = {
    cls.name: cls for cls in (OTF, Norm, Barycenter, GapReg, Adversary, FTM, FairTorchDP)
}


def as_penalty_object(penalty: str | PenaltyObject, name: str = "penalty") -> PenaltyObject:
    """Return the penalty object of ``penalty`` (a registered name or an object).

    A built-in name gives its object with the default settings (``"otf"`` -> ``OTF()``);
    a name added with :func:`~otfair.penalties.register_penalty` gives
    ``Penalty(name)``.

    Raises
    ------
    ValueError
        For an unknown name (listing the registered ones) or another type, naming the
        argument ``name``.
    """
    if isinstance(penalty, PenaltyObject):
        return penalty
    if isinstance(penalty, str) and penalty in list_penalties():
        return _BY_NAME[penalty]() if penalty in _BY_NAME else Penalty(penalty)
    raise ValueError(
        f"`{name}` must be 'none', a penalty object (otfair.penalties.OTF(), FTM(), ...) or "
        f"one of {', '.join(list_penalties())}; got {penalty!r}."
    )
