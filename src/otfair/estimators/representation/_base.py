r"""Shared pieces of the fair-representation classifiers (LAFTR, sIPM-LFR, CFair, FNF).

:class:`RepresentationEstimator` declares the parameters all four share (a dataclass: the
constructor is generated from the fields, so a method declares only its own parameters)
and the prediction methods. :class:`RepresentationClassifier` validates the inputs once
(binary labels, exactly two sensitive groups, finite features, equal lengths), derives
the fit's generators from ``random_state`` (never the global ones), and trains an
:class:`~otfair.models.representation.EncoderClassifier` with an adversary penalty of
:mod:`otfair.penalties._representation` on the one engine
:func:`otfair.estimators._training.run_epochs`. A step minimizes

.. math::

    L_{task}(g(f(x)), y) + L_{adv}\big(R_\lambda(f(x)), s, y\big),

where :math:`R_\lambda` is the gradient reversal layer of scale :math:`\lambda` (the
``strength``): the adversary descends its own loss and the encoder ascends
:math:`\lambda L_{adv}` in the same step (simultaneous gradient descent-ascent); the
engine then runs ``adversary_steps - 1`` extra adversary-only steps on the batch with
the encoder frozen (:class:`~otfair.estimators._training.AdversaryStep`; the
alternating schedule of Madras et al. 2018, §4).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from numbers import Real
from typing import Any, ClassVar, NamedTuple

import numpy as np
import torch
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from otfair.estimators._quantile_barycenter import check_fit_groups, encode_fitted_groups
from otfair.estimators._torch_base import (
    TRAINING_CONSTRAINTS,
    TorchEstimatorMixin,
    check_against_constant,
    encode_binary_labels,
    predict_in_chunks,
    warn_feature_scale,
    warn_not_converged,
)
from otfair.estimators._training import (
    AdversaryStep,
    StopOnPlateau,
    predict_from_proba,
    run_epochs,
    stratified_batches,
)
from otfair.estimators.preprocessing.sensitive_column import split_sensitive_column
from otfair.models.adversarial import grad_reverse
from otfair.models.representation import EncoderClassifier
from otfair.notions import stratum_codes
from otfair.penalties import RepresentationAdversary
from otfair.utils import (
    Interval,
    Widths,
    check_features,
    check_group_sizes,
    draw_seed,
    fit_context,
    non_negative_real,
    positive_int,
    positive_real,
    resolve_device,
    torch_generator,
    use_generator,
)
from otfair.utils._torch import TORCH_READY, fits_in_training_state

_PREDICT_CHUNK = 8192

#: ``tol`` and ``n_iter_no_change`` of every representation classifier (``{convergence}``).
CONVERGENCE = """
tol : float or None, default=None
    ``None`` trains for exactly ``epochs`` (the papers' protocols; with an adversary the
    training objective is a min-max game, not monotone). A float stops the main
    training when the epoch's mean task loss (the classifier's cross-entropy on the
    representation) has not improved by ``tol`` for ``n_iter_no_change`` consecutive
    epochs (scikit-learn's ``MLPClassifier`` rule; ``n_iter_``), and warns
    (:class:`sklearn.exceptions.ConvergenceWarning`) when ``epochs`` comes first.
n_iter_no_change : int, default=5
    Epochs without an improvement of ``tol`` that end the training.
"""

#: The fitted attributes every representation classifier has (``{fitted_attributes}``).
FITTED_ATTRIBUTES = """
classes_ : numpy.ndarray
    Class labels.
groups_ : numpy.ndarray
    The two sensitive groups.
history_ : list of dict
    Per-epoch training losses.
fit_quality_warning_ : str or None
    The :class:`~otfair.estimators.FitQualityWarning` this fit gave, None when none.
n_iter_ : int
    Epochs trained: ``epochs`` (the papers' protocols) unless ``tol`` stopped it first.
device_ : torch.device
    Device the modules live on.
n_features_in_ : int
    Number of features seen during ``fit``.
"""


def check_input(est: Any, X: Any, *, reset: bool) -> np.ndarray:
    """Return ``X`` as float32: scikit-learn's ``validate_data``, then the finite check.

    ``validate_data`` gives scikit-learn's errors for sparse, empty, 1-D or complex input
    and sets (``reset``; a fit needs two samples) or checks ``n_features_in_``; NaN and
    infinite values are a ``ValueError`` naming ``X``.
    """
    if reset:
        X = validate_data(
            est, X, dtype=np.float32, ensure_min_samples=2, ensure_all_finite=False, **TORCH_READY
        )
    else:
        X = validate_data(
            est, X, dtype=np.float32, reset=False, ensure_all_finite=False, **TORCH_READY
        )
    return check_features(X, "X")


def check_fit_inputs(
    X: Any, y: Any, sensitive_features: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Return ``(X, y, codes, groups, classes)`` for a binary task with exactly two groups.

    ``y`` holds any two labels (``classes``, sorted); it is returned as 0/1 codes
    (float32, 1 for ``classes[1]``). Raises a ``ValueError`` naming the argument for NaN
    / infinite features, a ``y`` without exactly two classes, a length mismatch, one
    group only, or more than two groups.
    """
    X = check_features(X, "X")
    classes, y = encode_binary_labels(y, "y")
    if len(y) != len(X):
        raise ValueError(f"`y` has {len(y)} rows but `X` has {len(X)} samples.")
    codes, groups = check_fit_groups(X, sensitive_features)
    if len(groups) != 2:
        raise ValueError(
            f"`sensitive_features` must have exactly two groups; got {len(groups)} "
            f"({list(groups)[:5]})."
        )
    check_group_sizes(codes, groups)  # a one-row group fails before the first epoch
    return X, y.astype(np.float32), codes.astype(np.int64), groups, classes


class FitStart(NamedTuple):
    """What :func:`start_fit` returns: the checked data and the fit's generators."""

    X: np.ndarray
    y: np.ndarray  # 0/1 codes of the labels, float32
    codes: np.ndarray  # group codes
    rng: np.random.Generator  # batch orders
    device: torch.device
    seed: int
    torch_gen: torch.Generator  # initial weights: build the modules in use_generator(it)


def start_fit(est: Any, X: Any, y: Any, sensitive_features: Any) -> FitStart:
    """Validate the data, set ``classes_``/``n_features_in_``/``groups_``, seed the fit.

    Every batch order comes from ``rng``; the modules are built inside
    ``otfair.utils.use_generator(torch_gen)``, whose draws are those of torch's global
    generator seeded with ``seed`` (which no fit touches).
    """
    X = check_input(est, X, reset=True)
    X, y, codes, est.groups_, est.classes_ = check_fit_inputs(X, y, sensitive_features)
    # the fit-quality check names the scale first when this warned
    est._feature_scale_warned = warn_feature_scale(X, type(est).__name__)
    seed = draw_seed(est.random_state)
    return FitStart(
        X,
        y,
        codes,
        np.random.default_rng(seed),
        resolve_device(est.device),
        seed,
        torch_generator(seed),
    )


def groupwise_inputs(est: Any, X: Any, sensitive_features: Any) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(X, codes)`` at predict time for a group-wise encoder (fair-nf's two).

    Checks ``X`` against the fit, reads the group from ``est.sensitive_column`` when
    ``sensitive_features`` is None (and drops that column), and maps the groups onto the
    fitted codes (a group unseen at fit is a ``ValueError`` naming it).
    """
    X = check_input(est, X, reset=False)
    X, sensitive_features = split_sensitive_column(
        X, sensitive_features, est.sensitive_column, required=False
    )
    return X, encode_fitted_groups(sensitive_features, est.groups_, len(X))


class GroupWiseSearch:
    """What FairnessCV needs to know of a group-wise encoder (the fair normalizing flows).

    Its default strengths are ``GRIDS["fair-nf"]`` (the KL weight gamma in [0, 1)); it
    is searched only with the group in a column of ``X`` (``sensitive_column``): its
    predictions need the group, which FairnessCV's held-out scoring does not pass.
    """

    _strength_grid = "fair-nf"

    @property
    def _fairness_cv_refusal(self) -> str:
        """Why FairnessCV cannot search this estimator ("" where it can)."""
        if getattr(self, "sensitive_column", None) is not None:
            return ""
        return (
            f"FairnessCV cannot score {type(self).__name__} as it is: its flows are "
            "group-wise, so its predictions need `sensitive_features`, which FairnessCV's "
            "held-out scoring does not pass. Put the group in a column of X and set "
            "`sensitive_column` (predict then reads it from there), or fit a curve with "
            "fairness_path(...) and compare its models on held-out rows with "
            "score_frame(X_val, y_val, sensitive_features=s_val)."
        )


def cell_batches(
    codes: np.ndarray, y: np.ndarray, batch_size: int, rng: np.random.Generator, device: Any
) -> Callable[[int], list[torch.Tensor]]:
    """``batches(epoch)`` for the engine, stratified by (group, label) cell."""
    strata = stratum_codes(codes, y)

    def epoch_batches(epoch: int) -> list[torch.Tensor]:
        parts = stratified_batches(strata, batch_size, rng)
        return [torch.as_tensor(p, device=device) for p in parts]

    return epoch_batches


@dataclass(eq=False, repr=False)
class RepresentationEstimator(
    TorchEstimatorMixin, TransformerMixin, ClassifierMixin, BaseEstimator
):
    """Parameters and prediction plumbing of the four representation classifiers.

    A dataclass, so the constructor (the explicit signature scikit-learn's
    ``get_params`` reads) is generated from the fields: the parameters every method
    has are declared once here, and a subclass (decorated the same way) declares only
    its own and the defaults it changes. Subclasses implement :meth:`_fit` (what
    :meth:`fit` trains on the checked data) and :meth:`_forward`; ``fit``,
    ``transform``, ``predict_proba`` and ``predict`` are shared.
    Not for direct use.
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **TRAINING_CONSTRAINTS,
        "strength": [non_negative_real()],
        "head_hidden": [Widths()],
        "verbose": ["verbose"],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "n_iter_no_change": [positive_int()],
    }

    strength: float = 1.0
    head_hidden: Sequence[int] = ()
    epochs: int = 20
    batch_size: int = 256
    lr: float = 1e-3
    device: str | None = None
    random_state: int | np.random.RandomState | None = None
    verbose: bool = False
    tol: float | None = None
    n_iter_no_change: int = 5

    @property
    def _balanced_objective(self) -> bool:
        """Whether the classifier trains on the class-balanced cross-entropy (CFair's).

        The fit is then held against the constant on the balanced measures
        (:func:`~otfair.estimators._torch_base.check_against_constant`).
        """
        return False

    # -- training ------------------------------------------------------------------------
    @fits_in_training_state
    @fit_context
    def fit(self, X: Any, y: Any, *, sensitive_features: Any) -> RepresentationEstimator:
        """Fit the representation and the classifier on it.

        Parameters
        ----------
        X : array-like of shape (n, d)
            Numeric features (standardized; the sensitive attribute need not be among
            them, except as the ``sensitive_column`` of the group-wise encoders).
        y : array-like of shape (n,)
            Binary labels (any two values).
        sensitive_features : array-like of shape (n,)
            The sensitive attribute, exactly two groups.

        Returns
        -------
        self
        """
        data = start_fit(self, X, y, sensitive_features)
        self._fit(data, sensitive_features)
        strength = float(self.strength)
        self.fit_quality_warning_ = check_against_constant(  # held against the constant
            self._forward(X, sensitive_features)[1],
            data.y.astype(np.float64),
            owner=type(self).__name__,
            strength=strength,
            penalized=strength > 0,
            classes=self.classes_,
            remedy="raise `epochs` or `lr`",
            balanced=self._balanced_objective,
            raw_scale=self._feature_scale_warned,
        )
        return self

    def _fit(self, data: FitStart, sensitive_features: Any) -> None:
        """Train the method's modules on the checked ``data`` and set the fitted attributes."""
        raise NotImplementedError(f"{type(self).__name__} must implement `_fit`.")

    def _training_budget(self) -> tuple[int, int, float]:
        """Return ``(epochs, batch_size, lr)`` (validated by ``fit``)."""
        return int(self.epochs), int(self.batch_size), float(self.lr)

    def _train(
        self,
        epochs: int,
        batches: Callable[[int], list[torch.Tensor]],
        step: Callable[[torch.Tensor], tuple[torch.Tensor, dict[str, torch.Tensor], float]],
        optimizer: torch.optim.Optimizer,
        adversary: AdversaryStep | None = None,
        task_key: str = "task",
    ) -> None:
        """Run the engine (:func:`run_epochs`) and keep the epoch logs in ``history_``.

        With ``tol`` set, the training stops on a plateau of the logged task loss
        (``task_key``; ``{convergence}`` in the docstrings) and warns at the cap.
        """
        plateau = None if self.tol is None else StopOnPlateau(self.tol, self.n_iter_no_change)

        def stop(logs: dict[str, Any]) -> bool:
            return plateau is not None and plateau({"loss": logs[task_key]})

        history = run_epochs(
            epochs,
            batches,
            step,
            optimizer=optimizer,
            adversary=adversary,
            stop=None if plateau is None else stop,
            verbose=bool(self.verbose),
            desc=type(self).__name__,
        )
        self.history_ = [{k: v for k, v in h.items() if k != "time_s"} for h in history]
        self.n_iter_ = len(self.history_)
        if plateau is not None and plateau.converged_at[0] is None:
            warn_not_converged(type(self).__name__, "adam", epochs, float(plateau.tol))

    # -- predict -------------------------------------------------------------------------
    def _forward(self, X: Any, sensitive_features: Any) -> tuple[np.ndarray, np.ndarray]:
        """Return ``(z, logits)`` of the checked ``X`` (float64, shapes (n, k) and (n,))."""
        raise NotImplementedError(f"{type(self).__name__} must implement `_forward`.")

    def transform(self, X: Any, *, sensitive_features: Any = None) -> np.ndarray:
        """Return the representation :math:`z`, shape (n, latent dimension)."""
        return self._forward(X, sensitive_features)[0]

    def predict_proba(self, X: Any, *, sensitive_features: Any = None) -> np.ndarray:
        """Return ``[P(y=0), P(y=1)]`` of the classifier on the representation, (n, 2).

        ``sensitive_features`` is needed only by group-wise encoders (``fair-nf``);
        when given it is checked against the fitted groups.
        """
        p1 = expit(self._forward(X, sensitive_features)[1])
        return np.column_stack([1.0 - p1, p1])

    def predict(self, X: Any, *, sensitive_features: Any = None) -> np.ndarray:
        """Return labels of ``classes_`` (``classes_[1]`` iff ``P(y=1) >= 0.5``)."""
        proba = self.predict_proba(X, sensitive_features=sensitive_features)
        return self._decode_labels(predict_from_proba(proba[:, 1]))


@dataclass(eq=False, repr=False)
class RepresentationClassifier(RepresentationEstimator):
    """Base of the encoder + classifier + adversary estimators (not for direct use).

    Subclasses (dataclasses too) declare their own parameters, the adversary penalty
    (:meth:`_make_adversary`) and, optionally, the task loss (:meth:`_task_loss`,
    default the cross-entropy).
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **RepresentationEstimator._parameter_constraints,
        "latent_dim": [positive_int()],
        "encoder_hidden": [Widths()],
        "adversary_steps": [positive_int()],
        "adversary_lr": [positive_real(), None],
    }

    latent_dim: int = 8
    encoder_hidden: Sequence[int] = (64,)
    adversary_steps: int = 1
    adversary_lr: float | None = None

    # -- hooks ---------------------------------------------------------------------------
    def _make_adversary(self, latent_dim: int) -> RepresentationAdversary:
        """Return the method's adversary on the representation (each subclass has one)."""
        raise NotImplementedError(f"{type(self).__name__} must implement `_make_adversary`.")

    def _task_loss(self, logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.binary_cross_entropy_with_logits(logits, y)

    # -- fit -----------------------------------------------------------------------------
    def _fit(self, data: FitStart, sensitive_features: Any) -> None:
        """Train the encoder, the classifier and the adversary (:meth:`fit`)."""
        strength = float(self.strength)
        epochs, batch_size, lr = self._training_budget()
        latent_dim, adversary_steps = int(self.latent_dim), int(self.adversary_steps)
        X, y, codes, rng, device, _, torch_gen = data
        with use_generator(torch_gen):
            model = EncoderClassifier(
                X.shape[1], latent_dim, tuple(self.encoder_hidden), tuple(self.head_hidden)
            ).to(device)
            adversary = self._make_adversary(latent_dim).to(device) if strength > 0 else None
        adv_lr = lr if self.adversary_lr is None else float(self.adversary_lr)
        groups: list[dict[str, Any]] = [{"params": list(model.parameters())}]
        if adversary is not None:
            groups.append({"params": list(adversary.parameters()), "lr": adv_lr})
        optimizer = torch.optim.Adam(groups, lr=lr)
        adv_optimizer = (
            torch.optim.Adam(adversary.parameters(), lr=adv_lr)
            if adversary is not None and adversary_steps > 1
            else None
        )

        Xt = torch.as_tensor(X, device=device)
        yt = torch.as_tensor(y, device=device)
        st = torch.as_tensor(codes, device=device)

        def step(idx: torch.Tensor) -> tuple[torch.Tensor, dict[str, torch.Tensor], float]:
            z, logits = model(Xt[idx])
            task = self._task_loss(logits, yt[idx])
            logs = {"task": task}
            if adversary is None:
                return task, logs, float(len(idx))
            adv = adversary(grad_reverse(z, strength), st[idx], yt[idx])
            logs["adversary_loss"] = adv
            return task + adv, logs, float(len(idx))

        frozen: dict[str, torch.Tensor] = {}

        def adversary_loss(idx: torch.Tensor) -> torch.Tensor:
            """Return the adversary's loss on the batch, the encoder frozen (z computed once)."""
            assert adversary is not None  # run only with an adversary optimizer
            if frozen.get("idx") is not idx:
                with torch.no_grad():
                    frozen.update(idx=idx, z=model.encoder(Xt[idx]))
            return adversary(frozen["z"], st[idx], yt[idx])

        extra = None
        if adv_optimizer is not None:  # adversary_steps - 1 adversary-only steps
            extra = AdversaryStep(adversary_loss, adv_optimizer, adversary_steps - 1)

        batches = cell_batches(codes, y, batch_size, rng, device)
        self._train(epochs, batches, step, optimizer, extra)
        self.model_ = model.eval()
        self.adversary_ = None if adversary is None else adversary.eval()
        self.device_ = device

    # -- predict -------------------------------------------------------------------------
    @torch.no_grad()
    def _forward(self, X: Any, sensitive_features: Any) -> tuple[np.ndarray, np.ndarray]:
        check_is_fitted(self, "model_")
        X = check_input(self, X, reset=False)
        if sensitive_features is not None:  # optional: checked when given
            encode_fitted_groups(sensitive_features, self.groups_, len(X))
        z, logits = predict_in_chunks(self.model_, X, self.device_, _PREDICT_CHUNK)
        return z.astype(np.float64), logits.astype(np.float64)
