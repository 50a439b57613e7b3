"""CENet and WassersteinNet: accuracy parity in regression by aligning (Z, Y) across groups.

Both implement §3.2 of the accuracy-disparity paper: the encoder ``g`` is trained so that
the joint distributions :math:`D_0(g(X), Y)` and :math:`D_1(g(X), Y)` match, which makes
``Z`` independent of ``A`` given ``Y`` (Thms 3.4, 3.5) and shrinks the conditional term of
the error-gap bound (Thm 3.3).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any, ClassVar

from otfair.estimators._docs import fill_estimator_doc
from otfair.estimators.regression._base import (
    CONVERGENCE,
    FITTED_ATTRIBUTES,
    STRENGTHS,
    NeuralFairRegressor,
)
from otfair.penalties import JointCriticPenalty, JointDiscriminatorPenalty, RepresentationAdversary
from otfair.utils import (
    Widths,
    non_negative_real,
    positive_int,
    positive_real,
)
from otfair.utils._deprecation import DEPRECATED, LAM_DOC
from otfair.utils._docstrings import fill_doc

__all__ = ["CENet", "WassersteinNet"]

_PARAMS_DOC = """
    encoder_hidden : sequence of int, default=(60,)
        Widths of the feature map ``g`` (ReLU layers); the head is linear + sigmoid.
    adversary_hidden : sequence of int, default=(60,)
        Hidden widths of the adversary on ``(Z, Y)``.
    epochs : int, default=50
        Passes over the training data.
    {convergence}
    batch_size : int, default=256
        Mini-batch size.
    lr : float, default=1.0
        Adadelta learning rate (one optimizer over all parameters, as in App. B).
    scale_y : {"auto", True, False}, default="auto"
        Targets in [0, 1] are used as they are; other targets are min-max scaled with the
        training range (``"auto"``/``True``) and predictions mapped back, or rejected
        (``False``).
    random_state : int, RandomState or None, default=None
        Seed of the initialization and of the mini-batch order.
    device : str or torch.device, default="cpu"
        Torch device (``"cuda"``, ``"auto"``...).
    {lam}"""


@dataclass(eq=False, repr=False)
class AdversarialNet(NeuralFairRegressor):
    """The parameters CENet and WassersteinNet add to the net: the strength, the adversary.

    Not for direct use: a subclass defines the adversary (``_make_adversary``).
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **NeuralFairRegressor._parameter_constraints,
        "strength": STRENGTHS,
        "lam": [*STRENGTHS, DEPRECATED],
        "adversary_hidden": [Widths()],
    }

    strength: float = 1.0
    _: KW_ONLY
    adversary_hidden: Sequence[int] = (60,)
    lam: float | str = "deprecated"


@fill_estimator_doc
@fill_doc(convergence=CONVERGENCE, fitted_attributes=FITTED_ATTRIBUTES, lam=LAM_DOC)
@dataclass(eq=False, repr=False)
class CENet(AdversarialNet):
    r"""Regression net with a cross-entropy discriminator on ``(Z, Y)`` (CENet, §3.2).

    .. math::

        \min_{g, h}\ \max_f\ \mathrm{MSE}\big(h(g(X)), Y\big)
            - \lambda\, \mathrm{CE}\big(A \,\|\, f(g(X), Y)\big)

    solved by gradient descent-ascent through a gradient reversal layer: the
    discriminator :math:`f` descends :math:`\lambda\,\mathrm{CE}` while the encoder
    ascends :math:`\lambda\,\mathrm{CE}` (the reversal layer scales only the encoder's
    gradient).

    Parameters
    ----------
    strength : float, default=1.0
        Trade-off :math:`\lambda \ge 0`; ``0`` trains the plain regression net.
    """

    __doc__ += (
        _PARAMS_DOC
        + """

    Attributes
    ----------
    encoder_, head_, adversary_ : torch.nn.Module
        Fitted feature map, regression head and discriminator.
    history_ : list of dict
        Per-epoch training ``mse`` and ``adversary_loss`` (on scaled targets).
    n_iter_ : int
        Epochs trained (``epochs`` unless ``tol`` ended the training first).
    fit_quality_warning_ : str or None
        The :class:`~otfair.estimators.FitQualityWarning` this fit gave, None when none.
    {fitted_attributes}
    {device_attribute}

    See Also
    --------
    otfair.estimators.WassersteinNet : The same net with a Wasserstein critic.
    otfair.estimators.UnfairRegressor : The net without an adversary (strength = 0).
    otfair.metrics.accuracy_disparity_audit : Explains a regressor's group error gap.

    {references_accuracy_disparity}

    {examples_regression}
    >>> CENet(strength=1.0, encoder_hidden=(8,), adversary_hidden=(8,), epochs=2,
    ...       random_state=0).fit(X, y, sensitive_features=s).predict(X).shape
    (200,)
    """
    )

    def _make_adversary(self, latent_dim: int) -> RepresentationAdversary:
        return JointDiscriminatorPenalty(latent_dim, hidden=self.adversary_hidden)


@fill_estimator_doc
@fill_doc(convergence=CONVERGENCE, fitted_attributes=FITTED_ATTRIBUTES, lam=LAM_DOC)
@dataclass(eq=False, repr=False)
class WassersteinNet(AdversarialNet):
    r"""Regression net with a Wasserstein critic on ``(Z, Y)`` (WassersteinNet, §3.2, eq. 3).

    .. math::

        \min_{g, h}\ \max_{\|f\|_L \le K}\ \mathrm{MSE}\big(h(g(X)), Y\big)
            + \lambda\, \Big|\tfrac{1}{n_0}\sum_{A_i=0} f(Z_i, Y_i)
            - \tfrac{1}{n_1}\sum_{A_i=1} f(Z_i, Y_i)\Big|

    The inner maximum is the Kantorovich-Rubinstein dual of
    :math:`K\,W_1(D_0(Z, Y), D_1(Z, Y))`; the Lipschitz constraint is approximated by
    clipping every critic weight to ``[-clip, clip]`` after each step (Arjovsky et al.,
    2017; the paper's choice), or by the gradient penalty of Gulrajani et al. (2017),
    :math:`\gamma\,\mathbb{E}(\|\nabla f(\hat z, \hat y)\|_2 - 1)^2` on points
    interpolated between the groups (``otfair.models.adversarial.gradient_penalty``),
    added to the critic's loss only. ``n_critic > 1`` gives the critic extra steps on fresh
    batches with the encoder frozen after each joint step (WGAN). The absolute value
    follows the authors' code (the dual's sup is symmetric in :math:`f \to -f`). A
    mini-batch that misses a group contributes no adversary term.

    Parameters
    ----------
    strength : float, default=1.0
        Trade-off :math:`\lambda \ge 0`; ``0`` trains the plain regression net.
    clip : float or None, default=0.05
        Weight-clipping norm of the critic (App. B: 0.005 Adult, 0.05 COMPAS, 0.002
        Crime, 0.2 Law); ``None`` disables clipping (then ``gradient_penalty`` must be
        positive).
    gradient_penalty : float, default=0.0
        Weight :math:`\gamma \ge 0` of the WGAN-GP penalty (10 in Gulrajani et al.);
        ``0`` is the paper's clipped critic.
    n_critic : int, default=1
        Critic steps per encoder step (1 in the paper, 5 in WGAN).
    """

    __doc__ += (
        _PARAMS_DOC
        + """

    Attributes
    ----------
    encoder_, head_, adversary_ : torch.nn.Module
        Fitted feature map, regression head and critic.
    history_ : list of dict
        Per-epoch training ``mse`` and ``adversary_loss`` (minus the critic gap, plus
        the weighted gradient penalty if any; joint steps only).
    n_iter_ : int
        Epochs trained (``epochs`` unless ``tol`` ended the training first).
    fit_quality_warning_ : str or None
        The :class:`~otfair.estimators.FitQualityWarning` this fit gave, None when none.
    {fitted_attributes}
    {device_attribute}

    See Also
    --------
    otfair.estimators.CENet : The same net with a cross-entropy discriminator.
    otfair.estimators.UnfairRegressor : The net without an adversary (strength = 0).
    otfair.metrics.accuracy_disparity_audit : Explains a regressor's group error gap.

    {references_accuracy_disparity}

    {examples_regression}
    >>> est = WassersteinNet(strength=1.0, encoder_hidden=(8,), adversary_hidden=(8,),
    ...                      epochs=2, random_state=0).fit(X, y, sensitive_features=s)
    >>> bool(max(p.abs().max() for p in est.adversary_.parameters()) <= 0.05)
    True
    """
    )

    _: KW_ONLY
    clip: float | None = 0.05
    gradient_penalty: float = 0.0
    n_critic: int = 1

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **AdversarialNet._parameter_constraints,
        "clip": [positive_real(), None],
        "gradient_penalty": [non_negative_real()],
        "n_critic": [positive_int()],
    }

    def _make_adversary(self, latent_dim: int) -> RepresentationAdversary:
        gp = float(self.gradient_penalty)
        if self.clip is None and gp == 0.0:  # a rule between two parameters
            raise ValueError(
                "`clip=None` leaves the critic unconstrained; set `gradient_penalty` > 0."
            )
        return JointCriticPenalty(
            latent_dim, hidden=self.adversary_hidden, clip=self.clip, gradient_penalty=gp
        )
