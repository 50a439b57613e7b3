r"""LAFTR — Learning Adversarially Fair and Transferable Representations.

Madras, Creager, Pitassi, Zemel, ICML 2018, §3-4. An encoder
:math:`z = f(x)`, a classifier :math:`g(z)` and an adversary :math:`h` predicting the
group from :math:`z` (from :math:`(z, y)` for equalized odds) play

.. math::

    \min_{f, g} \max_h\; \mathrm{CE}(g(f(x)), y) + \gamma\, L_{adv}(h),

with LAFTR's group-normalized L1 adversary objective
(:func:`otfair.penalties._representation_losses.laftr_adversary_objective`):
:math:`L^{DP}_{adv} = 1 - \sum_a \mathrm{mean}_{D_a} |h - a|` and
:math:`L^{EO}_{adv} = 2 - \sum_{a,y} \mathrm{mean}_{D_a^y} |h - a|`. The paper's
Theorem 2: :math:`L^{DP}_{adv}` of the optimal adversary upper-bounds the DP gap of any
classifier on :math:`z`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from otfair.estimators._docs import fill_estimator_doc
from otfair.estimators.representation._base import (
    CONVERGENCE,
    FITTED_ATTRIBUTES,
    RepresentationClassifier,
)
from otfair.notions import Notion, as_notion
from otfair.penalties._representation import LAFTRAdversary
from otfair.utils import StrOptions, Widths
from otfair.utils._docstrings import fill_doc

__all__ = ["LAFTRClassifier"]


@fill_estimator_doc
@fill_doc(fitted_attributes=FITTED_ATTRIBUTES, convergence=CONVERGENCE)
@dataclass(eq=False, repr=False)
class LAFTRClassifier(RepresentationClassifier):
    r"""LAFTR (Madras et al. 2018): adversarially fair representation + classifier.

    Parameters
    ----------
    strength : float, default=1.0
        :math:`\gamma \ge 0`, the weight of the adversary objective (0: unfair MLP). The
        min-max game is not monotone in :math:`\gamma`: past a few units the encoder can
        win against the adversary and the test DP gap rise back towards the unfair
        model's, differently per seed; the default grid of ``FairnessCV`` stops at 4,
        and held-out measurement (``FairnessCV``, ``fairness_path``) is the check.
    notion : {"dp", "eo"}, default="dp"
        Adversary objective: demographic parity or equalized odds.
    latent_dim : int, default=8
        Dimension of :math:`z` (the paper's setting).
    encoder_hidden, head_hidden, adversary_hidden : sequence of int
        Hidden widths (default one layer of 20 units each, as in the paper's §5).
    adversary_steps : int, default=1
        Adversary updates per encoder update (>1 adds adversary-only steps).
    adversary_lr : float or None, default=None
        Adam learning rate of the adversary (default ``lr``).
    epochs : int, default=20
    batch_size : int, default=64
    lr : float, default=1e-3
        Adam learning rate (the paper's optimizer).
    device : str or None
        Torch device (default CPU / what ``otfair.utils.resolve_device`` picks).
    random_state : int, RandomState or None
        Seeds weights and batch orders (reproducible fits).
    verbose : bool, default=False
    {convergence}

    Attributes
    ----------
    {model_attribute}
    adversary_ : torch.nn.Module
        The adversary on the representation.
    {fitted_attributes}

    See Also
    --------
    otfair.estimators.SIPMClassifier : A sigmoid-IPM critic instead of an adversary.
    otfair.estimators.CFairClassifier : One conditional-alignment adversary per label.
    otfair.estimators.FairPCA : A linear fair representation.

    References
    ----------
    .. [1] Madras, D., Creager, E., Pitassi, T. and Zemel, R. *Learning Adversarially Fair
       and Transferable Representations*. ICML 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from otfair.estimators import LAFTRClassifier
    >>> rng = np.random.default_rng(0)
    >>> X, s = rng.normal(size=(200, 3)), rng.integers(0, 2, 200)
    >>> y = (X[:, 0] + s > 0.5).astype(int)
    >>> clf = LAFTRClassifier(0.5, epochs=2, random_state=0).fit(X, y, sensitive_features=s)
    >>> clf.predict(X).shape, clf.transform(X).shape
    ((200,), (200, 8))
    """

    #: FairnessCV's default strengths (``GRIDS["laftr"]``, ``_strength_grids.py``)
    _strength_grid = "laftr"
    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **RepresentationClassifier._parameter_constraints,
        "notion": [StrOptions({"dp", "eo"}), Notion],
        "adversary_hidden": [Widths()],
    }

    notion: str = "dp"
    encoder_hidden: Sequence[int] = (20,)
    head_hidden: Sequence[int] = (20,)
    adversary_hidden: Sequence[int] = (20,)
    batch_size: int = 64

    def _make_adversary(self, latent_dim: int) -> LAFTRAdversary:
        notion = as_notion(self.notion, allowed=("dp", "eo"))
        return LAFTRAdversary(latent_dim, notion, tuple(self.adversary_hidden))
