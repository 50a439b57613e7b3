"""Exact matching of two point sets: optimal permutation or sampled Kantorovich partners."""

from __future__ import annotations

from collections.abc import Callable
from numbers import Integral
from typing import Literal

import numpy as np
import ot as pot
import torch
from scipy.optimize import linear_sum_assignment

from otfair.ot._checks import check_matrix, check_shaped
from otfair.ot._costs import Metric, cost_matrix
from otfair.utils import Interval, StrOptions, validate_params

CostArg = Metric | Callable[[torch.Tensor, torch.Tensor], torch.Tensor]

#: POT's default (1e5) stops ot.emd before optimality from n ~ 4096 on.
_EMD_MAX_ITER = 100_000_000


def _cost(X0: torch.Tensor, X1: torch.Tensor, cost: CostArg, M: object | None):
    n0, n1 = X0.shape[0], X1.shape[0]
    if M is not None:
        Mt = check_shaped(M, (n0, n1), "M", like=X0)
    elif callable(cost):
        Mt = cost(X0, X1)
        if not isinstance(Mt, torch.Tensor) or tuple(Mt.shape) != (n0, n1):
            raise ValueError(f"`cost` must return an ({n0}, {n1}) tensor.")
    else:
        Mt = cost_matrix(X0, X1, metric=cost)
    return Mt.detach().to("cpu", torch.float64).numpy()


@validate_params(
    {
        "cost": [StrOptions({"sqeuclidean", "euclidean", "l1"}), callable],
        "generator": [torch.Generator, None],
        "seed": [Interval(Integral, None, None, closed="neither"), None],
    }
)
def match(
    X0: object,
    X1: object,
    *,
    cost: CostArg = "sqeuclidean",
    M: object | None = None,
    method: Literal["auto", "assignment", "emd"] = "auto",
    generator: torch.Generator | None = None,
    seed: int | None = None,
) -> torch.Tensor:
    r"""Partner in ``X1`` of every row of ``X0`` under an optimal transport plan.

    Solves the discrete OT problem between the uniform empirical measures on the rows of
    ``X0`` and ``X1`` (Kim et al., TMLR 2024, §4),

    .. math::

        \min_{P \ge 0,\; P 1 = \mathbf{1}/n_0,\; P^\top 1 = \mathbf{1}/n_1}
        \langle C, P \rangle .

    * Equal sizes: the optimum is a permutation, found exactly with
      ``scipy.optimize.linear_sum_assignment`` on the row- and column-reduced cost,
      about twice as fast as POT's ``ot.emd`` at the same optimal cost (``otfair bench
      ot`` measures it; ``method="emd"`` is available).
    * Unequal sizes: the Kantorovich plan from ``ot.emd``; the partner of row ``i`` is
      drawn from row ``i`` of the plan (a categorical draw with probabilities
      :math:`n_0 P_{ij}`) using ``generator`` (or ``seed``), so runs are reproducible.

    The matching depends only on the data: compute it once per batch pairing and reuse
    it. Nothing here is differentiable (indices).

    Parameters
    ----------
    X0 : tensor of shape (n0, d)
        Points to match (e.g. group 0). 1-D input is one feature.
    X1 : tensor of shape (n1, d)
        Candidate partners (e.g. group 1).
    cost : {"sqeuclidean", "euclidean", "l1"} or callable, default="sqeuclidean"
        Ground cost; a callable gets ``(X0, X1)`` tensors and returns an (n0, n1) cost.
    M : tensor of shape (n0, n1), optional
        A precomputed cost matrix (e.g. :func:`joint_cost`); overrides ``cost``.
    method : {"auto", "assignment", "emd"}, default="auto"
        ``"auto"`` uses the assignment solver for equal sizes and ``ot.emd`` otherwise.
        ``"emd"`` with equal sizes takes the argmax of each row of the plan.
    generator : torch.Generator, optional
        Randomness for the partner draws of unequal sizes.
    seed : int, optional
        Used to make a generator when ``generator`` is None.

    Returns
    -------
    torch.Tensor of shape (n0,), dtype int64
        ``index[i]`` is the row of ``X1`` matched with row ``i`` of ``X0``; on the
        device of ``X0``.
    """
    X0t, X1t = _check_match_input(X0, X1, M, method)
    n0, n1 = X0t.shape[0], X1t.shape[0]
    C = _cost(X0t, X1t, cost, M)
    if n0 == n1 and method in ("auto", "assignment"):
        return torch.from_numpy(_assignment(C)).to(X0t.device)
    plan = pot.emd(np.full(n0, 1.0 / n0), np.full(n1, 1.0 / n1), C, numItermax=_EMD_MAX_ITER)
    if n0 == n1:
        return torch.from_numpy(plan.argmax(axis=1).astype(np.int64)).to(X0t.device)
    return _draw_partners(plan, generator, seed).to(X0t.device)


def _check_match_input(
    X0: object, X1: object, M: object | None, method: str
) -> tuple[torch.Tensor, torch.Tensor]:
    """Return ``X0`` and ``X1`` as matrices; check the features, ``method`` and sizes."""
    X0t = check_matrix(X0, "X0")
    X1t = check_matrix(X1, "X1", like=X0t)
    if M is None and X0t.shape[1] != X1t.shape[1]:
        raise ValueError(
            f"`X0` and `X1` must have the same number of features; got {X0t.shape[1]} "
            f"and {X1t.shape[1]}."
        )
    if method not in ("auto", "assignment", "emd"):
        raise ValueError(f"`method` must be 'auto', 'assignment' or 'emd'; got {method!r}.")
    n0, n1 = X0t.shape[0], X1t.shape[0]
    if method == "assignment" and n0 != n1:
        raise ValueError(f"`method='assignment'` needs equal sizes; got n0={n0} and n1={n1}.")
    return X0t, X1t


def _assignment(C: np.ndarray) -> np.ndarray:
    """Return the optimal permutation of a square cost: ``index[i]`` is row ``i``'s partner.

    Row/column reduction leaves the optimal permutation unchanged (every permutation's
    cost drops by the same constant) and speeds the solver up ~1.6x. Against POT's
    ``ot.emd`` (the FTM reference code's solver), on a 2-core machine with one BLAS
    thread, same optimal cost: 4-5 ms vs 9-12 ms at n = 256; at n = 1024 107 vs
    184-230 ms on two samples of one distribution and 257 vs 466 ms on shifted samples
    (without the reduction: 412 ms).
    """
    reduced = C - C.min(axis=1, keepdims=True)
    reduced -= reduced.min(axis=0, keepdims=True)
    rows, cols = linear_sum_assignment(reduced)
    index = np.empty(C.shape[0], dtype=np.int64)
    index[rows] = cols
    return index


def _draw_partners(
    plan: np.ndarray, generator: torch.Generator | None, seed: int | None
) -> torch.Tensor:
    """Draw each row's partner from its row of a Kantorovich plan (reproducibly)."""
    if generator is None:
        generator = torch.Generator()
        if seed is not None:
            generator.manual_seed(int(seed))
        else:
            generator.seed()
    probs = torch.from_numpy(np.maximum(plan, 0.0))
    return torch.multinomial(probs, 1, generator=generator)[:, 0]
