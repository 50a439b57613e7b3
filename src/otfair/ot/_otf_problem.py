r"""The OTF problem data: a cost, a constraint matrix and the exact class reduction.

An :class:`OTFProblem` holds what does not depend on the row masses ``h``: the cost
:math:`C \in \mathbb R^{n \times n}` and the constraint matrix
:math:`G \in \mathbb R^{d \times n}` (a column vector :math:`f` of masses is admissible
when :math:`G f = 0`), checked once. When the columns of ``G`` take only ``K`` distinct
values, every quantity of the dual depends on a column only through its class and the
problem reduces exactly to the ``n x K`` one with the class cost

.. math::

    \tilde C_{ik} = -\varepsilon \log \sum_{j:\, k(j) = k} e^{-C_{ij}/\varepsilon}

and the ``d x K`` matrix of the distinct columns (Buyl & De Bie, NeurIPS 2022,
App. A). The reduced cost is computed by one pass over ``C`` per value of
``eps`` and cached, so one problem serves many solves: several mass vectors (score
vectors of several models, or the OTF and OTFR solves of :func:`otfair.ot.otf0`).
"""

from __future__ import annotations

from typing import Literal, overload

import torch

from otfair.ot._checks import check_matrix, check_vector
from otfair.ot._lse import lse_rows_by_class
from otfair.ot._otf_backends import OTF0Details, OTFResult
from otfair.ot._otf_cost import euclidean_class_cost
from otfair.ot._otf_semidual import SMALL_COLUMNS, row_basis
from otfair.ot._otf_solver import solve_dual, solve_otf0

#: the class reduction is used when the columns of G take at most this fraction of n values
MAX_CLASS_FRACTION = 0.25


def check_masses(h: object, name: str = "h", *, like: torch.Tensor | None = None) -> torch.Tensor:
    """Return positive finite masses as a 1-D tensor (the entropic problem needs h > 0)."""
    t = check_vector(h, name, like=like)
    td = t.detach()
    if bool((td <= 0).any()):
        raise ValueError(
            f"`{name}` must be positive masses; its minimum is {float(td.min()):.4g}."
        )
    return t


def column_classes(G: torch.Tensor, max_classes: int) -> tuple[torch.Tensor, torch.Tensor] | None:
    """Distinct columns of ``G`` (d, K) and the class of each column, or None if K is large.

    Classes are numbered in the lexicographic order of the columns' per-row value codes,
    so a batch sorted by class gives sorted classes. Built from one 1-D ``unique`` per
    row (``torch.unique(G.T, dim=0)`` is ~10x slower).
    """
    codes = torch.zeros(G.shape[1], dtype=torch.long, device=G.device)
    for row in G:
        values, inv = torch.unique(row, return_inverse=True)
        if values.numel() > max_classes:
            return None
        codes = codes * values.numel() + inv
        values, codes = torch.unique(codes, return_inverse=True)  # keep the codes < n
    n_classes = values.numel()  # known on the host: no read of codes.max()
    if n_classes > max_classes:
        return None
    first = torch.full((n_classes,), G.shape[1], dtype=torch.long, device=G.device)
    first.scatter_reduce_(0, codes, torch.arange(G.shape[1], device=G.device), "amin")
    return G[:, first].contiguous(), codes


def _max_classes(n: int) -> int:
    return int(MAX_CLASS_FRACTION * n)


def _row_error(c: int) -> ValueError:
    return ValueError(
        f"`G` row {c} must have both positive and negative entries (no positive "
        "mass vector f has G f = 0 otherwise); is a group empty in this batch?"
    )


def euclidean_class_problem(
    X: torch.Tensor, G: torch.Tensor, eps: float
) -> tuple[torch.Tensor, OTFProblem] | None:
    r"""Return the class-reduced problem of the normalized Euclidean cost of ``X`` at ``eps``.

    For the OTF penalty's batches: ``C_ij = ||x_i - x_j|| / mean(||x_i - x_j||)`` with
    ``C_ii = 0`` (:func:`otfair.ot.euclidean_cost` with ``exact=False``), reduced to the
    column classes of ``G`` by :func:`otfair.ot._otf_cost.euclidean_class_cost` without
    an ``n x n`` temporary per step. Returns ``(order, problem)``: the permutation that
    sorts the batch by class (apply it to the masses) and the compact problem
    (:meth:`OTFProblem.compact`) of the sorted batch at ``eps``; None when the columns
    of ``G`` take more than ``n / 4`` values (no reduction: build the dense problem).
    One host read (the class sizes and the row check) besides the cost's scale.
    """
    G = G.detach()
    X = X.detach().to(G.dtype)
    n = G.shape[1]
    if X.dim() != 2 or X.shape[0] != n:
        raise ValueError(f"`X` must have shape ({n}, p) to match `G`; got {tuple(X.shape)}.")
    classes = column_classes(G, max_classes=_max_classes(n))
    if classes is None:
        return None
    cols, codes = classes
    K = cols.shape[1]
    both = (cols > 0).any(dim=1) & (cols < 0).any(dim=1)
    info = torch.cat([torch.bincount(codes, minlength=K), both.to(codes.dtype)]).tolist()
    if not all(info[K:]):
        raise _row_error(info[K:].index(0))
    order = torch.argsort(codes, stable=True)
    reduced, _ = euclidean_class_cost(X[order], info[:K], eps)
    problem = object.__new__(OTFProblem)
    problem.C, problem.G, problem.chunk_rows = None, G[:, order].contiguous(), None  # type: ignore[assignment]
    problem.classes = (cols, codes[order])
    problem._cache = {eps: reduced}
    problem._basis = None
    return order, problem


class OTFProblem:
    r"""A checked OTF problem ``(C, G)``, reusable for many mass vectors ``h``.

    Build it once per batch (or once for a fixed batch across epochs, or once for the
    ``K`` score vectors of ``K`` models on the same batch) and call :meth:`otf_dual`,
    :meth:`otfr_dual` or :meth:`otf0`; the class-reduced costs are cached per ``eps``.
    The module functions :func:`otfair.ot.otf_dual`, :func:`otfair.ot.otfr_dual` and
    :func:`otfair.ot.otf0` build one per call.

    Parameters
    ----------
    C : tensor of shape (n, n)
        Cost matrix (detached).
    G : tensor of shape (d, n)
        Constraint matrix; every row needs positive and negative entries (otherwise no
        positive mass vector satisfies :math:`G f = 0`).
    chunk_rows : int, optional
        Rows per chunk of the in-place log-sum-exp (bounds the extra memory).
    like : tensor, optional
        Tensor whose dtype and device ``C`` and ``G`` take (default: ``C``'s own).

    Attributes
    ----------
    C, G : torch.Tensor
        The checked, detached matrices.
    classes : (tensor (d, K), tensor (n,)) or None
        Distinct columns of ``G`` and each column's class when the reduction applies
        (``K <= n / 4``), else None.

    Examples
    --------
    >>> import torch
    >>> from otfair.ot import OTFProblem, euclidean_cost
    >>> X = torch.randn(40, 3, dtype=torch.float64); s = (torch.arange(40) % 3 == 0) * 1.0
    >>> G = torch.stack([s / s.mean() - 1, (1 - s) / (1 - s).mean() - 1])
    >>> problem = OTFProblem(euclidean_cost(X, X), G)
    >>> h = torch.sigmoid(X[:, 0] + s)
    >>> bool(problem.otf0(h, 0.1) > 0)
    True
    """

    def __init__(
        self,
        C: object,
        G: object,
        *,
        chunk_rows: int | None = None,
        like: torch.Tensor | None = None,
    ) -> None:
        Ct = check_matrix(C, "C", like=like).detach()
        n = Ct.shape[0]
        if Ct.shape[1] != n:
            raise ValueError(f"`C` must be square (n, n); got {tuple(Ct.shape)}.")
        Gt = check_matrix(G, "G", like=Ct).detach()
        if Gt.shape[1] != n:
            raise ValueError(
                f"`G` must have shape (d, {n}) (one column per row of `C`); got {tuple(Gt.shape)}."
            )
        both = (Gt > 0).any(dim=1) & (Gt < 0).any(dim=1)
        if not bool(both.all()):  # one host read for all rows
            raise _row_error(int(torch.nonzero(~both)[0, 0]))
        self.C, self.G, self.chunk_rows = Ct, Gt, chunk_rows
        with torch.no_grad():
            self.classes = column_classes(Gt, max_classes=_max_classes(n))
        self._cache: dict[float, torch.Tensor] = {}
        self._basis: tuple[torch.Tensor, torch.Tensor] | None = None

    def row_basis(self, G: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor] | None:
        """Row-space basis of the solved constraint matrix ``G``, kept (small problems).

        Only for problems with at most ``SMALL_COLUMNS`` solved columns and several rows
        (the ones that take joint Newton steps); None otherwise.
        """
        if G.shape[0] < 2 or G.shape[1] > SMALL_COLUMNS:
            return None
        if self._basis is None:
            self._basis = row_basis(G)
        return self._basis

    @property
    def n(self) -> int:
        """Number of rows (and columns) of the cost."""
        return self.G.shape[1]

    @property
    def d(self) -> int:
        """Number of constraints (rows of ``G``)."""
        return self.G.shape[0]

    @staticmethod
    def class_order(G: torch.Tensor) -> torch.Tensor | None:
        """Permutation sorting the columns of ``G`` by class, or None (no reduction).

        Sorting a batch by it (``C``, ``G`` and ``h`` alike) lets the class reduction run
        without a gather; the result does not depend on the order otherwise.
        """
        G = G.detach()
        classes = column_classes(G, max_classes=_max_classes(G.shape[1]))
        if classes is None:
            return None
        return torch.argsort(classes[1], stable=True)

    def matrices(self, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
        """Cost and constraint matrix of the (class-reduced, float64) problem at ``eps``."""
        if self.classes is None:
            return self.C, self.G
        cols, inv = self.classes
        if eps not in self._cache:
            if self.C is None:
                raise ValueError(
                    f"this compact problem holds the class-reduced cost at eps in "
                    f"{sorted(self._cache)} only; got eps={eps!r}."
                )
            with torch.no_grad():
                lse = lse_rows_by_class(
                    self.C, -1.0 / eps, inv, cols.shape[1], chunk_rows=self.chunk_rows
                )
            self._cache[eps] = -eps * lse.to(torch.float64)
        return self._cache[eps], cols.to(torch.float64)

    def compact(self, eps: float) -> OTFProblem:
        """Return a copy that keeps only the class-reduced cost at ``eps``.

        It holds ``n x K`` numbers instead of the ``n x n`` cost, solves exactly what this
        problem solves at that ``eps`` (and raises for another), and can be stored per
        batch: the reduced cost depends only on the batch's data, so a training loop that
        revisits fixed batches computes it once (no cost matrix, no pass over it, per
        step). Only for problems with a class reduction.
        """
        if self.classes is None:
            raise ValueError(
                "`compact` needs a class reduction: the columns of `G` take more than "
                f"n / {1 / MAX_CLASS_FRACTION:g} distinct values."
            )
        self.matrices(eps)
        new = object.__new__(OTFProblem)
        new.C, new.G, new.chunk_rows, new.classes = None, self.G, self.chunk_rows, self.classes  # type: ignore[assignment]
        new._cache = {eps: self._cache[eps]}
        new._basis = self._basis
        return new

    def check_masses(self, h: object, name: str = "h") -> torch.Tensor:
        """Return ``h`` as positive masses of length ``n`` in the problem's dtype."""
        t = check_masses(h, name, like=self.G)
        if t.shape[0] != self.n:
            raise ValueError(f"`{name}` has {t.shape[0]} entries but the cost has {self.n} rows.")
        return t

    def otf_dual(self, h: object, eps: float, **kwargs) -> OTFResult:
        """Solve the OTF dual for masses ``h``; keywords as :func:`otfair.ot.otf_dual`."""
        return solve_dual(self, self.check_masses(h), eps, relaxed=False, **kwargs)

    def otfr_dual(self, h: object, eps: float, **kwargs) -> OTFResult:
        """Solve the OTFR dual for masses ``h``; keywords as :func:`otfair.ot.otfr_dual`."""
        return solve_dual(self, self.check_masses(h), eps, relaxed=True, **kwargs)

    @overload
    def otf0(
        self, h: torch.Tensor, eps: float, *, return_details: Literal[False] = ..., **kwargs
    ) -> torch.Tensor: ...

    @overload
    def otf0(
        self, h: torch.Tensor, eps: float, *, return_details: Literal[True], **kwargs
    ) -> tuple[torch.Tensor, OTF0Details | tuple[OTF0Details, ...]]: ...

    @overload
    def otf0(
        self, h: torch.Tensor, eps: float, *, return_details: bool = False, **kwargs
    ) -> torch.Tensor | tuple[torch.Tensor, OTF0Details | tuple[OTF0Details, ...]]: ...

    def otf0(
        self, h: torch.Tensor, eps: float, *, return_details: bool = False, **kwargs
    ) -> torch.Tensor | tuple[torch.Tensor, OTF0Details | tuple[OTF0Details, ...]]:
        """Return the adjusted cost OTF0 of ``h`` (differentiable); keywords as :func:`otf0`."""
        value, details = solve_otf0(self, h, eps, **kwargs)
        return (value, details) if return_details else value
