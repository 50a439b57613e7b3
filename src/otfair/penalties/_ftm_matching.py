"""Cached batch pairings and matchings for FTM (fairness through matching).

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
n_rounds). :class:`FTMMatchingCache` keys it by a SHA-256 hash of exactly these inputs
and keeps it in memory (and, with ``cache_dir``, on disk as ``.npz``), so every strength
and model seed of a sweep on the same split reuses it and an FTM training step costs
about a plain step. The estimator walks through the pool in an order drawn from its own
``random_state``.
"""

from __future__ import annotations

import hashlib
import math
import os
import tempfile
from collections import OrderedDict
from pathlib import Path

import numpy as np
import torch

from otfair.ot import joint_cost, match

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


#: Process-wide cache used by estimators without a ``matching_cache_dir``.
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
