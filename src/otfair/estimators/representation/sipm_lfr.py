r"""sIPM-LFR — fair representation learning with the sigmoid IPM.

Kim, Kim, Kwon, Jeong, Kim, *Learning fair representation with a parametric integral
probability metric*, ICML 2022, §3-4. An encoder :math:`z = f(x)` and a
classifier :math:`g(z)` minimize

.. math::

    \mathrm{CE}(g(f(x)), y) + \lambda\, \sup_{\theta, \mu}
    \Big| \mathbb E_{z|s=0}\, \sigma(\theta^\top z + \mu)
        - \mathbb E_{z|s=1}\, \sigma(\theta^\top z + \mu) \Big|,

the inner supremum (the sigmoid IPM, a parametric IPM whose discriminators are single
sigmoid units) taken by gradient ascent on :math:`(\theta, \mu)`, ``adversary_steps``
ascent steps per encoder step. The paper shows the sIPM controls the DP gap of every
classifier on :math:`z` that is a composition with a sigmoid (§3, Thm 3.2).
"""

from __future__ import annotations

from dataclasses import dataclass

from otfair.estimators._docs import fill_estimator_doc
from otfair.estimators.representation._base import FITTED_ATTRIBUTES, RepresentationClassifier
from otfair.penalties._representation import SigmoidIPMCritic
from otfair.utils._docstrings import fill_doc

__all__ = ["SIPMClassifier"]


@fill_estimator_doc
@fill_doc(fitted_attributes=FITTED_ATTRIBUTES)
@dataclass(eq=False, repr=False)
class SIPMClassifier(RepresentationClassifier):
    r"""sIPM-LFR (Kim et al. 2022): representation with a sigmoid-IPM group distance.

    Parameters
    ----------
    strength : float, default=1.0
        :math:`\lambda \ge 0` (0: unfair MLP).
    latent_dim : int, default=8
    encoder_hidden, head_hidden : sequence of int
        Hidden widths (default one layer of 64 units; linear head).
    adversary_steps : int, default=5
        Ascent steps on :math:`(\theta, \mu)` per encoder step (one joint step, then
        ``adversary_steps - 1`` critic-only steps): the supremum must be tracked closely,
        or the encoder escapes the current sigmoid direction and the penalty vanishes
        (with one step at the encoder's rate the DP gap on Adult does not move).
    adversary_lr : float or None, default=1e-2
        Adam learning rate of the critic (``None``: ``lr``).
    epochs, batch_size, lr, device, random_state, verbose, tol, n_iter_no_change
        As in :class:`~otfair.estimators.LAFTRClassifier`.

    Attributes
    ----------
    {model_attribute}
    adversary_ : torch.nn.Module
        The sigmoid-IPM critic.
    {fitted_attributes}

    See Also
    --------
    otfair.estimators.LAFTRClassifier : An adversary on the representation.
    otfair.estimators.CFairClassifier : One conditional-alignment adversary per label.

    References
    ----------
    .. [1] Kim, D., Kim, K., Kong, I., Ohn, I. and Kim, Y. *Learning Fair Representation
       with a Parametric Integral Probability Metric*. ICML 2022.

    {examples_binary}
    >>> from otfair.estimators import SIPMClassifier
    >>> clf = SIPMClassifier(epochs=2, random_state=0).fit(X, y, sensitive_features=s)
    >>> clf.predict_proba(X).shape
    (200, 2)
    """

    #: FairnessCV's default strengths (``GRIDS["sipm"]``, ``_strength_grids.py``)
    _strength_grid = "sipm"
    adversary_steps: int = 5
    adversary_lr: float | None = 1e-2

    def _make_adversary(self, latent_dim: int) -> SigmoidIPMCritic:
        return SigmoidIPMCritic(latent_dim)
