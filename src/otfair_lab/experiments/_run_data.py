"""Stage 1 of a run: its data (load, seeded split, training subsample or imbalance).

:func:`prepare_data` turns a :class:`~otfair_lab.experiments._request.RunRequest` into a
:class:`RunData`, prepared once and shared by the runs of a stacked sweep group (which
differ only in strength). See :func:`otfair_lab.experiments.run_single` for the protocol.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from otfair_lab.experiments._request import RunRequest

__all__ = ["RunData", "prepare_data"]


@dataclass(frozen=True)
class RunData:
    """The data of a run, prepared once (the runs of a stacked group share it).

    Attributes
    ----------
    name : str
        The dataset's name (a loaded dataset's ``name``, else its type's).
    split : FairSplit
        The (target domain's) split the estimator is fitted and evaluated on, after
        ``max_train_rows`` and ``train_group_share``.
    source : FairSplit or None
        With domains: the source domain's split (its training part is ``source_data``).
    loaded : FairDataset or None
        The loaded dataset (its raw columns feed the subset audits); None with domains.
    """

    name: str
    split: Any
    source: Any | None
    loaded: Any | None

    @property
    def fit_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of the estimator's ``fit`` besides ``X`` and ``y``."""
        kwargs: dict[str, Any] = {"sensitive_features": self.split.s_train}
        if self.source is not None:
            s = self.source
            kwargs["source_data"] = (s.X_train, s.y_train, s.s_train)
        return kwargs


def prepare_data(request: RunRequest) -> RunData:
    """Stage 1: load the dataset, split it by seed, subsample / imbalance the training part.

    The sensitive attribute is an input feature only when the method's ``MethodSpec``
    says so; preprocessing is fit on the training part only (on the source's with
    domains). ``ValueError`` when the dataset's task is not the method's, or for
    ``train_group_share`` with domains.
    """
    spec = request.spec
    split_args = {
        "test_size": request.test_size,
        "random_state": request.seed,
        "sensitive_as_input": spec.sensitive_as_input,
    }
    name, source, split, loaded = _load_splits(
        request.dataset, request.domains, request.dataset_options, split_args
    )
    if split.task != spec.task:
        raise ValueError(
            f"Method {request.method!r} solves {spec.task}, but dataset {name!r} is a "
            f"{split.task} task (check the dataset options, e.g. its target)."
        )
    if request.max_train_rows is not None:
        split = _subsample_train(split, request.max_train_rows, request.seed)
        if source is not None:
            source = _subsample_train(source, request.max_train_rows, request.seed)
    if request.train_group_share is not None:
        if source is not None:
            raise ValueError("`train_group_share` cannot be combined with domains.")
        split = _imbalance_train(split, request.train_group_share, request.seed)
    return RunData(name, split, source, loaded)


def _subsample_train(split: Any, max_rows: int, seed: int) -> Any:
    """Return a copy of ``split`` whose training part keeps at most ``max_rows`` rows.

    The rows are drawn without replacement with ``seed``; the test part is untouched so
    that a subsampled run is evaluated on the same test set as a full run.
    """
    n = len(split.y_train)
    if max_rows >= n:
        return split
    rng = np.random.default_rng(seed)
    return _take_train(split, np.sort(rng.choice(n, size=max_rows, replace=False)))


def _imbalance_train(split: Any, share: float, seed: int) -> Any:
    """Return a copy of ``split`` whose training part is imbalanced in the sensitive group.

    FTM paper §5.4.1 (Table 3): after the train/test split, every training row of group
    ``s = 1`` is kept and ``round(share / (1 - share) * n_1)`` rows of group ``s = 0``
    are drawn without replacement with ``seed``, so that group 0 makes up ``share`` of
    the training part (0.05: the paper's 5:95). The test part is untouched.

    Raises
    ------
    ValueError
        When the sensitive attribute is not binary {0, 1} or group 0 has fewer training
        rows than the share asks for (the subsample cannot add rows).
    """
    s = np.asarray(split.s_train)
    if s.ndim != 1 or not np.isin(s, (0, 1)).all() or len(np.unique(s)) != 2:
        raise ValueError(
            "`train_group_share` needs a binary sensitive attribute coded 0/1 with both "
            "groups in the training part."
        )
    rows0, rows1 = np.flatnonzero(s == 0), np.flatnonzero(s == 1)
    want = int(round(share / (1.0 - share) * len(rows1)))
    if want < 1 or want > len(rows0):
        raise ValueError(
            f"`train_group_share`={share:g} asks for {want} training rows of group 0, "
            f"which has {len(rows0)} (and group 1 {len(rows1)}); the subsample cannot "
            "add rows."
        )
    rng = np.random.default_rng(seed)
    keep = np.sort(np.concatenate([rng.choice(rows0, size=want, replace=False), rows1]))
    return _take_train(split, keep)


def _take_train(split: Any, idx: np.ndarray) -> Any:
    """Return a copy of ``split`` whose training part keeps the rows ``idx``."""
    changes = {
        "X_train": np.asarray(split.X_train)[idx],
        "y_train": np.asarray(split.y_train)[idx],
        "s_train": np.asarray(split.s_train)[idx],
    }
    if getattr(split, "train_index", None) is not None:
        changes["train_index"] = np.asarray(split.train_index)[idx]
    if dataclasses.is_dataclass(split) and not isinstance(split, type):
        return dataclasses.replace(split, **changes)
    out = copy.copy(split)
    for name, value in changes.items():
        setattr(out, name, value)
    return out


def _load_by_name(name: str, options: Mapping[str, Any]) -> Any:
    """Load a registered dataset, or call a user factory given as ``"module:function"``."""
    if ":" in name:
        module, _, attr = name.partition(":")
        try:
            factory = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"`dataset` factory {name!r} cannot be imported: {exc}.") from None
        return factory(**dict(options))
    from otfair.datasets import load_dataset

    return load_dataset(name, **dict(options))


def _load_splits(
    dataset: Any,
    domains: tuple[str, str] | None,
    dataset_options: Mapping[str, Any],
    split_args: Mapping[str, Any],
) -> tuple[str, Any, Any, Any]:
    """Return ``(name, source, split, dataset)``, each split made by ``.split(**split_args)``.

    With ``domains = (source, target)``, the target and source splits of a domain-shift
    pair, sharing one feature space (fit on the source train part), and ``dataset =
    None``; else ``source = None``, the dataset's split and the loaded
    :class:`~otfair.datasets.FairDataset` (its raw columns feed the subset audits).
    """
    if domains is not None:
        if not isinstance(dataset, str):
            raise TypeError("`dataset` must be a dataset name when domains are given.")
        from otfair.datasets import load_domain_shift

        source_domain, target_domain = domains
        options = dict(dataset_options)
        pair = load_domain_shift(dataset, source=source_domain, target=target_domain, **options)
        source, split = pair.split(**split_args)
        return dataset, source, split, None
    if isinstance(dataset, str):
        ds = _load_by_name(dataset, dataset_options)
        name = dataset
    else:
        if dataset_options:
            raise ValueError("`dataset_options` can only be used with a dataset name.")
        ds = dataset
        name = str(getattr(ds, "name", type(ds).__name__))
    return name, None, ds.split(**split_args), ds
