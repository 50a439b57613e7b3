r"""Paper value vs otfair's value: reproduced / close / differs.

The rule compares the difference with the standard error of the difference (not with raw
spreads), with small per-kind floors, exact counts, and one-sided claims judged as
inequalities. ``docs/reproduction/README.md`` ("The verdict rule") states it with a
table of worked cases that ``tests/reproduction/test_verdict.py`` checks against
:func:`judge`.

The rule of :func:`judge`: with :math:`d` = ours_mean - paper_value, :math:`SE` from
:func:`standard_error` and the floor :math:`f = \max(a_k, r_k |\text{paper}|,
\text{resolution})` (:data:`FLOORS` of the kind :math:`k`; ``resolution`` is half a unit
of the paper's last printed digit, :func:`print_resolution`), the tolerance is
:math:`t = \max(z \cdot SE, f)` (:math:`t = f` when there is no SE).

- ``claim="equal"``: **reproduced** if :math:`|d| \le t`, **close** if
  :math:`|d| \le 2t`, else **differs**.
- ``claim="at_least"`` (the paper claims the quantity is no lower than its value,
  e.g. "cannot go below 0.06"): with the shortfall :math:`v = -d`, **reproduced** if
  :math:`v \le` resolution (the claim holds as printed), **close** if :math:`v \le t`
  (below the claimed floor, but within the noise), else **differs**.
  ``"at_most"``: the same with :math:`v = d`.
- ``kind="count"`` (dataset sizes, input dimensions): exact, **reproduced** if
  :math:`d = 0`, else **differs**.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Literal

Verdict = Literal["reproduced", "close", "differs"]
Kind = Literal["accuracy", "gap", "count", "cv"]
Claim = Literal["equal", "at_least", "at_most"]

#: z of the two-sided ~95 % interval of a normal difference.
Z = 2.0

#: Per-kind floors of the tolerance: (absolute, relative to ``|paper_value|``).
#: ``accuracy``: accuracy-like values (accuracy, AUC, R^2, consistency, Spearman, rates,
#: shares of a group): 0.005, half a percentage point, below the binomial standard error
#: of one test split of the largest data set here (sqrt(0.8 * 0.2 / 9,045) = 0.0042 for an
#: accuracy of 0.8 on Adult's test part), so it never hides a difference that one split
#: could resolve. ``gap``: fairness gaps and other small quantities (DP / TPR / EO / error
#: gaps, WDP, violations, subset gaps, stds, cell counts): 0.002 absolute or 10 % of the
#: paper's value, whichever is larger (a gap is small, so its tolerance scales with it;
#: 0.002 is two units of the third decimal the papers print gaps at). ``count``: dataset
#: sizes and input dimensions are exact. ``cv``: a coefficient of variation is compared
#: on the log scale with the sampling error of its estimate (``standard_error``);
#: its only floor is the paper's print resolution.
FLOORS: dict[str, tuple[float, float]] = {
    "accuracy": (0.005, 0.0),
    "gap": (0.002, 0.10),
    "count": (0.0, 0.0),
    "cv": (0.0, 0.0),
}

#: How many times the reproduced tolerance still counts as close.
CLOSE_FACTOR = 2.0

_GAP = re.compile(r"(gap|wdp|violation|_std)$|^subset_|^sfp_s[01]_unfair[01]_fair[01]$")
#: Dataset statistics compared exactly.
COUNT_METRICS = frozenset({"n_train", "n_test", "n_rows", "n_features"})


@dataclass(frozen=True)
class Judgement:
    """A verdict and the numbers behind it.

    Attributes
    ----------
    verdict : {"reproduced", "close", "differs"}
    diff : float
        ``ours_mean - paper_value`` (``kind="cv"``: ``log(ours_mean / paper_value)``).
    se : float
        Standard error of the difference (NaN when the data give none).
    tolerance : float
        The reproduced tolerance ``max(z * se, floor)``; close is ``2 * tolerance``
        (``kind="cv"``: on the log scale, like ``diff`` and ``se``).
    """

    verdict: Verdict
    diff: float
    se: float
    tolerance: float


def metric_kind(metric: str) -> Kind:
    """Return the kind of a metric key: ``count``, ``cv``, ``gap`` or ``accuracy``.

    Examples
    --------
    >>> [metric_kind(m) for m in ("n_features", "accuracy_cv", "dp_gap", "r2")]
    ['count', 'cv', 'gap', 'accuracy']
    """
    if metric in COUNT_METRICS:
        return "count"
    if metric == "accuracy_cv":
        return "cv"
    return "gap" if _GAP.search(metric) else "accuracy"


def print_resolution(text: str, unit: str = "") -> float:
    """Half a unit of the last digit a number is printed with, on otfair's scale.

    ``"0.838"`` -> 0.0005, ``"0.3"`` -> 0.05, ``"74.3"`` with unit ``%`` -> 0.0005,
    ``"30,136"`` -> 0.5; an empty or unparseable text -> 0.

    Examples
    --------
    >>> print_resolution("0.3"), print_resolution("74.3", "%")
    (0.05, 0.0005)
    """
    try:
        exponent = Decimal(str(text).strip().replace(",", "")).as_tuple().exponent
    except InvalidOperation:
        return 0.0
    if not isinstance(exponent, int):
        return 0.0
    half = 0.5 * 10.0**exponent
    return round(half / 100.0 if unit == "%" else half, 12)


def _finite_nonneg(value: float | None, name: str) -> float | None:
    if value is None:
        return None
    value = float(value)
    if math.isnan(value):
        return None
    if value < 0 or math.isinf(value):
        raise ValueError(f"`{name}` must be a finite number >= 0 or None; got {value!r}.")
    return value


def _count(value: float | None, name: str) -> int:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return 1
    if float(value) < 1 or not float(value).is_integer():
        raise ValueError(f"`{name}` must be an integer >= 1; got {value!r}.")
    return int(value)


def standard_error(
    ours_std: float | None,
    n_ours: int,
    paper_std: float | None,
    n_paper: int,
    *,
    paper_std_kind: Literal["std", "se"] = "std",
    kind: Kind = "accuracy",
) -> float:
    r"""Return the standard error of ``ours_mean - paper_value`` (NaN: none from data).

    It depends on the two sides' spreads and counts only (arguments as in :func:`judge`),
    not on the two values.

    .. math::
        SE = \sqrt{s_o^2 / n_o + s_p^2 / n_p}

    with :math:`s_o` otfair's per-seed std over :math:`n_o` seeds and :math:`s_p` the
    paper's per-split std over :math:`n_p` splits. A side whose spread is unknown (one
    seed; a paper that prints no std, or a std of 0 for one split) takes the other side's
    per-split spread: a single split is one draw of the same experiment. With no spread
    on either side there is no SE (NaN). A paper standard error (``paper_std_kind="se"``)
    is the spread of its mean already: :math:`s_p = \text{se} \sqrt{n_p}`. A paper std
    of 0 means one split (``n_p = 1``). ``kind="cv"``: a coefficient of variation is
    compared on the log scale, where its estimate from :math:`n` normal draws has the
    standard error :math:`1 / \sqrt{2 (n - 1)}` whatever its value, so the SE of
    :math:`\log(\text{cv}_o / \text{cv}_p)` is
    :math:`\sqrt{1 / (2 (n_o - 1)) + 1 / (2 (n_p - 1))}` (NaN unless both sides have
    >= 2 draws; on the linear scale the interval would be symmetric and accept a CV 20
    times smaller than the paper's from 3 draws).
    """
    n_o, n_p = _count(n_ours, "n_ours"), _count(n_paper, "n_paper")
    s_o = _finite_nonneg(ours_std, "ours_std")
    s_p = _finite_nonneg(paper_std, "paper_std")
    if kind == "cv":
        if n_o < 2 or n_p < 2:
            return math.nan
        return math.sqrt(1 / (2 * (n_o - 1)) + 1 / (2 * (n_p - 1)))
    if s_p == 0:  # printed as 0: one split, whose spread is unknown
        s_p, n_p = None, 1
    elif s_p is not None and paper_std_kind == "se":
        s_p = s_p * math.sqrt(n_p)
    if n_o < 2:
        s_o = None
    if s_o is None and s_p is None:
        return math.nan
    s_o = s_p if s_o is None else s_o
    s_p = s_o if s_p is None else s_p
    assert s_o is not None and s_p is not None  # not both None (returned above)
    return math.sqrt(s_o * s_o / n_o + s_p * s_p / n_p)


def judge(
    paper_value: float,
    ours_mean: float,
    ours_std: float | None = None,
    *,
    n_ours: int = 1,
    paper_std: float | None = None,
    n_paper: int = 1,
    paper_std_kind: Literal["std", "se"] = "std",
    kind: Kind = "accuracy",
    claim: Claim = "equal",
    resolution: float = 0.0,
    z: float = Z,
) -> Judgement:
    """Compare a published number with otfair's mean over seeds.

    The rule (the tolerance, one-sided claims, exact counts) is stated in the module
    docstring (``otfair_lab.reproduction._verdict``) and ``docs/reproduction/README.md``.

    Parameters
    ----------
    paper_value : float
        The published number (otfair's scale: fractions, not percent).
    ours_mean : float
        otfair's mean over its seeds.
    ours_std : float or None, default=None
        otfair's per-seed std (ddof=1); ignored with one seed.
    n_ours : int, default=1
        otfair's number of seeds.
    paper_std : float or None, default=None
        The paper's printed spread (None or NaN: not printed; 0: one split).
    n_paper : int, default=1
        The number of splits behind the paper's value.
    paper_std_kind : {"std", "se"}, default="std"
        Whether ``paper_std`` is a per-split std or the standard error of the mean.
    kind : {"accuracy", "gap", "count", "cv"}, default="accuracy"
        The metric's kind (:func:`metric_kind`): selects the floors.
    claim : {"equal", "at_least", "at_most"}, default="equal"
        What the paper claims of the quantity.
    resolution : float, default=0.0
        Half a unit of the last printed digit of ``paper_value``.
    z : float, default=2.0
        Standard errors that count as reproduced.

    Returns
    -------
    Judgement

    Raises
    ------
    ValueError
        If a value is not finite, a std or the resolution is negative, a count is not a
        positive integer, or ``kind`` / ``claim`` / ``paper_std_kind`` is unknown.

    Examples
    --------
    >>> judge(0.0072, 0.0139, kind="gap").verdict  # one split each side: 93 % off
    'differs'
    >>> judge(0.743, 0.736, 0.01, n_ours=3, n_paper=5).verdict
    'reproduced'
    """
    res = _check_judge(paper_value, ours_mean, kind, claim, paper_std_kind, resolution, z)
    paper_value, ours_mean = float(paper_value), float(ours_mean)
    diff = ours_mean - paper_value
    se = standard_error(
        ours_std, n_ours, paper_std, n_paper, paper_std_kind=paper_std_kind, kind=kind
    )
    # 1e-12: decimal edges (0.743 - 0.733) must not fail on float rounding
    eps = 1e-12 * max(1.0, abs(paper_value))
    if kind == "count" or (kind == "cv" and min(paper_value, ours_mean) <= 0):
        # a count is exact; a CV without a log ratio is equal or not
        same = abs(diff) <= (eps if kind == "count" else 1e-12)
        return Judgement("reproduced" if same else "differs", diff, se, 0.0)
    if kind == "cv":  # log scale (see ``standard_error``)
        diff, res = math.log(ours_mean / paper_value), res / paper_value
    absolute, relative = FLOORS[kind]
    tol = max(absolute, relative * abs(paper_value), res)
    if math.isfinite(se):
        tol = max(tol, float(z) * se)
    return Judgement(_outcome(diff, tol, res, claim, eps), diff, se, tol)


def _check_judge(
    paper_value: float,
    ours_mean: float,
    kind: str,
    claim: str,
    paper_std_kind: str,
    resolution: float,
    z: float,
) -> float:
    """Check :func:`judge`'s arguments (its ``Raises``); return the resolution (0 if None)."""
    for name, value in (("paper_value", paper_value), ("ours_mean", ours_mean)):
        if not math.isfinite(float(value)):
            raise ValueError(f"`{name}` must be a finite number; got {value!r}.")
    if kind not in FLOORS:
        raise ValueError(f"`kind` must be one of {sorted(FLOORS)}; got {kind!r}.")
    if claim not in ("equal", "at_least", "at_most"):
        raise ValueError(f"`claim` must be 'equal', 'at_least' or 'at_most'; got {claim!r}.")
    if paper_std_kind not in ("std", "se"):
        raise ValueError(f"`paper_std_kind` must be 'std' or 'se'; got {paper_std_kind!r}.")
    res = _finite_nonneg(resolution, "resolution") or 0.0
    if not float(z) >= 0:
        raise ValueError(f"`z` must be >= 0; got {z!r}.")
    return res


def _outcome(diff: float, tol: float, res: float, claim: Claim, eps: float) -> Verdict:
    """Return the verdict of a difference (see the module docstring)."""
    if claim == "equal":
        off, reproduced_within = abs(diff), tol
    else:
        off = -diff if claim == "at_least" else diff
        reproduced_within = res
    if off <= reproduced_within + eps:
        return "reproduced"
    if off <= (tol if claim != "equal" else CLOSE_FACTOR * tol) + eps:
        return "close"
    return "differs"


def verdict(
    paper_value: float,
    ours_mean: float,
    ours_std: float | None = None,
    **options: object,
) -> Verdict:
    """Return :func:`judge`'s verdict only (same arguments).

    Examples
    --------
    >>> verdict(0.743, 0.739)  # no SE from data: the accuracy floor 0.005
    'reproduced'
    >>> verdict(0.743, 0.733)
    'close'
    >>> verdict(0.743, 0.68, 0.02, n_ours=3, n_paper=5)  # t = 2 * 0.0146
    'differs'
    """
    return judge(paper_value, ours_mean, ours_std, **options).verdict  # type: ignore[arg-type]
