"""The validated arguments of one experiment run: :class:`RunRequest`.

``otfair fit`` and :func:`otfair_lab.experiments.run_single` describe a run by the same
eighteen arguments; the sweep's stacked groups describe K of them that differ only in
strength. :class:`RunRequest` holds them once, checked in one place
(:meth:`RunRequest.__post_init__`), with the method's default notion filled in, so the
stages of a run (:mod:`otfair_lab.experiments._single`: prepare data, build, fit, evaluate)
take one object that is valid by construction instead of re-reading loose keywords.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from otfair.utils import check_strength
from otfair_lab.experiments._audits import check_audits

if TYPE_CHECKING:
    from otfair_lab.experiments.methods import MethodSpec

__all__ = ["RunRequest", "check_against_spec"]


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


def _strength(strength: Any) -> float | None:
    return None if strength is None else check_strength(strength, minimum=None)


def check_against_spec(
    spec: MethodSpec,
    *,
    strength: Any,
    notion: str | None,
    domains: bool,
    method_options: Mapping[str, Any],
    epochs: Any = None,
) -> str | None:
    """Check the run's arguments against what the method takes; return the notion used.

    Raises ``ValueError`` for a strength given to a method without one, a notion the
    method does not support, domains given to a method that does not take them, or an
    unknown option (:func:`otfair_lab.experiments._names.method_problem`, the CLI's words),
    and :class:`~sklearn.utils._param_validation.InvalidParameterError` (a
    ``ValueError``) for a strength, ``epochs`` or option value that the estimator's
    ``_parameter_constraints`` refuse (its ``fit``'s words,
    :func:`otfair_lab.experiments.methods.check_options`).
    """
    from otfair_lab.experiments._names import from_spec, method_problem
    from otfair_lab.experiments.methods import check_options, check_run_values

    problem = method_problem(
        spec.name,
        from_spec(spec),
        strength=strength,
        notion=notion,
        domains=domains,
        options=method_options,
    )
    if problem:
        raise ValueError(problem)
    check_run_values(spec, strength=strength, epochs=epochs)
    check_options(spec, dict(method_options))
    return notion if notion is not None else (spec.notions[0] if spec.notions else None)


@dataclass(frozen=True)
class RunRequest:
    """One experiment run, validated: what :func:`~otfair_lab.experiments.run_single` takes.

    Every instance is checked on construction (``__post_init__``), so
    ``dataclasses.replace(request, strength=a)`` is checked too; the checks are
    idempotent. Build one from the loose arguments of ``run_single`` with
    :meth:`from_args` (which also folds ``data_home`` into ``dataset_options``).

    Attributes
    ----------
    dataset : str or FairDataset
        Registered dataset name, ``"module:function"`` factory, or a loaded dataset.
    method : str
        Registered method name.
    strength : float or None
        The method's trade-off strength as given (``None``: the method's default for
        the dataset, resolved by :func:`otfair_lab.experiments._single.run_strength`).
    seed : int
        Seed of the split, the subsamples and the estimator (>= 0).
    notion : str or None
        The fairness notion used: the given one, else the method's first (``None`` for
        methods without a choice).
    epochs : int or None
        Training budget (>= 1); ``None`` for the method's default.
    device : str
        Torch device of torch-based methods.
    test_size : float
        Test fraction of the split, in (0, 1).
    dataset_options, method_options : dict
        Loader options (with ``data_home`` when given) and builder options (checked
        against the method's constructor).
    source_domain, target_domain : str or None
        The two domains of a domain-shift pair, both or neither.
    max_train_rows : int or None
        Subsample of the training part (>= 2 rows).
    train_group_share : float or None
        Share of group 0 in an imbalanced training part, in (0, 1).
    audits : tuple of str
        Extra audits (:data:`otfair_lab.experiments._audits.AUDITS`).
    verbose : bool
        Progress output of estimators that take ``verbose``.

    Raises
    ------
    TypeError, ValueError
        Naming the argument: a non-integer or negative ``seed``, ``max_train_rows`` < 2,
        ``test_size`` or ``train_group_share`` outside (0, 1), one domain without the
        other, an unknown audit or method, and what :func:`check_against_spec` refuses
        (a ``strength`` or ``epochs`` that the estimator's constraints refuse, in its
        ``fit``'s words).
    """

    dataset: Any
    method: str
    strength: float | None = None
    seed: int = 0
    notion: str | None = None
    epochs: int | None = None
    device: str = "cpu"
    test_size: float = 0.2
    dataset_options: Mapping[str, Any] = field(default_factory=dict)
    method_options: Mapping[str, Any] = field(default_factory=dict)
    source_domain: str | None = None
    target_domain: str | None = None
    max_train_rows: int | None = None
    train_group_share: float | None = None
    audits: tuple[str, ...] = ()
    verbose: bool = False

    def __post_init__(self) -> None:
        from otfair_lab.experiments.methods import get_method

        checked: dict[str, Any] = {
            "seed": _check_int(self.seed, "seed", minimum=0),
            "test_size": _check_test_size(self.test_size),
            "verbose": bool(self.verbose),
        }
        if self.max_train_rows is not None:
            checked["max_train_rows"] = _check_int(
                self.max_train_rows, "max_train_rows", minimum=2
            )
        if self.train_group_share is not None:
            checked["train_group_share"] = _check_share(self.train_group_share)
        if (self.source_domain is None) != (self.target_domain is None):
            raise ValueError("`source_domain` and `target_domain` must be given together.")
        checked["audits"] = check_audits(self.audits)
        spec = get_method(self.method)
        checked["dataset_options"] = dict(self.dataset_options or {})
        checked["method_options"] = dict(self.method_options or {})
        checked["notion"] = check_against_spec(
            spec,
            strength=self.strength,
            notion=self.notion,
            domains=self.source_domain is not None,
            method_options=checked["method_options"],
            epochs=self.epochs,
        )
        checked["strength"] = _strength(self.strength)
        if self.epochs is not None:  # valid for the estimator: an int >= 1
            checked["epochs"] = int(self.epochs)
        if self.target_domain is not None:
            checked["target_domain"] = str(self.target_domain)
        for name, value in checked.items():  # frozen: normalized values set once, here
            object.__setattr__(self, name, value)

    @classmethod
    def from_args(
        cls, dataset: Any, method: str, *, data_home: str | None = None, **fields: Any
    ) -> RunRequest:
        """Validate the arguments of :func:`~otfair_lab.experiments.run_single` (see there).

        ``fields`` are the keyword fields of the class (``strength``, ``seed``, ...;
        ``audits=None`` is no audit). ``data_home`` becomes the dataset option
        ``data_home`` (a registered dataset name only: ``ValueError`` otherwise).
        """
        request = cls(dataset, method, **fields)
        if data_home is None:
            return request
        if not isinstance(dataset, str) or ":" in dataset:
            raise ValueError("`data_home` can only be used with a registered dataset name.")
        options = {**request.dataset_options, "data_home": str(data_home)}
        return replace(request, dataset_options=options)

    @property
    def spec(self) -> MethodSpec:
        """The method's registry entry."""
        from otfair_lab.experiments.methods import get_method

        return get_method(self.method)

    @property
    def domains(self) -> tuple[str, str] | None:
        """``(source_domain, target_domain)``, or ``None`` for a run on one dataset."""
        if self.source_domain is None:
            return None
        return self.source_domain, str(self.target_domain)
