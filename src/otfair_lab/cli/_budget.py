"""``otfair fit --max-violation B``: choose the method's strength with FairnessCV.

:func:`check_budget` validates the options without importing torch (a bad value is one
``error:`` line and exit 2 before any work); :func:`run_budget_single` runs the fit: the
registry's estimator, wrapped in :class:`~otfair.estimators.FairnessCV`, is fitted on
the training split, and its ``best_estimator_`` is audited on the test split like any
``otfair fit`` run, with the chosen strength and the cross-validated violation added.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

#: measures bounded by 1 (a budget above 1 cannot bind); error_gap and a regressor's wdp
#: are in the target's units
BOUNDED_METRICS = (
    "dp_gap",
    "eo_gap",
    "max_eo_gap",
    "tpr_gap",
    "fpr_gap",
    "mean_score_gap",
    "ksdp",
    "tvdp",
    "pdp_violation",
    "peo_violation",
)


def check_budget(
    max_violation: float, metric: str | None, cv: int, strength: float | None
) -> str | None:
    """Return why the ``--max-violation`` options are invalid, or ``None`` (no imports)."""
    if strength is not None:
        return "--strength and --max-violation exclude each other (FairnessCV chooses it)."
    if not math.isfinite(max_violation) or max_violation < 0:
        return f"--max-violation must be a finite number >= 0; got {max_violation!r}."
    if max_violation > 1 and metric in BOUNDED_METRICS:
        return f"--max-violation {max_violation:g} exceeds 1, the largest possible {metric}."
    if cv < 2:
        return f"--cv must be an integer >= 2; got {cv}."
    return None


def default_metric(task: str, notion: str | None) -> str:
    """Return FairnessCV's ``metric="auto"`` for ``task`` and ``notion``."""
    from otfair.estimators import default_violation_metric

    return default_violation_metric(task, notion)


def run_budget_single(
    dataset: Any,
    method: str,
    max_violation: float,
    metric: str | None,
    cv: int,
    *,
    announce: Callable[[str], None] | None = None,
    **run_args: Any,
) -> dict[str, Any]:
    """Fit the run's method through FairnessCV; return the run's result dict.

    The run is ``RunRequest.from_args(dataset, method, **run_args)``. Raises
    ``ValueError`` for a method without a strength FairnessCV can set, domains, a metric
    of the other task, a budget above 1 for a bounded measure or an infeasible budget
    (the message names the lowest violation reached), or every strength within it below
    the best constant predictor.
    """
    from otfair.estimators import FairnessCV, get_violation_metric, strength_param
    from otfair_lab.experiments._request import RunRequest
    from otfair_lab.experiments._single import build_estimator, evaluate, prepare_data

    request = RunRequest.from_args(dataset, method, **run_args)
    if request.source_domain is not None:
        raise ValueError("--max-violation does not take --source-domain/--target-domain.")
    data = prepare_data(request)
    task = data.split.task
    name = metric or default_metric(task, request.notion)
    if max_violation > 1 and name in BOUNDED_METRICS:
        raise ValueError(f"--max-violation {max_violation:g} exceeds 1, the largest {name}.")
    get_violation_metric(name, task)
    estimator = build_estimator(request, data, None, announce=announce)
    try:
        strength_param(estimator)
    except ValueError:
        raise ValueError(
            f"--max-violation needs a method with a trade-off strength that FairnessCV can "
            f"set (FairClassifier, CENet, WassersteinNet); {request.method!r} builds "
            f"{type(estimator).__name__}."
        ) from None
    search = FairnessCV(estimator, max_violation=max_violation, metric=name, cv=cv)
    if announce is not None:
        announce(f"FairnessCV: {cv} folds, metric {name}, budget {max_violation:g}")
    split = data.split
    start = time.perf_counter()
    try:
        search.fit(split.X_train, split.y_train, sensitive_features=split.s_train)
    except ValueError as exc:  # the library's words, in the command's
        raise ValueError(in_command_words(str(exc))) from None
    fit_time = time.perf_counter() - start
    best = search.best_estimator_
    result = evaluate(request, data, best, strength=search.strength_, fit_time=fit_time)
    measure = get_violation_metric(name, task)
    result.update(_cv_fields(search, split, measure, max_violation, name))
    return result


def in_command_words(message: str) -> str:
    """FairnessCV's refusal in ``otfair fit``'s words: its options, no ``strengths``.

    >>> in_command_words("No strength meets max_violation=0.01: ... Raise `max_violation`, "
    ...                  "or add larger `strengths`.")
    'No strength meets --max-violation 0.01: ... Raise --max-violation.'
    """
    message = message.replace("max_violation=", "--max-violation ")
    message = message.replace("`max_violation`", "--max-violation")
    return message.replace(", or add larger `strengths`", "")


#: The columns of FairnessCV's ``cv_results_`` that the run's ``path`` keeps.
_PATH_COLUMNS = (
    "strength",
    "mean_test_score",
    "mean_test_violation",
    "test_violation",
    "upper_test_violation",
    "above_reference",
    "feasible",
)


def _cv_fields(
    search: Any, split: Any, measure: Callable[..., Any], max_violation: float, name: str
) -> dict[str, Any]:
    """Return what a fitted FairnessCV adds to the run: its choice, path and test violation."""
    import numpy as np

    best = search.best_estimator_
    if split.task == "classification":
        y_test = (split.y_test == best.classes_[1]).astype(int)
        scores = best.predict_proba(split.X_test)[:, 1]
    else:
        y_test, scores = split.y_test, best.predict(split.X_test)
    res = search.cv_results_
    rows = ~res["reference"]  # the strengths; the last row is the best constant predictor
    ref = int(np.flatnonzero(res["reference"])[0])
    return {
        "max_violation": max_violation,
        "metric": name,
        "cv": search.n_splits_,
        "cv_violation": search.best_violation_,
        "cv_score": search.best_score_,
        # the folds' choice, and the kept refit's violation on its own training rows
        # (FairnessCV's check_refit moves up while it is over the budget there)
        "cv_strength": search.refit_history_[0]["strength"],
        "train_violation": search.refit_history_[-1]["train_violation"],
        "test_violation": float(measure(y_test, scores, sensitive_features=split.s_test)),
        "margin": search.margin,
        "constant_score": float(res["mean_test_score"][ref]),
        "constant_violation": float(res["test_violation"][ref]),
        "path": {key: res[key][rows].tolist() for key in _PATH_COLUMNS},
    }


def print_budget(result: dict[str, Any]) -> None:
    """Print the run's panel and the cross-validated path (text output)."""
    from otfair_lab.cli._common import print_panel, print_table

    path = result["path"]
    flat = {k: v for k, v in result.items() if k != "path"}
    title = f"{result['method']} on {result['dataset']}: strength {result['strength']:g}"
    print_panel(title, flat)
    rows = [
        [s, a, v, u, "yes" if ok else "no", "yes" if above else "no"]
        for s, a, v, u, ok, above in zip(
            path["strength"],
            path["mean_test_score"],
            path["test_violation"],
            path["upper_test_violation"],
            path["feasible"],
            path["above_reference"],
            strict=True,
        )
    ]
    rows.append(
        ["constant", result["constant_score"], result["constant_violation"], "", "", "(reference)"]
    )
    print_table(
        f"FairnessCV path ({result['cv']} folds; violation: held-out predictions pooled)",
        ["strength", "score", result["metric"], "upper bound", "feasible", "above constant"],
        rows,
    )
