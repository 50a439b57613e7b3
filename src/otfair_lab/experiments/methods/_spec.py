"""The method registry: :class:`MethodSpec`, :func:`register_method`, :func:`get_method`.

A *method* is what ``otfair fit --method NAME`` and ``otfair sweep`` run: a builder of an
unfitted estimator plus what the experiment protocol needs to know about it (task, paper,
fairness notions, trade-off strength and its grid, defaults, options). The families of
built-in methods register themselves in their own modules (``_classification``,
``_regression``, ``_adapfair``), imported lazily on first use; outside code calls
:func:`register_method`.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from otfair_lab.experiments.methods._options import accepted_options

Task = Literal["classification", "regression"]

#: Modules that register the built-in methods when imported.
_FAMILY_MODULES = (
    "otfair_lab.experiments.methods._classification",
    "otfair_lab.experiments.methods._regression",
    "otfair_lab.experiments.methods._adapfair",
    "otfair_lab.experiments.methods._representation",
    "otfair_lab.experiments.methods._ot_baselines",
)


@dataclass(frozen=True)
class MethodSpec:
    """How to build, describe and evaluate one method.

    Attributes
    ----------
    name : str
        Method name used on the command line (``otfair fit --method NAME``).
    task : {"classification", "regression"}
        Task the method solves.
    build : callable
        ``build(strength, *, notion, random_state, epochs, device, dataset, **options)``
        returning an unfitted estimator. ``strength`` is the trade-off parameter of the
        paper (alpha, lambda, eps...), ``None`` meaning :meth:`strength_for` the dataset.
    strength_name : str or None
        What the strength is called in the paper; ``None`` (or ``"none"``) when the
        method has no trade-off parameter (a strength is then rejected).
    default_strengths : tuple of float
        The grid swept by ``otfair sweep`` when a config gives none.
    default_strength : float or None
        The strength used when none is given.
    dataset_strengths : mapping of str to float
        Per-dataset defaults overriding ``default_strength`` (paper settings).
    sensitive_as_input : bool
        Whether the model sees the sensitive attribute as an input feature.
    takes_domains : bool
        Whether ``fit`` takes ``source_data=`` (a source domain, AdapFair's drift
        scenario): only then may a run give a source and a target domain.
    notions : tuple of str
        Fairness notions the method supports, the first being the default; empty when
        the notion is fixed by the method (``--notion`` is then rejected).
    description : str
        One line for ``otfair methods`` and ``otfair fit --help``.
    paper : str
        The paper (and section) the method and its defaults come from.
    estimator : type or None
        The class whose constructor receives the ``-o`` options: the built estimator's,
        or, for a method that wraps one (``ot-repair``: a repair before a logistic
        regression), the wrapped one's. Its constructor parameters not set by the run
        (:data:`RUN_ARGUMENTS` and ``fixed``) are the options accepted by ``-o``, checked
        before any training.
    penalty : type or None
        For a method of :class:`~otfair.estimators.FairClassifier`: the class of its
        penalty object (:mod:`otfair.penalties`, e.g. ``FTM``), whose settings are
        ``-o`` options too (``-o matching=joint``).
    fixed : tuple of str
        Estimator (or penalty object) parameters the builder sets itself (not ``-o``
        options).
    strength_param : str or None
        The estimator parameter that receives the strength, whose constraint a run's
        strength is checked against before the build; ``None``: the first of
        ``strength`` and ``eps`` that the estimator's constructor takes
        (:attr:`strength_parameter`).
    defaults : mapping
        Settings the builder uses (for ``otfair methods describe``), e.g. ``epochs``.
    announce : mapping of str to str
        Estimator parameters whose value ``otfair fit`` announces before training, with
        what they mean (e.g. AdapFair's ``base_epochs``).
    extra_report : callable or None
        ``extra_report(estimator, split) -> dict`` with method-specific outputs merged
        into the result (e.g. AdapFair's ``baseline`` panel of the frozen classifier).
    """

    name: str
    task: Task
    build: Callable[..., Any]
    strength_name: str | None = "strength"
    default_strengths: tuple[float, ...] = ()
    default_strength: float | None = None
    dataset_strengths: Mapping[str, float] = field(default_factory=dict)
    sensitive_as_input: bool = False
    takes_domains: bool = False
    notions: tuple[str, ...] = ()
    description: str = ""
    paper: str = ""
    estimator: type[Any] | None = field(default=None, compare=False)
    penalty: type[Any] | None = field(default=None, compare=False)
    fixed: tuple[str, ...] = ()
    strength_param: str | None = None
    defaults: Mapping[str, Any] = field(default_factory=dict)
    announce: Mapping[str, str] = field(default_factory=dict)
    extra_report: Callable[[Any, Any], dict] | None = field(default=None, compare=False)

    @property
    def has_strength(self) -> bool:
        """Whether the method has a trade-off parameter."""
        return self.strength_name not in (None, "none")

    def strength_for(self, dataset: str | None = None) -> float | None:
        """Return the strength used on ``dataset`` when none is given (None: no strength)."""
        if not self.has_strength:
            return None
        value = self.dataset_strengths.get(str(dataset), self.default_strength)
        return None if value is None else float(value)

    @property
    def strength_parameter(self) -> str | None:
        """The estimator parameter that receives the strength (``None``: unknown or none)."""
        if not self.has_strength or self.estimator is None:
            return None
        if self.strength_param is not None:
            return self.strength_param
        params = inspect.signature(self.estimator.__init__).parameters
        return next((n for n in ("strength", "eps") if n in params), None)

    def option_names(self) -> tuple[str, ...]:
        """Names accepted by ``-o`` (empty when unknown: the builder checks them)."""
        return tuple(accepted_options(self))


@dataclass(frozen=True)
class RunArgs:
    """What a run tells a builder besides the strength and the ``-o`` options."""

    notion: str | None = None
    random_state: Any = None
    epochs: int | None = None
    device: Any = "cpu"
    dataset: str | None = None


def builder(make: Callable[[float | None, RunArgs, dict[str, Any]], Any]) -> Callable[..., Any]:
    """Give ``make(strength, run, options)`` the builder signature of :class:`MethodSpec`.

    The returned ``build(strength, *, notion, random_state, epochs, device, dataset,
    **options)`` packs the run's arguments into a :class:`RunArgs`.
    """

    def build(
        strength: float | None,
        *,
        notion: str | None = None,
        random_state: Any = None,
        epochs: int | None = None,
        device: Any = "cpu",
        dataset: str | None = None,
        **options: Any,
    ) -> Any:
        run = RunArgs(notion, random_state, epochs, device, dataset)
        return make(strength, run, options)

    build.__doc__ = make.__doc__
    build.__qualname__ = build.__name__ = getattr(make, "__name__", "build")
    return build


#: A trade-off parameter: its name in the paper, the grid swept and the default value.
Strength = tuple[str, tuple[float, ...], float]


def strength_spec(
    name: str,
    task: Task,
    make: Callable[[float, RunArgs, dict[str, Any]], Any],
    strength: Strength,
    **fields: Any,
) -> MethodSpec:
    """Describe a method with a trade-off parameter, its default stated once.

    Parameters
    ----------
    name : str
        Method name.
    task : {"classification", "regression"}
        Task the method solves.
    make : callable
        ``make(strength, run, options)`` returning the unfitted estimator, ``strength``
        being a float: the one asked for, or the default of ``strength`` when none is.
    strength : tuple of (str, tuple of float, float)
        The parameter's name in the paper, the grid ``otfair sweep`` sweeps and the
        default (:attr:`MethodSpec.strength_name`, ``default_strengths`` and
        ``default_strength``).
    **fields
        The other fields of :class:`MethodSpec`.

    Returns
    -------
    MethodSpec
    """
    strength_name, grid, default = strength

    def resolved(value: float | None, run: RunArgs, options: dict[str, Any]) -> Any:
        return make(default if value is None else float(value), run, options)

    resolved.__name__ = getattr(make, "__name__", "build")
    resolved.__doc__ = make.__doc__
    return MethodSpec(
        name=name,
        task=task,
        build=builder(resolved),
        strength_name=strength_name,
        default_strengths=tuple(grid),
        default_strength=default,
        **fields,
    )


_REGISTRY: dict[str, MethodSpec] = {}
_LOADED = False


def register_method(spec: MethodSpec) -> MethodSpec:
    """Add ``spec`` to the registry (a second registration of a name is an error)."""
    if not isinstance(spec, MethodSpec):
        raise TypeError(f"`spec` must be a MethodSpec; got {type(spec).__name__}.")
    if spec.name in _REGISTRY and _REGISTRY[spec.name] is not spec:
        raise ValueError(f"A method named {spec.name!r} is already registered.")
    _REGISTRY[spec.name] = spec
    return spec


def _load_families() -> None:
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    for module in _FAMILY_MODULES:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:  # a real missing dependency inside the module
                raise


def list_methods(task: Task | None = None) -> list[str]:
    """Names of the registered methods, optionally only those of one task."""
    _load_families()
    return sorted(n for n, s in _REGISTRY.items() if task is None or s.task == task)


def get_method(name: str) -> MethodSpec:
    """Return the :class:`MethodSpec` called ``name``.

    Raises
    ------
    ValueError
        If no such method is registered; the message lists the known ones.
    """
    _load_families()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(
            f"Unknown method {name!r}. Known methods: {', '.join(sorted(_REGISTRY))}."
        ) from None
