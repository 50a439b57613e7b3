"""One experiment run: load a dataset, split it by seed, fit a registered method, audit it.

This is the unit of work shared by ``otfair fit`` (which prints the result) and the sweep
runner (which stores it as one row of the result store).
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from otfair.experiments._audits import check_audits, raw_test_features, run_audits

#: Keys that describe the run itself (everything else in a result is a measurement).
RUN_INFO_KEYS = (
    "dataset",
    "method",
    "task",
    "strength",
    "notion",
    "seed",
    "n_train",
    "n_test",
    "source_domain",
    "target_domain",
)

#: Timing keys added by :func:`run_single`.
TIMING_KEYS = ("fit_time_s", "predict_time_s")


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
    if dataclasses.is_dataclass(split):
        return dataclasses.replace(split, **changes)
    out = copy.copy(split)
    for name, value in changes.items():
        setattr(out, name, value)
    return out


def _check_share(share: Any) -> float:
    if isinstance(share, bool) or not isinstance(share, (int, float, np.number)):
        raise TypeError(f"`train_group_share` must be a number in (0, 1); got {share!r}.")
    if not 0.0 < float(share) < 1.0:
        raise ValueError(f"`train_group_share` must lie in (0, 1); got {share}.")
    return float(share)


def _check_int(value: Any, name: str, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"`{name}` must be an integer; got {type(value).__name__}.")
    if value < minimum:
        raise ValueError(f"`{name}` must be >= {minimum}; got {value}.")
    return int(value)


def _check_test_size(test_size: Any) -> float:
    if isinstance(test_size, bool) or not isinstance(test_size, (int, float)):
        raise TypeError(f"`test_size` must be a number in (0, 1); got {test_size!r}.")
    if not 0.0 < float(test_size) < 1.0:
        raise ValueError(f"`test_size` must lie in (0, 1); got {test_size}.")
    return float(test_size)


def _positive_scores(estimator: Any, X: np.ndarray, task: str) -> np.ndarray:
    """Scores used by the audit: P(Y=1 | x) for classifiers, predictions for regressors."""
    if task == "classification":
        proba = np.asarray(estimator.predict_proba(X))
        return proba[:, 1] if proba.ndim == 2 else proba
    return np.asarray(estimator.predict(X), dtype=np.float64).ravel()


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


#: Test scores of unfair reference models, per (dataset, options, seed, split, budget):
#: a sweep's worker reuses them across the strengths of every method (bounded size).
_REFERENCE_CACHE: dict[tuple, np.ndarray] = {}
_REFERENCE_CACHE_SIZE = 16


def _reference_scores(
    key: tuple, split: Any, *, seed: int, epochs: int | None, device: str
) -> np.ndarray:
    """Test scores of the unfair reference for the 'sfp' audit (FTM paper App. E.3).

    Methods that take the sensitive attribute as an input are compared with the FTM
    family's unfair MLP (``unfair-mlp``), the others with the unfair logistic
    regression (``unfair``), trained on the same split with the same seed and budget.
    """
    from otfair.experiments.methods import get_method

    if key in _REFERENCE_CACHE:
        return _REFERENCE_CACHE[key]
    sensitive_as_input = key[-1]
    ref = get_method("unfair-mlp" if sensitive_as_input else "unfair").build(
        None, notion=None, random_state=seed, epochs=epochs, device=device, dataset=key[0]
    )
    ref.fit(split.X_train, split.y_train, sensitive_features=split.s_train)
    scores = _positive_scores(ref, split.X_test, "classification")
    if len(_REFERENCE_CACHE) >= _REFERENCE_CACHE_SIZE:
        _REFERENCE_CACHE.pop(next(iter(_REFERENCE_CACHE)))
    _REFERENCE_CACHE[key] = scores
    return scores


def _check_against_spec(
    spec: Any,
    *,
    strength: float | None,
    notion: str | None,
    domains: bool,
    method_options: Mapping[str, Any],
) -> str | None:
    """Check the run's arguments against what the method takes; return the notion used.

    Raises ``ValueError`` for a strength given to a method without one, a notion the
    method does not support, domains given to a method that does not take them, or an
    unknown / ill-typed method option.
    """
    from otfair.experiments.methods import check_options, get_method, list_methods

    if strength is not None and not spec.has_strength:
        raise ValueError(
            f"method {spec.name!r} has no trade-off strength (no fairness term to weigh); "
            "drop `strength`."
        )
    if notion is not None:
        if not spec.notions:
            raise ValueError(
                f"method {spec.name!r} has no choice of fairness notion; drop `notion`."
            )
        if notion not in spec.notions:
            raise ValueError(
                f"method {spec.name!r} supports the notion(s) {', '.join(spec.notions)}; "
                f"got {notion!r}."
            )
    if domains and not spec.takes_domains:
        takers = [n for n in list_methods() if get_method(n).takes_domains]
        raise ValueError(
            f"method {spec.name!r} does not take a source and a target domain; drop them "
            f"(methods that do: {', '.join(takers) or 'none'})."
        )
    check_options(spec, dict(method_options))
    return notion if notion is not None else (spec.notions[0] if spec.notions else None)


def _configure(
    estimator: Any,
    spec: Any,
    *,
    verbose: bool,
    announce: Callable[[str], None] | None,
    n_rows: int | None = None,
) -> None:
    """Pass ``verbose`` where the estimator takes it; announce the declared budgets.

    Without a progress bar (``verbose=False``), a training of several epochs is announced
    in one line (epochs and rows), so that a long fit is never silent.
    """
    params = estimator.get_params() if hasattr(estimator, "get_params") else {}
    if "verbose" in params:
        estimator.set_params(verbose=verbose)
    shown = [f"{k}={params[k]} ({what})" for k, what in spec.announce.items() if k in params]
    if announce is not None and shown:
        announce(f"{spec.name}: " + "; ".join(shown))
    epochs = params.get("epochs")
    if announce is not None and not verbose and isinstance(epochs, int) and epochs > 1:
        rows = f" on {n_rows:,} training rows" if n_rows else ""
        bar = " (--progress shows a progress bar)" if "verbose" in params else ""
        announce(f"{spec.name}: training {epochs} epochs{rows}{bar}")


def run_single(
    dataset: Any,
    method: str,
    *,
    strength: float | None = None,
    seed: int = 0,
    notion: str | None = None,
    epochs: int | None = None,
    device: str = "cpu",
    test_size: float = 0.2,
    dataset_options: Mapping[str, Any] | None = None,
    method_options: Mapping[str, Any] | None = None,
    source_domain: str | None = None,
    target_domain: str | None = None,
    max_train_rows: int | None = None,
    train_group_share: float | None = None,
    audits: Sequence[str] | None = None,
    data_home: str | None = None,
    verbose: bool = False,
    announce: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    r"""Fit one registered method on one seeded split and return its test panel.

    The run (i) loads ``dataset`` and splits it with ``random_state=seed`` (preprocessing is
    fit on the training part only; the sensitive attribute is an input feature only when
    the method's :class:`~otfair.experiments.methods.MethodSpec` says so), (ii) builds the
    estimator from the method registry with ``random_state=seed``, (iii) fits it with
    ``sensitive_features`` and (iv) scores the test split with
    :func:`otfair.metrics.fairness_report`. For a classifier the audited score is
    :math:`\hat p(x) = P(\hat Y = 1 \mid x)` from ``predict_proba``; for a regressor it is
    the prediction.

    With ``source_domain`` and ``target_domain`` (AdapFair's data-drift scenario, adapfair
    §V), :func:`otfair.datasets.load_domain_shift` provides both domains in one feature
    space, the estimator is fit on the target training part with
    ``source_data=(X_src, y_src, s_src)`` (the source training part, on which a frozen
    classifier is pretrained) and evaluated on the target test part.

    Parameters
    ----------
    dataset : str or FairDataset
        Dataset name for :func:`otfair.datasets.load_dataset`; ``"module:function"``
        for a user factory returning a ``FairDataset``; or an already loaded dataset
        (anything with a ``split`` method returning a ``FairSplit``).
    method : str
        Registered method name (see :func:`otfair.experiments.methods.list_methods`).
    strength : float, optional
        Trade-off parameter of the method's paper; ``None`` uses the method default.
    seed : int, default=0
        Seed of the train/test split, of the subsample and of the estimator.
    notion : str, optional
        Fairness notion (``"dp"``, ``"eo"``, ``"eopp"``) for methods that support several.
    epochs : int, optional
        Training budget; ``None`` uses the method default.
    device : str, default="cpu"
        Torch device for torch-based methods.
    test_size : float, default=0.2
        Fraction of rows in the test split (the papers use 80/20 or 70/30 splits).
    dataset_options : mapping, optional
        Keyword options of the dataset loader (e.g. ``{"sensitive": "race"}``).
    method_options : mapping, optional
        Extra keyword options of the method builder.
    source_domain, target_domain : str, optional
        Domains of a domain-shift pair; both or neither.
    max_train_rows : int, optional
        Subsample the training part to at most this many rows (quick profiles). The test
        part is never subsampled.
    train_group_share : float, optional
        Imbalance the training part in the sensitive group (FTM paper §5.4.1, Table 3):
        keep every ``s = 1`` row and draw (with ``seed``) group-0 rows until they are this
        share of it (0.05 = the paper's 5:95). Applied after ``max_train_rows``; the test
        part is untouched. Needs a binary 0/1 sensitive attribute.
    data_home : str, optional
        Data directory passed to the dataset loader (``data_home=``; see
        :func:`otfair.datasets.get_data_home` for the search order without it).
    verbose : bool, default=False
        Progress output of the estimator, passed as ``verbose=`` to estimators that take
        it (their ``get_params`` has it) and ignored by the others.
    announce : callable, optional
        Called with one line naming the training budgets the method declares in
        ``MethodSpec.announce`` (e.g. AdapFair's ``base_epochs``) before fitting.
    audits : sequence of str, optional
        Extra audits that need the model or the inputs (``"ftm"``: subset fairness on
        random half-spaces and, for German and Dutch, on the halves split by an input
        variable, fair matching transport cost and consistency; ``"sfp"``:
        self-fulfilling prophecy against an unfair reference fitted on the same split,
        with its 2x2 tables; see :mod:`._audits`).

    Returns
    -------
    dict
        Run information (``dataset``, ``method``, ``task``, ``strength`` and ``notion``
        as used, i.e. the method's defaults when not given, ``seed``, ``n_train``,
        ``n_test``, domains), the ``fairness_report(...).summary``
        panel, ``fit_time_s`` and ``predict_time_s`` (wall seconds), and the keys of the
        method's ``extra_report`` (e.g. AdapFair's ``baseline`` panel).

    Raises
    ------
    ValueError
        For an unknown method, a dataset whose task does not match the method's, only one
        of the two domains, domains for a method that takes none, a strength for a method
        without one, a notion the method does not support, an unknown or ill-typed
        method option, or invalid numeric arguments.

    Examples
    --------
    >>> from otfair.experiments import run_single
    >>> result = run_single("synthetic", "unfair", seed=0, epochs=2)  # doctest: +SKIP
    >>> sorted(result)[:3]  # doctest: +SKIP
    ['accuracy', 'auc', 'dataset']
    """
    from otfair.experiments.methods import get_method
    from otfair.metrics import fairness_report

    seed = _check_int(seed, "seed", minimum=0)
    test_size = _check_test_size(test_size)
    if epochs is not None:
        epochs = _check_int(epochs, "epochs", minimum=1)
    if max_train_rows is not None:
        max_train_rows = _check_int(max_train_rows, "max_train_rows", minimum=2)
    if train_group_share is not None:
        train_group_share = _check_share(train_group_share)
    if strength is not None:
        if isinstance(strength, bool) or not isinstance(strength, (int, float, np.number)):
            raise TypeError(f"`strength` must be a number; got {strength!r}.")
        strength = float(strength)
    if (source_domain is None) != (target_domain is None):
        raise ValueError("`source_domain` and `target_domain` must be given together.")
    audits = check_audits(audits)
    spec = get_method(method)
    dataset_options = dict(dataset_options or {})
    method_options = dict(method_options or {})
    notion = _check_against_spec(
        spec,
        strength=strength,
        notion=notion,
        domains=source_domain is not None,
        method_options=method_options,
    )
    if data_home is not None:
        if not isinstance(dataset, str) or ":" in dataset:
            raise ValueError("`data_home` can only be used with a registered dataset name.")
        dataset_options["data_home"] = str(data_home)

    domains = None if source_domain is None else (source_domain, str(target_domain))
    split_args = {
        "test_size": test_size,
        "random_state": seed,
        "sensitive_as_input": spec.sensitive_as_input,
    }
    name, source, split, loaded = _load_splits(dataset, domains, dataset_options, split_args)
    task = split.task
    if task != spec.task:
        raise ValueError(
            f"Method {method!r} solves {spec.task}, but dataset {name!r} is a {task} "
            "task (check the dataset options, e.g. its target)."
        )
    if max_train_rows is not None:
        split = _subsample_train(split, max_train_rows, seed)
        if source is not None:
            source = _subsample_train(source, max_train_rows, seed)
    if train_group_share is not None:
        if source is not None:
            raise ValueError("`train_group_share` cannot be combined with domains.")
        split = _imbalance_train(split, train_group_share, seed)

    if strength is None:
        strength = spec.strength_for(name)
    estimator = spec.build(
        strength,
        notion=notion,
        random_state=seed,
        epochs=epochs,
        device=device,
        dataset=name,
        **method_options,
    )
    _configure(estimator, spec, verbose=verbose, announce=announce, n_rows=len(split.y_train))
    fit_kwargs: dict[str, Any] = {"sensitive_features": split.s_train}
    if source is not None:
        fit_kwargs["source_data"] = (source.X_train, source.y_train, source.s_train)
    start = time.perf_counter()
    estimator.fit(split.X_train, split.y_train, **fit_kwargs)
    fit_time = time.perf_counter() - start

    start = time.perf_counter()
    scores = _positive_scores(estimator, split.X_test, task)
    predict_time = time.perf_counter() - start
    panel = fairness_report(split.y_test, scores, sensitive_features=split.s_test, task=task)

    result: dict[str, Any] = {
        "dataset": name,
        "method": method,
        "task": task,
        "strength": strength,
        "notion": notion,
        "seed": seed,
        "n_train": len(split.y_train),
        "n_test": len(split.y_test),
        "source_domain": source_domain,
        "target_domain": target_domain,
    }
    result.update(panel.summary)
    result["fit_time_s"] = fit_time
    result["predict_time_s"] = predict_time
    reference = None
    if "sfp" in audits:
        if source is not None or task != "classification":
            raise ValueError(
                "The 'sfp' audit needs a classification run without domains "
                f"(got task={task!r}, domains={source_domain!r}->{target_domain!r})."
            )
        key = (
            name,
            repr(sorted(dataset_options.items())),
            seed,
            test_size,
            max_train_rows,
            train_group_share,
            epochs,
            spec.sensitive_as_input,
        )
        reference = _reference_scores(key, split, seed=seed, epochs=epochs, device=device)
    raw = raw_test_features(loaded, split) if loaded is not None and "ftm" in audits else None
    result.update(run_audits(audits, estimator, split, scores, seed, reference, raw))
    if spec.extra_report is not None:
        result.update(spec.extra_report(estimator, split))
    return result
