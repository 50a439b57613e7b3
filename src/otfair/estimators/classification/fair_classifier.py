"""FairClassifier: a torch model trained with a fairness penalty, scikit-learn style."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from otfair.estimators._torch_base import TorchEstimatorMixin, predict_in_chunks
from otfair.estimators._training import (
    TrainData,
    TrainLoop,
    predict_from_proba,
    train_ftm,
    train_plain,
)
from otfair.estimators.classification.curve import (
    check_fitted_value,
    fit_curve,
    fit_single_stacked,
    is_curve,
    select,
)
from otfair.estimators.classification.ftm_matching import get_cache
from otfair.models import MLP
from otfair.notions import Notion, as_notion
from otfair.penalties import FairnessPenalty, list_penalties, make_penalty
from otfair.utils import (
    check_positive_int,
    check_scalar,
    check_sensitive_features,
    draw_seed,
    resolve_device,
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
    method's paper. The penalty is built by :func:`otfair.penalties.make_penalty` from
    its name and the notion; everything the training needs (labels, features, matched
    pairs, an adversary step, one binary attribute) is read from its declared traits.

    Parameters
    ----------
    penalty : str, default="none"
        Name of a registered fairness penalty (:func:`otfair.penalties.list_penalties`:
        "otf", "norm", "barycenter", "gapreg", "adv", "ftm", and any added with
        :func:`otfair.penalties.register_penalty`), or "none". ``"ftm"`` (a penalty
        with ``requires_pairs``) trains on matched equal-size group batches
        (fairness-through-matching.txt §4.3).
    strength : float or sequence of float, default=0.0
        alpha (convex mixing) or lambda (additive mixing). A sequence of distinct
        values fits the whole trade-off curve in one stacked training run
        (:mod:`otfair.estimators.classification.curve`): the models share the seed,
        batches, OTF costs and FTM matchings, and ``estimators_[k]`` equals a separate
        fit at ``strength[k]`` with the same integer ``random_state`` (up to float
        rounding, ~1e-8 in probabilities). Predict with ``predict_proba(X, strength=a)``.
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
    eps : float, default=1e-3
        Entropic smoothing of OTF (OTF paper §3.2), for costs scaled as in
        :class:`otfair.penalties.OTFPenalty`.
    epochs : int, default=100
    batch_size : int, default=1000
        Batch size of the plain training loop (stratified by sensitive group). FTM
        takes as many steps per epoch, ``ceil(n / batch_size)``, so that with a per-epoch
        learning-rate decay it gets the step budget of its unfair baseline.
    lr : float, default=1e-3
        Adam learning rate.
    lr_decay : float, default=1.0
        Multiplicative learning-rate decay per epoch (FTM paper: 0.95).
    group_batch_size : int, default=1024
        FTM: size ``m`` of each group batch (Adult 1024, German 200, Dutch 1024, Bank
        512); a step sees ``2m`` points.
    matching : {"marginal", "joint"}, default="marginal"
        FTM transport map: cost ``||x0-x1||^2`` or ``||x0-x1||^2 + a|y0-y1|``.
    label_weight : float, default=100.0
        ``a`` of the joint map.
    n_pairing_rounds : int, default=2
        FTM: rounds of cached batch pairings (each covers every point once).
    matching_seed : int, default=0
        FTM: seed of the pairing draw, separate from ``random_state`` so that model
        seeds of a sweep share the cached matchings.
    matching_cache_dir : str or Path, optional
        FTM: directory of the on-disk matching cache (in-memory only when ``None``).
    adversary_lr : float, optional
        Adam learning rate of the adversary (``adv``); ``None`` uses ``lr``.
    random_state : int, RandomState or None, default=None
        Seeds model initialization and batch order (runs are reproducible).
    device : str, default="cpu"
        Torch device.
    verbose : bool, default=False
        Show a progress bar over epochs.
    fixed_batches : bool, default=False
        Draw the stratified batches once and visit them in a new random order every
        epoch (default: new batches every epoch). The OTF penalty then keeps each
        batch's class-reduced cost across epochs (no cost matrix after the first
        epoch): an OTF logistic fit costs ~3x an unpenalized one instead of ~9x
        (docs/stacking.md). Trains on the stacked engine; FTM ignores it (its
        pairings are a fixed pool already).
    penalty_options : dict, optional
        Extra keyword options of the penalty factory (e.g. ``{"hidden": 64}`` for
        ``adv``); ``eps`` is passed to ``otf``.
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
    >>> clf = FairClassifier("gapreg", 1.0, epochs=3, batch_size=50, random_state=0)
    >>> clf.fit(X, y, sensitive_features=s).predict_proba(X).shape
    (200, 2)
    """

    def __init__(
        self,
        penalty: str = "none",
        strength: float = 0.0,
        *,
        notion: str | Notion = "dp",
        model: str = "logistic",
        hidden: Sequence[int] | None = None,
        mixing: str = "auto",
        eps: float = 1e-3,
        epochs: int = 100,
        batch_size: int = 1000,
        lr: float = 1e-3,
        lr_decay: float = 1.0,
        group_batch_size: int = 1024,
        matching: str = "marginal",
        label_weight: float = 100.0,
        n_pairing_rounds: int = 2,
        matching_seed: int = 0,
        matching_cache_dir: str | Path | None = None,
        adversary_lr: float | None = None,
        random_state: Any = None,
        device: str = "cpu",
        verbose: bool = False,
        penalty_options: dict | None = None,
        fixed_batches: bool = False,
        sensitive_type: str | Sequence[str] | None = None,
    ) -> None:
        set_params_from_init(self, locals())

    # ------------------------------------------------------------------ validation
    def _make_penalty(self) -> FairnessPenalty | None:
        """Build the (unfitted) penalty of ``penalty`` and ``notion``; ``None`` for "none"."""
        if self.penalty == "none":
            as_notion(self.notion)
            return None
        if not isinstance(self.penalty, str) or self.penalty not in list_penalties():
            raise ValueError(
                f"`penalty` must be 'none' or one of {', '.join(list_penalties())}; "
                f"got {self.penalty!r}."
            )
        options = dict(self.penalty_options or {})
        if self.penalty == "otf":
            options.setdefault("eps", self.eps)
        try:
            return make_penalty(self.penalty, self.notion, **options)
        except ValueError as exc:
            raise ValueError(f"penalty={self.penalty!r}: {exc}") from None

    def _check_params(self) -> FairnessPenalty | None:
        penalty = self._make_penalty()
        if self.model not in ("logistic", "mlp"):
            raise ValueError(f"`model` must be 'logistic' or 'mlp'; got {self.model!r}.")
        if self.mixing not in ("auto", "convex", "additive"):
            raise ValueError(f"`mixing` must be auto/convex/additive; got {self.mixing!r}.")
        if self.matching not in ("marginal", "joint"):
            raise ValueError(f"`matching` must be 'marginal' or 'joint'; got {self.matching!r}.")
        check_scalar(self.strength, "strength", minimum=0.0)
        if self._mixing(penalty) == "convex" and self.strength > 1:
            raise ValueError(
                f"`strength` is alpha in [0, 1] for convex mixing; got {self.strength}."
            )
        for name in ("epochs", "batch_size", "group_batch_size", "n_pairing_rounds"):
            check_positive_int(getattr(self, name), name)
        for name in ("lr", "eps", "lr_decay"):
            check_scalar(getattr(self, name), name, minimum=0.0, strict=True)
        return penalty

    def _mixing(self, penalty: FairnessPenalty | None) -> str:
        if self.mixing != "auto":
            return self.mixing
        return "additive" if penalty is None else penalty.default_mixing

    def _active(self) -> bool:
        return self.penalty != "none" and self.strength > 0

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
        if is_curve(self.strength):
            return fit_curve(self, X, y, sensitive_features)
        if self.fixed_batches:  # the stacked engine keeps per-batch work (a curve of one)
            return fit_single_stacked(self, X, y, sensitive_features)
        penalty = self._check_params()
        penalty, X, y, s, groups, pairs = self._prepare(X, y, sensitive_features, penalty)
        seed = draw_seed(self.random_state)
        rng = np.random.default_rng(seed)
        device = resolve_device(self.device)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.model_ = self._build_model(X.shape[1]).to(device)
            # built here, after the model, so that its parameters (an adversary) are
            # initialized from the seeded generator in a fixed order
            self.penalty_ = self._make_penalty().fit(s, y) if self._active() else None
            if self.penalty_ is not None:
                self.penalty_.to(device)
            loop = self._train_loop(self.model_.parameters(), rng)
            Xt = torch.from_numpy(X).to(device)
            yt = torch.from_numpy(y.astype(np.float32)).to(device)
            if pairs:
                self.history_ = self._fit_ftm(X, y, groups, Xt, yt, loop)
            else:
                self.history_ = self._fit_plain(s, y, groups, Xt, yt, loop)
        self.model_.eval()
        return self

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

    def _adversary_optimizer(self, penalty: FairnessPenalty) -> torch.optim.Optimizer:
        """Adam on the adversary of ``penalty`` (``adversary_lr``, default ``lr``)."""
        return torch.optim.Adam(penalty.parameters(), lr=self.adversary_lr or self.lr)

    def _fit_plain(self, s, y, groups, Xt, yt, loop: TrainLoop) -> list[float]:
        data, group_codes = self._train_data(s, y, groups, Xt, yt, self.penalty_)
        mixing = self._mixing(self.penalty_)
        a = float(self.strength)

        def mix(ce: torch.Tensor, pen: torch.Tensor) -> torch.Tensor:
            return (1 - a) * ce + a * pen if mixing == "convex" else ce + a * pen

        adv_opt = None
        if self.penalty_ is not None and self.penalty_.has_adversary:
            adv_opt = self._adversary_optimizer(self.penalty_)
        return train_plain(
            self.model_,
            data,
            loop,
            penalty=self.penalty_,
            mix=mix,
            batch_size=self.batch_size,
            adversary_optimizer=adv_opt,
            group_codes=group_codes,
        )

    def _ftm_setup(self, X, y, groups) -> tuple[np.ndarray, tuple[float, float], int]:
        """FTM's cached pairings, group weights and steps per epoch (sets n_pairings_)."""
        cache = get_cache(self.matching_cache_dir)
        pool = cache.get(
            X,
            groups,
            y,
            m=self.group_batch_size,
            label_weight=None if self.matching == "marginal" else float(self.label_weight),
            seed=self.matching_seed,
            n_rounds=self.n_pairing_rounds,
        )
        self.n_pairings_ = pool.shape[0]
        sizes = np.bincount(groups, minlength=2)
        # as many steps per epoch as the plain loop (ceil(n / batch_size)): with the
        # learning rate decayed per epoch, the paper code's ceil(max(n0, n1) / m)
        # gave FTM fewer steps than its unfair baseline and underfit (issue 18:
        # German at lambda=0, 0.722 vs 0.75 accuracy over 3 seeds; 0.743 with this)
        steps = math.ceil(sizes.sum() / self.batch_size)
        return pool, (sizes[0] / sizes.sum(), sizes[1] / sizes.sum()), steps

    def _fit_ftm(self, X, y, groups, Xt, yt, loop: TrainLoop) -> list[float]:
        pool, weights, steps = self._ftm_setup(X, y, groups)
        data = TrainData(X=Xt, y=yt, s=None, strata=None)
        return train_ftm(
            self.model_,
            data,
            pool,
            loop,
            strength=float(self.strength),
            group_weights=weights,
            steps_per_epoch=steps,
            penalty=self.penalty_,
        )

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
