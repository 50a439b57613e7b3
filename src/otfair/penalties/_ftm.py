"""FTM, fairness through matching (Kim et al., TMLR 2024): object, penalty and matchings.

:class:`FTM` holds the settings of the matched batches and builds
:class:`MatchedDemographicParity`, the matched score gap (§3); its training plan trains
it on ``MatchedBatches`` (FTM's batching lives here only), whose pairings and OT
matchings (§4) come from :class:`~otfair.estimators.FTMMatchingCache`.

How pairings are drawn
----------------------
A *pairing* is two equal-size batches ``D_0`` (group 0) and ``D_1`` (group 1) of ``m``
points plus the optimal matching between them (Kim et al., TMLR 2024, §4: the
marginal OT map with cost ``||x0 - x1||^2`` or the joint map with
``||x0 - x1||^2 + a |y0 - y1|``), computed with :func:`otfair.ot.match`.
Pairings are drawn in *rounds*: each round shuffles both groups and cuts them into
``ceil(max(n_0, n_1) / m)`` batches, the smaller group cycling through fresh shuffles,
so that every training point appears in at least one pairing per round. The pool holds
``n_rounds`` rounds, drawn with ``numpy.random.default_rng(seed)``.

How they are reused
-------------------
The matching depends only on the data, never on the model, so the pool is a pure
function of (training rows, groups, labels for the joint map, m, map, a, seed,
n_rounds). :class:`~otfair.estimators.FTMMatchingCache` keys it by a SHA-256 hash of
exactly these inputs and keeps it in memory (and, with ``cache_dir``, on disk as
``.npz``), so every strength and model seed of a sweep on the same split reuses it
and an FTM training step costs about a plain step. :class:`MatchedSchedule` walks
through the pool in an order drawn from the estimator's ``random_state``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import numbers
import os
import tempfile
import warnings
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch

from otfair.notions import Notion, as_notion
from otfair.ot import joint_cost, match
from otfair.penalties._base import FairnessPenalty, PenaltyBatch, PenaltyObject, TrainingPlan
from otfair.penalties._checks import check_scores
from otfair.penalties._legacy import bind
from otfair.penalties._plan import FTM_GRID, FitRows, TrainBatch
from otfair.utils import set_params_from_init
from otfair.utils._constraints import (
    Interval,
    StrOptions,
    non_negative_real,
    positive_int,
)
from otfair.utils._warnings import user_stacklevel


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
    #: FairnessCV's default grid: to 10, dense below the collapse (``_plan.FTM_GRID``)
    strength_grids = {"additive": FTM_GRID}
    #: the lab's sweep: FTM paper App. D, Table 7, whole (on Adult, lambda >= 3 collapses
    #: to the constant predictor, docs/classifiers.md; kept: Dutch's DP 0.01 needs it)
    paper_strengths = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.5,
                       2.0, 3.0, 5.0, 10.0)  # fmt: skip
    notions = ("dp",)
    notion_hint = "; use matching='joint' to target EO"
    training_settings = ("matching", "label_weight", "group_batch_size", "n_pairing_rounds",
                         "matching_seed", "cache_dir")  # fmt: skip

    matching: str
    label_weight: float
    group_batch_size: int
    n_pairing_rounds: int
    matching_seed: int
    cache_dir: str | Path | None
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "matching": [StrOptions({"marginal", "joint"})],
        "label_weight": [non_negative_real()],
        "group_batch_size": [positive_int()],
        "n_pairing_rounds": [positive_int()],
        "matching_seed": [Interval(numbers.Integral, 0, None, closed="left")],
        "cache_dir": [None, str, os.PathLike],
    }

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
        set_params_from_init(self, locals())

    def matched_batches(
        self, X: np.ndarray, y: np.ndarray, groups: np.ndarray, batch_size: int
    ) -> tuple[np.ndarray, tuple[float, float], int]:
        """FTM's cached pairings ``(P, 2, m)``, the group weights and the steps per epoch."""
        return self._scheme().pool(X, y, groups, batch_size)

    def training_plan(self, penalty: FairnessPenalty) -> TrainingPlan:
        """Return the penalty's plan, on the matched batches these settings describe."""
        return dataclasses.replace(penalty.plan, batches=self._scheme())

    def _scheme(self) -> MatchedBatches:
        label_weight = None if self.matching == "marginal" else float(self.label_weight)
        return MatchedBatches(
            self.group_batch_size,
            label_weight,
            self.matching_seed,
            self.n_pairing_rounds,
            self.cache_dir,
        )

    def make(self, notion: Notion) -> MatchedDemographicParity:
        """Return :class:`MatchedDemographicParity` (demographic parity)."""
        return MatchedDemographicParity(notion, **self.factory_options())


class MatchedDemographicParity(FairnessPenalty):
    r"""Mean absolute score difference between matched individuals of two groups.

    .. math::

        \mathrm{MDP}(f, T) = \frac{1}{m}\sum_{i=1}^{m}
            \big|f(x^{(0)}_i) - f(x^{(1)}_{\pi(i)})\big|

    where :math:`\pi` is a transport map from a batch of group 0 to an equal-size batch
    of group 1 (Kim et al., TMLR 2024, §3.2, Eq. (7); the marginal or joint OT
    map of §4). By Theorem 3.7 of the paper, ``MDP <= delta`` implies ``DP <= delta``
    for any transport map. The matching itself never depends on ``f``, so it is part of
    the batch (its plan draws ``MatchedBatches``,
    :class:`~otfair.estimators.FTMMatchingCache`); the notion is DP (the joint map of §4
    targets EO through the matching, not the penalty).

    Shapes: ``scores`` (2m,) the scores of the group-0 batch followed by those of their
    partners in group 1, in matched order; ``sensitive`` (2m,) the group codes
    (``m`` zeros then ``m`` ones); the unchecked
    ``FairnessPenalty.value`` also takes a (K, 2m)
    block of K models (``batchable``). The old call ``mdp(scores, matched_scores)`` with two
    (m,) float tensors still works (deprecated).

    Examples
    --------
    >>> import torch
    >>> mdp = MatchedDemographicParity()
    >>> mdp(torch.tensor([0.1, 0.5, 0.3, 0.5]), torch.tensor([0, 0, 1, 1]))
    tensor(0.1000)
    """

    batchable = True
    #: trained on matched batches (FTM's default settings; an FTM object's own: its
    #: :meth:`FTM.training_plan`), set below ``MatchedBatches``
    plan: ClassVar[TrainingPlan]

    def __init__(self, notion: str | Notion = "dp") -> None:
        super().__init__()
        self.notion = as_notion(notion, allowed=("dp",))

    def check(self, batch: PenaltyBatch) -> PenaltyBatch:
        """Check the layout ``[group 0; partners]`` (or the deprecated two-vector call)."""
        batch = super().check(batch)
        scores, sensitive = batch.scores, batch.sensitive
        old_call = isinstance(sensitive, torch.Tensor) and sensitive.is_floating_point()
        if old_call and not bool(((sensitive == 0) | (sensitive == 1)).all()):
            warnings.warn(
                "MatchedDemographicParity()(scores, matched_scores) is deprecated; pass "
                "the 2m scores [group 0; matched partners] and their group codes.",
                DeprecationWarning,
                stacklevel=user_stacklevel(),
            )
            matched = check_scores(sensitive, "matched_scores")
            if matched.shape != scores.shape:
                raise ValueError(
                    "`scores` and `matched_scores` must have the same shape (one partner "
                    f"per point); got {tuple(scores.shape)} and {tuple(matched.shape)}."
                )
            codes = torch.cat([torch.zeros_like(scores), torch.ones_like(matched)])
            return batch._replace(scores=torch.cat([scores, matched]), sensitive=codes)
        codes = torch.as_tensor(sensitive).reshape(-1)
        n = scores.shape[0]
        m = n // 2
        expected = torch.cat([torch.zeros(m), torch.ones(n - m)]).to(codes.device)
        if n % 2 or codes.shape[0] != n or not bool((codes.to(expected) == expected).all()):
            raise ValueError(
                "`scores` must hold an even number 2m of matched scores (group-0 batch, then "
                "its partners) with `sensitive` = m zeros then m ones; got "
                f"{n} scores and sensitive of shape {tuple(codes.shape)}."
            )
        return batch._replace(sensitive=codes)

    def evaluate(self, batch: PenaltyBatch) -> torch.Tensor:
        """Return the MDP of a matched batch laid out as ``[group 0; partners]``.

        ``scores`` (2m,) or a (K, 2m) block of K models (K values, row-wise).
        """
        scores = batch.scores
        m = scores.shape[-1] // 2
        return (scores[..., :m] - scores[..., m:]).abs().mean(dim=-1)


@dataclasses.dataclass(frozen=True)
class MatchedBatches:
    """FTM's batch scheme: cached OT-matched pairings of equal-size group batches.

    The :attr:`~otfair.penalties.TrainingPlan.batches` of :class:`FTM`'s plan (its
    settings: ``m = group_batch_size``, ``label_weight`` of the joint map or ``None``
    for the marginal one, the pairing seed and rounds, the cache directory).
    """

    m: int = 1024
    label_weight: float | None = None
    seed: int = 0
    n_rounds: int = 2
    cache_dir: str | Path | None = None

    def pool(
        self, X: np.ndarray, y: np.ndarray, groups: np.ndarray, batch_size: int
    ) -> tuple[np.ndarray, tuple[float, float], int]:
        """FTM's cached pairings ``(P, 2, m)``, the group weights and the steps per epoch.

        The pairings (FTM paper §4.3) come from the matching cache of ``cache_dir``
        (in memory when None). An epoch takes as many steps as the plain loop,
        ``ceil(n / batch_size)``: with the learning rate decayed per epoch, the paper
        code's ``ceil(max(n0, n1) / m)`` gave FTM fewer steps than its unfair baseline
        and underfit (German at lambda = 0: 0.722 vs 0.75 accuracy over 3 seeds; 0.743
        with this).
        """
        pool = get_cache(self.cache_dir).get(
            X,
            groups,
            y,
            m=self.m,
            label_weight=self.label_weight,
            seed=self.seed,
            n_rounds=self.n_rounds,
        )
        sizes = np.bincount(groups, minlength=2)
        steps = math.ceil(sizes.sum() / batch_size)
        return pool, (sizes[0] / sizes.sum(), sizes[1] / sizes.sum()), steps

    def schedule(self, rows: FitRows, rng: np.random.Generator) -> MatchedSchedule:
        """Gather the pairings' rows once per fit; return the fit's batch schedule."""
        pool, weights, steps = self.pool(rows.X, rows.y, rows.groups, rows.batch_size)
        return MatchedSchedule(pool, weights, steps, (rows.Xt, rows.yt), rng)


class MatchedSchedule:
    r"""The matched batches of one fit (Kim et al., TMLR 2024, §4.3, Eq. (7)).

    A step takes one pairing ``(D_0, D_1, pi)`` of the pool (shape (P, 2, m)): its
    ``2m`` rows laid out as ``[D_0; partners]`` with the group codes ``[0]*m + [1]*m``
    and the per-row cross-entropy weights :math:`w_s / m`, :math:`w_s = n_s / n` the
    group proportions of the training set, i.e. the cross-entropy on the two group
    batches themselves, re-weighted to the population as in the paper's code (an
    unweighted mean over the ``2m`` points would train on a 50/50 group mix). An epoch
    is ``steps`` pairings, visited in a random order of ``rng`` reshuffled each time the
    pool is exhausted; the pairings depend on the data only and are shared by the K
    models of a curve.
    """

    name = "FTM"

    def __init__(
        self,
        pool: np.ndarray,
        weights: tuple[float, float],
        steps: int,
        data: tuple[torch.Tensor, torch.Tensor],
        rng: np.random.Generator,
    ) -> None:
        X, y = data
        m = pool.shape[2]
        index = torch.tensor(pool, dtype=torch.int64, device=X.device).reshape(pool.shape[0], -1)
        self.X, self.y = X[index], y[index]  # (P, 2m, d), (P, 2m)
        self.codes = torch.cat([torch.zeros(m), torch.ones(m)]).to(X.device, torch.int64)
        self.ce_weight = torch.cat(
            [torch.full((m,), weights[0] / m), torch.full((m,), weights[1] / m)]
        ).to(device=X.device, dtype=X.dtype)
        self.steps, self.rng, self.n_pairings = steps, rng, pool.shape[0]
        self.fitted = {"n_pairings_": self.n_pairings}
        self._order: list[int] = []

    def epoch(self, epoch: int) -> Iterable[TrainBatch]:
        """Return the epoch's ``steps`` matched batches."""
        for _ in range(self.steps):
            if not self._order:
                self._order.extend(self.rng.permutation(self.n_pairings).tolist())
            p = self._order.pop()
            yield TrainBatch(self.X[p], self.y[p], self.codes, self.ce_weight, 1.0)


MatchedDemographicParity.plan = TrainingPlan(full_batch=False, batches=MatchedBatches())
bind(MatchedBatches=MatchedBatches)  # the old trait `requires_pairs` means these batches


_CACHE_VERSION = b"otfair-ftm-pairings-v1"


def draw_pairings(groups: np.ndarray, m: int, seed: int, n_rounds: int) -> np.ndarray:
    """Draw the batch pairings (row indices, before matching).

    Parameters
    ----------
    groups : ndarray of shape (n,)
        Binary group codes 0/1.
    m : int
        Group batch size (clipped to the smaller group's size).
    seed : int
        Seed of the draw.
    n_rounds : int
        Number of rounds (each covers every point at least once).

    Returns
    -------
    ndarray of shape (P, 2, m), int64
        ``out[p, s]`` are the rows of group ``s`` in pairing ``p``.
    """
    rng = np.random.default_rng(seed)
    members = [np.flatnonzero(groups == g) for g in (0, 1)]
    m = min(int(m), *(len(ix) for ix in members))
    n_pairs = math.ceil(max(len(ix) for ix in members) / m)
    out = []
    for _ in range(int(n_rounds)):
        streams = []
        for ix in members:
            need = n_pairs * m
            parts = [rng.permutation(ix) for _ in range(math.ceil(need / len(ix)))]
            streams.append(np.concatenate(parts)[:need].reshape(n_pairs, m))
        out.append(np.stack(streams, axis=1))
    return np.concatenate(out).astype(np.int64)


def match_pairings(
    X: np.ndarray, y: np.ndarray, pairings: np.ndarray, label_weight: float | None
) -> np.ndarray:
    """Reorder ``pairings[:, 1]`` so that row ``i`` of group 1 is the partner of row ``i``.

    ``label_weight=None`` uses the marginal map (cost ``||x0 - x1||^2``); a number ``a``
    the joint map (cost ``||x0 - x1||^2 + a |y0 - y1|``).
    """
    Xt = torch.from_numpy(np.ascontiguousarray(X, dtype=np.float64))
    yt = torch.from_numpy(np.asarray(y, dtype=np.float64))
    out = pairings.copy()
    for p in range(pairings.shape[0]):
        i0, i1 = pairings[p, 0], pairings[p, 1]
        if label_weight is None:
            index = match(Xt[i0], Xt[i1], cost="sqeuclidean")
        else:
            M = joint_cost(Xt[i0], yt[i0], Xt[i1], yt[i1], weight=label_weight)
            index = match(Xt[i0], Xt[i1], M=M)
        out[p, 1] = i1[index.cpu().numpy()]
    return out


def _key(X, groups, y, m, label_weight, seed, n_rounds) -> str:
    h = hashlib.sha256(_CACHE_VERSION)
    h.update(np.ascontiguousarray(X, dtype=np.float32).tobytes())
    h.update(np.asarray(X.shape, dtype=np.int64).tobytes())
    h.update(np.ascontiguousarray(groups, dtype=np.int64).tobytes())
    if label_weight is not None:
        h.update(np.ascontiguousarray(y, dtype=np.float64).tobytes())
    h.update(repr((int(m), label_weight, int(seed), int(n_rounds))).encode())
    return h.hexdigest()


class FTMMatchingCache:
    """In-memory (LRU) and optional on-disk cache of matched FTM batch pairings.

    Parameters
    ----------
    cache_dir : str or Path, optional
        Directory for ``.npz`` files; ``None`` keeps pairings in memory only.
    max_entries : int, default=16
        Number of pools kept in memory.

    See Also
    --------
    otfair.estimators.FairClassifier : Trains with the FTM penalty (``penalty="ftm"``).
    otfair.estimators.fairness_path : Shares one cache across the strengths of a curve.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X, g = rng.normal(size=(40, 3)), np.repeat([0, 1], 20)
    >>> cache = FTMMatchingCache()
    >>> pool = cache.get(X, g, None, m=8, label_weight=None, seed=0, n_rounds=1)
    >>> pool.shape
    (3, 2, 8)
    >>> cache.get(X, g, None, m=8, label_weight=None, seed=0, n_rounds=1) is pool
    True
    """

    def __init__(self, cache_dir: str | Path | None = None, max_entries: int = 16) -> None:
        self.cache_dir = None if cache_dir is None else Path(cache_dir)
        self.max_entries = int(max_entries)
        self._memory: OrderedDict[str, np.ndarray] = OrderedDict()
        self.misses = 0

    def get(
        self,
        X: np.ndarray,
        groups: np.ndarray,
        y: np.ndarray | None,
        *,
        m: int,
        label_weight: float | None,
        seed: int,
        n_rounds: int,
    ) -> np.ndarray:
        """Return the matched pool of shape (P, 2, m), computing it on a miss."""
        key = _key(X, groups, y, m, label_weight, seed, n_rounds)
        if key in self._memory:
            self._memory.move_to_end(key)
            return self._memory[key]
        pool = self._load(key)
        if pool is None:
            self.misses += 1
            pool = draw_pairings(groups, m, seed, n_rounds)
            pool = match_pairings(X, y if y is not None else np.zeros(len(X)), pool, label_weight)
            self._save(key, pool)
        pool.setflags(write=False)
        self._memory[key] = pool
        while len(self._memory) > self.max_entries:
            self._memory.popitem(last=False)
        return pool

    def _path(self, key: str) -> Path | None:
        return None if self.cache_dir is None else self.cache_dir / f"ftm-{key[:32]}.npz"

    def _load(self, key: str) -> np.ndarray | None:
        path = self._path(key)
        if path is None or not path.is_file():
            return None
        with np.load(path) as data:
            if str(data["key"]) != key:
                return None
            return data["pool"]

    def _save(self, key: str, pool: np.ndarray) -> None:
        path = self._path(key)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".npz.tmp")
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, pool=pool, key=np.array(key))
        os.replace(tmp, path)  # atomic: concurrent sweeps never read half a file


#: Process-wide cache of the pairings of an FTM object without a ``cache_dir``.
DEFAULT_CACHE = FTMMatchingCache()
_DIR_CACHES: dict[str, FTMMatchingCache] = {}


def get_cache(cache_dir: str | Path | None) -> FTMMatchingCache:
    """Return the shared cache for ``cache_dir`` (``None``: the in-memory default)."""
    if cache_dir is None:
        return DEFAULT_CACHE
    key = str(Path(cache_dir).resolve())
    if key not in _DIR_CACHES:
        _DIR_CACHES[key] = FTMMatchingCache(cache_dir)
    return _DIR_CACHES[key]
