r"""The OTF paper's alternating dual updates (App. A), kept as a reference solver.

Not part of the package: ``otfair.ot`` solves OTF / OTFR with the semi-dual solver
(docs/ot.md). This module re-implements the paper's algorithm independently (plain
``torch.logsumexp`` passes and :func:`scipy.optimize.brentq`) so that tests and benchmarks
can compare against it through the public API::

    from otfair.ot import otf_dual
    res = otf_dual(h, C, G, eps, solver=AlternatingSolver, eps_start=1.0)

One iteration updates all row duals :math:`\lambda_i` at once (one row log-sum-exp), the
column masses :math:`\log \eta_j = \operatorname{LSE}_i ((-C_{ij} + \lambda_i) /
\varepsilon)` (one column log-sum-exp), then each constraint dual :math:`y_c = \mu_c /
\varepsilon` in turn with the column masses held fixed: the root of the monotone

.. math::

    D(y) = \sum_j g_j\, e^{w_j + y g_j} = \text{target}

(``target`` 0 for OTF; for OTFR ``y_c = 0`` while :math:`|D(0)| \le \gamma_c`, else the
nearest bound). For a row with two nonzero values :math:`a > 0 > b` and target 0 the
root has the closed form of App. A.2,
:math:`y = (\log(-b) + \log B - \log a - \log A) / (a - b)` with
:math:`\log A = \operatorname{LSE}_{j: g_j = a} w_j`; otherwise ``brentq`` on a bracket
found by doubling. Each update moves :math:`\mu` by :math:`O(\varepsilon)`, so small
``eps`` needs ``eps_start=`` (thousands of iterations at eps = 1e-3 otherwise).
"""

from __future__ import annotations

import math
import warnings

import torch
from scipy.optimize import brentq

from otfair.ot import ConvergenceWarning, OTFResult


def _two_values(g: torch.Tensor) -> tuple[float, float] | None:
    """Return ``(a, b)`` if the row's nonzero values are exactly ``a > 0 > b``, else None."""
    values = torch.unique(g[g != 0])
    if values.numel() == 2 and float(values[0]) < 0 < float(values[1]):
        return float(values[1]), float(values[0])
    return None


def closed_form(g: torch.Tensor, w: torch.Tensor, a: float, b: float) -> float:
    """Exact root of ``D(y) = 0`` for a two-valued row (App. A.2)."""
    log_a = torch.logsumexp(w[g == a], 0)
    log_b = torch.logsumexp(w[g == b], 0)
    return float((math.log(-b) + log_b - math.log(a) - log_a) / (a - b))


def log_residual(g: torch.Tensor, w: torch.Tensor, y: float, target: float) -> float:
    """``D(y) - target`` scaled by ``exp(-max(w + y g))`` (same sign, no overflow)."""
    z = w + y * g
    m = float(z.max())
    return float((g * torch.exp(z - m)).sum()) - target * math.exp(-m)


def solve_row(g: torch.Tensor, w: torch.Tensor, target: float = 0.0, y0: float = 0.0) -> float:
    """Return ``y`` with ``D(y) = target`` (closed form when possible, else ``brentq``)."""
    pair = _two_values(g)
    if target == 0.0 and pair is not None:
        return closed_form(g, w, *pair)
    lo, hi, step = y0 - 1.0, y0 + 1.0, 1.0
    while log_residual(g, w, lo, target) > 0:
        step *= 2.0
        lo -= step
    step = 1.0
    while log_residual(g, w, hi, target) < 0:
        step *= 2.0
        hi += step
    return brentq(lambda y: log_residual(g, w, y, target), lo, hi, xtol=1e-15, rtol=1e-15)


class AlternatingSolver:
    """The paper's alternating updates; the solver interface of ``otfair.ot.otf_dual``.

    ``AlternatingSolver(h, C, G, eps, gamma=, chunk_rows=)`` on the (possibly
    class-reduced) matrices of one ``eps``; ``solve(...)`` returns an ``OTFResult`` whose
    ``converged`` refers to the relative row-marginal error.
    """

    def __init__(self, h, C, G, eps, *, gamma=None, chunk_rows=None):
        self.h = h.detach()
        self.C, self.eps = C, float(eps)
        self.G64 = G.detach().to(torch.float64)
        self.gamma = None if gamma is None else [float(x) for x in gamma]
        self.log_h = self.h.log()

    def lam_update(self, GTy: torch.Tensor) -> torch.Tensor:
        """Row duals making the rows of the plan equal ``h`` (one row LSE)."""
        logits = -self.C / self.eps + GTy.to(self.C.dtype)[None, :]
        return self.eps * (self.log_h - torch.logsumexp(logits, dim=1))

    def log_eta(self, lam: torch.Tensor) -> torch.Tensor:
        """Log column masses at the row duals ``lam`` (one column LSE), float64."""
        logits = (-self.C + lam[:, None]) / self.eps
        return torch.logsumexp(logits, dim=0).to(torch.float64)

    def update_rows(self, log_eta: torch.Tensor, y: torch.Tensor, GTy: torch.Tensor) -> None:
        """Gauss-Seidel pass over the constraint duals ``y``, in place (``GTy = G^T y``)."""
        for c in range(self.G64.shape[0]):
            g = self.G64[c]
            w = log_eta + GTy - y[c] * g
            if self.gamma is None or self.gamma[c] == 0.0:
                y_new = solve_row(g, w, 0.0, float(y[c]))
            else:
                d0 = float((g * torch.exp(w)).sum())  # constraint value at y_c = 0
                if abs(d0) <= self.gamma[c]:
                    y_new = 0.0
                else:
                    y_new = solve_row(g, w, math.copysign(self.gamma[c], d0), float(y[c]))
            GTy += (y_new - float(y[c])) * g
            y[c] = y_new

    def solve(self, *, tol, max_iter, y0=None, warn=False, name="otf") -> OTFResult:
        """Iterate until the relative row-marginal error is at most ``tol``."""
        d = self.G64.shape[0]
        y = torch.zeros(d, dtype=torch.float64) if y0 is None else y0.clone().cpu()
        GTy = self.G64.T @ y
        lam = self.lam_update(GTy)
        log_eta = self.log_eta(lam)
        h_sum = float(self.h.sum())
        it = 0
        while True:
            self.update_rows(log_eta, y, GTy)
            it += 1
            lam_new = self.lam_update(GTy)
            err = float((self.h * torch.expm1((lam - lam_new) / self.eps)).abs().sum()) / h_sum
            if err <= tol or it >= max_iter:
                break
            lam = lam_new
            log_eta = self.log_eta(lam)
        if err > tol and warn:
            warnings.warn(
                f"{name} did not converge: row-marginal error {err:.3g} > tol={tol:g} after "
                f"{it} iterations (eps={self.eps:g}).",
                ConvergenceWarning,
                stacklevel=3,
            )
        col = torch.exp(log_eta + GTy)
        value = (lam.to(torch.float64) * self.h.to(torch.float64)).sum() - self.eps * col.sum()
        viol = (self.G64 @ col).abs()
        if self.gamma is not None:
            gam = torch.tensor(self.gamma, dtype=torch.float64)
            value = value - self.eps * (gam * y.abs()).sum()
            viol = viol - gam
        c_err = float(viol.clamp(min=0).max()) / h_sum
        # value, lam, mu, mass, n_iter, marginal_error, constraint_error, converged
        return OTFResult(value, lam, self.eps * y, col.sum(), it, err, c_err, err <= tol)
