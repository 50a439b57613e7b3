"""OTF penalty: adjusted optimal transport to fairness (Buyl & De Bie)."""

from __future__ import annotations

import torch

from otfair.notions import LinearConstraints
from otfair.penalties._linear import LinearPenalty


class OTFPenalty(LinearPenalty):
    r"""Adjusted entropic OT cost from the scores to the nearest fair score vector.

    .. math::

        \mathrm{OTF}^0_\varepsilon(h) = \min_{P \in \Pi^{\mathcal F}(h)}
            \langle C, P\rangle - \varepsilon H(P)
          \;-\; \min_{P \in \Pi^{\mathcal F}_{|Gh|}(h)} \langle C, P\rangle - \varepsilon H(P)

    with :math:`\Pi^{\mathcal F}(h) = \{P \ge 0: P1 = h,\ G P^\top 1 = 0\}` and the
    relaxed set allowing :math:`|G P^\top 1| \le |G h|`
    (otf-optimal-transport-to-fairness.txt §3.2-3.4, Def. 5). It is >= 0 and 0 when
    :math:`G h = 0` (Prop. 2). The dual problems are solved in the log domain by
    :func:`otfair.ot.otf0` and differentiated with the envelope theorem (§3.4).

    The cost is the Euclidean distance between the rows of ``features`` (non-protected
    inputs), divided by its mean over the batch so that ``eps`` is relative to the
    typical transport cost whatever the dataset's scaling.

    Parameters
    ----------
    constraints : LinearConstraints
        Fitted linear notion (PDP / PEO, several and continuous attributes).
    eps : float, default=1e-3
        Entropic smoothing (the paper's value).
    max_iter : int, default=20
        Semi-dual sweeps per batch (:func:`otfair.ot.otf_dual`): a two-group DP batch
        converges in one, a few groups or EO in a handful. The solves run to ``tol``,
        so this is a cap, not a truncation that would shrink the gradient (the paper's
        alternating updates, truncated at 20 iterations at ``eps = 1e-3``, give a
        gradient ~100x too small; measured in docs/ot.md).
    warm_start : bool, default=True
        Start each batch's constraint duals from the previous batch's (they are per
        constraint and in cost units): the same optimum in ~3 instead of ~10 Newton
        steps per constraint.
    tol : float, default=1e-4
        Relative constraint tolerance of both solves.

    Notes
    -----
    Cost per call: the Euclidean cost by one matrix product (``exact=False`` of
    :func:`otfair.ot.euclidean_cost`), and, for discrete groups (DP, EO), one pass over
    it for the exact class reduction (the batch is first sorted by class so that the
    pass needs no gather); the solves then run on ``n x K`` matrices (``K`` = number of
    groups, x2 for EO). Continuous attributes run the solves on the full ``n x n``
    cost (a few passes per Newton step). Measured step times: docs/classifiers.md.

    Shapes: ``scores`` (n,), ``sensitive`` (n,) or (n, k), ``labels`` (n,) for PEO,
    ``features`` (n, d). Memory O(n^2) per call.
    """

    requires_features = True

    def __init__(
        self,
        constraints: LinearConstraints,
        eps: float = 1e-3,
        max_iter: int = 20,
        warm_start: bool = True,
        tol: float = 1e-4,
    ) -> None:
        super().__init__(constraints)
        if not float(eps) > 0:
            raise ValueError(f"`eps` must be > 0; got {eps!r}.")
        if int(max_iter) < 1:
            raise ValueError(f"`max_iter` must be >= 1; got {max_iter!r}.")
        self.eps = float(eps)
        self.max_iter = int(max_iter)
        self.warm_start = bool(warm_start)
        if not float(tol) > 0:
            raise ValueError(f"`tol` must be > 0; got {tol!r}.")
        self.tol = float(tol)
        self._details = None

    def from_matrix(
        self, scores: torch.Tensor, G: torch.Tensor, features: torch.Tensor | None = None
    ) -> torch.Tensor:
        """OTF0 for a precomputed constraint matrix ``G`` (d_F, n) of the batch."""
        from otfair.ot import OTFProblem, euclidean_cost

        if features is None:
            raise ValueError("`features` are required by OTFPenalty (the transport cost).")
        if features.ndim != 2 or features.shape[0] != scores.shape[0]:
            raise ValueError(
                f"`features` must have shape ({scores.shape[0]}, d); got {tuple(features.shape)}."
            )
        G = G.detach().to(scores.dtype)
        features = features.detach().to(scores.dtype)
        order = OTFProblem.class_order(G)
        if order is not None:  # sorted by class: the class reduction needs no gather
            scores, G, features = scores[order], G[:, order], features[order]
        h = scores.clamp(min=1e-6)
        with torch.no_grad():
            C = euclidean_cost(features, features, exact=False)  # checked finite inside
            C.fill_diagonal_(0.0)
            scale = float(C.mean().clamp_min(1e-12))
            try:  # the problem checks G's rows (one host read for all of them)
                problem = OTFProblem(C, G)
            except ValueError as err:
                if "`G` row" not in str(err):
                    raise
                c = str(err).split("`G` row ")[1].split()[0]
                raise ValueError(
                    f"constraint row {c} of the batch has no positive or no negative entry: "
                    "a group (or group x label for PEO) is empty in this batch; use larger "
                    "or stratified batches."
                ) from err
        warm = self._details
        if not self.warm_start or (warm is not None and warm.otf.mu.shape[0] != G.shape[0]):
            warm = None
        # cost C / scale at eps  ==  (1 / scale) x cost C at eps * scale: no division pass
        value, self._details = problem.otf0(
            h,
            self.eps * scale,
            tol=self.tol,
            max_iter=self.max_iter,
            warm_start=warm,
            return_details=True,
            trusted=True,
        )
        return (value / scale).clamp_min(0.0)
