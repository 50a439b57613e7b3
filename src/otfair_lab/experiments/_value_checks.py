"""The registry's value checks in a torch- and scikit-learn-free form, for the CLI.

A run's strength, ``epochs`` and ``-o`` values are checked against the estimator's
``_parameter_constraints`` (:func:`otfair_lab.experiments.methods.check_options`,
:func:`~otfair_lab.experiments.methods.check_run_values`), which means importing the
estimator (torch) and scikit-learn's validation (seconds on a loaded machine). The
static name table (:mod:`otfair_lab.experiments._names`, ``_names.json``) also keeps, per
method, the constraints that have a plain description: scikit-learn's ``Interval``
(int, float, real), ``StrOptions``, ``None`` and built-in types.

Nothing in the table is written by hand: ``python -m otfair_lab.experiments._names``
generates it from the estimators' (and penalty objects') ``_parameter_constraints``,
the one source. Each entry holds the description of each constraint (:func:`describe`)
and the refusal's words (:func:`message`), produced at generation time by the
constraint engine itself (:func:`otfair.utils.check_values`, the words of ``fit``)::

    The 'epochs' parameter of FairClassifier must be an int in the range [1, inf). Got 0
    instead.

At run time this module only tests a value against the descriptions and fills the
value into the stored words, so ``otfair fit --epochs 0`` answers before torch is
imported, with the words the estimator's own ``fit`` would use (a test compares both on
every described constraint; another, that the table equals a fresh generation). A
parameter whose constraints cannot be described here (custom ones, ``"boolean"``,
``"random_state"``) is not in the table and is checked after the import, as before.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "VALUE",
    "describe",
    "device_problem",
    "epochs_floor_seconds",
    "message",
    "value_problem",
]

#: Stands for the refused value in a stored message (its ``repr`` takes its place).
VALUE = "<value>"

#: built-in types a constraint may name (scikit-learn's ``_InstancesOf``)
_TYPES: dict[str, type] = {t.__name__: t for t in (str, int, float, dict, list, tuple)}
#: the number types of an ``Interval``, by name
_NUMBERS: dict[str, Any] = {
    "Integral": numbers.Integral,
    "Real": numbers.Real,
    "RealNotInt": float,
}


def describe(constraint: Any) -> dict[str, Any] | None:
    """Return a JSON description of one scikit-learn constraint, or ``None`` if it has none.

    Used when the name table is written (:func:`otfair_lab.experiments._names.render`);
    imports scikit-learn.
    """
    from otfair.utils import Interval, StrOptions, make_constraint

    if constraint is None:
        return {"kind": "none"}
    if isinstance(constraint, type) and constraint in _TYPES.values():
        return {"kind": "type", "type": constraint.__name__}
    made = make_constraint(constraint) if not isinstance(constraint, str) else None
    if isinstance(made, Interval) and made.type.__name__ in _NUMBERS:
        return {
            "kind": "interval",
            "type": made.type.__name__,
            "left": made.left,
            "right": made.right,
            "closed": made.closed,
        }
    if isinstance(made, StrOptions) and not made.deprecated:
        return {"kind": "str_options", "options": sorted(made.options)}
    return None


def _satisfied(value: Any, c: Mapping[str, Any]) -> bool:
    kind = c["kind"]
    if kind == "none":
        return value is None
    if kind == "type":
        return isinstance(value, _TYPES[c["type"]])
    if kind == "str_options":
        return isinstance(value, str) and value in c["options"]
    number_type = _NUMBERS[c["type"]]
    if not isinstance(value, number_type):
        return False
    if not isinstance(value, numbers.Integral) and math.isnan(value):
        return False
    left = -math.inf if c["left"] is None else c["left"]
    right = math.inf if c["right"] is None else c["right"]
    if (value < left) if c["closed"] in ("left", "both") else (value <= left):
        return False
    return not ((value > right) if c["closed"] in ("right", "both") else (value >= right))


def message(param: str, owner: str, constraints: list[Any]) -> str:
    """Return the constraint engine's refusal of ``param``, with :data:`VALUE` for the value.

    Used when the name table is written (imports scikit-learn): the words of
    :func:`otfair.utils.check_values` (what ``fit`` raises), each ``StrOptions``' options
    in sorted order (scikit-learn lists a set in its hash order, which varies by run).
    """
    import copy

    from otfair.utils import InvalidParameterError, Options, check_values, make_constraint

    class _Said(Options):
        """Words of a constraint, satisfied by nothing: the engine words the refusal."""

        def __init__(self, words: str, hidden: bool) -> None:  # noqa: D107
            self.words, self.hidden, self.type = words, hidden, object
            self.options: set[Any] = set()
            self.deprecated: set[Any] = set()

        def is_satisfied_by(self, val: Any) -> bool:  # noqa: D102
            return False

        def __str__(self) -> str:
            return self.words

    class _Value:
        def __repr__(self) -> str:
            return VALUE

    said = []
    for constraint in constraints:
        made = make_constraint(constraint)
        if isinstance(made, Options):
            made = copy.copy(made)
            made.options = sorted(made.options, key=repr)  # str() lists them in this order
        said.append(_Said(str(made), bool(made.hidden)))
    try:
        check_values({param: said}, {param: _Value()}, caller=owner, refuse_paths=False)
    except InvalidParameterError as exc:
        return str(exc)
    raise AssertionError("a constraint satisfied by nothing accepted a value")  # pragma: no cover


def value_problem(entry: Mapping[str, Any], value: Any) -> str | None:
    """Return the engine's refusal of ``value`` for the table ``entry``, or ``None``.

    ``entry`` holds ``param`` (the parameter's name), ``owner`` (the class or words that
    the message names), ``constraints`` (:func:`describe` of each) and ``message``
    (:func:`message`, generated with the table).
    """
    if any(_satisfied(value, c) for c in entry["constraints"]):
        return None
    return str(entry["message"]).replace(VALUE, repr(value))


#: The devices a run accepts, by name: ``cpu``, ``cuda``, ``mps`` (each with an optional
#: ``:N`` index) and ``auto`` (CUDA when available). Whether CUDA is there is torch's to
#: say, after its import (:func:`otfair.utils.resolve_device`).
_DEVICE = re.compile(r"(cpu|cuda|mps)(:[0-9]+)?|auto")


def device_problem(device: object) -> str | None:
    """Return the refusal of a device name, or ``None`` (torch-free; no CUDA check)."""
    if isinstance(device, str) and _DEVICE.fullmatch(device):
        return None
    return f"`device` must be cpu, cuda, cuda:N, mps or auto; got {device!r}."


#: The least time one optimizer step (one mini-batch: forward, backward, update) of any
#: registered network takes on a CPU, and on an accelerator. Not estimates: bounds well
#: below every measured step (30-130 ms per step of otf, adv, laftr on 32,000 synthetic
#: rows on the 2-core development machine, loaded), so that a run refused by
#: :func:`epochs_floor_seconds` would certainly have taken longer.
STEP_FLOOR_S = {"cpu": 1e-3, "other": 2e-4}
#: The least time one training row costs per epoch on a CPU (forward and backward of a
#: network; measured ~10 us and more per row on the development machine).
ROW_FLOOR_S = {"cpu": 1e-6, "other": 0.0}


def epochs_floor_seconds(
    *,
    epochs: int,
    batch_size: int | None,
    rows: int | None,
    test_size: float,
    max_train_rows: int | None = None,
    device: str = "cpu",
) -> float | None:
    """Return a lower bound of the seconds ``epochs`` epochs of training take, or ``None``.

    Arithmetic only (no pilot fit): the training rows of the split (``rows`` times
    ``1 - test_size``, at most ``max_train_rows``), the mini-batches of ``batch_size`` per
    epoch (one full batch when ``None``), and per epoch at least
    ``max(steps * STEP_FLOOR_S, train_rows * ROW_FLOOR_S)``. ``None`` when the rows are
    not known in advance.
    """
    if rows is None or epochs <= 0:
        return None
    train = max(1, math.floor(rows * (1.0 - test_size)))
    if max_train_rows is not None:
        train = min(train, max_train_rows)
    steps = 1 if not batch_size or batch_size <= 0 else math.ceil(train / batch_size)
    kind = "cpu" if device.split(":")[0] == "cpu" else "other"
    per_epoch = max(steps * STEP_FLOOR_S[kind], train * ROW_FLOOR_S[kind])
    return epochs * per_epoch
