"""FairClassifier: a torch model trained with a fairness penalty, scikit-learn style."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import math
from collections.abc import Sequence
from numbers import Integral, Real
from typing import Any, cast

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted, validate_data

from otfair.estimators._early_stopping import StopOnValidation, validation_split
from otfair.estimators._lbfgs import LbfgsResult, train_lbfgs
from otfair.estimators._torch_base import (
    TorchEstimatorMixin,
    base_rate_log_odds,
    check_against_constant,
    check_finite_model,
    predict_in_chunks,
    training_logits,
    warn_feature_scale,
    warn_not_converged,
)
from otfair.estimators._training import (
    StopOnPlateau,
    TrainData,
    TrainLoop,
    forget_fit,
    predict_from_proba,
    stratified_batches,
)
from otfair.estimators.classification._logistic import LogisticObjective, fit_logistic
from otfair.estimators.classification._train import (
    FullBatchObjective,
    StratifiedBatches,
    TrainingProblem,
    fixed_batch_key,
    keep_constant_if_lower,
    train,
)
from otfair.models import MLP
from otfair.models.mlp import mlp_widths
from otfair.models.stacked import StackedMLP
from otfair.notions import Notion, as_notion
from otfair.penalties import (
    FairnessPenalty,
    FitRows,
    FixedBatchPenalty,
    LinearPenalty,
    PenaltyObject,
    PenaltyStack,
    TrainingPlan,
    as_penalty_object,
)
from otfair.utils import (
    RANDOM_STATE,
    HasMethods,
    Interval,
    StrOptions,
    check_consistent_length,
    check_group_sizes,
    check_sensitive_features,
    draw_seed,
    fit_context,
    resolve_device,
    set_params_from_init,
    torch_generator,
    use_generator,
)
from otfair.utils._sensitive import SensitiveColumns, split_sensitive
from otfair.utils._strength import check_strength, check_strengths
from otfair.utils._torch import TORCH_READY, fits_in_training_state


class FairClassifier(TorchEstimatorMixin, ClassifierMixin, BaseEstimator):
    r"""Binary classifier (logistic regression or MLP) trained with a fairness penalty.

    The objective on a batch is, with :math:`\mathcal L_Y` the cross-entropy and
    :math:`R` the penalty,

    .. math::

        \text{convex (OTF paper, Eq. 13):}\quad (1-\alpha)\,\mathcal L_Y + \alpha R
        \qquad
        \text{additive (FTM paper, Eq. 7):}\quad \mathcal L_Y + \lambda R

    ``mixing="auto"`` uses the mixing of the penalty's training plan: the convex form for
    ``otf``, ``norm`` and ``barycenter`` (strength = alpha in [0, 1)) and the additive
    form for ``ftm``, ``gapreg`` and ``adv`` (strength = lambda >= 0), as in each
    method's paper. Each fit builds the penalty from the penalty object and the notion
    (:meth:`otfair.penalties.PenaltyObject.build`); everything the training needs
    (its batches, the mixing, whether L-BFGS suits it, an adversary step) is the
    :class:`~otfair.penalties.TrainingPlan` the penalty object hands over
    (:meth:`otfair.penalties.PenaltyObject.training_plan`). The classifier holds the
    settings every penalty shares; a penalty's own settings live on its object
    (``OTF(eps=...)``, ``FTM(matching=...)``, ``Adversary(lr=...)``).

    Parameters
    ----------
    penalty : PenaltyObject or str, default="none"
        The fairness penalty: a penalty object of :mod:`otfair.penalties`
        (:class:`~otfair.penalties.OTF`, :class:`~otfair.penalties.Norm`,
        :class:`~otfair.penalties.Barycenter`, :class:`~otfair.penalties.GapReg`,
        :class:`~otfair.penalties.Adversary`, :class:`~otfair.penalties.FTM`,
        :class:`~otfair.penalties.FairTorchDP`, or :class:`~otfair.penalties.Penalty`
        for a name added with :func:`otfair.penalties.register_penalty`), a registered
        name (``"otf"`` is ``OTF()``), or "none". ``FTM`` (whose plan draws its
        own batches) trains on matched equal-size group batches
        (Kim et al., TMLR 2024, §4.3). ``set_params(penalty__eps=...)`` sets an
        object's setting.
    strength : float, default=0.0
        alpha (convex mixing) or lambda (additive mixing). The default 0 fits without
        the penalty (the logistic model's fit is then ``LogisticRegression()``'s): give
        a strength, or let :class:`~otfair.estimators.FairnessCV` choose the most
        accurate one within a violation budget. A list is refused: the
        trade-off curve over several strengths is
        :func:`otfair.estimators.fairness_path`, which trains them in one stacked run
        (the models share the seed, batches, OTF costs and FTM matchings; each equals
        its separate fit with the same integer ``random_state`` up to float rounding,
        docs/stacking.md).
    notion : {"dp", "eo", "eopp"} or Notion, default="dp"
        Fairness notion given to the penalty (:func:`otfair.notions.as_notion`); a
        penalty raises for a notion it does not support (``barycenter`` and ``ftm`` are
        demographic parity by construction).
    model : {"logistic", "mlp"}, default="logistic"
        Score model. An MLP has ReLU hidden layers of widths ``hidden``.
    hidden : sequence of int, "auto" or None, default="auto"
        MLP widths. ``"auto"``: one layer of 100 (scikit-learn's ``MLPClassifier``);
        ``None``: two layers of width = input dimension (the FTM paper's, which its
        protocol states). Over ten German and ten COMPAS loader splits the one layer of
        100 matches ``LogisticRegression``'s test AUC where two layers of the input's
        width fell short on German (docs/measurements/mlp_vs_logistic.md).
    mixing : {"auto", "convex", "additive"}, default="auto"
        How the penalty is combined with the cross-entropy (see above).
    solver : {"auto", "lbfgs", "adam"}, default="auto"
        ``"lbfgs"``: full-batch L-BFGS on the whole training objective (as
        scikit-learn's ``LogisticRegression``); ``"adam"``: Adam on stratified
        mini-batches. ``"auto"`` takes ``"lbfgs"`` for the logistic model with a penalty
        that needs no stochastic batches (none, ``otf``, ``norm``, ``gapreg``,
        ``barycenter``, ``fairtorch-dp``) and ``"adam"`` for the MLP and for the
        penalties that train on matched pairs (``ftm``) or against an adversary (``adv``),
        which L-BFGS refuses. OTF's penalty is quadratic in a batch's rows: for the
        logistic model and one binary attribute (two groups) under demographic parity,
        equalized odds or equal opportunity ``"auto"`` takes ``"lbfgs"`` on its mean
        over the fixed batches of a fixed-batch Adam epoch (``batch_size`` rows each,
        the same seed; the cross-entropy on all rows), each batch's transport cost
        computed once and every batch solved at once (``classification/_logistic.py``);
        elsewhere (several or continuous attributes) Adam. That objective is nonsmooth
        near fairness, so ``"lbfgs"`` minimizes it by full-memory BFGS with a weak Wolfe
        line search (up to 2,000 parameters; ``otfair/estimators/_bfgs.py``), which
        keeps the curvature across its kinks that L-BFGS forgets. ``"lbfgs"`` with the
        MLP (asked for; ``"auto"`` takes Adam) minimizes the same objective by L-BFGS
        in torch, the fixed batches' OTF and its gradient from the same solver.
    epochs : int, default=300
        The cap on the training: Adam epochs (passes over the data) or L-BFGS
        iterations. A fit that reaches it before ``tol`` is met warns
        (:class:`sklearn.exceptions.ConvergenceWarning`).
    tol : float or None, default=1e-4
        Convergence tolerance. L-BFGS stops when the largest gradient entry is below
        ``tol``; full-memory BFGS (the logistic model's OTF fits, ``solver``) also when
        the objective's relative decrease over its last 10 iterations is at most
        ``tol / 10`` (the gradient need not vanish at a minimum on OTF0's kinks); Adam
        stops when the epoch's mean training objective has not improved by
        at least ``tol`` for ``n_iter_no_change`` consecutive epochs (scikit-learn's
        ``MLPClassifier`` rule), except with a penalty that trains an adversary
        (``"adv"``): its objective is a game's, which rises while the adversary catches
        up, so it trains every one of its ``epochs`` (the rule stopped it mid-game,
        below the best constant). ``None`` trains for exactly ``epochs`` (the papers'
        protocols) and never warns.
    n_iter_no_change : int, default=5
        Adam epochs without an improvement of ``tol`` that end the training.
    early_stopping : bool or "auto", default="auto"
        Hold out a stratified ``validation_fraction`` of the training rows and stop
        when their cross-entropy has not improved by ``tol`` for ``n_iter_no_change``
        epochs, ending at the best epoch's parameters (``MLPClassifier``'s
        ``early_stopping``; ``validation_loss_``). For an unpenalized Adam fit (no
        penalty or strength 0) with ``tol`` set, alone (not in a
        :func:`~otfair.estimators.fairness_path` curve; ``True`` elsewhere is refused).
        ``"auto"`` is ``True`` for the MLP with ``penalty="none"``, so that it does not
        overfit small or weak-signal data (docs/classifiers.md), else ``False`` (a
        penalized family and its strength-0 member train alike). Data with a class of
        one row train without it.
    validation_fraction : float, default=0.1
        Share of the training rows held out by ``early_stopping``.
    batch_size : int or "auto", default="auto"
        Batch size of the Adam loop (stratified by sensitive group); ``"auto"`` is
        ``min(1000, max(64, ceil(n / 10)))`` rows (at most ``n``): the OTF paper's 1000 on
        large data, and at least 10 steps per epoch on small data. FTM takes
        ``ceil(n / batch_size)`` steps per epoch, so that with a per-epoch learning-rate
        decay it gets the step budget of its unfair baseline. L-BFGS uses it only for
        OTF, whose penalty it averages over fixed batches of this size.
    lr : float or "auto", default="auto"
        Adam learning rate; ``"auto"``: 1e-2 for the logistic model (a convex problem,
        which converges in a few dozen epochs at that rate) and 1e-3 for the MLP.
    lr_decay : float, default=1.0
        Multiplicative learning-rate decay per epoch (FTM paper: 0.95).
    init_intercept : bool, default=True
        Start the output bias at the log-odds of the training base rate
        :math:`\log(\bar y / (1 - \bar y))` (the best constant predictor) instead of
        torch's random initialization (``False``: the papers' protocols). L-BFGS also
        starts the logistic model's weights at zero, as scikit-learn does.
    l2 : float, default=1.0
        L2 penalty :math:`\frac{l_2}{2n} \lVert W \rVert^2` on the weights (not the
        intercepts) added to the objective, with :math:`n` the training rows:
        scikit-learn's ``MLPClassifier`` convention for its ``alpha``, in which ``1`` is
        ``LogisticRegression``'s default ``C=1``. ``0``: no penalty (the papers'
        protocols).
    warm_start : bool, default=False
        Start ``fit`` from the parameters of the previous fit (when the model's shapes
        agree) instead of a new initialization, as scikit-learn's ``warm_start``: a
        series of strengths fitted in increasing order with L-BFGS then costs a few
        iterations per strength (FairnessCV's search). Under L-BFGS with OTF the fixed
        batches' transport costs are kept too, and reused by the next fit of the same
        data, seed, batch size and penalty. A warm-started fit keeps the previous fit's
        seed (its batches and draws) whatever ``random_state`` is, so that with
        ``random_state=None`` the next strength's objective is the same function. The
        solution is a cold start's to the solver's tolerance wherever the objective has
        one minimum (the objective is the same; only its starting point moves).
    random_state : int, RandomState or None, default=None
        Seeds model initialization and batch order (runs are reproducible).
    device : str, default="cpu"
        Torch device.
    verbose : bool, default=False
        Show a progress bar over epochs.
    fixed_batches : bool or "auto", default="auto"
        ``True``: draw the stratified batches once and visit them in a new random order
        every epoch; ``False``: new batches every epoch. A penalty that keeps per-batch
        data work across epochs (its plan's ``fixed_batches``: OTF, whose class-reduced cost is
        then computed once per batch, not once per step) trains on fixed batches under
        ``"auto"``, the others on new batches. On Adult an OTF logistic Adam fit then
        costs a fraction of one on new batches, with the same test AUC and PDP
        violation within their paired standard errors
        (docs/measurements/otf_fixed_batches.md). The registry's OTF family sets
        ``False``: the OTF paper's protocol. FTM ignores it (its pairings are a fixed
        pool already).
    sensitive_type : {"categorical", "continuous"}, sequence of them, or None
        How ``sensitive_features`` is read (otfair's one rule,
        :func:`otfair.metrics.split_sensitive`): by default every column is categorical
        (strings and codes such as 0/1/2 name groups) unless numeric with more than 10
        distinct values; declare ``"continuous"`` (or one kind per column) otherwise.
        Group penalties (``gapreg``, ``adv``, ``ftm``, ``barycenter``) compare two
        groups; ``otf`` and ``norm`` take several groups (one-hot) and continuous
        columns.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels of ``y`` (sorted); predictions return them.
    model_ : torch.nn.Module
        Trained model (returns logits).
    penalty_ : torch.nn.Module or None
        Penalty instance used for training.
    history_ : list of float
        Mean training objective per Adam epoch, or the objective after each L-BFGS
        iteration.
    fit_quality_warning_ : str or None
        The :class:`FitQualityWarning` this fit gave (below the best constant predictor
        on its training rows, or one class for every row), None when it gave none.
    n_iter_ : int
        Adam epochs or L-BFGS iterations run (at most ``epochs``; a penalized L-BFGS fit
        of the logistic model from scratch with Norm or Barycenter first minimizes the
        unpenalized objective, since the constant start sits on the kink of their
        absolute values: then up to ``2 * epochs``, both phases counted).
    validation_loss_ : list of float
        With ``early_stopping``: the held-out cross-entropy after each epoch.
    solver_ : str
        The solver the fit used (``"lbfgs"`` or ``"adam"``).
    n_features_in_ : int

    See Also
    --------
    otfair.estimators.ReductionClassifier : Fairlearn's reductions, same interface.
    otfair.estimators.AdapFairClassifier : Makes a frozen classifier fair.
    otfair.estimators.WassersteinBarycenterClassifier : Post-processes the scores.
    otfair.estimators.fairness_path : One model per strength (a trade-off curve).
    otfair.estimators.FairnessCV : Picks the strength within a violation budget.

    References
    ----------
    .. [1] Buyl, M. and De Bie, T. *Optimal Transport of Classifiers to Fairness*. NeurIPS
       2022, arXiv:2202.03814.
    .. [2] Kim, K., Kong, I., Lee, J., Chae, M., Park, S. and Kim, Y. *Fairness Through
       Matching*. TMLR 2024.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); s = (rng.random(200) < 0.5).astype(int)
    >>> y = (X[:, 0] + s > 0.5).astype(int)
    >>> from otfair.penalties import GapReg
    >>> clf = FairClassifier(GapReg(), 1.0, epochs=3, batch_size=50, random_state=0)
    >>> clf.fit(X, y, sensitive_features=s).predict_proba(X).shape
    (200, 2)
    """

    #: scikit-learn's parameter constraints, checked once at the start of :meth:`fit`
    #: (a penalty's name, a notion's name and ``strength <= 1`` under convex mixing are
    #: checked by the penalty object, :func:`otfair.notions.as_notion` and the fit)
    _parameter_constraints: dict = {
        "penalty": [str, HasMethods(["build", "get_params"])],
        "strength": [Interval(Real, 0, None, closed="left")],
        "notion": [str, Notion],  # the name: otfair.notions.as_notion, one message
        "model": [StrOptions({"logistic", "mlp"})],
        "hidden": ["array-like", StrOptions({"auto"}), None],
        "mixing": [StrOptions({"auto", "convex", "additive"})],
        "solver": [StrOptions({"auto", "lbfgs", "adam"})],
        "epochs": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "early_stopping": ["boolean", StrOptions({"auto"})],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "batch_size": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "lr": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "lr_decay": [Interval(Real, 0, None, closed="neither")],
        "init_intercept": ["boolean"],
        "l2": [Interval(Real, 0, None, closed="left")],
        "warm_start": ["boolean"],
        "random_state": RANDOM_STATE,
        "device": [str, torch.device],
        "verbose": ["verbose"],
        "fixed_batches": ["boolean", StrOptions({"auto"})],
        "sensitive_type": [StrOptions({"categorical", "continuous"}), list, tuple, dict, None],
    }

    def __init__(
        self,
        penalty: str | PenaltyObject = "none",
        strength: float = 0.0,
        *,
        notion: str | Notion = "dp",
        model: str = "logistic",
        hidden: Sequence[int] | str | None = "auto",
        mixing: str = "auto",
        solver: str = "auto",
        epochs: int = 300,
        tol: float | None = 1e-4,
        n_iter_no_change: int = 5,
        early_stopping: bool | str = "auto",
        validation_fraction: float = 0.1,
        batch_size: int | str = "auto",
        lr: float | str = "auto",
        lr_decay: float = 1.0,
        init_intercept: bool = True,
        l2: float = 1.0,
        warm_start: bool = False,
        random_state: Any = None,
        device: str = "cpu",
        verbose: bool = False,
        fixed_batches: bool | str = "auto",
        sensitive_type: str | Sequence[str] | None = None,
    ) -> None:
        set_params_from_init(self, locals())

    # ------------------------------------------------------------------ validation
    def _penalty_object(self) -> PenaltyObject | None:
        """Return the penalty object of ``penalty`` (``None`` for "none")."""
        if isinstance(self.penalty, str) and self.penalty == "none":
            return None
        return as_penalty_object(self.penalty)

    def _make_penalty(self) -> FairnessPenalty | None:
        """Build the (unfitted) penalty of ``penalty`` and ``notion``; ``None`` for "none"."""
        spec = self._penalty_object()
        if spec is None:
            as_notion(self.notion)
            return None
        try:
            return spec.build(self.notion)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"penalty={spec!r}: {exc}") from None

    def _check_params(self) -> FairnessPenalty | None:
        """Check the penalty's parameters (``fit_context`` checked the constraints)."""
        settings = self._penalty_object()
        if settings is not None:
            settings.check()  # the penalty object's constraints, before it builds
        penalty = self._make_penalty()
        plan = self._plan(penalty)
        check_strength(self.strength)  # finite: the Interval passes inf; a path's strengths
        if self._mixing(plan) == "convex" and self.strength >= 1:
            raise ValueError(
                f"`strength` is alpha in [0, 1) for convex mixing, (1 - alpha) CE + alpha R; "
                f"got {self.strength}. At alpha = 1 the cross-entropy weighs nothing: the "
                "labels drop out and every constant predictor is optimal (the fit may end "
                "at the worse one). Use alpha < 1, or mixing='additive' for CE + lambda R."
            )
        self._solver(plan)  # refuses L-BFGS for a penalty that needs batches
        return penalty

    def _plan(self, penalty: FairnessPenalty | None) -> TrainingPlan:
        """Return the training plan the penalty object hands over (none: the default plan)."""
        spec = self._penalty_object()
        return TrainingPlan() if penalty is None or spec is None else spec.training_plan(penalty)

    def _solver(self, plan: TrainingPlan) -> str:
        """Resolve ``solver``: L-BFGS for the logistic model and a full-batch plan."""
        needs = plan.needs_batches()  # its own batches or an adversary: batches only
        if self.solver == "lbfgs" and needs is not None:
            name = getattr(self._penalty_object(), "name", self.penalty)
            raise ValueError(
                f"solver='lbfgs' trains on the full training set, but penalty {name!r} "
                f"trains on {needs}; use solver='adam' (or 'auto')."
            )
        if self.solver != "auto":
            return str(self.solver)
        return "lbfgs" if self.model == "logistic" and plan.full_batch else "adam"

    def _lr(self) -> float:
        """Resolve ``lr`` (``"auto"``: 1e-2 for the logistic model, 1e-3 for the MLP)."""
        if isinstance(self.lr, str):
            return 1e-2 if self.model == "logistic" else 1e-3
        return float(self.lr)

    def _batch_size(self, n: int) -> int:
        """Resolve ``batch_size`` (``"auto"``: ``min(1000, max(64, ceil(n / 10)))``, at most n)."""
        if isinstance(self.batch_size, str):
            return min(n, 1000, max(64, math.ceil(n / 10)))
        return int(self.batch_size)

    def _mixing(self, plan: TrainingPlan) -> str:
        """Resolve ``mixing`` (``"auto"``: the plan's)."""
        return plan.mixing if self.mixing == "auto" else str(self.mixing)

    def _fixed_batches(self, plan: TrainingPlan) -> bool:
        """Resolve ``fixed_batches`` (``"auto"``: the plan's)."""
        if isinstance(self.fixed_batches, str) and self.fixed_batches == "auto":
            return plan.fixed_batches
        return bool(self.fixed_batches)

    def _active(self) -> bool:
        return self._penalty_object() is not None and self.strength > 0

    def _early_stopping(self, solver: str, pairs: bool, n_models: int) -> bool:
        """Resolve ``early_stopping`` (``"auto"``: on for one MLP fit without a penalty)."""
        fits = solver == "adam" and self.tol is not None and not (self._active() or pairs)
        if isinstance(self.early_stopping, str):
            plain = self._penalty_object() is None and self.model == "mlp"
            return fits and plain and n_models == 1
        if self.early_stopping and not (fits and n_models == 1):
            raise ValueError(
                "early_stopping=True holds out rows of one unpenalized Adam fit (no penalty "
                "or strength 0, tol set, solver='adam' or the MLP, not a curve); got "
                f"penalty={self.penalty!r}, strength={self.strength}, solver={solver!r}, "
                f"tol={self.tol}."
            )
        return bool(self.early_stopping)

    # ------------------------------------------------------------------ building
    def _build_model(self, n_features: int) -> torch.nn.Module:
        if self.model == "logistic":
            return MLP(n_features, hidden=())
        return MLP(n_features, hidden=mlp_widths(self.hidden, n_features))

    # ------------------------------------------------------------------ fit
    @fit_context
    @fits_in_training_state
    def fit(self, X: Any, y: Any, *, sensitive_features: Any = None) -> FairClassifier:
        """Train the model.

        Parameters
        ----------
        X : array-like of shape (n, d)
            Features (with the sensitive columns appended when the split was made with
            ``sensitive_as_input=True``).
        y : array-like of shape (n,)
            Labels of two classes (any two values: 0/1, ``"<=50K"``/``">50K"``...);
            ``classes_[1]``, the larger one, is the positive class.
        sensitive_features : array-like of shape (n,) or (n, k)
            Sensitive attributes. Required unless ``penalty="none"`` or
            ``strength=0``. Binary 0/1 for the group penalties; numeric (binary,
            several or continuous columns) for ``otf`` / ``norm``.

        Returns
        -------
        self
        """
        previous = getattr(self, "model_", None) if self.warm_start else None
        self._warm_state = None if previous is None else dict(previous.state_dict())
        # a warm start continues the previous fit: its seed (batches, draws) too
        self._warm_seed = None if previous is None else getattr(self, "_fit_seed", None)
        forget_fit(self)
        with use_generator(torch_generator(0)):  # an adversary's weights, redrawn later
            penalty = self._check_params()  # the one build of the penalty in this fit
        try:  # on one thread on small data (fits_in_training_state)
            self._fit_models([self], [penalty], X, y, sensitive_features)
        finally:
            self._warm_state = self._warm_seed = None
        return self

    @fit_context
    @fits_in_training_state
    def __otfair_fit_path__(
        self, X: Any, y: Any, sensitive_features: Any, strengths: list[float]
    ) -> list[FairClassifier]:
        """K strengths in one stacked run (:func:`otfair.estimators.fairness_path`).

        Classifier k is ``clone(self)`` at ``strengths[k]``; ``self`` stays unfitted.
        """
        singles = [clone(self).set_params(strength=a) for a in check_strengths(strengths)]
        with use_generator(torch_generator(0)):  # an adversary's weights, redrawn later
            penalties = [single._check_params() for single in singles]  # one build per model
        self._fit_models(singles, penalties, X, y, sensitive_features)
        return singles

    def _fit_models(
        self,
        singles: list[FairClassifier],
        built: list[FairnessPenalty | None],
        X: Any,
        y: Any,
        sensitive_features: Any,
    ) -> None:
        """Build the models of ``singles`` (K strengths), train them, check them.

        ``self`` gives the settings the K models share (all but ``strength``). The K
        models share the seed, hence the initialization, the batches and every
        data-dependent quantity of the penalty; the most penalized single validates the
        data, since it decides what the data must provide. Each single gets ``model_``,
        ``penalty_``, ``history_``, ``n_iter_``, ``solver_`` and the data attributes.
        Adam trains the K models stacked (:func:`train`); L-BFGS trains them one by one
        (its line search would couple stacked models).
        """
        strengths = [float(single.strength) for single in singles]
        ref = singles[int(np.argmax(strengths))]
        penalty, plan, X, y, s, groups = ref._prepare(
            X, y, sensitive_features, built[singles.index(ref)]
        )
        raw_scale = warn_feature_scale(X, type(self).__name__)
        solver = self._solver(plan)
        warm_seed = getattr(self, "_warm_seed", None)
        seed = draw_seed(self.random_state) if warm_seed is None else int(warm_seed)
        for single in singles:
            single._fit_seed = seed
        device = resolve_device(self.device)
        validation = None  # early stopping: the held-out rows (none on tiny data)
        early = self._early_stopping(solver, plan.batches is not None, len(singles))
        if early and (rows := validation_split(y, self.validation_fraction, seed)):
            kept, held = rows
            validation = (X[held], y[held].astype(np.float32))
            X, y, s = X[kept], y[kept], None if s is None else s[kept]
            groups = None if groups is None else groups[kept]
        gen = self._build_models(singles, built, s, y, solver, seed, device, X.shape[1])
        Xt = torch.from_numpy(X).to(device)
        yt = torch.from_numpy(y.astype(np.float32)).to(device)
        data = self._train_data(s, y, groups, Xt, yt, ref.penalty_, plan)
        batched = None  # OTF on fixed batches for L-BFGS (the penalty offers it or not)
        if solver == "lbfgs" or (self.solver == "auto" and self.model == "logistic"):
            template = built[singles.index(ref)]
            batched = self._fixed_batch_penalty(ref.penalty_ or template, plan, data, s, y, seed)
            if batched is not None and solver != "lbfgs":
                solver = "lbfgs"
                for single in singles:
                    single._start_model(y, solver)
                    single.solver_ = solver
        # the fit's later draws (an adversary's, a penalty's) continue the last model's
        # stream, never the global one; training without a penalty, or with penalties
        # that never draw (``draws``), runs outside the generator mode, whose dispatch
        # costs every torch call
        drawing = any(
            single.penalty_ is not None and getattr(single.penalty_, "draws", True)
            for single in singles
        )
        with use_generator(gen) if drawing else contextlib.nullcontext():
            if solver == "lbfgs":
                self._train_full_batch(singles, data, plan, batched)
            else:
                self._train_batches(singles, data, plan, X, y, groups, seed, validation)
        for single in singles:
            if single is not ref:
                single._copy_data_attributes(ref)
            check_finite_model(single.model_, type(self).__name__)
            single.fit_quality_warning_ = check_against_constant(
                training_logits(single.model_, Xt),
                y,
                owner=type(self).__name__,
                strength=float(single.strength),
                penalized=single.penalty_ is not None,
                classes=single.classes_,
                at_cap=(
                    not single._converged if solver == "lbfgs" else single.n_iter_ >= self.epochs
                ),
                raw_scale=raw_scale,
            )

    def _build_models(
        self,
        singles: list[FairClassifier],
        built: list[FairnessPenalty | None],
        s: Any,
        y: np.ndarray,
        solver: str,
        seed: int,
        device: torch.device,
        n_features: int,
    ) -> torch.Generator:
        """Build each single's model and fitted penalty as its own fit would.

        Returns the last model's seeded generator, whose stream the fit's later draws
        continue.
        """
        gen = torch_generator(seed)
        for k, (single, pen) in enumerate(zip(singles, built, strict=True)):
            gen = torch_generator(seed)  # each model as its own fit builds it
            with use_generator(gen):
                single.model_ = single._build_model(n_features).to(device)
                if pen is not None and next(pen.parameters(), None) is not None:
                    # a penalty with weights (an adversary) draws them after the model,
                    # from the fit's seeded stream: built here, not at the check
                    pen = built[k] = single._make_penalty()
                active = single._active()  # a penalized single has its penalty built
                single.penalty_ = cast(FairnessPenalty, pen).fit(s, y) if active else None
                if single.penalty_ is not None:
                    single.penalty_.to(device)
            single._start_model(y, solver)
            single.solver_ = solver
        return gen

    def _start_model(self, y: np.ndarray, solver: str) -> None:
        """Start the output bias at the base rate's log-odds (``init_intercept``).

        Under L-BFGS the logistic model's weights also start at zero (scikit-learn's
        start), so its fit does not depend on the seed. ``warm_start``: the previous
        fit's parameters instead, when their shapes agree.
        """
        warm = getattr(self, "_warm_state", None)
        if warm is not None:
            state = self.model_.state_dict()
            if {k: v.shape for k, v in state.items()} == {k: v.shape for k, v in warm.items()}:
                self.model_.load_state_dict(warm)
                return
        if not self.init_intercept:
            return
        last = [m for m in self.model_.modules() if isinstance(m, torch.nn.Linear)][-1]
        with torch.no_grad():
            last.bias.fill_(base_rate_log_odds(y))
            if solver == "lbfgs" and self.model == "logistic":
                last.weight.zero_()

    def _starts_constant(self) -> bool:
        """Whether this fit's L-BFGS starts at the constant (the logistic model's cold start)."""
        warm = getattr(self, "_warm_state", None) is not None
        return self.model == "logistic" and bool(self.init_intercept) and not warm

    def _fixed_batch_penalty(
        self,
        penalty: FairnessPenalty | None,
        plan: TrainingPlan,
        data: TrainData,
        s: Any,
        y: np.ndarray,
        seed: int,
    ) -> FixedBatchPenalty | None:
        """Return the penalty on a fixed-batch epoch's batches as one function, if offered.

        Only for a penalty whose plan is not full-batch, reads the constraint matrix and
        needs nothing but batches (OTF), on fixed batches. At strength 0 (``penalty``
        unfitted) it is asked too, when the sensitive features are given, so that the
        family's strength-0 member takes the family's solver. Kept across the fits of a
        ``warm_start`` estimator on the same data and settings (:func:`fixed_batch_key`).
        """
        if penalty is None or plan.full_batch or plan.needs_batches() is not None:
            return None
        if not plan.constraints or not self._fixed_batches(plan):
            return None
        G = data.G
        if G is None:  # strength 0: the penalty's matrix of a fitted copy, if it fits
            if s is None:
                return None
            try:
                fitted = cast(LinearPenalty, penalty.fit(s, y))
                G = fitted.matrix(s, y, device=data.X.device)
            except ValueError:
                return None
            data = dataclasses.replace(data, G=G)
        n = data.X.shape[0]
        size = self._batch_size(n)
        key = None
        if self.warm_start:
            key = fixed_batch_key(data, seed, size, self.penalty, self.notion)
            kept = getattr(self, "_kept_fixed_batches", None)
            if kept is not None and kept[0] == key:
                return cast(FixedBatchPenalty, kept[1])
        parts = stratified_batches(data.strata, size, np.random.default_rng(seed), n=n)
        batched = penalty.fixed_batch_objective(data.X, G, parts)
        if key is not None:
            self._kept_fixed_batches = (key, batched)
        return batched

    def _train_full_batch(
        self,
        singles: list[FairClassifier],
        data: TrainData,
        plan: TrainingPlan,
        batched: FixedBatchPenalty | None = None,
    ) -> None:
        r"""Train each single with L-BFGS on its whole training objective.

        The objective is the mixed loss of the batch schemes (class docstring) on the
        full training set: :math:`(1 - a)\,\mathrm{CE} + a R` or
        :math:`\mathrm{CE} + a R`; with ``batched``, the penalty averaged over fixed
        batches (:class:`._logistic.LogisticObjective`).
        """
        unpenalized: tuple[dict[str, torch.Tensor], int] | None = None  # shared start
        for single in singles:
            pen = single.penalty_
            if batched is not None and self.model == "logistic":  # strength 0 too
                logistic = LogisticObjective(
                    data.X.cpu().numpy(),
                    data.y.cpu().numpy(),
                    None if pen is None else batched,
                    strength=float(single.strength),
                    convex=self._mixing(plan) == "convex",
                    l2=self.l2,
                )
                result = fit_logistic(single.model_, logistic, max_iter=self.epochs, tol=self.tol)
                self._record_lbfgs(single, result)
                continue
            objective = FullBatchObjective(
                single.model_,
                data,
                None if pen is None or batched else PenaltyStack(pen.full_batch_variant()),
                strength=float(single.strength),
                convex=self._mixing(plan) == "convex",
                l2=self.l2 / (2 * data.X.shape[0]),
                constraints=plan.constraints,
                batched=None if pen is None else batched,  # the MLP's, on fixed batches
            )
            plain = None
            kinked = plan.kink_at_constant and single._starts_constant()
            if pen is not None and single.strength > 0 and kinked:
                # every group's mean score is equal at the constant start: the kink of
                # the penalty (TrainingPlan.kink_at_constant), where L-BFGS stalls at
                # once (Adult, Norm at alpha >= 0.6: the constant after one iteration);
                # start from the unpenalized minimum
                # (the same for every model of a path: every one starts at the constant)
                if unpenalized is None:
                    start = dataclasses.replace(objective, penalty=None, strength=0.0)
                    first = train_lbfgs(single.model_, start, max_iter=self.epochs, tol=self.tol)
                    unpenalized = (copy.deepcopy(single.model_.state_dict()), first.n_iter)
                else:
                    single.model_.load_state_dict(unpenalized[0])
                plain = unpenalized[1]
            result = train_lbfgs(single.model_, objective, max_iter=self.epochs, tol=self.tol)
            if plain is not None:  # n_iter_ counts both phases; history_ is the second's
                result = dataclasses.replace(result, n_iter=plain + result.n_iter)
            self._record_lbfgs(single, result)
            if pen is not None and single.strength > 0 and batched is None:
                # never above the constant's value (not on OTF's fixed-batch objective: its
                # entropic term is not least at the constant, and its solver's duals carry
                # over to a warm-started fit)
                keep_constant_if_lower(single.model_, data.y.cpu().numpy(), objective.value)

    def _record_lbfgs(self, single: FairClassifier, result: LbfgsResult) -> None:
        """Set ``history_`` and ``n_iter_`` of an L-BFGS fit; warn if it hit ``epochs``."""
        single.history_ = result.history[1:] or result.history
        single.n_iter_ = result.n_iter
        single._converged = result.converged
        if self.tol is not None and not result.converged:
            warn_not_converged(type(self).__name__, "lbfgs", self.epochs, self.tol)

    def _train_batches(
        self,
        singles: list[FairClassifier],
        data: TrainData,
        plan: TrainingPlan,
        X: np.ndarray,
        y: np.ndarray,
        groups: np.ndarray | None,
        seed: int,
        validation: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        """Train the K singles stacked, with Adam on the plan's (or stratified) batches."""
        model = StackedMLP.from_models([single.model_ for single in singles])
        # a model with an adversary plays a game: it trains every epoch (tol's docstring)
        games = tuple(plan.adversary and single.penalty_ is not None for single in singles)
        loop = self._train_loop(model, np.random.default_rng(seed), len(X), games)
        stop = None
        if validation is not None:  # early stopping on the held-out rows
            Xv, yv = (torch.from_numpy(a).to(data.X.device) for a in validation)
            stop = StopOnValidation(model, Xv, yv, self.tol, self.n_iter_no_change)
            loop = dataclasses.replace(loop, stop=stop)
        batch_size = self._batch_size(len(X))
        batches: Any = StratifiedBatches(batch_size, self._fixed_batches(plan), groups)
        if plan.batches is not None:  # the penalty's own batches (FTM's matched pairs)
            assert groups is not None  # _prepare gives the groups to a batch scheme
            rows = FitRows(X, y, groups, data.X, data.y, batch_size)
            batches = plan.batches.schedule(rows, loop.rng)
            for single in singles:
                for name, value in batches.fitted.items():
                    setattr(single, name, value)
        penalties = [single.penalty_ for single in singles if single.penalty_ is not None]
        problem = TrainingProblem(
            model,
            data,
            loop,
            tuple(float(single.strength) for single in singles),
            batches,
            PenaltyStack(penalties) if penalties else None,
            convex=self._mixing(plan) == "convex",
            constraints=plan.constraints,
            adversary_optimizer=(
                self._adversary_optimizer(penalties) if plan.adversary and penalties else None
            ),
        )
        plateau = loop.stop if isinstance(loop.stop, StopOnPlateau) else None
        if plateau is not None and len(singles) > 1:
            # a model that converges before the others ends there, as its separate fit,
            # and stops costing its products
            plateau.on_converged = model.finisher([single.model_ for single in singles])
        histories = train(problem)
        if stop is not None:
            stop.restore()  # the best epoch's parameters, as MLPClassifier's early stop
            singles[0].validation_loss_ = stop.scores  # one model (a single fit)
        n_iter = len(histories[0])
        early = plateau.converged_at if plateau is not None and len(singles) > 1 else []
        for k, single in enumerate(singles):
            done = early[k] if k < len(early) else None
            if done is None:  # trained to the last epoch
                model.export(k, single.model_)
            single.model_.eval()
            single.history_ = histories[k][: done or n_iter]
            single.n_iter_ = done or n_iter
        capped = [  # models the plateau rule reads that never met it
            k for k, game in enumerate(games) if not game and (early[k] if early else None) is None
        ]
        if self.tol is not None and n_iter >= self.epochs and capped:
            warn_not_converged(type(self).__name__, "adam", self.epochs, self.tol)

    def _warm_start_exact(self) -> bool:
        """Whether a warm start of the next fit reaches a cold start's solution.

        True when this fit used L-BFGS and met ``tol`` (FairnessCV's ascending search
        asks; Adam's or a capped fit's end depends on where it started).
        """
        check_is_fitted(self, "model_")
        return (
            self.solver_ == "lbfgs"
            and self.tol is not None
            and bool(getattr(self, "_converged", False))
        )

    def _copy_data_attributes(self, source: FairClassifier) -> None:
        """Copy what a fit learned of the data (labels, input width and names)."""
        self.classes_ = source.classes_
        self.n_features_in_: int = source.n_features_in_
        if hasattr(source, "feature_names_in_"):
            self.feature_names_in_: np.ndarray = source.feature_names_in_

    def _prepare(
        self, X: Any, y: Any, sensitive_features: Any, penalty: FairnessPenalty | None = None
    ) -> tuple[FairnessPenalty | None, TrainingPlan, np.ndarray, np.ndarray, Any, Any]:
        """Validate the data of a fit: ``(penalty, plan, X, y, s, groups)``."""
        if penalty is None:
            penalty = self._make_penalty()
        plan = self._plan(penalty)
        pairs = plan.batches is not None  # its own batches need the groups at any strength
        with contextlib.suppress(TypeError):  # inputs without a length: validate_data's words
            check_consistent_length(X=X, y=y)
        X, y = validate_data(self, X, y, dtype=np.float32, ensure_min_samples=2, **TORCH_READY)
        y = self._encode_labels(y)
        n = X.shape[0]
        s = sens = None
        if sensitive_features is not None:
            # otfair's one rule (otfair.utils.split_sensitive): categorical groups (strings
            # too) unless declared continuous; `s` = 0/1 indicators / continuous columns
            sens = split_sensitive(sensitive_features, sensitive_type=self.sensitive_type)
            s = check_sensitive_features(sens.linear, n, name="sensitive_features")
            if sens.groups is not None and (self._active() or pairs):
                check_group_sizes(cast(np.ndarray, sens.codes), sens.groups)  # before epoch 1
        elif self._active() or pairs:
            raise ValueError(
                f"`sensitive_features` is required for penalty={self.penalty!r} with "
                f"strength={self.strength}."
            )
        needs_groups = pairs or (self._active() and not plan.constraints)
        groups = self._binary_groups(cast(SensitiveColumns, sens)) if needs_groups else None
        return penalty, plan, X, y, s, groups

    def _binary_groups(self, sens: SensitiveColumns) -> np.ndarray:
        """Codes 0/1 of the two groups a group penalty compares (else a clear error)."""
        if sens.continuous:
            raise ValueError(
                f"penalty={self.penalty!r} compares two groups, but `sensitive_features` "
                f"column(s) {sens.continuous} are continuous; use otf or norm for continuous "
                "attributes (or declare sensitive_type='categorical')."
            )
        assert sens.groups is not None and sens.codes is not None  # categorical columns
        if len(sens.groups) != 2:
            shown = ", ".join(map(str, sens.groups[:6])) + (
                ", ..." if len(sens.groups) > 6 else ""
            )
            raise ValueError(
                f"{self.penalty} supports two groups; `sensitive_features` has "
                f"{len(sens.groups)} ({shown}); use otf or norm for several groups."
            )
        return sens.codes.astype(np.int64)

    def _train_data(
        self,
        s: Any,
        y: np.ndarray,
        groups: np.ndarray | None,
        Xt: torch.Tensor,
        yt: torch.Tensor,
        penalty: FairnessPenalty | None,
        plan: TrainingPlan,
    ) -> TrainData:
        """Return the training tensors: strata, group codes, the constraint matrix of the plan."""
        strata = None
        if s is not None:
            discrete = [c for c in range(s.shape[1]) if len(np.unique(s[:, c])) <= 2]
            if discrete:  # intersectional groups of the discrete columns x label cells
                codes = np.zeros(len(y), dtype=np.int64)  # np.unique(rows, axis=0)'s codes
                for c in discrete:  # in mixed radix: the same codes, ~10x faster
                    values, inverse = np.unique(s[:, c], return_inverse=True)
                    codes = codes * len(values) + inverse.reshape(-1)
                codes = np.unique(codes, return_inverse=True)[1].reshape(-1)
                strata = as_notion(self.notion).strata(codes, y)
        G = None
        if plan.constraints and penalty is not None:  # a constraint penalty: G of the set
            G = cast(LinearPenalty, penalty).matrix(s, y, device=Xt.device)
        codes_t = None if groups is None else torch.from_numpy(groups).to(Xt.device)
        return TrainData(X=Xt, y=yt, s=codes_t, strata=strata, G=G)

    def _train_loop(
        self, model: StackedMLP, rng: np.random.Generator, n: int, games: tuple[bool, ...] = ()
    ) -> TrainLoop:
        r"""Adam on ``model`` (decayed per epoch when ``lr_decay != 1``) and the settings.

        The L2 term :math:`l_2 / (2n) \lVert W \rVert^2` on the weights is Adam's
        (coupled) ``weight_decay`` of ``l2 / n`` on the weight tensors.
        """
        optimizer = (
            torch.optim.Adam(model.parameters(), lr=self._lr())
            if self.l2 == 0
            else torch.optim.Adam(
                [
                    {"params": list(model.weights), "weight_decay": self.l2 / n},
                    {"params": list(model.biases)},
                ],
                lr=self._lr(),
            )
        )
        scheduler = (
            torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=self.lr_decay)
            if self.lr_decay != 1.0
            else None
        )
        stop = (
            None
            if self.tol is None or (games and all(games))
            else StopOnPlateau(self.tol, self.n_iter_no_change, every_epoch=games)
        )
        return TrainLoop(self.epochs, optimizer, scheduler, rng, bool(self.verbose), stop)

    def _adversary_optimizer(self, penalties: Sequence[FairnessPenalty]) -> torch.optim.Optimizer:
        """One Adam on the adversaries of ``penalties`` at the plan's rate.

        Adam's update is elementwise, so one optimizer over the K adversaries of a curve
        is K separate optimizers.
        """
        params = [p for penalty in penalties for p in penalty.parameters()]
        lr = self._plan(penalties[0]).adversary_lr
        return torch.optim.Adam(params, lr=self._lr() if lr is None else float(lr))

    # ------------------------------------------------------------------ predict
    def decision_function(self, X: Any) -> np.ndarray:
        """Logits of the positive class, shape (n,)."""
        check_is_fitted(self, "model_")
        X = validate_data(self, X, dtype=np.float32, reset=False, **TORCH_READY)
        device = next(self.model_.parameters()).device
        (logits,) = predict_in_chunks(lambda x: self.model_(x)[:, 0], X, device, 65536)
        return logits.astype(np.float64)

    def predict_proba(self, X: Any) -> np.ndarray:
        """Class probabilities, shape (n, 2): columns P(y=0), P(y=1)."""
        from scipy.special import expit  # no overflow warning at large logits

        p1 = expit(self.decision_function(X))
        return np.column_stack([1.0 - p1, p1])

    def predict(self, X: Any) -> np.ndarray:
        """Predicted labels of ``classes_`` (threshold 0.5 on P(y=1)), shape (n,)."""
        return self._decode_labels(predict_from_proba(self.predict_proba(X)[:, 1]))
