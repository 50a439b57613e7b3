"""Sharp Sinkhorn value with the closed-form gradient of AdapFair Lemma 1."""

from __future__ import annotations

from numbers import Real

import torch

from otfair.ot._checks import check_eps, check_matrix, check_same_mass, check_weights
from otfair.ot._sinkhorn import sinkhorn
from otfair.utils import Interval, positive_int, validate_params


def sharp_gradient(
    P: torch.Tensor, M: torch.Tensor, a: torch.Tensor, b: torch.Tensor, eps: float
) -> torch.Tensor:
    r"""Gradient of the sharp value :math:`S_\varepsilon(M) = \langle P^*(M), M\rangle`.

    AdapFair (Huang et al., 2024, App. A, Lemma 1; Luise et al. 2018), written for the
    temperature :math:`\varepsilon` of :func:`sinkhorn` (the paper's :math:`\epsilon`
    is the inverse temperature :math:`1/\varepsilon`):

    .. math::

        \nabla_M S_\varepsilon = P^* + \tfrac{1}{\varepsilon}
            \big(s_u 1^\top + 1 s_v^\top - M\big) \odot P^*,

    with :math:`\mu_r = (M \odot P^*) 1`, :math:`\mu_c = (M \odot P^*)^\top 1`,
    :math:`s_v = (\tilde s_v, 0)`, :math:`s_u = a^{-1} \odot (\mu_r - P^* s_v)` and
    :math:`\tilde s_v = D^{-1} [\tilde\mu_c - \tilde P^{*\top}(a^{-1} \odot \mu_r)]`,
    :math:`D = \mathrm{Diag}(\tilde b) - \tilde P^{*\top} \mathrm{Diag}(a^{-1}) \tilde P^*`
    (tildes drop the last column: the potentials are defined up to a constant). The
    (n1-1) x (n1-1) system is solved in float64; a pseudo-inverse is used if it is
    singular (very small ``eps``, where the gradient tends to :math:`P^*`).

    Parameters
    ----------
    P : tensor of shape (n0, n1)
        The converged Sinkhorn plan.
    M : tensor of shape (n0, n1)
    a, b : tensor of shape (n0,) / (n1,)
        Positive weights.
    eps : float

    Returns
    -------
    torch.Tensor of shape (n0, n1)
    """
    dtype = M.dtype
    P64, M64 = P.double(), M.double()
    a64, b64 = a.double(), b.double()
    MP = M64 * P64
    mu_r, mu_c = MP.sum(1), MP.sum(0)
    Pt = P64[:, :-1]
    inv_a = 1.0 / a64
    D = torch.diag(b64[:-1]) - Pt.T @ (inv_a[:, None] * Pt)
    rhs = mu_c[:-1] - Pt.T @ (inv_a * mu_r)
    sol, info = torch.linalg.solve_ex(D, rhs)
    if int(info) != 0 or not bool(torch.isfinite(sol).all()):
        sol = torch.linalg.pinv(D, hermitian=True) @ rhs
    s_v = torch.cat([sol, sol.new_zeros(1)])
    s_u = inv_a * (mu_r - P64 @ s_v)
    grad = P64 + (s_u[:, None] + s_v[None, :] - M64) * P64 / eps
    return grad.to(dtype)


class _SharpSinkhorn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, M, a, b, eps, tol, max_iter):  # noqa: D102
        res = sinkhorn(a, b, M, eps, tol=tol, max_iter=max_iter)
        ctx.save_for_backward(res.plan, M.detach(), a, b)
        ctx.eps = eps
        return res.sharp_value.to(M.dtype)

    @staticmethod
    def backward(ctx, grad_out):  # noqa: D102
        P, M, a, b = ctx.saved_tensors
        grad = sharp_gradient(P, M, a, b, ctx.eps)
        return grad_out * grad, None, None, None, None, None


@validate_params({"tol": [Interval(Real, 0, None, closed="left")], "max_iter": [positive_int()]})
def sharp_sinkhorn(
    a: object | None,
    b: object | None,
    M: torch.Tensor,
    eps: float,
    *,
    tol: float = 1e-9,
    max_iter: int = 10000,
) -> torch.Tensor:
    r"""Sharp Sinkhorn value :math:`\langle P^*, M \rangle`, differentiable in ``M``.

    :math:`P^*` is the entropic plan of :func:`sinkhorn`. The backward pass is the
    closed-form gradient of AdapFair Lemma 1 (:func:`sharp_gradient`), **not** the plan
    (the plan is the gradient of the regularized value). It costs one small dense solve
    of size ``n1 - 1``, so keep ``n1`` in the low thousands. Weights are treated as
    constants (no gradient). For 1-D score distributions prefer the exact
    :func:`wasserstein_1d_power` (exact, unbiased and ~1000x cheaper); this stays for
    fidelity to the AdapFair paper (Huang et al., 2024, §III) and for multi-dimensional scores.

    Parameters
    ----------
    a : tensor of shape (n0,) or None
        Positive source weights (uniform when ``None``).
    b : tensor of shape (n1,) or None
        Positive target weights with the same total (uniform when ``None``).
    M : tensor of shape (n0, n1)
        Cost matrix, typically built from model outputs (e.g. squared score gaps).
    eps : float
        Regularization ``> 0``.
    tol : float, default=1e-9
        Marginal tolerance of the inner Sinkhorn solve (the closed-form gradient
        assumes a converged plan).
    max_iter : int, default=10000
        Iteration cap; non-convergence raises a :class:`ConvergenceWarning`.

    Returns
    -------
    torch.Tensor
        0-d tensor with a gradient with respect to ``M``.
    """
    eps = check_eps(eps)
    Mt = check_matrix(M, "M")
    n0, n1 = Mt.shape
    at = check_weights(a, n0, "a", like=Mt, normalize=False).detach()
    bt = check_weights(b, n1, "b", like=Mt, normalize=False).detach()
    check_same_mass(at, bt, ("a", "b"))
    if bool((at == 0).any()) or bool((bt == 0).any()):
        raise ValueError("`a` and `b` must be strictly positive for sharp_sinkhorn.")
    return _SharpSinkhorn.apply(Mt, at, bt, eps, float(tol), int(max_iter))
