r"""CFair — conditional learning of fair representations.

Zhao, Coston, Adel, Gordon, ICLR 2020, §3. An encoder :math:`z = f(x)`,
a classifier :math:`g(z)` trained on the *balanced* error, and one adversary
:math:`h_y` per label predicting the group from :math:`z` on the examples with
:math:`Y = y`, each scored by the group-balanced cross-entropy:

.. math::

    \min_{f, g}\max_{h_0, h_1}\; \mathrm{BCE}_Y(g(f(x)), y)
    - \mu \sum_{y \in \{0,1\}} \mathrm{BCE}_S\big(h_y(f(x)), s \mid Y = y\big),

(:func:`~otfair.penalties._representation_losses.balanced_cross_entropy`,
:func:`~otfair.penalties._representation_losses.conditional_adversary_loss`), the max
through a gradient reversal layer as in the paper. Aligning :math:`Z \mid S, Y=y` for
both labels targets equalized odds, and the balanced error gives accuracy parity
together with it (the paper's Theorem 3.1).

The two adversaries are separate networks
(:class:`~otfair.models.representation.PerLabelAdversaries`, as in the paper) with leaky
ReLU units: with plain ReLUs the reversed gradient kills their hidden units, their output
turns constant and the encoder stops being pushed (measured on Adult, docs/baselines.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from otfair.estimators._docs import fill_estimator_doc
from otfair.estimators.representation._base import FITTED_ATTRIBUTES, RepresentationClassifier
from otfair.penalties._representation import ConditionalAlignment
from otfair.penalties._representation_losses import balanced_cross_entropy
from otfair.utils import Widths
from otfair.utils._docstrings import fill_doc

__all__ = ["CFairClassifier"]


@fill_estimator_doc
@fill_doc(fitted_attributes=FITTED_ATTRIBUTES)
@dataclass(eq=False, repr=False)
class CFairClassifier(RepresentationClassifier):
    r"""CFair (Zhao et al. 2020): balanced error + per-label conditional alignment.

    Parameters
    ----------
    strength : float, default=1.0
        :math:`\mu \ge 0`, the weight of the adversaries (0: a balanced-error MLP).
    latent_dim : int, default=32
    encoder_hidden, head_hidden : sequence of int
        Default: an encoder with 64 then 32 units and a linear head (AdapFair App. D:
        "hidden layers of 64 and 32 units").
    adversary_hidden : sequence of int, default=(16, 8)
        The widths of each adversary (AdapFair App. D); leaky ReLU units.
    balanced : bool, default=True
        Train the classifier on the class-balanced cross-entropy (the paper); ``False``
        uses the plain cross-entropy.
    adversary_steps : int, default=3
        Adversary updates per encoder update (one joint step with the gradient
        reversal, then ``adversary_steps - 1`` adversary-only steps); with one step the
        adversaries lag and the EO gap on Adult barely moves (docs/baselines.md).
    adversary_lr, epochs, batch_size, lr, device, random_state, verbose, tol, n_iter_no_change
        As in :class:`~otfair.estimators.LAFTRClassifier`.

    Attributes
    ----------
    {model_attribute}
    adversary_ : torch.nn.Module
        The conditional-alignment adversaries (one per label).
    {fitted_attributes}

    See Also
    --------
    otfair.estimators.LAFTRClassifier : One adversary on the representation (DP, EO or EOpp).
    otfair.estimators.SIPMClassifier : A sigmoid-IPM critic instead of an adversary.
    otfair.estimators.FairClassifier
        A fairness penalty on the scores instead of the representation.

    References
    ----------
    .. [1] Zhao, H., Coston, A., Adel, T. and Gordon, G. J. *Conditional Learning of Fair
       Representations*. ICLR 2020.

    {examples_binary}
    >>> from otfair.estimators import CFairClassifier
    >>> clf = CFairClassifier(epochs=2, random_state=0).fit(X, y, sensitive_features=s)
    >>> clf.predict_proba(X).shape
    (200, 2)
    """

    #: FairnessCV's default strengths (``GRIDS["cfair"]``, ``_strength_grids.py``)
    _strength_grid = "cfair"
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **RepresentationClassifier._parameter_constraints,
        "adversary_hidden": [Widths()],
        "balanced": ["boolean"],
    }

    latent_dim: int = 32
    adversary_hidden: Sequence[int] = (16, 8)
    balanced: bool = True
    adversary_steps: int = 3

    def _make_adversary(self, latent_dim: int) -> ConditionalAlignment:
        return ConditionalAlignment(latent_dim, tuple(self.adversary_hidden))

    @property
    def _balanced_objective(self) -> bool:
        return bool(self.balanced)

    def _task_loss(self, logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        if self.balanced:
            return balanced_cross_entropy(logits, y)
        return super()._task_loss(logits, y)
