"""Every registered method's estimator in a tiny configuration, and a sensitive-features wrapper.

Shared by ``test_global_rng.py`` and ``test_sklearn_checks.py``. ``tiny(name)`` builds the
method's estimator through the registry (``get_method(name).build``) with a training
budget small enough for scikit-learn's checks (many fits); ``with_default_sensitive``
returns an instance of a subclass that supplies ``sensitive_features`` whenever a method
is called without it (scikit-learn's checks never pass it), derived row by row from ``X``
so that predictions on a subset of rows match those on all rows.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any

import numpy as np
from sklearn.utils.metaestimators import available_if

from otfair_lab.experiments.methods import get_method, list_methods

#: Training budget of each method for the checks (a few epochs on tiny models).
_FAIR_CLASSIFIER = {"epochs": 10, "batch_size": 32, "lr": 0.05}
_TINY: dict[str, dict[str, Any]] = {
    "adapfair": {
        "epochs": 2,
        "base_epochs": 10,
        "batch_size": 64,
        "n_blocks": 1,
        "hidden": (4,),
        "lr": 0.01,
    },
    "adapfair-blind": {
        "epochs": 2,
        "base_epochs": 10,
        "batch_size": 64,
        "n_blocks": 1,
        "hidden": (4,),
        "lr": 0.01,
    },
    "adv": {**_FAIR_CLASSIFIER, "hidden": (8,)},
    "barycenter": _FAIR_CLASSIFIER,
    "cenet": {"epochs": 5, "encoder_hidden": (8,), "adversary_hidden": (8,), "batch_size": 32},
    "cfair": {
        "epochs": 5,
        "latent_dim": 4,
        "encoder_hidden": (8,),
        "adversary_hidden": (8,),
        "batch_size": 32,
        "lr": 0.01,
    },
    "fair-nf": {
        "epochs": 3,
        "n_blocks": 1,
        "flow_hidden": (4,),
        "head_hidden": (4,),
        "n_components": 2,
        "batch_size": 64,
        "lr": 0.01,
    },
    "fair-nf-discrete": {
        "epochs": 3,
        "density_epochs": 2,
        "density_hidden": (4,),
        "head_hidden": (4,),
        "n_bins": 2,
        "batch_size": 64,
        "lr": 0.01,
    },
    "fairtorch-reduction": {**_FAIR_CLASSIFIER, "hidden": (8,)},
    "ftm": {**_FAIR_CLASSIFIER, "hidden": (8,), "group_batch_size": 16},
    "ftm-joint": {**_FAIR_CLASSIFIER, "hidden": (8,), "group_batch_size": 16},
    "gapreg": {**_FAIR_CLASSIFIER, "hidden": (8,)},
    "laftr": {
        "epochs": 5,
        "latent_dim": 4,
        "encoder_hidden": (8,),
        "head_hidden": (),
        "adversary_hidden": (8,),
        "batch_size": 32,
        "lr": 0.01,
    },
    "norm": _FAIR_CLASSIFIER,
    "otf": _FAIR_CLASSIFIER,
    "reduction": {"max_iter": 5},
    "sipm-lfr": {
        "epochs": 5,
        "latent_dim": 4,
        "encoder_hidden": (8,),
        "batch_size": 32,
        "lr": 0.01,
    },
    "unfair": _FAIR_CLASSIFIER,
    "unfair-mlp": {**_FAIR_CLASSIFIER, "hidden": (8,)},
    "unfair-reg": {"epochs": 5, "encoder_hidden": (8,), "batch_size": 32},
    "wassersteinnet": {
        "epochs": 5,
        "encoder_hidden": (8,),
        "adversary_hidden": (8,),
        "batch_size": 32,
    },
    "fair-pca": {"n_components": 1},
}
_NO_EPOCHS = {
    "bgl",
    "cod",
    "cod-rff",
    "fair-pca",
    "ot-repair",
    "reduction",
    "wb-postprocess",
    "wb-regression",
}


def method_names() -> list[str]:
    """Every registered method."""
    return list_methods()


def tiny(name: str, random_state: Any = 0, *, sensitive_column: bool = True) -> Any:
    """Build method ``name``'s estimator through the registry with a tiny budget.

    ``sensitive_column=False`` sets a ``sensitive_column`` parameter to None: ``X``
    carries no sensitive column, ``sensitive_features`` is passed instead.
    """
    spec = get_method(name)
    options = dict(_TINY.get(name, {}))
    epochs = options.pop("epochs", None)
    if name in _NO_EPOCHS:
        epochs = None
    est = spec.build(spec.default_strength, random_state=random_state, epochs=epochs, **options)
    if not sensitive_column and "sensitive_column" in est.get_params(deep=False):
        est.set_params(sensitive_column=None)
    return est


def row_groups(X: Any) -> np.ndarray | None:
    """A 0/1 group per row, a function of the row alone (``None`` if X is not 2-D numeric)."""
    dtype = getattr(X, "dtype", None)  # scikit-learn's check_complex_data: X is refused
    if dtype is not None and np.issubdtype(dtype, np.complexfloating):
        return None
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if arr.ndim != 2 or arr.shape[1] == 0 or not np.all(np.isfinite(arr)):
        return None
    return (np.sin(12.9898 * arr.sum(axis=1) + 0.5) > 0).astype(np.int64)


def fit_groups(X: Any, y: Any) -> np.ndarray | None:
    """Groups for ``fit``: :func:`row_groups`, alternating when that gives one group."""
    groups = row_groups(X)
    if groups is None:
        return None
    if len(np.unique(groups)) < 2 or min(np.bincount(groups)) < 2:
        groups = np.arange(len(groups)) % 2
    return groups


def _takes_sensitive(method: Any) -> bool:
    try:
        return "sensitive_features" in inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False


def _base_has(self: Any, method: str) -> bool:
    """Whether the wrapped estimator's own class offers ``method`` on ``self``."""
    try:
        getattr(super(type(self), self), method)
    except AttributeError:
        return False
    return True


def _wrapped_class(cls: type) -> type:
    """A subclass of ``cls`` whose methods supply ``sensitive_features`` when omitted."""
    module = sys.modules[__name__]
    name = f"Default{cls.__name__}"
    if hasattr(module, name):
        return getattr(module, name)
    namespace: dict[str, Any] = {"__module__": __name__, "__qualname__": name}

    def fit(self, X, y=None, sensitive_features=None, **kwargs):
        if sensitive_features is None:
            sensitive_features = fit_groups(X, y)
        return cls.fit(self, X, y, sensitive_features=sensitive_features, **kwargs)

    namespace["fit"] = fit
    for method in ("predict", "predict_proba", "decision_function", "transform"):
        base = getattr(cls, method, None)
        if base is None or not _takes_sensitive(base):
            continue

        def call(self, X, *args, _method=method, sensitive_features=None, **kwargs):
            if sensitive_features is None:
                sensitive_features = row_groups(X)
            return getattr(cls, _method)(
                self, X, *args, sensitive_features=sensitive_features, **kwargs
            )

        call.__name__ = method
        # offered only where the base offers it (an ``available_if`` method)
        namespace[method] = available_if(lambda self, _m=method: _base_has(self, _m))(call)
    if hasattr(cls, "fit_transform") and "fit_transform" in vars(cls):

        def fit_transform(self, X, y=None, **kwargs):
            return self.fit(X, y, **kwargs).transform(X)

        namespace["fit_transform"] = fit_transform
    wrapped = type(name, (cls,), namespace)
    setattr(module, name, wrapped)
    return wrapped


def with_default_sensitive(estimator: Any) -> Any:
    """Return ``estimator`` as its wrapped class (same parameters), see the module doc."""
    cls = _wrapped_class(type(estimator))
    return cls(**estimator.get_params(deep=False))


def toy_data(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(X, y, s)`` for method ``name``: its task, ``s`` appended to X when it is an input."""
    spec = get_method(name)
    rng = np.random.default_rng(1)
    n = 160
    X = rng.normal(size=(n, 4)).astype(np.float32)
    s = (np.arange(n) % 2).astype(np.int64)
    if spec.task == "regression":
        y = X[:, 0] + 0.5 * s + 0.1 * rng.normal(size=n)
    else:
        y = ((X[:, 0] + 0.5 * s + 0.3 * rng.normal(size=n)) > 0.25).astype(np.int64)
        y[:4] = [0, 1, 0, 1]  # every (group, label) cell present
    if spec.sensitive_as_input:
        X = np.column_stack([X, s]).astype(np.float32)
    return X, y, s
