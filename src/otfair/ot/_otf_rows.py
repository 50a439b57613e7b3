r"""One-dimensional dual updates of the OTF / OTFR coordinate ascent (one row of G).

With :math:`y_c = \mu_c / \varepsilon` and log-weights :math:`w_j` collecting
everything that does not depend on row ``c`` (the column masses
:math:`\log\eta_j` and the other rows' duals), the update of row ``c`` solves the
monotone equation

.. math::

    D(y) = \sum_j g_j\, e^{w_j + y g_j} = \text{target},

i.e. the batch constraint :math:`(G P^\top 1)_c` hits ``target`` (0 for OTF, the
bound :math:`\pm\gamma_c` for OTFR). For a row with exactly two nonzero values
:math:`a > 0 > b` and ``target = 0`` (DP and EO rows) it has the closed form of
otf-optimal-transport-to-fairness.txt App. A.2 / methods.md §2

.. math::

    y = \frac{\log(-b) + \log B - \log a - \log A}{a - b},\qquad
    \log A = \operatorname{LSE}_{j: g_j = a} w_j,\ \log B = \operatorname{LSE}_{j: g_j = b} w_j.

Otherwise a safeguarded Newton iteration keeps a bracket on which :math:`D - \text{target}`
changes sign and bisects whenever a Newton step leaves it. Everything here runs in
float64 on vectors of length n.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from otfair.ot._newton import bracketed_newton


@dataclass(frozen=True)
class Row:
    """One constraint row prepared for the updates (float64)."""

    g: torch.Tensor
    two_valued: bool
    a: float = 0.0
    b: float = 0.0
    mask_a: torch.Tensor | None = None
    mask_b: torch.Tensor | None = None


def prepare_rows(G: torch.Tensor) -> list[Row]:
    """Split ``G`` into rows, detecting the two-valued ones (exact value equality)."""
    rows = []
    G64 = G.detach().to(torch.float64)
    for c in range(G64.shape[0]):
        g = G64[c]
        values = torch.unique(g[g != 0])
        if values.numel() == 2 and float(values[0]) < 0 < float(values[1]):
            b, a = float(values[0]), float(values[1])
            rows.append(Row(g, True, a, b, g == a, g == b))
        else:
            rows.append(Row(g, False))
    return rows


def closed_form(row: Row, w: torch.Tensor) -> float:
    """Exact root of ``D(y) = 0`` for a two-valued row."""
    log_a = torch.logsumexp(w[row.mask_a], 0)
    log_b = torch.logsumexp(w[row.mask_b], 0)
    return float((math.log(-row.b) + log_b - math.log(row.a) - log_a) / (row.a - row.b))


def _residual(g: torch.Tensor, w: torch.Tensor, y: float, target: float):
    """Return ``D(y) - target``, ``D'(y)`` and the scale ``sum |g| e^z`` (for tolerances)."""
    z = w + y * g
    m = float(z.max())
    e = torch.exp(z - m)
    if target == 0.0:  # scale-free form: the softmax mean of g
        s0 = float(e.sum())
        p = e / s0
        mean = float((p * g).sum())
        var = float((p * g * g).sum()) - mean * mean
        return mean, max(var, 0.0), float((p * g.abs()).sum())
    scale = math.exp(m) if m < 700 else math.inf
    d = scale * float((g * e).sum())
    d1 = scale * float((g * g * e).sum())
    return d - target, d1, scale * float((g.abs() * e).sum())


def solve_row(
    row: Row,
    w: torch.Tensor,
    target: float = 0.0,
    y0: float = 0.0,
    *,
    rtol: float = 1e-10,
    max_steps: int = 100,
) -> float:
    """Return ``y`` with ``D(y) = target`` (closed form when possible, else Newton)."""
    if target == 0.0 and row.two_valued:
        return closed_form(row, w)
    if row.two_valued:  # the target = 0 solution is an excellent start for OTFR's bounds
        y0 = closed_form(row, w)
    g = row.g

    def residual(y: float) -> tuple[float, float, float]:
        r, d1, scale = _residual(g, w, y, target)
        return r, d1, rtol * max(scale, abs(target), 1e-300)

    return bracketed_newton(residual, y0, max_steps=max_steps, xtol=1e-15)
