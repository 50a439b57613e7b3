r"""Optional audits that a run adds to its panel (they need the model or the inputs).

``fairness_report`` only sees labels, scores and groups. The FTM paper also audits a
model through its inputs (Kim et al., TMLR 2024, §5.2.2, §5.4 and App. E):

- subset fairness on random half-spaces :math:`\{i : v^\top x_i \ge 0\}`,
  :math:`v \sim U[-1, 1]^d` (§5.2.2, Fig. 4): the DP gap summarized by mean, std, max and
  95th percentile over :data:`SUBSET_COUNT` subsets (``subset_dp_*``);
- subset fairness on the two halves of the test set split by one input variable
  (§5.2.2, Tables 1, 8, 9; :data:`SUBSET_VARIABLES`): DP gap, mean score gap and WDP
  w.r.t. the sensitive attribute inside each half (``subset_var_{high,low}_*``);
- the transport cost :math:`E\|X - T_f(X)\|^2` of the model's fair matching function
  (how far the matching implied by the model moves individuals);
- consistency: the share of predictions unchanged when only the sensitive input is
  flipped (methods that see the sensitive attribute as an input);
- self-fulfilling prophecy (``"sfp"``, App. E.3): how a fair model re-ranks and flips
  individuals relative to the unfair reference trained on the same split (the FTM
  family's MLP for methods that take the sensitive attribute as an input, the logistic
  regression otherwise): the within-group Spearman correlations
  :math:`\rho_s = \mathrm{Spearman}(f_{\mathrm{ref}}, f \mid S = s)`, the share of
  undesirable flips (privileged group ``S = 1``: reference 0 -> fair 1; other group:
  reference 1 -> fair 0) and the 2x2 table of Table 11 per group, as counts and as
  shares of the group.

A sweep asks for them with ``audits = ["ftm", "sfp"]``; they are computed on the test
split. :data:`AUDIT_KEYS` lists every key each audit can add.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

#: Audit names accepted by :func:`run_audits`.
AUDITS = ("ftm", "sfp")

#: Budget of the FTM audits per run (kept small: a sweep runs them for every row). The
#: paper's Fig. 4 draws 1,000 random subsets; 200 keep the audit at ~0.1 s on Dutch.
SUBSET_COUNT = 200
MATCHING_BATCH = 256
MATCHING_BATCHES = 20

_SUBSET_MEASURES = ("dp_gap", "mean_score_gap", "wdp", "n")
_CELLS = tuple((g, a, b) for g in (0, 1) for a in (0, 1) for b in (0, 1))


def sfp_cell_key(group: int, unfair: int, fair: int, *, share: bool = False) -> str:
    """Key of one cell of the self-fulfilling-prophecy 2x2 table (FTM Table 11).

    ``sfp_s{group}_unfair{unfair}_fair{fair}``: the number of test rows of group
    ``S = group`` predicted ``unfair`` by the unfair reference and ``fair`` by the run's
    model; with ``share=True`` the same count divided by the group's size (``_share``).
    """
    key = f"sfp_s{group}_unfair{unfair}_fair{fair}"
    return f"{key}_share" if share else key


def subset_var_key(side: str, measure: str) -> str:
    """Key of one measure on one half of a variable-defined subset split.

    ``subset_var_{side}_{measure}``, ``side`` in ``high`` / ``low`` and ``measure`` in
    ``dp_gap``, ``mean_score_gap``, ``wdp`` or ``n`` (the half's size).
    """
    if side not in ("high", "low") or measure not in _SUBSET_MEASURES:
        raise ValueError(f"no subset key for side {side!r} and measure {measure!r}.")
    return f"subset_var_{side}_{measure}"


#: Every key an audit can add to a run's result.
AUDIT_KEYS: dict[str, tuple[str, ...]] = {
    "ftm": (
        "subset_dp_mean",
        "subset_dp_std",
        "subset_dp_max",
        "subset_dp_q95",
        *(subset_var_key(side, m) for side in ("high", "low") for m in _SUBSET_MEASURES),
        "matching_cost",
        "consistency",
    ),
    "sfp": (
        "sfp_spearman_s0",
        "sfp_spearman_s1",
        "sfp_flip_rate",
        *(sfp_cell_key(*cell) for cell in _CELLS),
        *(sfp_cell_key(*cell, share=True) for cell in _CELLS),
    ),
}


@dataclass(frozen=True)
class SubsetVariable:
    r"""How FTM §5.2.2 splits a dataset's test rows in two by one input variable.

    The values :math:`v_i` are the raw column ``variable`` of ``FairDataset.data`` (before
    one-hot encoding and scaling), or the indicator :math:`1[x_i = \text{indicator}]` of
    one code of a categorical variable. The paper binarizes the variable at its median:
    ``high`` :math:`= \{i : v_i > m\}` with :math:`m` the median of :math:`v` over the
    test rows (:math:`v_i \ge m` when no value exceeds :math:`m`, e.g. an indicator whose
    median is 1), ``low`` = the other test rows.

    Attributes
    ----------
    variable : str
        Column of ``FairDataset.data``.
    high, low : str
        The paper's labels of the two halves (``high`` is listed first in §5.2.2).
    indicator : str or None
        Code of a categorical ``variable`` whose indicator is split; None for a numeric one.
    source : str
        What the paper says and what is assumed.
    """

    variable: str
    high: str
    low: str
    indicator: str | None = None
    source: str = ""

    def high_mask(self, raw_test: pd.DataFrame) -> np.ndarray:
        """Boolean mask of the ``high`` half of ``raw_test`` (the test rows' raw features)."""
        from otfair.metrics import median_split

        col = raw_test[self.variable]
        if self.indicator is None:
            values = pd.to_numeric(col, errors="raise").to_numpy(dtype=np.float64)
        else:
            values = (col.astype(str) == self.indicator).to_numpy(dtype=np.float64)
        return median_split(values)[0]


#: The variable-defined subsets of FTM §5.2.2 / Tables 1, 8, 9, per dataset loader name.
SUBSET_VARIABLES: dict[str, SubsetVariable] = {
    "german": SubsetVariable(
        variable="age",
        high="high age",
        low="low age",
        source=(
            "§5.2.2: 'binarizing a specific input variable using its median value ... "
            "{x of high age} and {x of low age}'; age in years, median 33 on German (high: "
            "age > 33, ~47 % of the rows). The text of Tables 1/8 lost the subset labels: "
            "the first subset is taken to be high age (the order of §5.2.2; in otfair's "
            "runs the low-age half has the larger gaps, as the paper's second subset "
            "does). The paper does not say on which rows the median is taken: here the "
            "test rows', like the subsets themselves."
        ),
    ),
    "dutch": SubsetVariable(
        variable="marital_status",
        high="married",
        low="not married",
        indicator="2",
        source=(
            "§5.2.2: '{x who is married} and {x who is not married}' (Tables 1, 9 print "
            "married first). dutch.csv ships codes 1-4 without labels; code 2 is taken "
            "as married (the census coding 1 = never married, 2 = married; 61 % of the "
            "rows, 99 % of them in household positions 1121 / 1122, which no other code "
            "takes; code 1 has the youngest age bands, code 3 the oldest). Its one-hot "
            "column split at its median is married vs the rest."
        ),
    ),
}


def raw_test_features(dataset: Any, split: Any) -> tuple[str, pd.DataFrame] | None:
    """Return the loader name and the raw features of ``split``'s test rows, if available.

    ``dataset`` is the ``FairDataset`` the split comes from (its ``data`` holds the
    features before one-hot encoding and scaling); None when it has no ``data`` or the
    split no ``test_index`` (a user dataset without them).
    """
    data = getattr(dataset, "data", None)
    index = getattr(split, "test_index", None)
    if not isinstance(data, pd.DataFrame) or index is None:
        return None
    return str(getattr(dataset, "name", "")), data.iloc[np.asarray(index)]


def check_audits(audits: Sequence[str] | None, name: str = "audits") -> tuple[str, ...]:
    """Validate audit names and return them as a tuple."""
    if audits is None:
        return ()
    if isinstance(audits, str):
        raise TypeError(f"`{name}` must be a list of audit names, not a string.")
    for audit in audits:
        if audit not in AUDITS:
            raise ValueError(f"`{name}` has unknown audit {audit!r}; known: {list(AUDITS)}.")
    return tuple(audits)


def variable_subset_audit(
    high: np.ndarray, y: np.ndarray, scores: np.ndarray, s: np.ndarray
) -> dict[str, float]:
    r"""DP gap, mean score gap and WDP w.r.t. ``s`` inside each half of a subset split.

    For :math:`A` = ``high`` and its complement ``low`` (FTM Definition 4.1 with
    :math:`\hat Y = 1[f \ge 0.5]`, the main panel's definitions in :mod:`otfair.metrics`):

    .. math::

        \mathrm{DP}_A = |P(\hat Y = 1 \mid S=0, A) - P(\hat Y = 1 \mid S=1, A)|,\quad
        \overline{\mathrm{DP}}_A = |E[f \mid S=0, A] - E[f \mid S=1, A]|,\quad
        \mathrm{WDP}_A = W_1(f \mid S=0, A;\ f \mid S=1, A),

    plus the half's size ``n``. A half without both groups gets NaN gaps.
    """
    from otfair.metrics import (
        demographic_parity_gap,
        mean_score_gap,
        wasserstein_demographic_parity,
    )

    out: dict[str, float] = {}
    for side, mask in (("high", high), ("low", ~high)):
        ys, ps, ss = y[mask], scores[mask], s[mask]
        out[subset_var_key(side, "n")] = int(mask.sum())
        both = np.unique(ss).size >= 2
        for measure, fn in (
            ("dp_gap", demographic_parity_gap),
            ("mean_score_gap", mean_score_gap),
            ("wdp", wasserstein_demographic_parity),
        ):
            value = float(fn(ys, ps, sensitive_features=ss)) if both else float("nan")
            out[subset_var_key(side, measure)] = value
    return out


def _ftm_audit(
    estimator: Any,
    split: Any,
    scores: np.ndarray,
    seed: int,
    raw_test: tuple[str, pd.DataFrame] | None,
) -> dict[str, Any]:
    from otfair.metrics import consistency, fair_matching_cost, subset_fairness

    X, s = np.asarray(split.X_test, dtype=np.float64), np.asarray(split.s_test)
    if s.ndim != 1:
        raise ValueError("The 'ftm' audit needs one binary sensitive attribute.")
    sub = subset_fairness(
        X, scores, sensitive_features=s, n_subsets=SUBSET_COUNT, random_state=seed
    )
    cost = fair_matching_cost(
        X,
        scores,
        sensitive_features=s,
        batch_size=MATCHING_BATCH,
        n_batches=MATCHING_BATCHES,
        random_state=seed,
    )
    out: dict[str, Any] = {
        "subset_dp_mean": sub.mean,
        "subset_dp_std": sub.std,
        "subset_dp_max": sub.max,
        "subset_dp_q95": sub.q95,
        "matching_cost": cost.cost,
    }
    if raw_test is not None:
        name, frame = raw_test
        table = SUBSET_VARIABLES.get(name)
        if table is not None and table.variable in frame.columns:
            high = table.high_mask(frame)
            y = np.asarray(split.y_test)
            out.update(variable_subset_audit(high, y, np.asarray(scores, dtype=float), s))
    if getattr(split, "sensitive_as_input", False):
        # the sensitive column is the last column of X (FairSplit contract)
        out["consistency"] = consistency(
            estimator.predict, X.astype(np.float32), sensitive_columns=X.shape[1] - 1
        )
    return out


def sfp_audit(reference_scores: np.ndarray, scores: np.ndarray, split: Any) -> dict[str, Any]:
    r"""Self-fulfilling-prophecy summary of ``scores`` against the reference's test scores.

    With :math:`\hat Y = 1[f \ge 0.5]` for both models (FTM App. E.3, Tables 10, 11):
    ``sfp_spearman_s{g}`` (Spearman correlation of the two scores within group
    :math:`g`), ``sfp_flip_rate`` (undesirable flips over all test rows) and, per group
    :math:`g` and predictions :math:`a` (unfair reference), :math:`b` (this model),

    .. math::

        N_{g,a,b} = \#\{i : S_i = g,\ \hat Y^{\mathrm{unfair}}_i = a,\
        \hat Y^{\mathrm{fair}}_i = b\}

    as ``sfp_s{g}_unfair{a}_fair{b}`` and :math:`N_{g,a,b} / \#\{i : S_i = g\}` as
    ``sfp_s{g}_unfair{a}_fair{b}_share``.
    """
    from otfair.metrics import self_fulfilling_prophecy

    s = np.asarray(split.s_test)
    if s.ndim != 1:
        raise ValueError("The 'sfp' audit needs one binary sensitive attribute.")
    res = self_fulfilling_prophecy(reference_scores, scores, sensitive_features=s, privileged=1)
    out: dict[str, Any] = {
        "sfp_spearman_s0": float(res.spearman[0]),
        "sfp_spearman_s1": float(res.spearman[1]),
        "sfp_flip_rate": res.n_undesirable / len(s),
    }
    # confusion[g]: rows = the reference's (unfair) prediction 0/1, columns = this model's
    for g, a, b in _CELLS:
        out[sfp_cell_key(g, a, b)] = int(res.confusion[g][a, b])
    for g, a, b in _CELLS:
        out[sfp_cell_key(g, a, b, share=True)] = out[sfp_cell_key(g, a, b)] / int(
            res.confusion[g].sum()
        )
    return out


def run_audits(
    audits: Sequence[str],
    estimator: Any,
    split: Any,
    scores: np.ndarray,
    seed: int,
    reference_scores: np.ndarray | None = None,
    raw_test: tuple[str, pd.DataFrame] | None = None,
) -> dict[str, Any]:
    """Compute the requested audits of a fitted ``estimator`` on ``split``'s test part.

    ``reference_scores`` (the unfair reference's test scores) is required by ``"sfp"``.
    ``raw_test`` (:func:`raw_test_features`: the loader name and the test rows' raw
    features) lets ``"ftm"`` add the variable-defined subsets of :data:`SUBSET_VARIABLES`.
    """
    out: dict[str, Any] = {}
    for audit in audits:
        if audit == "ftm":
            out.update(_ftm_audit(estimator, split, scores, seed, raw_test))
        elif audit == "sfp":
            if reference_scores is None:
                raise ValueError("The 'sfp' audit needs the reference model's test scores.")
            out.update(sfp_audit(reference_scores, scores, split))
    return out
