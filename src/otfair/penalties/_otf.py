"""OTF: adjusted optimal transport to fairness (Buyl & De Bie), its object and its penalty.

:class:`OTF` holds the settings (``FairClassifier(penalty=OTF(eps=1e-3))``) and builds
:class:`OTFPenalty`, the torch penalty, for the estimator's notion; both take their
defaults from one place (``DEFAULTS``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np
import torch
from torch import Tensor

from otfair.notions import LinearConstraints, Notion
from otfair.penalties._base import LinearPenalty, PenaltyObject, TrainingPlan
from otfair.utils import set_params_from_init
from otfair.utils._constraints import positive_int, positive_real

if TYPE_CHECKING:
    from collections.abc import Sequence

    from otfair.ot import OTF0Details, OTFProblem
    from otfair.ot._otf_cells import CellsOTF0
    from otfair.ot._otf_two_groups import TwoGroupOTF0
    from otfair.penalties._plan import FixedBatchPenalty

#: OTF's settings and their defaults: the one source of :class:`OTF`'s and
#: :class:`OTFPenalty`'s signatures (eps: the paper's entropic smoothing, OTF paper §3.2)
DEFAULTS: dict[str, Any] = {"eps": 1e-3, "max_iter": 20, "warm_start": True, "tol": 1e-4}
_EPS, _MAX_ITER, _WARM_START, _TOL = DEFAULTS.values()


class OTF(PenaltyObject):
    r"""Adjusted optimal transport to fairness, :math:`\mathrm{OTF}^0_\varepsilon` (OTF paper §3).

    The settings of :class:`OTFPenalty` (its parameters document them); any notion
    (PDP, PEO; several and continuous attributes: linear constraints).

    Parameters
    ----------
    eps : float, default=1e-3
        Entropic smoothing :math:`\varepsilon` (OTF paper §3.2), for costs scaled as in
        :class:`OTFPenalty`.
    max_iter : int, default=20
        Newton iterations of the semi-dual solve per batch.
    warm_start : bool, default=True
        Start each batch's solve from the previous batch's duals.
    tol : float, default=1e-4
        Relative tolerance of the solve.
    """

    name = "otf"
    #: (1 - alpha) CE + alpha OTF0: Adult's DP gap falls from 0.20 (alpha 0) through 0.06
    #: (0.01) to 0.015 (0.1); COMPAS's moves only above alpha = 0.9 and falls below 0.02
    #: only at 0.997 (a well-trained logistic model)
    strength_grids = {
        "convex": (0.0, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 0.3, 0.7, 0.9, 0.97, 0.99, 0.997)
    }
    #: the lab's sweep: the converged OTF0 gradient is large (at alpha = 0.1 the PDP on
    #: Adult is already ~3% of the unfair model's at an AUC cost of ~0.06), so the grid
    #: spans the trade-off on a log scale (docs/classifiers.md)
    paper_strengths = (0.001, 0.002, 0.005, 0.01, 0.02)
    eps: float
    max_iter: int
    warm_start: bool
    tol: float
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "eps": [positive_real()],
        "max_iter": [positive_int()],
        "warm_start": ["boolean"],
        "tol": [positive_real()],
    }

    def __init__(
        self,
        eps: float = _EPS,
        *,
        max_iter: int = _MAX_ITER,
        warm_start: bool = _WARM_START,
        tol: float = _TOL,
    ) -> None:
        set_params_from_init(self, locals())

    def make(self, notion: Notion) -> OTFPenalty:
        """Return :class:`OTFPenalty` on the notion's linear constraints."""
        return OTFPenalty(LinearConstraints(notion), **self.factory_options())


class OTFPenalty(LinearPenalty):
    r"""Adjusted entropic OT cost from the scores to the nearest fair score vector.

    .. math::

        \mathrm{OTF}^0_\varepsilon(h) = \min_{P \in \Pi^{\mathcal F}(h)}
            \langle C, P\rangle - \varepsilon H(P)
          \;-\; \min_{P \in \Pi^{\mathcal F}_{|Gh|}(h)} \langle C, P\rangle - \varepsilon H(P)

    with :math:`\Pi^{\mathcal F}(h) = \{P \ge 0: P1 = h,\ G P^\top 1 = 0\}` and the
    relaxed set allowing :math:`|G P^\top 1| \le |G h|`
    (Buyl & De Bie, NeurIPS 2022, §3.2-3.4, Def. 5). It is >= 0 and 0 when
    :math:`G h = 0` (Prop. 2). The dual problems are solved in the log domain by
    :func:`otfair.ot.otf0` and differentiated with the envelope theorem (§3.4).

    The cost is the Euclidean distance between the rows of ``features`` (non-protected
    inputs), divided by its mean over the batch so that ``eps`` is relative to the
    typical transport cost whatever the dataset's scaling.

    Parameters
    ----------
    constraints : LinearConstraints
        Fitted linear notion (PDP / PEO, several and continuous attributes).
    eps, max_iter, warm_start, tol : optional
        The settings of :class:`OTF`, with its defaults (``DEFAULTS``).
        ``eps``: the entropic smoothing (the paper's value by default). ``max_iter``:
        semi-dual sweeps per batch (:func:`otfair.ot.otf_dual`): a two-group DP batch
        converges in one, a few groups or EO in a handful. The solves run to ``tol``,
        so this is a cap, not a truncation that would shrink the gradient (the paper's
        alternating updates, truncated at 20 iterations at ``eps = 1e-3``, give a
        gradient ~100x too small; measured in docs/ot.md). ``warm_start``: start each
        batch's constraint duals from the previous batch's (they are per constraint and
        in cost units): the same optimum in ~3 instead of ~10 Newton steps per
        constraint. ``tol``: relative constraint tolerance of both solves.

    Notes
    -----
    Cost per call: the Euclidean cost by one matrix product (``exact=False`` of
    :func:`otfair.ot.euclidean_cost`), and, for discrete groups (DP, EO), its exact
    class reduction fused with it (``otfair.ot._otf_cost.euclidean_class_cost``:
    the batch sorted by class, each cache-sized chunk of rows produced and reduced in
    two passes); the solves then run on ``n x K`` matrices (``K`` = number of groups,
    x2 for EO). Continuous attributes run the solves on the full ``n x n`` cost (a few
    passes per Newton step). Measured step times: docs/classifiers.md.

    Shapes: ``scores`` (n,) (or a (K, n) block of K models in :meth:`from_matrix`,
    ``batchable``), ``sensitive`` (n,) or (n, k), ``labels`` (n,) for PEO, ``features``
    (n, d). Memory O(n^2) per call.
    """

    batchable = True
    draws = False  # deterministic: trains outside the generator mode
    #: the class-reduced cost of a fixed batch is kept across epochs (fixed batches); it
    #: is quadratic in the rows, cheap on batches only (no full-batch solver by default)
    plan = TrainingPlan(mixing="convex", full_batch=False, fixed_batches=True, constraints=True)

    def __init__(
        self,
        constraints: LinearConstraints,
        eps: float = _EPS,
        max_iter: int = _MAX_ITER,
        warm_start: bool = _WARM_START,
        tol: float = _TOL,
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
        self._details: OTF0Details | list[OTF0Details] | None = None

    def fit(self, sensitive: Any, labels: Any = None) -> OTFPenalty:
        """Fit the constraints (unless fitted) and forget the last fit's warm starts."""
        super().fit(sensitive, labels)
        self._details = None
        return self

    def fixed_batch_objective(
        self, features: Tensor, G: Tensor, batches: Sequence[Any]
    ) -> FixedBatchPenalty | None:
        """Return the mean OTF0 of the fixed batches for two groups (DP, EO), else None.

        Under DP each batch's constraints have one direction over two classes and every
        batch's OTF0 is one scalar dual per problem, solved for all batches at once with
        an analytic gradient (``otfair.ot._otf_two_groups.TwoGroupOTF0``, float64
        NumPy: the value and gradient of :meth:`from_matrix` to its tolerance). Under
        EO (equal opportunity) one dual per label cell
        (``otfair.ot._otf_cells.CellsOTF0``, a batched Newton iteration). Each batch's
        class-reduced cost is computed once, here. None for several or continuous
        attributes and more than two groups.
        """
        return _fixed_batch_solver(features, G, batches, self.eps)

    def from_matrix(
        self, scores: Tensor, G: Tensor, features: Tensor | None = None, cache: dict | None = None
    ) -> Tensor:
        """OTF0 for a precomputed constraint matrix ``G`` (d_F, n) of the batch.

        ``scores`` (n,) gives a 0-dim value; a (K, n) block of K models gives K values
        from one cost matrix and one class reduction, the dual solves batched over the
        rows (``problem.otf0(H)``), each row warm-started from its own previous batch.
        ``cache``: a dict the caller keeps for this batch across epochs (fixed batches);
        the batch's class-reduced cost is stored there on the first visit
        (:meth:`otfair.ot.OTFProblem.compact`) and later visits skip the cost matrix
        and its pass.
        """
        if features is None:
            raise ValueError("`features` are required by OTFPenalty (the transport cost).")
        n = scores.shape[-1]
        if features.ndim != 2 or features.shape[0] != n:
            raise ValueError(f"`features` must have shape ({n}, d); got {tuple(features.shape)}.")
        fast = self._two_group_solver(G, features, scores, cache)
        if fast is not None:
            return two_group_otf0(scores, fast)
        return self._general_from_matrix(scores, G, features, cache)

    def _general_from_matrix(
        self, scores: Tensor, G: Tensor, features: Tensor, cache: dict | None
    ) -> Tensor:
        """:meth:`from_matrix` by the general solver (:meth:`OTFProblem.otf0`), any notion."""
        order, problem = self._problem(G, features, scores.dtype, cache)
        if order is not None:  # sorted by class: the class reduction needs no gather
            scores = scores[..., order]
        h = scores.clamp(min=1e-6)
        # per-row warm starts (a list for a block): row k's previous batch's duals
        block = scores.dim() == 2
        warm = self._details if self.warm_start else None
        rows: Sequence[OTF0Details | None] = warm if isinstance(warm, list) else [warm]
        if block != isinstance(warm, list) or len(rows) != (scores.shape[0] if block else 1):
            rows = [None] * (scores.shape[0] if block else 1)
        rows = [w if w is None or w.otf.mu.shape[0] == problem.d else None for w in rows]
        value, details = problem.otf0(
            h,
            self.eps,
            tol=self.tol,
            max_iter=self.max_iter,
            warm_start=rows if block else rows[0],
            return_details=True,
            trusted=True,
        )
        self._details = list(details) if isinstance(details, tuple) else details  # block
        return value.clamp_min(0.0)

    def _two_group_solver(
        self, G: Tensor, features: Tensor, scores: Tensor, cache: dict[Any, Any] | None
    ) -> TwoGroupOTF0 | CellsOTF0 | None:
        """Return a fixed batch's vectorized two-group solver for ``scores``' models, or None.

        A fixed batch (``cache``, kept across epochs) with two groups under DP, EO or
        equal opportunity, every constrained class in it, on the host backend
        (:func:`otfair.ot._otf_backends.solver_backend`: CPU tensors): its problems have
        one dual per label cell, solved in float64 NumPy for all the models of a
        stacked step at once (``otfair.ot._otf_two_groups.TwoGroupOTF0`` under DP,
        ``otfair.ot._otf_cells.CellsOTF0`` otherwise: the L-BFGS path's solvers, to a
        tighter tolerance than the general solver's). Kept in ``cache``. Else None: the
        general solver (several or continuous attributes, a batch missing a group,
        which it refuses with its message, batches drawn anew each epoch, the batched
        backend of an accelerator).
        """
        from otfair.ot._otf_backends import solver_backend

        if cache is None or solver_backend(scores.device) != "host":
            return None
        key = ("two-group", self.eps)
        if key in cache:
            found: TwoGroupOTF0 | CellsOTF0 | None = cache[key]
        else:
            n = scores.shape[-1]
            with torch.no_grad():
                found = _fixed_batch_solver(
                    features.detach().float(), G.detach(), [np.arange(n)], self.eps
                )
            cache[key] = found
        k = scores.shape[0] if scores.dim() == 2 else 1
        if found is None or k == 1:
            return found
        stacked_key = ("two-group", self.eps, k)
        if stacked_key not in cache:
            cache[stacked_key] = found.repeated(k)
        return cast("TwoGroupOTF0 | CellsOTF0", cache[stacked_key])

    def _problem(
        self,
        G: Tensor,
        features: Tensor,
        dtype: torch.dtype,
        cache: dict[Any, Any] | None,
    ) -> tuple[Tensor | None, OTFProblem]:
        """Return the batch's class order and OTF problem of the normalized cost (cached)."""
        from otfair.ot import OTFProblem, euclidean_cost
        from otfair.ot._otf_cost import in_float_range
        from otfair.ot._otf_problem import euclidean_class_problem

        key = ("otf-problem", self.eps)
        if cache is not None and key in cache:
            return cache[key]
        G = G.detach().to(dtype)
        features = features.detach().to(dtype)
        try:  # the problem checks G's rows (one host read for all of them)
            with torch.no_grad():
                found: tuple[Tensor | None, OTFProblem] | None = euclidean_class_problem(
                    features, G, self.eps
                )
                if found is None:  # continuous attributes: the dense n x n problem
                    unit = in_float_range(features)
                    C = euclidean_cost(unit, unit, exact=False)
                    C.fill_diagonal_(0.0)
                    C /= C.mean().clamp_min(1e-12)
                    found = None, OTFProblem(C, G)
        except ValueError as err:
            if "`G` row" not in str(err):
                raise
            c = str(err).split("`G` row ")[1].split()[0]
            raise ValueError(
                f"constraint row {c} of the batch has no positive or no negative entry: "
                "a group (or group x label for PEO) is empty in this batch; use larger "
                "or stratified batches."
            ) from err
        if cache is not None and found[0] is not None:
            cache[key] = found
        return found


def _fixed_batch_solver(
    features: Tensor, G: Tensor, batches: Sequence[Any], eps: float
) -> TwoGroupOTF0 | CellsOTF0 | None:
    """Return the vectorized solver of the fixed batches: two-group DP, else cells, else None."""
    from otfair.ot._otf_cells import CellsOTF0
    from otfair.ot._otf_two_groups import TwoGroupOTF0

    found = TwoGroupOTF0.from_batches(features, G, batches, eps)
    if found is not None:
        return found
    return CellsOTF0.from_batches(features, G, batches, eps)


class _TwoGroupOTF0Function(torch.autograd.Function):
    """OTF0 of one batch's problems by a vectorized two-group solver, its gradient kept."""

    @staticmethod
    def forward(ctx: Any, scores: Tensor, solver: TwoGroupOTF0 | CellsOTF0) -> Tensor:
        flat = scores.detach().reshape(-1).to(torch.float64).numpy()
        values, grad = solver.block_values(flat)
        ctx.save_for_backward(torch.from_numpy(grad).to(scores.dtype).reshape(scores.shape))
        return torch.from_numpy(values).to(scores.dtype).reshape(scores.shape[:-1])

    @staticmethod
    def backward(ctx: Any, grad_out: Tensor) -> tuple[Tensor, None]:
        (grad,) = ctx.saved_tensors
        return grad_out[..., None] * grad, None


def two_group_otf0(scores: Tensor, solver: TwoGroupOTF0 | CellsOTF0) -> Tensor:
    """Return OTF0 of ``scores`` (n,) -> 0-dim, or (K, n) -> (K,), on ``solver``'s batch."""
    return cast(Tensor, _TwoGroupOTF0Function.apply(scores, solver))
