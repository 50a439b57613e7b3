"""FairClassifier: a torch model trained with a fairness penalty, scikit-learn style."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from otfair.estimators._curve import forget_fit
from otfair.estimators._torch_base import TorchEstimatorMixin, predict_in_chunks
from otfair.estimators._training import TrainData, TrainLoop, predict_from_proba
from otfair.estimators.classification.curve import (
    check_fitted_value,
    fit_curve,
    fit_single,
    is_curve,
    select,
)
from otfair.estimators.classification.ftm_matching import get_cache
from otfair.models import MLP
from otfair.notions import Notion, as_notion
from otfair.penalties import FTM, FairnessPenalty, PenaltyObject, as_penalty_object
from otfair.utils import (
    check_group_sizes,
    check_positive_int,
    check_scalar,
    check_sensitive_features,
    set_params_from_init,
)
from otfair.utils._sensitive import SensitiveColumns, split_sensitive


class FairClassifier(TorchEstimatorMixin, ClassifierMixin, BaseEstimator):
    r"""Binary classifier (logistic regression or MLP) trained with a fairness penalty.

    The objective on a batch is, with :math:`\mathcal L_Y` the cross-entropy and
    :math:`R` the penalty,

    .. math::

        \text{convex (OTF paper, Eq. 13):}\quad (1-\alpha)\,\mathcal L_Y + \alpha R
        \qquad
        \text{additive (FTM paper, Eq. 7):}\quad \mathcal L_Y + \lambda R

    ``mixing="auto"`` uses the penalty's declared ``default_mixing``: the convex form for
    ``otf``, ``norm`` and ``barycenter`` (strength = alpha in [0, 1]) and the additive
    form for ``ftm``, ``gapreg`` and ``adv`` (strength = lambda >= 0), as in each
    method's paper. Each fit builds the penalty from the penalty object and the notion
    (:meth:`otfair.penalties.PenaltyObject.build`); everything the training needs
    (labels, features, matched pairs, an adversary step, one binary attribute) is read
    from its declared traits. The classifier holds the settings every penalty shares;
    a penalty's own settings live on its object (``OTF(eps=...)``, ``FTM(matching=...)``,
    ``Adversary(lr=...)``).

    Parameters
    ----------
    penalty : PenaltyObject or str, default="none"
        The fairness penalty: a penalty object of :mod:`otfair.penalties`
        (:class:`~otfair.penalties.OTF`, :class:`~otfair.penalties.Norm`,
        :class:`~otfair.penalties.Barycenter`, :class:`~otfair.penalties.GapReg`,
        :class:`~otfair.penalties.Adversary`, :class:`~otfair.penalties.FTM`,
        :class:`~otfair.penalties.FairTorchDP`, or :class:`~otfair.penalties.Penalty`
        for a name added with :func:`otfair.penalties.register_penalty`), a registered
        name (``"otf"`` is ``OTF()``), or "none". ``FTM`` (a penalty with
        ``requires_pairs``) trains on matched equal-size group batches
        (fairness-through-matching.txt §4.3). ``set_params(penalty__eps=...)`` sets an
        object's setting.
    strength : float or sequence of float, default=0.0
        alpha (convex mixing) or lambda (additive mixing). A sequence of distinct
        values fits the whole trade-off curve in one stacked training run
        (:mod:`otfair.estimators.classification.curve`): the models share the seed,
        batches, OTF costs and FTM matchings, and each step of ``estimators_[k]`` is the
        step of a separate fit at ``strength[k]`` with the same integer ``random_state``
        up to float rounding: over a whole fit a logistic model stays within ~1e-7 in
        probability of its separate fit, an MLP drifts further (docs/stacking.md).
        Predict with ``predict_proba(X, strength=a)``.
    notion : {"dp", "eo", "eopp"} or Notion, default="dp"
        Fairness notion given to the penalty (:func:`otfair.notions.as_notion`); a
        penalty raises for a notion it does not support (``barycenter`` and ``ftm`` are
        demographic parity by construction).
    model : {"logistic", "mlp"}, default="logistic"
        Score model. An MLP has ReLU hidden layers of widths ``hidden``.
    hidden : sequence of int, optional
        MLP widths; ``None`` gives two layers of width = input dimension (FTM paper).
    mixing : {"auto", "convex", "additive"}, default="auto"
        How the penalty is combined with the cross-entropy (see above).
    epochs : int, default=100
    batch_size : int, default=1000
        Batch size of the plain training loop (stratified by sensitive group). FTM
        takes as many steps per epoch, ``ceil(n / batch_size)``, so that with a per-epoch
        learning-rate decay it gets the step budget of its unfair baseline.
    lr : float, default=1e-3
        Adam learning rate.
    lr_decay : float, default=1.0
        Multiplicative learning-rate decay per epoch (FTM paper: 0.95).
    random_state : int, RandomState or None, default=None
        Seeds model initialization and batch order (runs are reproducible).
    device : str, default="cpu"
        Torch device.
    verbose : bool, default=False
        Show a progress bar over epochs.
    fixed_batches : bool or "auto", default="auto"
        ``True``: draw the stratified batches once and visit them in a new random order
        every epoch; ``False``: new batches every epoch. A penalty that keeps per-batch
        data work across epochs (``keeps_batch_work``: OTF, whose class-reduced cost is
        then computed once per batch, not once per step) trains on fixed batches under
        ``"auto"``, the others on new batches. On Adult an OTF logistic fit then costs
        ~3.4x an unpenalized one instead of ~8x, with the same test AUC and PDP
        violation within their paired standard errors
        (docs/measurements/otf_fixed_batches.md). The registry's OTF family sets
        ``False``: the OTF paper's protocol. FTM ignores it (its pairings are a fixed
        pool already).
    sensitive_type : {"categorical", "continuous"}, sequence of them, or None
        How ``sensitive_features`` is read (otfair's one rule,
        :func:`otfair.utils.split_sensitive`): by default every column is categorical
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
        Mean training loss per epoch (curve fit: one list per strength).
    estimators_ : list of FairClassifier
        Curve fit only: one fitted single-strength classifier per ``strength`` value.
    strengths_ : ndarray of shape (K,)
        Curve fit only: the fitted strengths, in the order of ``estimators_``.
    n_features_in_ : int

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

    def __init__(
        self,
        penalty: str | PenaltyObject = "none",
        strength: float = 0.0,
        *,
        notion: str | Notion = "dp",
        model: str = "logistic",
        hidden: Sequence[int] | None = None,
        mixing: str = "auto",
        epochs: int = 100,
        batch_size: int = 1000,
        lr: float = 1e-3,
        lr_decay: float = 1.0,
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
        penalty = self._make_penalty()
        if self.model not in ("logistic", "mlp"):
            raise ValueError(f"`model` must be 'logistic' or 'mlp'; got {self.model!r}.")
        if self.mixing not in ("auto", "convex", "additive"):
            raise ValueError(f"`mixing` must be auto/convex/additive; got {self.mixing!r}.")
        check_scalar(self.strength, "strength", minimum=0.0)
        if self._mixing(penalty) == "convex" and self.strength > 1:
            raise ValueError(
                f"`strength` is alpha in [0, 1] for convex mixing; got {self.strength}."
            )
        for name in ("epochs", "batch_size"):
            check_positive_int(getattr(self, name), name)
        for name in ("lr", "lr_decay"):
            check_scalar(getattr(self, name), name, minimum=0.0, strict=True)
        self._fixed_batches(penalty)
        if penalty is not None and penalty.requires_pairs:
            self._matching_settings().check()
        return penalty

    def _matching_settings(self) -> FTM:
        """Return the matched batches' settings: the ``FTM`` object (else ``FTM()``)."""
        spec = self._penalty_object()
        return spec if isinstance(spec, FTM) else FTM()

    def _mixing(self, penalty: FairnessPenalty | None) -> str:
        if self.mixing != "auto":
            return self.mixing
        return "additive" if penalty is None else penalty.default_mixing

    def _fixed_batches(self, penalty: FairnessPenalty | None) -> bool:
        """Resolve ``fixed_batches`` (``"auto"``: fixed for a penalty that keeps batch work)."""
        if self.fixed_batches == "auto":
            return bool(penalty is not None and penalty.keeps_batch_work)
        if not isinstance(self.fixed_batches, bool | np.bool_):
            raise ValueError(
                f"`fixed_batches` must be True, False or 'auto'; got {self.fixed_batches!r}."
            )
        return bool(self.fixed_batches)

    def _active(self) -> bool:
        return self._penalty_object() is not None and self.strength > 0

    # ------------------------------------------------------------------ building
    def _build_model(self, n_features: int) -> torch.nn.Module:
        if self.model == "logistic":
            return MLP(n_features, hidden=())
        hidden = (n_features, n_features) if self.hidden is None else tuple(self.hidden)
        return MLP(n_features, hidden=hidden)

    # ------------------------------------------------------------------ fit
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
        forget_fit(self)
        if is_curve(self.strength):
            return fit_curve(self, X, y, sensitive_features)
        self._check_params()  # errors name the single strength, not a list of one
        return fit_single(self, X, y, sensitive_features)

    def _prepare(
        self, X: Any, y: Any, sensitive_features: Any, penalty: FairnessPenalty | None = None
    ) -> tuple[FairnessPenalty | None, np.ndarray, np.ndarray, Any, Any, bool]:
        """Validate the data of a fit: ``(penalty, X, y, s, groups, pairs)``."""
        if penalty is None:
            penalty = self._make_penalty()
        pairs = penalty is not None and penalty.requires_pairs
        X, y = validate_data(self, X, y, dtype=np.float32, ensure_min_samples=2)
        y = self._encode_labels(y)
        n = X.shape[0]
        s = sens = None
        if sensitive_features is not None:
            # otfair's one rule (otfair.utils.split_sensitive): categorical groups (strings
            # too) unless declared continuous; `s` = 0/1 indicators / continuous columns
            sens = split_sensitive(sensitive_features, sensitive_type=self.sensitive_type)
            s = check_sensitive_features(sens.linear, n, name="sensitive_features")
            if sens.groups is not None and (self._active() or pairs):
                check_group_sizes(sens.codes, sens.groups)  # before the first epoch
        elif self._active() or pairs:
            raise ValueError(
                f"`sensitive_features` is required for penalty={self.penalty!r} with "
                f"strength={self.strength}."
            )
        binary = penalty is not None and penalty.requires_binary_groups
        needs_groups = pairs or (self._active() and binary)
        groups = self._binary_groups(sens) if needs_groups else None
        return penalty, X, y, s, groups, pairs

    def _binary_groups(self, sens: SensitiveColumns) -> np.ndarray:
        """Codes 0/1 of the two groups a group penalty compares (else a clear error)."""
        if sens.continuous:
            raise ValueError(
                f"penalty={self.penalty!r} compares two groups, but `sensitive_features` "
                f"column(s) {sens.continuous} are continuous; use otf or norm for continuous "
                "attributes (or declare sensitive_type='categorical')."
            )
        if len(sens.groups) != 2:
            shown = ", ".join(map(str, sens.groups[:6])) + (
                ", ..." if len(sens.groups) > 6 else ""
            )
            raise ValueError(
                f"{self.penalty} supports two groups; `sensitive_features` has "
                f"{len(sens.groups)} ({shown}); use otf or norm for several groups."
            )
        return sens.codes.astype(np.int64)

    def _train_data(self, s, y, groups, Xt, yt, penalty) -> tuple[TrainData, Any]:
        """Training tensors of the plain scheme and the group codes of batch checks."""
        strata = None
        group_codes = None
        if s is not None:
            discrete = [c for c in range(s.shape[1]) if len(np.unique(s[:, c])) <= 2]
            if discrete:  # intersectional groups of the discrete columns x label cells
                cols = np.column_stack([s[:, c] for c in discrete])
                codes = np.unique(cols, axis=0, return_inverse=True)[1].reshape(-1)
                strata = as_notion(self.notion).strata(codes, y)
        if groups is not None:
            group_codes = groups
        data = TrainData(X=Xt, y=yt, s=None, strata=strata)
        if groups is not None:
            data.s = torch.from_numpy(groups).to(Xt.device)
        if penalty is not None and penalty.linear:
            data.G = penalty.constraints.matrix(s, y, device=Xt.device)
            data.features = Xt
        return data, group_codes

    def _train_loop(self, params: Any, rng: np.random.Generator) -> TrainLoop:
        """Adam on ``params`` (decayed per epoch when ``lr_decay != 1``) and the settings."""
        optimizer = torch.optim.Adam(params, lr=self.lr)
        scheduler = (
            torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=self.lr_decay)
            if self.lr_decay != 1.0
            else None
        )
        return TrainLoop(self.epochs, optimizer, scheduler, rng, bool(self.verbose))

    def _adversary_optimizer(self, penalties: Sequence[FairnessPenalty]) -> torch.optim.Optimizer:
        """One Adam on the adversaries of ``penalties`` (the object's ``lr``, default ``lr``).

        Adam's update is elementwise, so one optimizer over the K adversaries of a curve
        is K separate optimizers.
        """
        params = [p for penalty in penalties for p in penalty.parameters()]
        own_lr = getattr(self._penalty_object(), "lr", None)  # Adversary(lr=...)
        return torch.optim.Adam(params, lr=own_lr or self.lr)

    def _ftm_setup(self, X, y, groups) -> tuple[np.ndarray, tuple[float, float], int]:
        """FTM's cached pairings, group weights and steps per epoch (sets n_pairings_)."""
        ftm = self._matching_settings()
        cache = get_cache(ftm.cache_dir)
        pool = cache.get(
            X,
            groups,
            y,
            m=ftm.group_batch_size,
            label_weight=None if ftm.matching == "marginal" else float(ftm.label_weight),
            seed=ftm.matching_seed,
            n_rounds=ftm.n_pairing_rounds,
        )
        self.n_pairings_ = pool.shape[0]
        sizes = np.bincount(groups, minlength=2)
        # as many steps per epoch as the plain loop (ceil(n / batch_size)): with the
        # learning rate decayed per epoch, the paper code's ceil(max(n0, n1) / m)
        # gave FTM fewer steps than its unfair baseline and underfit (issue 18:
        # German at lambda=0, 0.722 vs 0.75 accuracy over 3 seeds; 0.743 with this)
        steps = math.ceil(sizes.sum() / self.batch_size)
        return pool, (sizes[0] / sizes.sum(), sizes[1] / sizes.sum()), steps

    # ------------------------------------------------------------------ predict
    def decision_function(self, X: Any, strength: float | None = None) -> np.ndarray:
        """Logits of the positive class, shape (n,).

        ``strength`` chooses the model of a curve fit (``strength=[...]``); for a
        single-strength fit it must be None or the fitted strength.
        """
        if hasattr(self, "estimators_"):
            return select(self, strength).decision_function(X)
        check_is_fitted(self, "model_")
        check_fitted_value(self, strength, "strength")
        X = validate_data(self, X, dtype=np.float32, reset=False)
        device = next(self.model_.parameters()).device
        (logits,) = predict_in_chunks(lambda x: self.model_(x)[:, 0], X, device, 65536)
        return logits.astype(np.float64)

    def predict_proba(self, X: Any, strength: float | None = None) -> np.ndarray:
        """Class probabilities, shape (n, 2): columns P(y=0), P(y=1).

        ``strength`` chooses the model of a curve fit, as in :meth:`decision_function`.
        """
        p1 = 1.0 / (1.0 + np.exp(-self.decision_function(X, strength)))
        return np.column_stack([1.0 - p1, p1])

    def predict(self, X: Any, strength: float | None = None) -> np.ndarray:
        """Predicted labels of ``classes_`` (threshold 0.5 on P(y=1)), shape (n,).

        ``strength`` chooses the model of a curve fit, as in :meth:`decision_function`.
        """
        return self._decode_labels(predict_from_proba(self.predict_proba(X, strength)[:, 1]))
