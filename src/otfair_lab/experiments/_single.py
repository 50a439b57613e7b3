r"""One experiment run: load a dataset, split it by seed, fit a registered method, audit it.

This is the unit of work shared by ``otfair fit`` (which prints the result) and the sweep
runner (which stores it as one row of the result store). A run is small stages over one
validated :class:`~otfair_lab.experiments._request.RunRequest`:

1. :func:`~otfair_lab.experiments._run_data.prepare_data` -> :class:`RunData` (load, split,
   subsample or imbalance the training part);
2. :func:`build_estimator` (the registry's estimator at :func:`run_strength`);
3. :func:`fit_estimator` (wall seconds);
4. :func:`evaluate` (test panel, audits, the method's extra report) -> the result dict.

:func:`run_request` chains them and :func:`run_single` is ``run_request`` over
``RunRequest.from_args(...)``; a stacked sweep group (``_stacking``) prepares the
data once, fits one curve estimator and evaluates each strength.

A run (i) loads the dataset and splits it with ``random_state=seed`` (preprocessing is
fit on the training part only; the sensitive attribute is an input feature only when the
method's :class:`~otfair_lab.experiments.methods.MethodSpec` says so), (ii) builds the
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
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from otfair_lab.experiments._audits import raw_test_features, run_audits
from otfair_lab.experiments._request import RunRequest
from otfair_lab.experiments._run_data import RunData, prepare_data

__all__ = [
    "RUN_INFO_KEYS",
    "TIMING_KEYS",
    "RunData",
    "build_estimator",
    "evaluate",
    "fit_estimator",
    "prepare_data",
    "run_request",
    "run_single",
    "run_strength",
]

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


def _positive_scores(estimator: Any, X: np.ndarray, task: str) -> np.ndarray:
    """Scores used by the audit: P(Y=1 | x) for classifiers, predictions for regressors."""
    if task == "classification":
        proba = np.asarray(estimator.predict_proba(X))
        return proba[:, 1] if proba.ndim == 2 else proba
    return np.asarray(estimator.predict(X), dtype=np.float64).ravel()


#: The panel's measures of hard decisions, measured again on a randomized classifier's draws
HARD_DECISION_KEYS = ("accuracy", "dp_gap", "tpr_gap", "fpr_gap", "eo_gap", "max_eo_gap")


def _decisions_of_randomized(estimator: Any, split: Any) -> dict[str, float]:
    """Return a randomized classifier's hard-decision measures on its own draws (``drawn_*``).

    ``ReductionClassifier`` (``prediction_ == "randomized"``, fairlearn's rule) predicts
    by drawing each label with its mixture probability. The panel, like every run's,
    cuts the probability at 0.5 (the archived protocols' numbers, and a deterministic
    model); its draws' accuracy and gaps are added beside it as ``drawn_accuracy``,
    ``drawn_dp_gap``..., and ``otfair fit`` prints them. Empty for other estimators.
    """
    from otfair.metrics import fairness_report

    if getattr(estimator, "prediction_", None) != "randomized":
        return {}
    labels = np.asarray(estimator.predict(split.X_test))
    drawn = (labels == estimator.classes_[1]).astype(np.float64)
    hard = fairness_report(split.y_test, drawn, sensitive_features=split.s_test)
    return {f"drawn_{key}": hard.summary[key] for key in HARD_DECISION_KEYS}


def _fit_quality_warned(estimator: Any) -> bool:
    """Whether the fit (or the estimator a wrapper fitted) gave a ``FitQualityWarning``.

    otfair's torch estimators keep the message of their fit's check against the best
    constant predictor in ``fit_quality_warning_`` (None when it passed); a stacked
    curve's models each keep their own, which a sweep's caught warnings cannot tell.
    """
    for model in (estimator, getattr(estimator, "estimator_", None)):
        if getattr(model, "fit_quality_warning_", None) is not None:
            return True
    return False


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
    from otfair_lab.experiments.methods import get_method

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


#: Fewer optimizer steps than this are announced (``otfair fit``): likely under-trained.
FEW_STEPS = 300


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
        budget = f"{epochs} epochs"
        if params.get("solver") == "lbfgs":  # full batch: epochs caps the iterations
            budget = f"full-batch L-BFGS, at most {epochs} iterations,"
        announce(f"{spec.name}: training {budget}{rows}{bar}")
    batch = params.get("batch_size")
    few = isinstance(epochs, int) and epochs > 1 and isinstance(batch, int) and n_rows
    few = few and params.get("solver") != "lbfgs"  # full-batch: epochs caps iterations
    if announce is not None and few:  # (one epoch asked for is a smoke test: no note)
        assert isinstance(epochs, int) and isinstance(batch, int) and n_rows  # as `few` checked
        steps = epochs * -(-n_rows // batch)
        if steps < FEW_STEPS:  # e.g. the OTF paper's batch of 1,000 on German's 800 rows
            full_batch = (
                " (or -o solver=lbfgs -o tol=1e-4: full-batch steps to convergence)"
                if params.get("model") == "logistic" and "solver" in params
                else ""
            )
            announce(
                f"{spec.name}: only {steps} optimizer steps ({epochs} epochs of "
                f"{-(-n_rows // batch)} batch(es) of up to {batch} rows); a small dataset may "
                f"stay under-trained: try -o batch_size=64 or more --epochs{full_batch}"
            )


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
    """Fit one registered method on one seeded split and return its test panel.

    The run's stages and the domain-shift scenario are described in the module docstring.

    Parameters
    ----------
    dataset : str or FairDataset
        Dataset name (:func:`otfair.datasets.load_dataset`), ``"module:function"`` for a
        user factory, or a loaded dataset (its ``split`` method returns a ``FairSplit``).
    method : str
        Registered method name (see :func:`otfair_lab.experiments.methods.list_methods`).
    strength, notion, epochs : float, str, int; optional
        Trade-off parameter of the method's paper, fairness notion (``"dp"``, ``"eo"``,
        ``"eopp"``) and training budget; ``None`` uses the method's defaults.
    seed : int, default=0
        Seed of the train/test split, of the subsample and of the estimator.
    device, test_size : str, float; default "cpu", 0.2
        Torch device of torch-based methods; fraction of rows in the test split.
    dataset_options, method_options : mapping, optional
        Options of the dataset loader (e.g. ``{"sensitive": "race"}``) and of the builder.
    source_domain, target_domain : str, optional
        Domains of a domain-shift pair; both or neither.
    max_train_rows, train_group_share : int, float; optional
        Subsample the training part to at most this many rows, then imbalance it in the
        sensitive group (FTM §5.4.1: keep every ``s = 1`` row, draw group-0 rows with
        ``seed`` up to this share, 0.05 = 5:95; binary 0/1); the test part is untouched.
    audits : sequence of str, optional
        Extra audits that need the model or the inputs (``"ftm"``: subset fairness,
        transport cost, consistency; ``"sfp"``: self-fulfilling prophecy; ``_audits``).
    data_home : str, optional
        Data directory of the dataset loader (:func:`otfair.datasets.get_data_home`).
    verbose : bool, default=False
        Progress output, passed as ``verbose=`` to estimators that take it.
    announce : callable, optional
        Called with one line naming the method's ``MethodSpec.announce`` budgets.

    Returns
    -------
    dict
        Run information (``dataset``, ``method``, ``task``, ``strength`` and ``notion``
        as used, ``seed``, sizes, domains), the ``fairness_report(...).summary`` panel,
        ``fit_time_s``, ``predict_time_s`` and the method's ``extra_report`` keys.

    Raises
    ------
    ValueError
        For an unknown method or task, bad domains, strength, notion, option or number.

    Examples
    --------
    >>> from otfair_lab.experiments import run_single
    >>> result = run_single("synthetic", "unfair", seed=0, epochs=2)  # doctest: +SKIP
    """
    # the parameters, by name (nothing else is bound yet): RunRequest's fields, data_home
    arguments = dict(locals())
    del arguments["announce"]
    request = RunRequest.from_args(**arguments)
    return run_request(request, announce=announce)


# ---------------------------------------------------------------------------- stages
def run_strength(request: RunRequest, data: RunData) -> float | None:
    """Return the run's strength: the requested one, else the method's for the dataset."""
    if request.strength is not None:
        return request.strength
    return request.spec.strength_for(data.name)


def build_estimator(
    request: RunRequest,
    data: RunData,
    strength: float | None,
    *,
    announce: Callable[[str], None] | None = None,
) -> Any:
    """Stage 2: the registry's estimator for ``strength``, seeded with the run's seed."""
    spec = request.spec
    estimator = spec.build(
        strength,
        notion=request.notion,
        random_state=request.seed,
        epochs=request.epochs,
        device=request.device,
        dataset=data.name,
        **request.method_options,
    )
    if callable(getattr(estimator, "check_params", None)):  # data-free checks, before any note
        estimator.check_params()
    n_rows = len(data.split.y_train)
    _configure(estimator, spec, verbose=request.verbose, announce=announce, n_rows=n_rows)
    return estimator


def fit_estimator(estimator: Any, data: RunData) -> float:
    """Stage 3: fit on the training part (``source_data`` with domains); wall seconds."""
    start = time.perf_counter()
    estimator.fit(data.split.X_train, data.split.y_train, **data.fit_kwargs)
    return time.perf_counter() - start


def _sfp_reference(request: RunRequest, data: RunData) -> np.ndarray:
    """Return the unfair reference's test scores for the 'sfp' audit (cached per split)."""
    split, task = data.split, data.split.task
    if data.source is not None or task != "classification":
        raise ValueError(
            "The 'sfp' audit needs a classification run without domains "
            f"(got task={task!r}, domains={request.source_domain!r}->"
            f"{request.target_domain!r})."
        )
    key = (
        data.name,
        repr(sorted(request.dataset_options.items())),
        request.seed,
        request.test_size,
        request.max_train_rows,
        request.train_group_share,
        request.epochs,
        request.spec.sensitive_as_input,
    )
    return _reference_scores(
        key, split, seed=request.seed, epochs=request.epochs, device=request.device
    )


def evaluate(
    request: RunRequest,
    data: RunData,
    estimator: Any,
    *,
    strength: float | None,
    fit_time: float,
) -> dict[str, Any]:
    """Stage 4: the result of a fitted run (see :func:`run_single`, Returns).

    Scores the test part (:func:`otfair.metrics.fairness_report`), then runs the
    requested audits and the method's ``extra_report``.
    """
    from otfair.metrics import (
        DegeneratePredictorWarning,
        fairness_report,
        is_constant_prediction,
    )

    spec, split, task = request.spec, data.split, data.split.task
    start = time.perf_counter()
    scores = _positive_scores(estimator, split.X_test, task)
    predict_time = time.perf_counter() - start
    with warnings.catch_warnings():  # the result records a degenerate run as `constant`
        warnings.simplefilter("ignore", DegeneratePredictorWarning)
        panel = fairness_report(split.y_test, scores, sensitive_features=split.s_test, task=task)
        drawn = _decisions_of_randomized(estimator, split)

    result: dict[str, Any] = {
        "dataset": data.name,
        "method": request.method,
        "task": task,
        "strength": strength,
        "notion": request.notion,
        "seed": request.seed,
        "n_train": len(split.y_train),
        "n_test": len(split.y_test),
        "source_domain": request.source_domain,
        "target_domain": request.target_domain,
    }
    result.update(panel.summary)
    result.update(
        drawn,
        # one class for every test row, or constant scores: flagged in stores and reports
        constant=is_constant_prediction(
            scores, threshold=0.5 if task == "classification" else None
        ),
        # the fit's own check against the best constant (FitQualityWarning), per model
        fit_quality_warning=_fit_quality_warned(estimator),
        fit_time_s=fit_time,
        predict_time_s=predict_time,
    )
    reference = _sfp_reference(request, data) if "sfp" in request.audits else None
    loaded = data.loaded
    raw = (
        raw_test_features(loaded, split)
        if loaded is not None and "ftm" in request.audits
        else None
    )
    result.update(
        run_audits(request.audits, estimator, split, scores, request.seed, reference, raw)
    )
    if spec.extra_report is not None:
        result.update(spec.extra_report(estimator, split))
    return result


def run_request(
    request: RunRequest, *, announce: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """Run the stages of one request: prepare data, build, fit, evaluate."""
    data = prepare_data(request)
    strength = run_strength(request, data)
    estimator = build_estimator(request, data, strength, announce=announce)
    fit_time = fit_estimator(estimator, data)
    return evaluate(request, data, estimator, strength=strength, fit_time=fit_time)
