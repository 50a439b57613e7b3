"""Fairness penalties: small composable torch losses built on :mod:`otfair.ot`.

Every penalty is a ``torch.nn.Module`` mapping batch scores (probabilities, shape (n,))
and sensitive attributes to a non-negative scalar, validated eagerly:

* :class:`OTFPenalty` - adjusted optimal transport to fairness, OTF0 (OTF paper §3);
* :class:`NormPenalty` - L1 norm of the linear constraints ``|G h|_1 / n`` (OTF paper §5.1);
* :class:`BarycenterPenalty` - W1 of each group to the groups' barycenter (Jiang et al.);
* :class:`MatchedDemographicParity` - FTM's matched score gap (FTM paper §3-4);
* :class:`GapPenalty` - squared mean score gap (Gap Reg);
* :class:`FairTorchDemographicParity` - FairTorch's DP constraint penalty (the FTM
  paper's "Reduction", App. D.2);
* :class:`AdversaryPenalty` - adversarial debiasing (Zhang et al. 2018);
* :class:`JointDiscriminatorPenalty`, :class:`JointCriticPenalty` - CENet's discriminator
  and WassersteinNet's critic on (representation, target) (accuracy-disparity §3.2),
  adversaries of the second protocol, :class:`RepresentationAdversary` (called as
  ``adversary(z, sensitive, labels)``, returning the adversary's own loss; also LAFTR's,
  sIPM-LFR's and CFair's, in ``otfair.penalties._representation``);
* :class:`GroupWassersteinLoss` - AdapFair's group distance of score distributions.

All follow one protocol (:class:`FairnessPenalty`: the call ``penalty(scores, sensitive,
labels, features)`` returns ``evaluate(check(batch))`` of a :class:`PenaltyBatch`, and a
penalty with an adversary adds ``adversary_objective(batch)``); what its training needs
(batches, mixing, solver, adversary step) is its :class:`TrainingPlan`, which the
penalty object hands to the estimator. :class:`LinearPenalty` is the base of the
linear-notion penalties. Scores are one model's (n,) or a (K, n) block of K models on
the batch: :class:`PenaltyStack` is the call of the training loops, and a
``batchable`` penalty computes the block at once. Linear notions (PDP, PEO; several and
continuous attributes) are described by :class:`otfair.notions.LinearConstraints`,
fitted on the training set.

Each built-in penalty is one module holding its *penalty object* and its torch penalty:
the object carries the penalty's settings into ``FairClassifier(penalty=...)``, is
cloneable (scikit-learn's ``get_params``) and builds a fresh penalty per fit for the
estimator's notion (:meth:`PenaltyObject.build`, which refuses a notion the penalty
cannot serve). An object's ``name`` is its penalty name (``OTF.name == "otf"``; "norm",
"barycenter", "gapreg", "adv", "ftm", "fairtorch-dp"):

====================  ===================================  =================================
object                its torch penalty                    settings
====================  ===================================  =================================
:class:`OTF`          :class:`OTFPenalty`                  ``eps``, ``max_iter``, ``tol``,
                                                           ``warm_start`` (OTF paper §3.2)
:class:`Norm`         :class:`NormPenalty`                 none
:class:`Barycenter`   :class:`BarycenterPenalty`           none (DP only)
:class:`GapReg`       :class:`GapPenalty`                  none
:class:`Adversary`    :class:`AdversaryPenalty`            ``hidden``, ``lr`` (its Adam
                                                           learning rate; DP, EO)
:class:`FTM`          :class:`MatchedDemographicParity`    ``matching``, ``label_weight``,
                                                           ``group_batch_size``,
                                                           ``n_pairing_rounds``,
                                                           ``matching_seed``, ``cache_dir``
                                                           (FTM paper §4.3, App. D; DP only)
:class:`FairTorchDP`  :class:`FairTorchDemographicParity`  ``rows`` (DP only)
:class:`Penalty`      any registered name                  ``options`` of its factory
====================  ===================================  =================================

The names: :func:`register_penalty` adds a penalty object class
(``register_penalty(MyPenalty)``: a new penalty is one module plus this line) or a name
with a factory (``register_penalty("name", factory)``, reached through ``Penalty(name)``;
``"group-w2"``, AdapFair's loss, is one); :func:`make_penalty` builds a registered
name's penalty for a notion, :func:`list_penalties` lists the names and
:func:`penalty_notions` the notions a name serves; :func:`as_penalty_object` resolves a
name to its object (``"otf"`` -> ``OTF()``).
"""

from otfair.notions import LinearConstraints
from otfair.penalties._adversaries import RepresentationAdversary
from otfair.penalties._adversary import Adversary, AdversaryPenalty
from otfair.penalties._barycenter import Barycenter, BarycenterPenalty
from otfair.penalties._base import (
    FairnessPenalty,
    LinearPenalty,
    PenaltyBatch,
    PenaltyObject,
    PenaltyStack,
    TrainingPlan,
    as_penalty_object,
)
from otfair.penalties._critics import JointCriticPenalty, JointDiscriminatorPenalty
from otfair.penalties._fairtorch import FairTorchDemographicParity, FairTorchDP
from otfair.penalties._ftm import FTM, MatchedDemographicParity
from otfair.penalties._gap import GapPenalty, GapReg
from otfair.penalties._group_wasserstein import GroupWassersteinLoss
from otfair.penalties._legacy import penalty_values
from otfair.penalties._norm import Norm, NormPenalty
from otfair.penalties._otf import OTF, OTFPenalty
from otfair.penalties._plan import (
    BatchSchedule,
    BatchScheme,
    FitRows,
    FixedBatchPenalty,
    TrainBatch,
)
from otfair.penalties._registry import (
    Penalty,
    list_penalties,
    make_penalty,
    penalty_notions,
    register_penalty,
)

__all__ = [
    "FTM",
    "OTF",
    "Adversary",
    "AdversaryPenalty",
    "Barycenter",
    "FairTorchDP",
    "GapReg",
    "Norm",
    "Penalty",
    "PenaltyObject",
    "RepresentationAdversary",
    "as_penalty_object",
    "BarycenterPenalty",
    "FairTorchDemographicParity",
    "BatchSchedule",
    "BatchScheme",
    "FairnessPenalty",
    "FitRows",
    "FixedBatchPenalty",
    "GapPenalty",
    "GroupWassersteinLoss",
    "JointCriticPenalty",
    "JointDiscriminatorPenalty",
    "LinearConstraints",
    "LinearPenalty",
    "MatchedDemographicParity",
    "NormPenalty",
    "OTFPenalty",
    "PenaltyBatch",
    "PenaltyStack",
    "TrainBatch",
    "TrainingPlan",
    "list_penalties",
    "make_penalty",
    "penalty_notions",
    "penalty_values",
    "register_penalty",
]
