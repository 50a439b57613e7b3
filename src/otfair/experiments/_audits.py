r"""Optional audits that a run adds to its panel (they need the model or the inputs).

``fairness_report`` only sees labels, scores and groups. The FTM paper also audits a
model through its inputs (fairness-through-matching.txt, §5.4):

- subset fairness: the DP gap on random half-spaces :math:`\{i : v^\top x_i \ge 0\}`,
  :math:`v \sim U[-1, 1]^d`, summarized by mean, max and 95th percentile;
- the transport cost :math:`E\|X - T_f(X)\|^2` of the model's fair matching function
  (how far the matching implied by the model moves individuals);
- consistency: the share of predictions unchanged when only the sensitive input is
  flipped (methods that see the sensitive attribute as an input);
- self-fulfilling prophecy (``"sfp"``, App. E.3): how a fair model re-ranks and flips
  individuals relative to the unfair reference trained on the same split (the FTM
  family's MLP for methods that take the sensitive attribute as an input, the logistic
  regression otherwise): the within-group Spearman correlations
  :math:`\rho_s = \mathrm{Spearman}(f_{\mathrm{ref}}, f \mid S = s)` and the share of
  undesirable flips (privileged group ``S = 1``: reference 0 -> fair 1; other group:
  reference 1 -> fair 0).

A sweep asks for them with ``audits = ["ftm", "sfp"]``; they are computed on the test
split.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

#: Audit names accepted by :func:`run_audits`.
AUDITS = ("ftm", "sfp")

#: Budget of the FTM audits per run (kept small: a sweep runs them for every row).
SUBSET_COUNT = 200
MATCHING_BATCH = 256
MATCHING_BATCHES = 20


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


def _ftm_audit(estimator: Any, split: Any, scores: np.ndarray, seed: int) -> dict[str, Any]:
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
        "subset_dp_max": sub.max,
        "subset_dp_q95": sub.q95,
        "matching_cost": cost.cost,
    }
    if getattr(split, "sensitive_as_input", False):
        # the sensitive column is the last column of X (FairSplit contract)
        out["consistency"] = consistency(
            estimator.predict, X.astype(np.float32), sensitive_columns=X.shape[1] - 1
        )
    return out


def sfp_audit(reference_scores: np.ndarray, scores: np.ndarray, split: Any) -> dict[str, Any]:
    """Self-fulfilling-prophecy summary of ``scores`` against the reference's test scores."""
    from otfair.metrics import self_fulfilling_prophecy

    s = np.asarray(split.s_test)
    if s.ndim != 1:
        raise ValueError("The 'sfp' audit needs one binary sensitive attribute.")
    res = self_fulfilling_prophecy(reference_scores, scores, sensitive_features=s, privileged=1)
    return {
        "sfp_spearman_s0": float(res.spearman[0]),
        "sfp_spearman_s1": float(res.spearman[1]),
        "sfp_flip_rate": res.n_undesirable / len(s),
    }


def run_audits(
    audits: Sequence[str],
    estimator: Any,
    split: Any,
    scores: np.ndarray,
    seed: int,
    reference_scores: np.ndarray | None = None,
) -> dict[str, Any]:
    """Compute the requested audits of a fitted ``estimator`` on ``split``'s test part.

    ``reference_scores`` (the unfair reference's test scores) is required by ``"sfp"``.
    """
    out: dict[str, Any] = {}
    for audit in audits:
        if audit == "ftm":
            out.update(_ftm_audit(estimator, split, scores, seed))
        elif audit == "sfp":
            if reference_scores is None:
                raise ValueError("The 'sfp' audit needs the reference model's test scores.")
            out.update(sfp_audit(reference_scores, scores, split))
    return out
